"""`--torch-release X.Y.Z` for the benchmarks: that release's own torchgen as the reference, opgen held to
that release's profile.

The release's torchgen comes from tools/torchgen_release.py's cache (`~/.cache/opgen/torchgen/X.Y.Z`,
downloaded from the release's wheel the first time). Its processes run with that folder first on
PYTHONPATH, so its torchgen is imported instead of the installed torch's; opgen gets
`--torch-version X.Y.Z` (or the profile itself, in-process). Without the option the installed torch's
torchgen is the reference, as before.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

_ROOT = Path(__file__).resolve().parent.parent
_TOOL = _ROOT / "tools" / "torchgen_release.py"
# tests/release_fit.py (imported where used, as opgen_lsp is): how the release matrix fits the inputs to a release
# and compares its files; the benchmarks do the same, with the same code.
sys.path.insert(0, str(_ROOT / "tests"))

if TYPE_CHECKING:
    from opgen_lsp.releases import Release


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--torch-release", metavar="X.Y.Z",
                        help="compare with that release's own torchgen (fetched into the cache by "
                             "tools/torchgen_release.py) on its own native_functions.yaml; default: the installed "
                             "torch's")


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("torchgen_release", _TOOL)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {_TOOL}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def folder(version: str) -> Path:
    """The release's cache folder (torchgen/, torch/version.py); raises RuntimeError when it cannot be had."""
    return Path(_tool().obtain(version))


def cached_releases() -> list[str]:
    """The releases whose torchgen is complete in the cache, oldest first."""
    tool = _tool()
    root = Path(tool.cache_root())
    names = [p.name for p in root.iterdir()] if root.is_dir() else []
    found = [name for name in names if tool.cached(name) is not None]
    return sorted(found, key=lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.split(".")))


def torchgen_env(release_folder: Path | None) -> dict[str, str] | None:
    """The environment of a torchgen process of the release (None: this process's own)."""
    if release_folder is None:
        return None
    paths = [str(release_folder), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def opgen_flags(version: str | None) -> list[str]:
    return ["--torch-version", version] if version else []


def torchgen_package(release_folder: Path | None) -> Path:
    """The torchgen package folder of the release (None: the installed torch's)."""
    if release_folder is not None:
        return release_folder / "torchgen"
    import torchgen

    return Path(torchgen.__file__).parent


def shape_inference_header(release_folder: Path | None) -> Path:
    """The release wheel's lazy shape-inference header (tools/torchgen_release.py keeps it), else the installed
    torch's."""
    if release_folder is not None:
        base = release_folder / "torch"
    else:
        import torch

        base = Path(torch.__file__).parent
    return base / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"


def pytorch_shaped(release_folder: Path | None, root: Path) -> Path:
    """A tree shaped like a PyTorch checkout around the release's torchgen, for the tools that look for
    aten/src/ATen near their own file: beside torchgen (gen_backend_stubs before 2.12) and one folder up
    (gen_lazy_tensor). Makes root/lib/torchgen and returns root/lib, the folder to put on PYTHONPATH."""
    package = torchgen_package(release_folder)
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "torchgen").symlink_to(package)
    for base in (root, root / "lib"):
        (base / "aten" / "src").mkdir(parents=True)
        (base / "aten" / "src" / "ATen").symlink_to(package / "packaged" / "ATen")
    return root / "lib"


def release(version: str | None) -> Release | None:
    """opgen's profile of the release (None: the installed torch's, or a version opgen does not know)."""
    if version is None:
        return None
    from opgen_lsp.releases import resolve

    resolved = resolve(version, "--torch-release")
    return None if resolved is None else resolved.release


def fit_backend_yaml(text: str, version: str | None) -> str:
    """A backend yaml less the ops the release lacks (torch_xla's yaml follows the newest torch; a copy for an
    older release would not list them), as the release matrix fits it."""
    import release_fit

    profile = release(version)
    return text if profile is None else release_fit.fit_to(text, profile)
