"""A file's text at a base to compare with: a git revision of its repository, or a torch release's own file.

`opgen bc --base REF` and the server's compatibility diagnostics read the older native_functions.yaml
here. git runs with a time limit and without a pager or prompts; no git, not a repository, or no such
file at that revision is an answer (None with the reason), never an exception.
"""

from __future__ import annotations

import importlib.util
import os
import re

from ..frozen import record

GIT_TIMEOUT = 10.0  # seconds: a `git show` of one file is instant; a hung one (a lock, a network mount) is not waited for
_RELEASE = re.compile(r"\d+\.\d+(\.\d+)?\Z")
_NATIVE_IN_TORCHGEN = os.path.join("packaged", "ATen", "native", "native_functions.yaml")


@record
class BaseText:
    text: str | None
    origin: str  # what was read ("git HEAD:aten/.../native_functions.yaml", "torch 2.14.1"), or why nothing was


def torchgen_cache_root() -> str:
    """Where tools/torchgen_release.py keeps each release's torchgen ($XDG_CACHE_HOME/opgen/torchgen)."""
    from ..cache.root import user_cache_root  # noqa: PLC0415

    return os.path.join(user_cache_root(), "torchgen")


def _installed_torchgen() -> tuple[str, str] | None:
    """(version, folder) of the installed torchgen, found without importing torch."""
    try:
        # Top-level names only: find_spec("torch.version") would import torch (seconds) to find its submodule.
        spec = importlib.util.find_spec("torchgen")
        torch_spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or torch_spec is None or torch_spec.origin is None:
        return None
    try:
        with open(os.path.join(os.path.dirname(torch_spec.origin), "version.py"), encoding="utf-8") as f:
            found = re.search(r"""^__version__\s*=\s*['"]([^'"+]+)""", f.read(), re.M)
    except OSError:
        return None
    return (found[1], os.path.dirname(spec.origin)) if found else None


def release_native_path(version: str) -> str | None:
    """A torch release's own native_functions.yaml: the torchgen cache's, or the installed torch's."""
    cached = os.path.join(torchgen_cache_root(), version, "torchgen", _NATIVE_IN_TORCHGEN)
    if os.path.isfile(cached):
        return cached
    installed = _installed_torchgen()
    if installed is not None and installed[0] in (version, f"{version}.0"):
        return os.path.join(installed[1], _NATIVE_IN_TORCHGEN)
    return None


def looks_like_release(ref: str) -> bool:
    return _RELEASE.match(ref) is not None


def git_show(path: str, revision: str, timeout: float = GIT_TIMEOUT) -> BaseText:
    """The file's text at `revision` of the repository it is in."""
    if revision.startswith("-"):  # git would read it as an option
        return BaseText(None, f"{revision!r} is not a revision")
    folder, name = os.path.split(os.path.abspath(path))
    command = ["git", "-C", folder, "--no-pager", "show", f"{revision}:./{name}"]
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    import subprocess  # noqa: PLC0415  (only `opgen bc` and the server's base texts run git: not a check's start-up)

    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, env=environment, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return BaseText(None, f"git could not be run: {exc}")
    if done.returncode != 0:
        return BaseText(None, done.stderr.decode("utf-8", "replace").strip() or f"git exited with {done.returncode}")
    try:
        text = done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return BaseText(None, f"{name} at {revision} is not UTF-8 text")
    return BaseText(text.replace("\r\n", "\n").replace("\r", "\n"), f"git {revision}:{name}")


def base_text(path: str, ref: str) -> BaseText:
    """REF as `opgen bc --base` takes it: a torch release X.Y[.Z] whose file is at hand, else a git revision."""
    if looks_like_release(ref):
        release = release_native_path(ref)
        if release is not None:
            try:
                with open(release, encoding="utf-8") as f:
                    return BaseText(f.read(), f"torch {ref}")
            except (OSError, UnicodeDecodeError) as exc:
                return BaseText(None, f"torch {ref}'s native_functions.yaml cannot be read: {exc}")
    shown = git_show(path, ref)
    if shown.text is None and looks_like_release(ref):
        return BaseText(None, f"torch {ref}'s native_functions.yaml is not at hand (python3 tools/torchgen_release.py "
                              f"{ref} fetches it) and {ref} is not a git revision: {shown.origin}")
    return shown
