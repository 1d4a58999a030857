"""analysis.rename without a server: the parts of an operator name, the targets of each kind of yaml line, the
occurrences of a family, and the reasons a rename is refused."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis import rename
from opgen_lsp.analysis.rename import OPERATOR, OVERLOAD, Target, rename_problem, split_name
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT
from opgen_lsp.text import Span

NATIVE = """\
- func: _fused.Tensor(Tensor self) -> Tensor
  dispatch:
    CPU: fused_cpu
  autogen: _fused.Tensor_out

- func: _fused_functional.Tensor(Tensor self) -> Tensor
  dispatch:
    CPU: fused_functional_cpu

- func: __ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method

- func: other(Tensor self) -> Tensor
"""

SNAPSHOT = NativeParser(release=DEFAULT).parse(NATIVE, frozenset())


def at(marker: str, offset: int = 0) -> tuple[int, int]:
    where = NATIVE.index(marker) + offset
    return NATIVE.count("\n", 0, where), where - NATIVE.rfind("\n", 0, where) - 1


def test_split_name():
    parts = split_name("add_.Tensor(")
    assert parts is not None and (parts.base, parts.overload, parts.overload_start, parts.head_end) == \
        ("add", "Tensor", 5, 4)
    parts = split_name("x _foo_functional", 2)
    assert parts is not None and (parts.base, parts.base_start, parts.head_end) == ("_foo", 2, 17)
    assert split_name("__iand__")  # a dunder method: not a family
    assert split_name("__iand__").dunder and split_name("9x") is None  # type: ignore[union-attr]


def test_a_family_and_its_derived_overloads():
    target = rename.native_target(SNAPSHOT, *at("_fused.Tensor(", 1))
    assert target == Target(OPERATOR, "_fused", Span.on_line(0, 8, 14))
    # the functional variant's head and the autogen value are the family too
    assert [s.start_line for s in rename.native_occurrences(SNAPSHOT, target)] == [0, 3, 5]
    overload = rename.native_target(SNAPSHOT, *at("autogen: _fused.Tensor_out", 18))
    assert overload == Target(OVERLOAD, "Tensor", Span.on_line(3, 18, 24), base="_fused")
    # Tensor_out follows Tensor: only its `Tensor` part is replaced
    assert rename.native_occurrences(SNAPSHOT, overload) == [Span.on_line(0, 15, 21), Span.on_line(3, 18, 24),
                                                             Span.on_line(5, 26, 32)]
    assert rename.native_target(SNAPSHOT, *at("__ior__", 2)) is None  # dunder methods are not renamed
    assert rename.native_target(SNAPSHOT, *at("variants: method")) is None


def test_targets_in_the_other_yamls():
    deprecated = "- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor\n  aten: add_out(out, self)\n"
    assert rename.yaml_target(rename.DEPRECATED, deprecated, 1, 9) == Target(OPERATOR, "add", Span.on_line(1, 8, 11))
    assert rename.yaml_occurrences(rename.DEPRECATED, deprecated, Target(OPERATOR, "add", Span.point(0, 0))) == [
        Span.on_line(0, 8, 11), Span.on_line(1, 8, 11)]
    backend = "backend: XLA\nsupported:\n- add.Tensor  # a comment\n- 'mul'\nnon_native:\n- func: add(Tensor x) -> Tensor\n"
    assert rename.yaml_target(rename.BACKEND, backend, 2, 7) == Target(OVERLOAD, "Tensor", Span.on_line(2, 6, 12),
                                                                       base="add")
    assert rename.yaml_target(rename.BACKEND, backend, 3, 3) == Target(OPERATOR, "mul", Span.on_line(3, 3, 6))
    assert rename.yaml_target(rename.BACKEND, backend, 5, 9) is None  # a schema, not a listed op


@pytest.mark.parametrize(("marker", "offset", "new", "reason"), [
    ("_fused.Tensor(", 1, "_fused", "already has that name"),
    ("_fused.Tensor(", 1, "other", None),
    ("_fused.Tensor(", 1, "fine_", "in-place variant"),
    ("_fused.Tensor(", 1, "x_functional", "functional variant"),
    ("_fused.Tensor(", 1, "__x__", "dunder"),
    ("_fused.Tensor(", 1, "opé", None),  # Latin-1: gen.py can hash it
    ("_fused.Tensor(", 1, "opĀ", "not Latin-1"),
    ("_fused.Tensor(", 1, "a b", "has ' '"),
    ("_fused.Tensor(", 9, "default", "reserved"),
    ("_fused.Tensor(", 9, "Scalar", None),
    ("CPU: fused_cpu", 6, "fused_functional_cpu", "already exists"),
    ("CPU: fused_cpu", 6, "x;y", "has ';'"),
])
def test_refusals(marker: str, offset: int, new: str, reason: str | None):
    target = rename.native_target(SNAPSHOT, *at(marker, offset))
    assert target is not None
    problem = rename_problem(SNAPSHOT, None, target, new)
    assert (problem is None) if reason is None else (problem is not None and reason in problem), problem


def test_an_operator_whose_kernel_is_named_after_it_elsewhere():
    native = NATIVE + "\n- func: other.Scalar(Tensor self, Scalar s) -> Tensor\n  dispatch:\n    CPU: other\n"
    snapshot = NativeParser(release=DEFAULT).parse(native, frozenset())
    target = rename.native_target(snapshot, 12, 9)
    assert target is not None and target.name == "other"
    problem = rename_problem(snapshot, None, target, "another")
    assert problem is not None and "rename that kernel first" in problem


def test_a_collision_in_generated_code():
    # other renamed to _fused_Tensor: at::_ops::_fused_Tensor is _fused.Tensor's already
    target = rename.native_target(SNAPSHOT, *at("func: other", 7))
    assert target is not None
    problem = rename_problem(SNAPSHOT, None, target, "_fused_Tensor")
    assert problem is not None and "at::_ops::_fused_Tensor" in problem and "_fused.Tensor" in problem


def test_a_namespaced_kernel_is_in_torchgen_s_namespace():
    native = "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: custom::foo_cpu\n    CUDA: foo_cuda\n"
    snapshot = NativeParser(release=DEFAULT).parse(native, frozenset())
    assert [(k.name, k.namespace) for k in rename.dispatch_kernels(snapshot.document.entries[0])] == [
        ("foo_cpu", "custom::native"), ("foo_cuda", "at::native")]
    target = rename.native_target(snapshot, 2, 20)
    assert target == Target(rename.KERNEL, "foo_cpu", Span.on_line(2, 17, 24), namespace="custom::native")


def test_generated_headers_of_an_operator():
    others = frozenset({"add_relu", "add_meta"})
    assert [stem for stem in ("add", "add_native", "add_ops", "add_cpu_dispatch", "add_compositeexplicitautograd_dispatch",
                              "add_relu", "add_relu_native", "add_relu_cpu_dispatch", "add_meta", "addmm", "adds")
            if rename.operator_header(stem, "add", others)] == [
        "add", "add_native", "add_ops", "add_cpu_dispatch", "add_compositeexplicitautograd_dispatch"]


FUSED_CPP = """\
#include <ATen/ops/_fused.h>
#include <ATen/ops/_fused_native.h>
#include <ATen/ops/_fused_cpu_dispatch.h>
#include <ATen/ops/other.h>
namespace at { namespace native {
Tensor fused_cpu(const Tensor& self) {
  auto a = at::_ops::_fused_Tensor::call(self);  // at::_ops::_fused_Tensor in a comment is left
  auto b = _ops::_fused_functional_Tensor::call(a);
  return at::_fused(at::other(b));
}
}}
"""


def test_cpp_of_an_operator_and_an_overload(tmp_path):
    from opgen_lsp.index.kernels import KernelIndex

    (tmp_path / "Fused.cpp").write_text(FUSED_CPP, encoding="utf-8")
    index = KernelIndex.build([str(tmp_path)])
    lines = FUSED_CPP.split("\n")

    def edited(marker: str, offset: int) -> list[str]:
        target = rename.native_target(SNAPSHOT, *at(marker, offset))
        assert target is not None
        found = rename.cpp_occurrences(index, rename.cpp_names(SNAPSHOT, target), target,
                                       lambda path: open(path, encoding="utf-8").read())
        [spans] = found.values()
        return [lines[s.start_line][:s.start_col] + "[" + lines[s.start_line][s.start_col:s.end_col] + "]"
                + lines[s.start_line][s.end_col:] for s in spans]

    # the operator _fused: its generated headers (not other's), its at::_ops:: structs and at:: functions
    assert edited("func: _fused.Tensor", 6) == [
        "#include <ATen/ops/[_fused].h>", "#include <ATen/ops/[_fused]_native.h>",
        "#include <ATen/ops/[_fused]_cpu_dispatch.h>",
        "  auto a = at::_ops::[_fused]_Tensor::call(self);  // at::_ops::_fused_Tensor in a comment is left",
        "  auto b = _ops::[_fused]_functional_Tensor::call(a);", "  return at::[_fused](at::other(b));"]
    # the overload Tensor: the structs of _fused.Tensor and _fused_functional.Tensor
    assert edited("func: _fused.Tensor", 14) == [
        "  auto a = at::_ops::_fused_[Tensor]::call(self);  // at::_ops::_fused_Tensor in a comment is left",
        "  auto b = _ops::_fused_functional_[Tensor]::call(a);"]
