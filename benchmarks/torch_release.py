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
from pathlib import Path

_TOOL = Path(__file__).resolve().parent.parent / "tools" / "torchgen_release.py"


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--torch-release", metavar="X.Y.Z",
                        help="compare with that release's own torchgen (fetched into the cache by "
                             "tools/torchgen_release.py) on its own native_functions.yaml; default: the installed "
                             "torch's")


def folder(version: str) -> Path:
    """The release's cache folder (torchgen/, torch/version.py); raises RuntimeError when it cannot be had."""
    spec = importlib.util.spec_from_file_location("torchgen_release", _TOOL)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {_TOOL}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.obtain(version))


def torchgen_env(release_folder: Path | None) -> dict[str, str] | None:
    """The environment of a torchgen process of the release (None: this process's own)."""
    if release_folder is None:
        return None
    paths = [str(release_folder), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def opgen_flags(version: str | None) -> list[str]:
    return ["--torch-version", version] if version else []
