"""deprecated.yaml rules on inputs of our own (no torch needed). tests/conformance/test_deprecated_mutations.py
holds the same rules to torch's Python binding generator."""

from __future__ import annotations

import pytest

from opgen_lsp.index.derivatives import DeprecatedParser
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT

NATIVE = NativeParser(release=DEFAULT).parse(
    "- func: foo(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
    "- func: foo.out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)\n"
    "- func: size.int(Tensor self, int dim) -> int\n"
    "- func: foo_backward(Tensor grad, Tensor self) -> Tensor\n"
    "- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
    "- func: index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)\n"
    "- func: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor\n"
    "- func: size_of(Tensor self, int dim) -> int\n"
    "- func: foo_backward_extra(Tensor grad, Tensor self) -> Tensor\n"
    "- func: baz(Tensor self) -> Tensor\n  tags: generated\n", frozenset({"generated"}))


def found(text: str) -> list[tuple[str, int, str]]:
    assert NATIVE.diagnostics == ()
    return [(d.code, d.span.start_line, d.message) for d in DeprecatedParser(DEFAULT).check(text, NATIVE.functions)]


def test_calls_of_functions_with_python_bindings_are_accepted() -> None:
    assert found("- name: foo(Tensor self, Scalar alpha, Scalar other) -> Tensor\n  aten: foo(self, other, alpha)\n"
                 "- name: foo(Scalar alpha, Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)\n"
                 "  aten: foo_out(out, self, other, alpha)\n"
                 "- name: foo(Tensor self, Scalar other) -> Tensor\n  aten: foo(self, other, 1)\n") == []


@pytest.mark.parametrize("entry, why", [
    ("- name: size(Tensor self, int dim) -> int\n  aten: size(self, dim)\n", "skips it by name"),
    ("- name: foo_backward(Tensor self, Tensor grad) -> Tensor\n  aten: foo_backward(grad, self)\n",
     "skips it by name"),
    # index_out is skipped (the name the skip list sees ends in _out), index is not
    ("- name: index(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)\n"
     "  aten: index_out(out, self, indices)\n", "skips it by name"),
    ("- name: add(Tensor self, Scalar other, Scalar alpha) -> Tensor\n  aten: add(self, other, alpha)\n",
     "skips this schema"),
    ("- name: baz(Tensor self) -> Tensor\n  aten: baz(self)\n", "generated"),
])
def test_functions_without_python_bindings_cannot_be_called(entry: str, why: str) -> None:
    ((code, line, message),) = found(entry)
    assert (code, line) == ("OPG743", 1)
    assert "matches, but it has no Python binding" in message and why in message


def test_a_name_skipped_only_in_part_is_bound() -> None:
    # torchgen's patterns match whole names: size_of is not size, foo_backward_extra not .*_backward.
    assert found("- name: size_of(Tensor self, int dim) -> int\n  aten: size_of(self, dim)\n"
                 "- name: foo_backward_extra(Tensor self, Tensor grad) -> Tensor\n"
                 "  aten: foo_backward_extra(grad, self)\n") == []


# ---- per release (server/releases/): what each release's Python binding generator reads

def _release(series: str):
    from opgen_lsp.releases import resolve

    found = resolve(series, "test")
    assert found is not None
    return found.release


NAMED = "- func: sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False) -> Tensor\n"
CALLS_NAMED = "- name: sum(Tensor self, Dimname[1] dim, bool keepdim) -> Tensor\n  aten: sum(self, dim, keepdim)\n"


def test_named_tensor_types_are_read_while_the_release_has_them() -> None:
    old = _release("2.12")
    native = NativeParser(release=old).parse(NAMED, frozenset())
    assert DeprecatedParser(old).check(CALLS_NAMED, native.functions) == ()
    new = DeprecatedParser(_release("2.13")).check(CALLS_NAMED, native.functions)
    assert [(d.code, d.span.start_line, d.span.start_col, d.message) for d in new] == [
        ("OPG203", 0, 25, "unknown type 'Dimname[1]': named tensors (Dimname) left torch in 2.13; this is torch 2.13")]


CALLS_WITH_QUANTIZER = "- name: foo(Tensor self, Scalar other, ConstQuantizerPtr q) -> Tensor\n  aten: foo(self, other)\n"


def test_const_quantizer_ptr_is_read_while_the_release_has_it() -> None:
    """torchgen 2.5's reader parses it (and compares only the arguments the call passes); 2.6's does not know it
    (test_release_autograd.py holds both to each release's reader)."""
    assert DeprecatedParser(_release("2.5")).check(CALLS_WITH_QUANTIZER, NATIVE.functions) == ()
    for series in ("2.6", "2.13", "2.15"):
        new = DeprecatedParser(_release(series)).check(CALLS_WITH_QUANTIZER, NATIVE.functions)
        assert [(d.code, d.span.start_line, d.span.start_col, d.message.split(":")[0]) for d in new] == [
            ("OPG203", 0, 39, "unknown type 'ConstQuantizerPtr'")], series


@pytest.mark.parametrize("series, skipped", [("2.6", ()), ("2.8", ()), ("2.9", ("sym_is_contiguous",)),
                                             ("2.11", ("sym_is_contiguous",)),
                                             ("2.12", ("sym_is_contiguous", "numel", "dim")),
                                             ("2.15", ("sym_is_contiguous", "numel", "dim"))])
def test_the_methods_bound_by_hand_per_release(series: str, skipped: tuple[str, ...]) -> None:
    release = _release(series)
    native = NativeParser(release=release).parse(
        "- func: numel(Tensor self) -> int\n- func: dim(Tensor self) -> int\n"
        "- func: sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> SymBool\n",
        frozenset())
    calls = ("- name: numel(Tensor self) -> int\n  aten: numel(self)\n- name: dim(Tensor self) -> int\n"
             "  aten: dim(self)\n- name: sym_is_contiguous(Tensor self, MemoryFormat memory_format) -> SymBool\n"
             "  aten: sym_is_contiguous(self, memory_format)\n")
    found = DeprecatedParser(release).check(calls, native.functions)
    assert sorted(d.message.split("(", 1)[0] for d in found) == sorted(skipped)
    assert all(d.code == "OPG743" and "bound by hand" in d.message for d in found)
