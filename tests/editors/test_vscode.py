"""VS Code for real: the .vsix the README builds (`npm run package`: the platform build that carries the
server), installed into code-server 4.100 (VS Code 1.100), driven in Debian's chromium.

Twice: with an interpreter that has no opgen_lsp at all (a bare virtual environment, given as
opgen.server.pythonPath: the extension runs its bundled copy), and with opgen installed only in the
workspace's .venv (the extension finds it there). Checks which server started (the output channel's
log), the status bar item, the Problems panel (the samples' twelve deliberate mistakes), the hover of a
`func:` line (the C++ declaration), "opgen: Show generated code" and "opgen: Generate" (files written
into the yaml's own output folder). Saves the screenshots into the test's folder, and the hover's into
docs/vscode-hover.png when OPGEN_UPDATE_SCREENSHOT=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import (
    EXTENSION,
    NPM_PREFIX,
    ROOT,
    SAMPLES,
    _install_opgen,
    _isolated,
    _venv,
    editor_env,
    expected_codes,
    readme_mistakes,
    require,
)

pytestmark = [pytest.mark.editors, pytest.mark.slow]

VSIX = EXTENSION / "opgen-lsp.vsix"
HOVER_LINE = 12  # - func: scale(Tensor self, Scalar factor) -> Tensor
HOVER_COLUMN = 9


def _code_server() -> Path | None:
    path = NPM_PREFIX / "bin" / "code-server"
    return path if path.exists() and (NPM_PREFIX / "lib" / "node_modules" / "playwright-core").is_dir() else None


def _chromium() -> str | None:
    return shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_vsix(script: str = "package", outputs: tuple[Path, ...] = (VSIX,)) -> Path:
    """npm ci (when needed) and `npm run <script>` (the README's command), unless its .vsix files are newer
    than every source (the extension's and the server's: the .vsix carries the server); the first output."""
    sources = [EXTENSION / "package.json", EXTENSION / "package-lock.json", *EXTENSION.glob("src/*.ts"),
               *EXTENSION.glob("syntaxes/*.json"), *EXTENSION.glob("scripts/*"), ROOT / "pyproject.toml",
               *(ROOT / "server").rglob("*.py")]
    newest = max(p.stat().st_mtime for p in sources)
    if all(out.exists() and out.stat().st_mtime >= newest for out in outputs):
        return outputs[0]
    if not (EXTENSION / "node_modules" / "vscode-languageclient").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=EXTENSION, check=True, timeout=600)
    subprocess.run(["npm", "run", script], cwd=EXTENSION, check=True, timeout=1800)
    assert all(out.exists() for out in outputs), outputs
    return outputs[0]


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The README's .vsix, built (when a source is newer) once per session."""
    require("code-server and playwright-core (npm, tools/.editors)", _code_server)
    return build_vsix()


@pytest.fixture(params=["bundled", "workspace-venv"])
def interpreter(request, workspace: Path, bare_python: Path) -> tuple[dict, str]:
    """(settings, the end of the "Starting" line the output channel logs). The workspace also gets
    samples/aten (templates of its own) for Generate: neither interpreter has torch."""
    shutil.copytree(SAMPLES / "aten", workspace / "aten")
    if request.param == "bundled":
        return {"opgen.server.pythonPath": str(bare_python)}, f"(bundled copy, run by {bare_python})"
    python = _venv(workspace / ".venv")
    _install_opgen(python, request.getfixturevalue("wheelhouse"))
    return {}, f"(workspace .venv ({python}))"


def servers_started(user_data: Path) -> list[str]:
    """The extension's "Starting ..." lines of its output channel (the log file code-server keeps of it)."""
    return [line for log in sorted(user_data.glob("logs/**/*opgen-lsp*.log"))
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if "Starting " in line]


def _server_started(user_data: Path) -> str:
    """The first "Starting ..." line."""
    return next(iter(servers_started(user_data)), "")


# (the .vsix files, in order) -> the extensions folder they were installed into, once per session
_installed: dict[tuple[tuple[str, float], ...], Path] = {}


def installed_extensions(folder: Path, vsixes: tuple[Path, ...], env: dict[str, str]) -> Path:
    """An extensions folder with these .vsix files installed by code-server (`--install-extension`): `folder`, or
    the one an earlier test of the session installed the same files into (code-server only reads it)."""
    key = tuple((str(v), v.stat().st_mtime) for v in vsixes)
    if key in _installed:
        return _installed[key]
    binary = require("code-server and playwright-core (npm, tools/.editors)", _code_server)
    for vsix in vsixes:
        subprocess.run([str(binary), "--user-data-dir", str(folder.with_name(folder.name + "-install-data")),
                        "--extensions-dir", str(folder), "--install-extension", str(vsix)], check=True, env=env,
                       timeout=300, capture_output=True)
    assert any(folder.glob("opgen.opgen-lsp-*")), "the .vsix was not installed"
    _installed[key] = folder
    return folder


@contextlib.contextmanager
def running_code_server(tmp_path: Path, workspace: Path, settings: dict, vsixes: tuple[Path, ...],
                        env: dict[str, str]) -> Iterator[tuple[str, Path, Path]]:
    """code-server on a free port with these user settings and extensions, opening `workspace`, in `env`;
    (its URL, its user-data folder, its extensions folder)."""
    binary = require("code-server and playwright-core (npm, tools/.editors)", _code_server)
    require("chromium (Debian's package chromium)", _chromium)
    user_data = tmp_path / "code-user"
    extensions = installed_extensions(tmp_path / "code-extensions", vsixes, env)
    (user_data / "User").mkdir(parents=True)
    (user_data / "User" / "settings.json").write_text(json.dumps({
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "update.mode": "none",
        "workbench.enableExperiments": False,
        "workbench.tips.enabled": False,
        "chat.disableAIFeatures": True,
        "editor.hover.delay": 100,
        **settings,
    }), encoding="utf-8")
    common = [str(binary), "--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    port = _free_port()
    log = open(tmp_path / "code-server.log", "w")
    proc = subprocess.Popen(
        [*common, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
         "--ignore-last-opened", str(workspace)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError("code-server did not start:\n" + (tmp_path / "code-server.log").read_text()) from None
                time.sleep(0.3)
        yield url, user_data, extensions
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def script_env(url: str, workspace: Path, out: Path, shots: Path, **extra: str) -> dict[str, str]:
    """The environment of a code-server script (tests/editors/vscode_*_e2e.mjs): where code-server is, what to
    open, where to write its result and screenshots, playwright-core and chromium."""
    shots.mkdir(exist_ok=True)
    return editor_env(CODE_SERVER_URL=url, WORKSPACE=str(workspace), OUT=str(out), SCREENSHOT_DIR=str(shots),
                      PLAYWRIGHT_CORE=str(NPM_PREFIX / "lib" / "node_modules" / "playwright-core"),
                      CHROMIUM=shutil.which("chromium") or "/usr/bin/chromium", **extra)


@pytest.fixture
def code_server(tmp_path: Path, workspace: Path, interpreter, vsix: Path):
    with running_code_server(tmp_path, workspace, interpreter[0], (vsix,),
                             _isolated(editor_env())) as (url, user_data, _extensions):
        yield url, user_data, interpreter[1]


def test_vscode_problems_hover_generate(code_server, workspace: Path, tmp_path: Path):
    code_server, user_data, started_with = code_server
    out = tmp_path / "result.json"
    shots = tmp_path / "shots"
    shots.mkdir()
    env = editor_env(
        CODE_SERVER_URL=code_server, WORKSPACE=str(workspace), OUT=str(out), SCREENSHOT_DIR=str(shots),
        PLAYWRIGHT_CORE=str(NPM_PREFIX / "lib" / "node_modules" / "playwright-core"),
        CHROMIUM=shutil.which("chromium") or "/usr/bin/chromium",
        HOVER_LINE=str(HOVER_LINE), HOVER_COLUMN=str(HOVER_COLUMN), GENERATE_FILE="aten/native/native_functions.yaml",
    )
    proc = subprocess.run(["node", str(Path(__file__).with_name("vscode_e2e.mjs"))], env=env,
                          capture_output=True, text=True, timeout=600)
    keep = os.environ.get("OPGEN_E2E_ARTIFACTS")
    if keep:
        shutil.copytree(shots, Path(keep) / "vscode", dirs_exist_ok=True)
        shutil.copy(tmp_path / "code-server.log", Path(keep) / "vscode" / "code-server.log")
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert not result["errors"], "\n".join(result["errors"]) + "\n" + proc.stdout[-2000:]
    if os.environ.get("OPGEN_UPDATE_SCREENSHOT") == "1":
        shutil.copy(shots / "vscode-hover.png", ROOT / "docs" / "vscode-hover.png")

    # The server the extension found: its bundled copy, or the workspace's .venv.
    started = _server_started(user_data)
    assert started.endswith(started_with), started
    # The status bar: the server runs and tells the torch release native_functions.yaml is checked as, and
    # where that came from (samples/ names none: the default).
    assert "opgen torch 2.13.0 (default)" in result["statusBar"], result["statusBar"]

    # The Problems panel: every deliberate mistake, by code, in its file.
    problems = " | ".join(result["problems"])
    codes = expected_codes()
    for code in codes["native_functions.yaml"] + codes["tags.yaml"]:
        assert code in problems, f"{code} not in the Problems panel: {problems}"
    assert sum(1 for row in result["problems"] if "OPG" in row) == 12, problems
    for _name, line, code in readme_mistakes():  # at the line samples/README.md gives
        assert any(f"{code} [Ln {line}," in row.replace("(", " ").replace(")", "") for row in result["problems"]), f"{code} at line {line}: {problems}"  # noqa: E501

    # The hover of a func: line: the op and its at:: declaration first, the rest one link away.
    hover = result["hover"]
    assert hover.startswith("aten::scale (functional"), hover
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor);" in hover, hover
    assert hover.rstrip().endswith("opgen: Show generated code") and len(hover.splitlines()) <= 40, hover

    # Its link opens the op's whole generated code (the hover's link runs opgenLsp.showGenerated).
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor)" in result["linkText"], result["linkText"][:2000]

    # Show generated code (the op at the cursor): a read-only document with its C++.
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor)" in result["shownText"], result["shownText"][:2000]

    # Generate wrote gen.py's files into aten/native/native_functions.yaml's own output folder (samples/aten:
    # templates of its own, so that no torch is needed), the AOTI shims with them, and named nothing as missing.
    assert "written" in result["generateMessage"] and "not generated" not in result["generateMessage"], \
        result["generateMessage"]
    out_dir = workspace / "build" / "aten"
    assert (out_dir / "aoti" / "c_shim_cpu.h").is_file()
    written = sorted(p.name for p in out_dir.rglob("*") if p.is_file())
    for name in ("Functions.h", "NativeFunctions.h", "RegisterCPU_0.cpp"):
        assert any(n.startswith(name.split("_")[0].split(".")[0]) for n in written), written
    assert "Functions.h" in written, written
    assert "scale" in (out_dir / "Functions.h").read_text()
