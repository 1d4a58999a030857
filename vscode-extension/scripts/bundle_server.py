"""Bundles opgen_lsp and its dependencies into bundled/libs, for the platform .vsix (`npm run package`).

The extension runs the bundle with any CPython 3.11+ it finds (PYTHONPATH=bundled/libs). Pure-Python
packages serve every version; a compiled module (PyYAML's C loader, `yaml/_yaml.cpython-3XX-<platform>.so`)
serves one, so the same release's wheels for the other CPython versions are fetched for this platform
and their compiled modules put beside it: each interpreter imports the one its ABI tag names.

Usage: python3 scripts/bundle_server.py [--target DIR]   (from vscode-extension/; needs pip and the index)
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


def platform_tags() -> list[str]:
    from pip._vendor.packaging.tags import platform_tags as tags

    return list(tags())


def add_other_versions(target: Path) -> list[str]:
    """Put the compiled modules of the other CPython versions beside this one's; returns what was added."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    added = []
    platforms = [arg for tag in platform_tags() for arg in ("--platform", tag)]
    for name, (version, files) in compiled_distributions(target).items():
        folders = {Path(f).parent for f in files}
        for python in VERSIONS:
            if python == here:
                continue
            abi = "cp" + python.replace(".", "")
            with tempfile.TemporaryDirectory() as wheels:
                try:
                    pip("download", "--no-deps", "--only-binary=:all:", "--python-version", python,
                        "--implementation", "cp", "--abi", abi, *platforms, "-d", wheels, f"{name}=={version}")
                except subprocess.CalledProcessError:
                    # No wheel for that version (e.g. a dependency only older Pythons need): nothing to add.
                    print(f"bundle-server: no {name} {version} wheel for CPython {python}; skipped", file=sys.stderr)
                    continue
                for wheel in Path(wheels).glob("*.whl"):
                    with zipfile.ZipFile(wheel) as z:
                        for member in z.namelist():
                            if member.endswith(COMPILED) and Path(member).parent in folders:
                                (target / member).write_bytes(z.read(member))
                                added.append(member)
    return added


def bundle(target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    pip("install", "--no-compile", "--target", str(target), str(REPOSITORY))
    added = add_other_versions(target)
    # Console scripts and caches are of no use inside the extension.
    shutil.rmtree(target / "bin", ignore_errors=True)
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    loaders = sorted(p.name for p in (target / "yaml").glob("_yaml*"))
    print(f"bundled opgen_lsp into {target.relative_to(EXTENSION)}; PyYAML's C loader: {', '.join(loaders)}"
          + (f"; {len(added)} compiled modules of other CPython versions" if added else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--target", type=Path, default=EXTENSION / "bundled" / "libs")
    bundle(parser.parse_args().target.resolve())


if __name__ == "__main__":
    main()
