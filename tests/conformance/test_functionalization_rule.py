"""OPG309 against gen.py: an op that writes an argument, in no group and without a CompositeImplicitAutograd
kernel, passes torchgen's parse but fails gen.py's functionalization; opgen check says so on the op's line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from file_trees import aten_source

from opgen_lsp.analysis.check import check_paths

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

REFUSED = "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: foo_\n"
ACCEPTED = {
    "composite-implicit": "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n",  # no dispatch: CompositeImplicitAutograd
    "grouped-by-autogen": REFUSED + "  autogen: foo, foo.out\n",
    "listed-by-torchgen": "- func: resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)\n  dispatch:\n"
                          "    CPU: resize_\n",
}


def _gen_py(folder: Path) -> subprocess.CompletedProcess:
    return reference.run(["-m", "torchgen.gen", "-s", str(folder), "-d", str(folder / "out"),
                          "--aoti-install-dir", str(folder / "aoti"), "--generate", "sources"],
                         cwd=folder, outputs=[folder / "out", folder / "aoti"])


def _opg309(folder: Path) -> list[tuple[int, int]]:
    result = check_paths([str(folder / "native" / "native_functions.yaml")])
    return [(i.diagnostic.span.start_line, i.diagnostic.span.start_col) for i in result.items
            if i.diagnostic.code == "OPG309"]


def test_gen_py_refuses_what_opgen_check_reports(aten: Path, tmp_path: Path):
    folder = aten_source(tmp_path / "refused", aten, REFUSED)
    ran = _gen_py(folder)
    assert ran.returncode != 0 and "Expected composite implicit autograd kernel" in ran.stderr
    assert _opg309(folder) == [(0, 8)]


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_gen_py_accepts_what_opgen_check_lets_through(aten: Path, tmp_path: Path, name: str):
    folder = aten_source(tmp_path / name, aten, ACCEPTED[name])
    ran = _gen_py(folder)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert _opg309(folder) == []
