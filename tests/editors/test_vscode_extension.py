"""vscode-extension/: its unit tests (npm test) pass and `npm run package` gives a complete .vsix."""

from __future__ import annotations

import json
import shutil
import subprocess
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
