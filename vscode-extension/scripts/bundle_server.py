"""Bundles opgen_lsp and its dependencies into bundled/libs, for a platform .vsix (`npm run package`).

The extension runs the bundle with any CPython 3.11+ it finds (PYTHONPATH=bundled/libs). Pure-Python
packages serve every version and platform (none of opgen's dependencies has a platform marker); a
compiled module (PyYAML's C loader, `yaml/_yaml.cpython-3XX-<platform>.so`, `_yaml.cp3XX-win_amd64.pyd`)
serves one CPython version on one platform. So the packages are installed here, their compiled modules
taken out, and those of the same release's wheels for the .vsix's platform (`--platform`, a vsce target;
default: this machine) and each CPython version put in: each interpreter imports the one its ABI tag names.

Usage: python3 scripts/bundle_server.py [--platform linux-x64|linux-arm64|darwin-x64|darwin-arm64|win32-x64]
                                        [--target DIR]   (from vscode-extension/; needs pip and the index)
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
REPOSITORY = EXTENSION.parent
# The CPython versions the bundle serves (requires-python of pyproject.toml up to the newest release).
VERSIONS = ("3.11", "3.12", "3.13", "3.14")
COMPILED = (".so", ".pyd")
# vsce's platform targets -> the pip platform tag of the wheels their compiled modules come from (pip takes
# the older tags of the same family too). The oldest systems VS Code itself runs on: glibc 2.28, macOS 11.
WHEEL_PLATFORMS = {
    "linux-x64": "manylinux_2_28_x86_64",
    "linux-arm64": "manylinux_2_28_aarch64",
    "darwin-x64": "macosx_11_0_x86_64",
    "darwin-arm64": "macosx_11_0_arm64",
    "win32-x64": "win_amd64",
}


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"], check=True)


def compiled_distributions(target: Path) -> dict[str, tuple[str, list[str]]]:
    """{distribution: (version, [compiled files, relative to target])} of the installed distributions."""
    out = {}
    for info in sorted(target.glob("*.dist-info")):
        record = info / "RECORD"
        if not record.is_file():
            continue
        with open(record, newline="", encoding="utf-8") as f:
            files = [row[0] for row in csv.reader(f) if row and row[0].endswith(COMPILED)]
        if files:
            name, version = info.name.removesuffix(".dist-info").rsplit("-", 1)
            out[name] = (version, files)
    return out


def platform_tags(platform: str | None) -> list[str]:
    """The pip platform tags of a vsce target; None: this machine's (all it takes, best first)."""
    if platform is not None:
        return [WHEEL_PLATFORMS[platform]]
    from pip._vendor.packaging.tags import platform_tags as tags

    return list(tags())


def replace_compiled(target: Path, platform: str | None) -> list[str]:
    """Swap the installed compiled modules for those of the platform's wheels, one per CPython version of
    VERSIONS; returns the files put in."""
    added = []
    platforms = [arg for tag in platform_tags(platform) for arg in ("--platform", tag)]
    for name, (version, files) in compiled_distributions(target).items():
        folders = {Path(f).parent for f in files}
        for file in files:
            (target / file).unlink(missing_ok=True)
        for python in VERSIONS:
            abi = "cp" + python.replace(".", "")
            with tempfile.TemporaryDirectory() as wheels:
                try:
                    pip("download", "--no-deps", "--only-binary=:all:", "--python-version", python,
                        "--implementation", "cp", "--abi", abi, *platforms, "-d", wheels, f"{name}=={version}")
                except subprocess.CalledProcessError:
                    if python == VERSIONS[0]:
                        sys.exit(f"bundle-server: no {name} {version} wheel for CPython {python} on "
                                 f"{platform or 'this machine'}: the bundle would lack its compiled modules")
                    # No wheel for a newer version yet: that interpreter runs the pure-Python fallback, if any.
                    print(f"bundle-server: no {name} {version} wheel for CPython {python}; skipped", file=sys.stderr)
                    continue
                for wheel in Path(wheels).glob("*.whl"):
                    with zipfile.ZipFile(wheel) as z:
                        for member in z.namelist():
                            if member.endswith(COMPILED) and Path(member).parent in folders:
                                (target / member).write_bytes(z.read(member))
                                added.append(member)
    return added


def bundle(target: Path, platform: str | None) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    pip("install", "--no-compile", "--target", str(target), str(REPOSITORY))
    added = replace_compiled(target, platform)
    # Console scripts and caches are of no use inside the extension.
    shutil.rmtree(target / "bin", ignore_errors=True)
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    loaders = sorted(p.name for p in (target / "yaml").glob("_yaml*"))
    print(f"bundled opgen_lsp into {target} for {platform or 'this machine'}; PyYAML's C loader: "
          f"{', '.join(loaders)} ({len(added)} compiled modules)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--platform", choices=sorted(WHEEL_PLATFORMS),
                        help="the vsce target whose compiled modules to bundle (default: this machine's)")
    parser.add_argument("--target", type=Path, default=EXTENSION / "bundled" / "libs")
    args = parser.parse_args()
    bundle(args.target.resolve(), args.platform)


if __name__ == "__main__":
    main()
