"""vscode-extension/: its unit tests (npm test) pass and `npm run package` gives a complete .vsix: the platform
build that carries the server (opgen_lsp, its dependencies, PyYAML's C loader for each CPython 3.11+)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from .conftest import EXTENSION, require
from .test_vscode import build_vsix

pytestmark = [pytest.mark.editors]


def _node_modules():
    return (EXTENSION / "node_modules" / "vscode-languageclient").is_dir() or None


def test_extension_unit_tests():
    assert shutil.which("npm"), "npm (Node 20) is needed"
    require("vscode-extension/node_modules (npm ci)", _node_modules)
    proc = subprocess.run(["npm", "test"], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "fail 0" in proc.stdout, proc.stdout[-2000:]


def test_extension_packages_into_a_vsix():
    require("vscode-extension/node_modules (npm ci)", _node_modules)
    vsix = build_vsix()
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert {"extension/dist/extension.js", "extension/package.json",
            "extension/syntaxes/opgen-schema.injection.tmLanguage.json"} <= names
    assert not any(n.startswith("extension/node_modules/") or n.startswith("extension/src/") for n in names), names
    assert manifest["main"] == "./dist/extension.js"
    assert {c["command"] for c in manifest["contributes"]["commands"]} == {
        "opgenLsp.generate", "opgenLsp.showGenerated", "opgenLsp.restartServer"}
    assert manifest["contributes"]["grammars"][0]["injectTo"] == ["source.yaml"]


def test_the_vsix_carries_the_server_for_this_platform(tmp_path):
    require("vscode-extension/node_modules (npm ci)", _node_modules)
    vsix = build_vsix()
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        vsixmanifest = z.read("extension.vsixmanifest").decode()
        z.extractall(tmp_path, [n for n in names if n.startswith("extension/bundled/")])
    assert re.search(r'TargetPlatform="(linux|darwin|win32|alpine)-\w+"', vsixmanifest), vsixmanifest
    libs = "extension/bundled/libs/"
    for package in ("opgen_lsp/lsp/main.py", "pygls/", "lsprotocol/", "yaml/__init__.py", "attrs/", "cattrs/"):
        assert any(n.startswith(libs + package) for n in names), package
    loaders = {m.group(1) for n in names if (m := re.match(libs + r"yaml/_yaml\.cpython-3(\d+)", n))}
    assert {"11", "12", "13"} <= loaders, loaders
    # The bundle runs by itself: an interpreter without the machine's packages imports it, C loader included.
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=300)
    done = subprocess.run([str(bare / "bin" / "python"), "-c",
                           "import opgen_lsp.lsp.server, yaml; print(yaml.__with_libyaml__, opgen_lsp.__file__)"],
                          env={"PYTHONPATH": str(tmp_path / libs), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True " + str(tmp_path / libs)), done.stdout
