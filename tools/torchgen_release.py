#!/usr/bin/env python3
"""Obtain one torch release's torchgen (the reference for that release) into a cache.

    python3 tools/torchgen_release.py 2.15.0 [2.14.1 ...]    # prints each release's cache folder

Each release lands in ``$XDG_CACHE_HOME/opgen/torchgen/X`` (default ``~/.cache/opgen/torchgen/X``)
laid out as a site-packages folder: ``torchgen/`` (with ``packaged/ATen`` and ``packaged/autograd``)
and ``torch/version.py`` beside it (and the lazy shape-inference header gen_lazy_tensor reads, and
``torch/_native/``, whose ``ops/<op>/aot.py`` declarations gen.py reads from 2.15 on), so
``PYTHONPATH=<folder> python -m torchgen.gen`` runs that
release's gen.py and opgen detects the release from the folder. The wheel is fetched with
``pip download torch==X --no-deps`` (the configured indexes first; if they refuse, as a pip
configuration capping torch does, once more with ``PIP_CONFIG_FILE=/dev/null``), only those
files are extracted, and the wheel is deleted. Stdlib only; exit status 1 names what failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

COMPLETE = ".complete"  # written last: a folder without it (or with another LAYOUT) is extracted again
LAYOUT = "torchgen, torch/version.py, the lazy shape-inference header, torch/_native"
SHAPE_HEADER = "torch/include/torch/csrc/lazy/core/shape_inference.h"  # gen_lazy_tensor's default input


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opgen" / "torchgen"


def release_folder(version: str) -> Path:
    return cache_root() / version


def cached(version: str) -> Path | None:
    folder = release_folder(version)
    try:
        done = (folder / COMPLETE).read_text(encoding="utf-8")
    except OSError:
        return None
    return folder if done == f"torch {version}\n{LAYOUT}\n" else None


def _wanted(name: str) -> bool:
    # torch/_native: the native-AOT declarations (ops/<op>/aot.py) gen.py reads from 2.15 on, with the package
    # around them (a release without it has none: nothing extracted)
    return name.startswith(("torchgen/", "torch/_native/")) or name in ("torch/version.py", SHAPE_HEADER)


def _download(version: str, into: Path) -> Path:
    """The wheel of torch==version, downloaded into `into`; raises RuntimeError with pip's last words."""
    command = [sys.executable, "-m", "pip", "download", f"torch=={version}", "--no-deps", "-d", str(into)]
    failures = []
    for environment in (dict(os.environ), dict(os.environ, PIP_CONFIG_FILE=os.devnull)):
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
        wheels = sorted(into.glob(f"torch-{version}*.whl"))
        if done.returncode == 0 and wheels:
            return wheels[0]
        failures.append((done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"])
    raise RuntimeError(f"pip download torch=={version} failed: " + " / ".join(f[0] for f in failures))


def _extract(wheel: Path, folder: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = [name for name in archive.namelist() if _wanted(name)]
        if not any(name == "torchgen/gen.py" for name in names):
            raise RuntimeError(f"{wheel.name} holds no torchgen/gen.py")
        archive.extractall(folder, names)


def obtain(version: str) -> Path:
    """The cache folder of `version`'s torchgen, downloading it when absent. Raises RuntimeError."""
    folder = cached(version)
    if folder is not None:
        return folder
    target = release_folder(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{version}-") as scratch:
        scratch_path = Path(scratch)
        wheel = _download(version, scratch_path / "wheel")
        staged = scratch_path / "tree"
        _extract(wheel, staged)
        wheel.unlink()
        (staged / COMPLETE).write_text(f"torch {version}\n{LAYOUT}\n", encoding="utf-8")
        if cached(version) is not None:  # another process (a parallel test run) got it meanwhile: keep that one
            return target
        shutil.rmtree(target, ignore_errors=True)  # (an incomplete folder, or one of another layout)
        try:
            staged.rename(target)  # same file system: the folder appears whole or not at all
        except OSError:
            if cached(version) is None:
                raise
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", metavar="X.Y.Z", help="torch releases, e.g. 2.15.0")
    arguments = parser.parse_args(argv)
    status = 0
    for version in arguments.versions:
        try:
            print(obtain(version))
        except (RuntimeError, OSError, zipfile.BadZipFile) as error:
            print(f"torchgen_release: torch {version}: {error}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
