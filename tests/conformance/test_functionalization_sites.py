"""Functionalization rules on a release's own native_functions.yaml, against that release's gen.py: gen.py fails
where `opgen check` reports the rule (on the line that is wrong) and passes where the check is clean.

- view_copy with a kernel other than view_copy_symint (OPG128): torch 2.13's gen.py on its mutated real file;
- a new multi-output view op (OPG128, torch 2.15 only): gen.py 2.15 fails on it (a small file fails gen.py 2.15
  for want of its CUDA kernel list, so the op is added to the release's own file); the same op is fine for gen.py
  2.15 as CompositeImplicitAutograd, and for gen.py 2.14 as it is;
- a single-output view whose copy has several outputs (OPG128 from torch 2.9, the ViewMeta classes): gen.py 2.9
  fails on it, gen.py 2.8 takes it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from codegen.raise_sites import INPUTS, MULTI_OUTPUT_VIEW
from file_trees import aten_source

from opgen_lsp.analysis.check import check_paths

from .test_release_matrix import release_folder

pytestmark = pytest.mark.slow


def _gen_py(source: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """gen.py of the installed torch, or of the release folder `pythonpath` (before 2.12 it has no
    --headeronly-install-dir)."""
    headeronly = pythonpath is None or "--headeronly-install-dir" in (pythonpath / "torchgen" / "gen.py").read_text()
    return reference.run(["-m", "torchgen.gen", "-s", str(source), "-d", str(source / "out"),
                          *(["--headeronly-install-dir", str(source / "headeronly")] if headeronly else []),
                          "--aoti-install-dir", str(source / "aoti")], cwd=source,
                         outputs=[source / "out", source / "headeronly", source / "aoti"],
                         pythonpath=[pythonpath] if pythonpath else [])


def _errors(source: Path, version: str) -> list[tuple[str, int, int]]:
    result = check_paths([str(source / "native" / "native_functions.yaml")], torch_version=version)
    return [(i.diagnostic.code, i.diagnostic.span.start_line, i.diagnostic.span.start_col) for i in result.items
            if i.diagnostic.is_error]


def _position(text: str, marker: str, after: int = 0) -> tuple[int, int]:
    offset = text.index(marker, after)
    return text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


@pytest.mark.conformance
def test_view_copy_with_another_kernel_name(aten: Path, tmp_path: Path) -> None:
    original = (aten / "native" / "native_functions.yaml").read_text(encoding="utf-8")
    line = "    CompositeExplicitAutogradNonFunctional: view_copy_symint\n"
    assert original.count(line) == 1
    text = original.replace(line, line.replace("view_copy_symint", "view_copy_mine"))
    source = aten_source(tmp_path, aten, text)
    ran = _gen_py(source)
    assert ran.returncode != 0 and "Expected kernel 'view_copy_symint', got 'view_copy_mine'" in ran.stderr, \
        ran.stderr[-2000:]
    assert _errors(source, "2.13") == [("OPG128", *_position(text, "view_copy_mine"))]


def _with_op(folder: Path, op: str) -> tuple[Path, str]:
    aten = folder / "torchgen" / "packaged" / "ATen"
    return aten, (aten / "native" / "native_functions.yaml").read_text(encoding="utf-8") + op


@pytest.mark.versions
def test_a_new_multi_output_view_op_fails_gen_py_2_15(tmp_path: Path) -> None:
    folder = release_folder("2.15.0")
    aten, text = _with_op(folder, MULTI_OUTPUT_VIEW)
    source = aten_source(tmp_path, aten, text)
    ran = _gen_py(source, folder)
    assert ran.returncode != 0 and "no single-output replay for foo" in ran.stderr, ran.stderr[-2000:]
    assert _errors(source, "2.15") == [("OPG128", *_position(text, "foo(", len(text) - len(MULTI_OUTPUT_VIEW)))]


@pytest.mark.versions
@pytest.mark.parametrize("version,op", [
    ("2.15.0", "- func: foo(Tensor(a -> *) self, int chunks) -> Tensor(a)[]\n"),  # CompositeImplicitAutograd
    ("2.14.1", MULTI_OUTPUT_VIEW),  # before 2.15 every multi-output view op replays the whole op
], ids=["composite-implicit-on-2.15", "any-on-2.14"])
def test_gen_py_takes_the_multi_output_view_ops_the_check_takes(version: str, op: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    aten, text = _with_op(folder, op)
    source = aten_source(tmp_path, aten, text)
    ran = _gen_py(source, folder)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert _errors(source, version.rsplit(".", 1)[0]) == []


@pytest.mark.versions
@pytest.mark.parametrize("version,refused", [("2.9.1", True), ("2.8.0", False)])
def test_a_view_writing_its_input_fails_from_the_view_meta_classes(version: str, refused: bool,
                                                                    tmp_path: Path) -> None:
    folder = release_folder(version)
    text, marker = INPUTS["view-writing-its-input"]
    source = aten_source(tmp_path, folder / "torchgen" / "packaged" / "ATen", text)
    ran = _gen_py(source, folder)
    assert (ran.returncode != 0 and "UnsatError" in ran.stderr) if refused else ran.returncode == 0, \
        ran.stderr[-2000:]
    assert _errors(source, version.rsplit(".", 1)[0]) == ([("OPG128", *_position(text, marker))] if refused else [])
