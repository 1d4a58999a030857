"""Each torch release's own native_functions.yaml: from the torchgen cache (tools/torchgen_release.py), or the
installed torch's ("installed"). A release that is not there skips the test, with the command that fetches it;
in CI (CI set) it is fetched."""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@cache
def torchgen_release_tool():
    """tools/torchgen_release.py, loaded once."""
    spec = importlib.util.spec_from_file_location("torchgen_release", ROOT / "tools" / "torchgen_release.py")
    module = sys.modules.setdefault("torchgen_release", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def release_native(version: str) -> Path:
    if version == "installed":
        torchgen = pytest.importorskip("torchgen")
        return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    tool = torchgen_release_tool()
    folder = tool.cached(version)
    if folder is None and os.environ.get("CI"):  # CI fetches it, as the release matrix does (tests ran in any order)
        try:
            folder = tool.obtain(version)
        except (RuntimeError, OSError) as exc:
            pytest.fail(f"torch {version}'s torchgen cannot be had in CI: {exc}")
    if folder is None:
        pytest.skip(f"torch {version}'s torchgen is not in the cache: python3 tools/torchgen_release.py {version}")
    return folder / "torchgen" / "packaged" / "ATen" / "native" / "native_functions.yaml"
