"""The editor tests: real clients (code-server in chromium, Neovim, Emacs, pre-commit, lintrunner).

Everything they need is installed by tools/setup_editors.sh. A test whose tool is missing runs that
script first when CI=true (or OPGEN_SETUP_EDITORS=1), and is skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
SETUP = ROOT / "tools" / "setup_editors.sh"
PREFIX = ROOT / "tools" / ".editors"
NPM_PREFIX = PREFIX / "npm"
EXTENSION = ROOT / "vscode-extension"
MISTAKE = "# MISTAKE "


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "editors: runs a real editor or tool installed by tools/setup_editors.sh")


def must_run() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("OPGEN_SETUP_EDITORS") == "1"


_setup_done = False


def run_setup() -> None:
    """Runs tools/setup_editors.sh once per session."""
    global _setup_done
    if _setup_done:
        return
    _setup_done = True
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(SETUP)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        pytest.fail(f"tools/setup_editors.sh failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def require(what: str, find) -> object:
    """find() -> the tool or None; runs the setup when it is None and this run must not skip."""
    found = find()
    if found:
        return found
    if not must_run():
        pytest.skip(f"{what} is not installed: run `bash tools/setup_editors.sh` (CI=true runs it by itself)")
    run_setup()
    found = find()
    if not found:
        pytest.fail(f"{what} is still missing after tools/setup_editors.sh")
    return found


def python_bin_dir() -> str:
    return str(Path(sys.executable).parent)


def editor_env(**extra: str) -> dict[str, str]:
    """The environment of an editor: this interpreter's scripts first on PATH (opgen-lsp, opgen)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([python_bin_dir(), env.get("PATH", "")])
    env.update(extra)
    return env


def without_mistakes(text: str) -> str:
    """The yaml with every `# MISTAKE` comment and the entry below it removed (as tests/test_samples.py)."""
    lines = text.splitlines(keepends=True)
    keep: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith(MISTAKE):
            i += 2  # the comment and the entry's first line
            while i < len(lines) and lines[i].startswith(" "):
                i += 1
            continue
        keep.append(lines[i])
        i += 1
    return "".join(keep)


def expected_codes() -> dict[str, list[str]]:
    """{file: [code, ...]} of the samples' deliberate mistakes (one `# MISTAKE OPGnnn:` marker each)."""
    out: dict[str, list[str]] = {}
    for name in ("native_functions.yaml", "tags.yaml"):
        lines = (SAMPLES / name).read_text(encoding="utf-8").splitlines()
        out[name] = [line.split()[2].rstrip(":") for line in lines if line.startswith(MISTAKE)]
    return out


def readme_mistakes() -> list[tuple[str, int, str]]:
    """(file, 1-based line, code) of each row of samples/README.md's table of deliberate mistakes."""
    rows = []
    for line in (SAMPLES / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].endswith(".yaml") and cells[1].isdigit() and cells[2].startswith("OPG"):
            rows.append((cells[0], int(cells[1]), cells[2]))
    return rows


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """samples/native_functions.yaml and tags.yaml (with their mistakes), and clean/: the same without them."""
    ws = tmp_path / "ws"
    (ws / "clean").mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        text = (SAMPLES / name).read_text(encoding="utf-8")
        (ws / name).write_text(text, encoding="utf-8")
        (ws / "clean" / name).write_text(without_mistakes(text), encoding="utf-8")
    return ws


def which_opgen() -> str:
    path = shutil.which("opgen", path=editor_env()["PATH"])
    assert path, "opgen is not installed (pip install -e .)"
    return path


def _isolated(env) -> dict[str, str]:
    """The server must come from where the test puts it (the .vsix, the workspace's .venv, ...), not from a
    PYTHONPATH or an activated virtual environment (VIRTUAL_ENV, which the extension looks at) of the test run."""
    return {k: v for k, v in env.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _venv(folder: Path) -> Path:
    """A virtual environment without this machine's packages (so without opgen_lsp); its interpreter. Without pip:
    ensurepip took over 300 s at a load average of 25 on the 2-core machine, and what gets installed into it is
    installed by this interpreter's pip (`--python`, see _install_opgen)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=1200,
                   capture_output=True)
    python = folder / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import opgen_lsp"], env=_isolated(os.environ),
                          capture_output=True).returncode != 0
    return python


def _install_opgen(python: Path, wheelhouse: Path) -> None:
    """opgen, as `pip install <checkout>` installs it, into the environment of `python`: from the session's wheels
    of the checkout and its dependencies (built once: a build per environment cost a minute under load)."""
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--disable-pip-version-check", "--no-compile", "--no-index", "--find-links", str(wheelhouse), "opgen-lsp"],
                   check=True, timeout=900, capture_output=True, env=_isolated(os.environ))
    assert subprocess.run([str(python), "-c", "import opgen_lsp"], env=_isolated(os.environ),
                          capture_output=True).returncode == 0


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """The wheels of this checkout and of its dependencies, built once per session."""
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--wheel-dir",
                    str(out), str(ROOT)], check=True, timeout=900, capture_output=True, env=_isolated(os.environ))
    return out


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory) -> Path:
    """An interpreter without opgen_lsp (a bare venv): the extension runs its bundled copy with it. One per session:
    nothing writes into it."""
    return _venv(tmp_path_factory.mktemp("bare") / "venv")
