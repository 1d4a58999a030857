"""Reference outputs produced by torchgen 2.13, shared by the conformance tests of a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def torchgen_gen_output(aten: Path, tmp_path_factory) -> Path:
    """gen.py's output on the real native_functions.yaml (plain layout); its install dir."""
    out = tmp_path_factory.mktemp("torchgen_gen")
    subprocess.run(
        [sys.executable, "-m", "torchgen.gen", "-s", str(aten), "-d", str(out / "aten"),
         "--headeronly-install-dir", str(out / "headeronly"), "--aoti-install-dir", str(out / "aoti")],
        cwd=out, check=True, capture_output=True, text=True,
    )
    return out / "aten"
