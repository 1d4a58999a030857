"""SymInt returns (CppSpelling.symint_returns_follow_signature): until 2.0 a SymInt return follows the signature's
symint flag (int64_t in the int signature) and makes the op a symint one (`_symint` twins in Functions.h,
RedispatchFunctions.h, the CompositeImplicitAutograd declarations; int64_t in NativeFunctions.h and
Declarations.yaml); from 2.1 a return is always c10::SymInt and only arguments count. Neither release's own yaml
has such an op, so gen.py of 2.0.1 and 2.1.2 runs on its own yaml with two added (composite ones, one a method
too), and opgen's files are compared with all of its (RegisterSchema.cpp modulo tag order, as in the
matrix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_release_matrix import generated_with_entries, release

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ENTRIES = """
- func: opgen_sym_length.int(Tensor self, int dim) -> SymInt
  variants: function

- func: opgen_sym_lengths(Tensor self) -> SymInt[]
  variants: function, method
"""


@pytest.mark.parametrize("version", ["2.0.1", "2.1.2"])
def test_symint_returns_as_the_release_generates_them(version: str, tmp_path: Path, monkeypatch) -> None:
    expected = generated_with_entries(version, ENTRIES, tmp_path, monkeypatch)
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    natives = expected["aten/NativeFunctions.h"].decode()
    follows = release(version).cpp_spelling.symint_returns_follow_signature
    assert ("TORCH_API ::std::vector<int64_t> opgen_sym_lengths(" in natives
            or "TORCH_API std::vector<int64_t> opgen_sym_lengths(" in natives) == follows
