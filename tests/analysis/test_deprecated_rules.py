"""deprecated.yaml rules on inputs of our own (no torch needed). tests/conformance/test_deprecated_mutations.py
holds the same rules to torch's Python binding generator."""

from __future__ import annotations

import pytest

from opgen_lsp.index.derivatives import DeprecatedParser
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT

NATIVE = NativeParser().parse(
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
