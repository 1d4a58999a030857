"""vscode-extension/: its unit tests (npm test) pass and `npm run package` gives a complete .vsix: the platform
build that carries the server (opgen_lsp, its dependencies, PyYAML's C loader for each CPython 3.11+);
`npm run package:all` gives one such .vsix for each platform VS Code ships that matters, each with that
platform's compiled modules."""

from __future__ import annotations

import json
import re
import shutil
import struct
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
        "opgenLsp.generate", "opgenLsp.showGenerated", "opgenLsp.scaffold", "opgenLsp.restartServer"}
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
    for package in ("opgen_lsp/serve.py", "pygls/", "lsprotocol/", "yaml/__init__.py", "attrs/", "cattrs/"):
        assert any(n.startswith(libs + package) for n in names), package
    loaders = {m.group(1) for n in names if (m := re.match(libs + r"yaml/_yaml\.cpython-3(\d+)", n))}
    assert {"11", "12", "13"} <= loaders, loaders
    # The bundle runs by itself: an interpreter without the machine's packages imports it, C loader included.
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=300)
    done = subprocess.run([str(bare / "bin" / "python"), "-c",
                           "import opgen_lsp.serve, yaml; print(yaml.__with_libyaml__, opgen_lsp.__file__)"],
                          env={"PYTHONPATH": str(tmp_path / libs), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True " + str(tmp_path / libs)), done.stdout


# vsce target -> (the file name PyYAML's C loader has there, for CPython 3.XX; the machine its code is for).
PLATFORMS = {
    "linux-x64": (r"_yaml\.cpython-3(\d+)-x86_64-linux-gnu\.so", "ELF x86-64"),
    "linux-arm64": (r"_yaml\.cpython-3(\d+)-aarch64-linux-gnu\.so", "ELF aarch64"),
    "darwin-x64": (r"_yaml\.cpython-3(\d+)-darwin\.so", "Mach-O x86-64"),
    "darwin-arm64": (r"_yaml\.cpython-3(\d+)-darwin\.so", "Mach-O arm64"),
    "win32-x64": (r"_yaml\.cp3(\d+)-win_amd64\.pyd", "PE x86-64"),
}


def machine(binary: bytes) -> str:
    """The format and CPU of a compiled module, from its header (ELF e_machine, Mach-O cputype, PE Machine)."""
    if binary[:4] == b"\x7fELF":
        (code,) = struct.unpack_from("<H", binary, 18)
        return "ELF " + {62: "x86-64", 183: "aarch64"}.get(code, str(code))
    if binary[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian (a universal file would be 0xcafebabe)
        (cpu,) = struct.unpack_from("<I", binary, 4)
        return "Mach-O " + {0x01000007: "x86-64", 0x0100000C: "arm64"}.get(cpu, hex(cpu))
    if binary[:2] == b"MZ":
        (offset,) = struct.unpack_from("<I", binary, 0x3C)
        assert binary[offset:offset + 4] == b"PE\0\0"
        (code,) = struct.unpack_from("<H", binary, offset + 4)
        return "PE " + {0x8664: "x86-64", 0xAA64: "arm64"}.get(code, hex(code))
    return "unknown " + binary[:4].hex()


@pytest.mark.slow
def test_package_all_gives_a_vsix_per_platform_with_its_compiled_modules():
    require("vscode-extension/node_modules (npm ci)", _node_modules)
    outputs = tuple(EXTENSION / f"opgen-lsp-{target}.vsix" for target in PLATFORMS)
    build_vsix("package:all", outputs)
    libs = "extension/bundled/libs/"
    for target, vsix in zip(PLATFORMS, outputs):
        pattern, cpu = PLATFORMS[target]
        with zipfile.ZipFile(vsix) as z:
            names = set(z.namelist())
            assert f'TargetPlatform="{target}"' in z.read("extension.vsixmanifest").decode(), target
            for package in ("opgen_lsp/serve.py", "pygls/", "lsprotocol/", "yaml/__init__.py", "yaml/cyaml.py",
                            "attrs/", "cattrs/"):
                assert any(n.startswith(libs + package) for n in names), (target, package)
            compiled = sorted(n for n in names if n.endswith((".so", ".pyd", ".dylib", ".dll")))
            loaders = {m.group(1) for n in compiled if (m := re.fullmatch(libs + "yaml/" + pattern, n))}
            # PyYAML's C loader for each CPython 3.11+ (3.14 too: its wheels exist), and nothing compiled else.
            assert loaders == {"11", "12", "13", "14"}, (target, compiled)
            assert len(compiled) == len(loaders), (target, compiled)
            machines = {n: machine(z.read(n)) for n in compiled}
        assert set(machines.values()) == {cpu}, (target, machines)
