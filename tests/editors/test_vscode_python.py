"""VS Code for real: the interpreters the extension finds besides its own setting, end to end in code-server.

* The Python extension's: there is no ms-python.python for code-server here (open-vsx cannot be reached), so
  a stand-in with that id (python_extension_standin/: the part of the documented API of the Python
  extension, @vscode/python-extension's `PythonExtension`, that the extension calls: getActiveEnvironmentPath,
  resolveEnvironment, onDidChangeActiveEnvironmentPath; and "Python: Select Interpreter") is packaged and
  installed beside the README-built .vsix. The server starts with its interpreter; selecting another one
  there restarts it with that one.
* `$VIRTUAL_ENV` in code-server's environment (a shell with a venv activated), the venv's bin/ not on PATH
  (code-server's extension host takes PATH from a login shell): the server comes from that venv, the only
  environment that has opgen_lsp installed of those the extension is told about (no setting, no workspace
  .venv, no Python extension; the .vsix's own copy and python3 on PATH rank after it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from repo_tools import load_tool

from .conftest import EXTENSION, NPM_PREFIX, _install_opgen, _isolated, _venv, editor_env
from .test_vscode import running_code_server, servers_started, vsix  # noqa: F401

pytestmark = [pytest.mark.editors, pytest.mark.slow]

STANDIN = Path(__file__).with_name("python_extension_standin")


FRESH_CLONE = load_tool("fresh_clone")


def _standin_vsix(tmp_path: Path) -> Path:
    """The stand-in packaged with the extension's own vsce."""
    out = tmp_path / "ms-python.python-standin.vsix"
    subprocess.run([str(EXTENSION / "node_modules" / ".bin" / "vsce"), "package", "--no-dependencies", "--skip-license",
                    "--out", str(out)], cwd=STANDIN, check=True, capture_output=True, timeout=300)
    return out


def _venv_with_opgen(folder: Path, wheels: Path) -> Path:
    """A virtual environment without this machine's packages, opgen installed into it from the checkout."""
    python = _venv(folder)
    _install_opgen(python, wheels)
    return python


def _drive(url: str, workspace: Path, user_data: Path, tmp_path: Path, **switch: str) -> dict:
    out = tmp_path / "result.json"
    shots = tmp_path / "shots"
    shots.mkdir(exist_ok=True)
    env = editor_env(CODE_SERVER_URL=url, WORKSPACE=str(workspace), OUT=str(out), SCREENSHOT_DIR=str(shots),
                     USER_DATA=str(user_data),
                     PLAYWRIGHT_CORE=str(NPM_PREFIX / "lib" / "node_modules" / "playwright-core"),
                     CHROMIUM=shutil.which("chromium") or "/usr/bin/chromium", **switch)
    proc = subprocess.run(["node", str(Path(__file__).with_name("vscode_start_e2e.mjs"))], check=False, env=env,
                          capture_output=True, text=True, timeout=600)
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert not result["errors"], "\n".join(result["errors"]) + "\n" + proc.stdout[-2000:]
    return result


def test_the_python_extensions_interpreter_runs_the_server(tmp_path: Path, workspace: Path, vsix: Path,  # noqa: F811
                                                           wheelhouse: Path):
    selected = _venv_with_opgen(tmp_path / "selected", wheelhouse)
    # The one selected next: this interpreter's packages (opgen_lsp among them) seen from a venv of its own; not
    # --system-site-packages, which inside a venv would see the base interpreter's packages, without opgen_lsp.
    other = tmp_path / "other"
    FRESH_CLONE.venv_seeing_this_interpreter(other)
    settings = {"pythonStandIn.environments": [str(selected.parent.parent), str(other)]}
    with running_code_server(tmp_path, workspace, settings, (vsix, _standin_vsix(tmp_path)),
                             _isolated(editor_env())) as (url, user_data, extensions_dir):
        extensions = {p.name.rsplit("-", 1)[0] for p in extensions_dir.glob("*-*")}
        assert "ms-python.python" in extensions, extensions
        result = _drive(url, workspace, user_data, tmp_path, SELECT_INTERPRETER=str(other),
                        EXPECT_RESTART=f"(Python extension ({other / 'bin' / 'python'}))")
        started = servers_started(user_data)
    # The folder the API gave was resolved to its interpreter (resolveEnvironment), which runs the server.
    assert started[0].endswith(f"(Python extension ({selected}))"), started
    assert "torch 2.13" in result["statusBar"], result["statusBar"]
    # Another interpreter selected there (onDidChangeActiveEnvironmentPath): the server restarts with it.
    assert started[-1].endswith(f"(Python extension ({other / 'bin' / 'python'}))"), started
    assert "torch 2.13" in result["statusBarAfterSwitch"], result["statusBarAfterSwitch"]


def test_virtual_env_of_code_servers_environment_runs_the_server(tmp_path: Path, workspace: Path, vsix: Path,  # noqa: F811
                                                                 wheelhouse: Path):
    python = _venv_with_opgen(tmp_path / "activated", wheelhouse)
    env = _isolated(editor_env())
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    assert str(python.parent) not in env["PATH"].split(os.pathsep)
    with running_code_server(tmp_path, workspace, {}, (vsix,), env) as (url, user_data, _extensions):
        result = _drive(url, workspace, user_data, tmp_path)
        started = servers_started(user_data)
    assert started and started[0].endswith(f"(VIRTUAL_ENV ({python}))"), started
    assert "torch 2.13" in result["statusBar"], result["statusBar"]
