"""SymInt returns (CppSpelling.symint_returns_follow_signature): until 2.0 a SymInt return follows the signature's
symint flag (int64_t in the int signature) and makes the op a symint one (`_symint` twins in Functions.h,
RedispatchFunctions.h, the CompositeImplicitAutograd declarations; int64_t in NativeFunctions.h and
Declarations.yaml); from 2.1 a return is always c10::SymInt and only arguments count. Neither release's own yaml
has such an op, so gen.py of 2.0.1 and 2.1.2 runs on its own yaml with two added (composite ones, one a method
too), and opgen's files are compared with all of its (RegisterSchema.cpp modulo tag order, as in the
matrix)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import reference
from file_trees import assert_same_files, files_under, first_difference

from opgen_lsp.cli import main

from .test_release_matrix import SCHEMA, _aten, release, release_folder, tags_sorted

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ENTRIES = """
- func: opgen_sym_length.int(Tensor self, int dim) -> SymInt
  variants: function

- func: opgen_sym_lengths(Tensor self) -> SymInt[]
  variants: function, method
"""


@pytest.mark.parametrize("version", ["2.0.1", "2.1.2"])
def test_symint_returns_as_the_release_generates_them(version: str, tmp_path: Path, monkeypatch) -> None:
    folder = release_folder(version)
    aten = tmp_path / "ATen"
    shutil.copytree(_aten(folder) / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(_aten(folder) / "native" / "tags.yaml", aten / "native" / "tags.yaml")
    (aten / "native" / "native_functions.yaml").write_text(
        (_aten(folder) / "native" / "native_functions.yaml").read_text() + ENTRIES)
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    theirs = reference.run_digests(["-m", "torchgen.gen", "-s", str(aten), "-d", "aten"], cwd=ref,
                                   pythonpath=[folder], outputs=[Path("aten")])
    assert theirs.done.returncode == 0, theirs.done.stderr[-2000:]
    monkeypatch.chdir(ours)
    assert main(["generate", "-s", str(aten), "-d", "aten", "--torch-version", version, "--jobs", "1"]) == 0
    got = files_under(ours)
    expected = dict(theirs.files)
    theirs_schema, ours_schema = expected.pop(SCHEMA).read(), got.pop(SCHEMA)
    assert tags_sorted(theirs_schema) == ours_schema, first_difference(tags_sorted(theirs_schema), ours_schema)
    assert_same_files(expected, got)
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    natives = expected["aten/NativeFunctions.h"].read().decode()
    follows = release(version).cpp_spelling.symint_returns_follow_signature
    assert ("TORCH_API ::std::vector<int64_t> opgen_sym_lengths(" in natives
            or "TORCH_API std::vector<int64_t> opgen_sym_lengths(" in natives) == follows
