"""Calling conventions and per-op pieces on small fixtures (no torch needed).

The expected strings are torchgen 2.13's output for the same schemas (the
conformance tests check every operator of the real file against it).
"""

from __future__ import annotations

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.api import cpp
from opgen_lsp.pieces.api.signatures import CppSignatureGroup, NativeSignature, dispatcher_signature
from opgen_lsp.pieces.api.translate import UnsatError, translate
from opgen_lsp.pieces.api.types import ApiOptions, NamedCType, tensorT
from opgen_lsp.pieces.explain import Explainer, as_in_file
from opgen_lsp.releases import DEFAULT

SPELLING = DEFAULT.cpp_spelling

TAGS = """\
- tag: pt2_compliant_tag
  desc: compliant
- tag: core
  desc: core
- tag: generated
  desc: generated
- tag: out
  desc: out
- tag: inplace
  desc: inplace
"""

OPS = """\
- func: empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CPU: empty_cpu
    Meta: empty_meta_symint
- func: topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
  variants: method, function
  structured_delegate: topk.values
- func: topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
  structured: True
  dispatch:
    CPU: topk_out_cpu
- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: sum
- func: index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
  variants: function, method
  dispatch:
    CPU: index_cpu
- func: is_complex(Tensor self) -> bool
  variants: function, method
  manual_cpp_binding: True
- func: retain_grad(Tensor(a!) self) -> ()
  variants: method
  manual_cpp_binding: True
- func: cat(Tensor[] tensors, int dim=0) -> Tensor
  structured_delegate: cat.out
- func: cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - dim -> int dim, int valid
  - bool all_contiguous, bool all_same_dtype
  dispatch:
    CPU: cat_out_cpu
"""  # noqa: E501 (real schemas, one a line)


@pytest.fixture(scope="module")
def model():
    tags = TagsParser().parse(TAGS).names
    snapshot = NativeParser(release=DEFAULT).parse(OPS, tags)
    assert [d.message for d in snapshot.diagnostics] == []
    return snapshot.functions


def fn(model, name):
    return next(op.function for op in model.ops if str(op.function.func.name) == name)


def test_symint_factory_has_four_cpp_overloads(model) -> None:
    f = fn(model, "empty.memory_format")
    group = CppSignatureGroup.from_native_function(f, method=False, spelling=SPELLING)
    assert [s.decl() for s in group.signatures()] == [
        "at::Tensor empty(at::IntArrayRef size, at::TensorOptions options={}, "
        "::std::optional<at::MemoryFormat> memory_format=::std::nullopt)",
        "at::Tensor empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> "
        "layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, "
        "::std::optional<at::MemoryFormat> memory_format)",
        "at::Tensor empty_symint(c10::SymIntArrayRef size, at::TensorOptions options={}, "
        "::std::optional<at::MemoryFormat> memory_format=::std::nullopt)",
        "at::Tensor empty_symint(c10::SymIntArrayRef size, ::std::optional<at::ScalarType> dtype, "
        "::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, "
        "::std::optional<at::MemoryFormat> memory_format)",
    ]


def test_tensor_options_are_unpacked_for_the_dispatcher(model) -> None:
    f = fn(model, "empty.memory_format")
    sig = CppSignatureGroup.from_native_function(f, method=False, spelling=SPELLING).signature
    exprs = [e.expr for e in translate(sig.arguments(), dispatcher_signature(f, spelling=SPELLING).arguments(), spelling=SPELLING)]
    assert exprs == [
        "c10::fromIntArrayRefSlow(size)", "c10::optTypeMetaToScalarType(options.dtype_opt())", "options.layout_opt()",
        "options.device_opt()", "options.pinned_memory_opt()",
        "c10::impl::check_tensor_options_and_extract_memory_format(options, memory_format)",
    ]


def test_dispatcher_type_is_schema_order_with_symint(model) -> None:
    f = fn(model, "empty.memory_format")
    assert dispatcher_signature(f, spelling=SPELLING).type() == (
        "at::Tensor (c10::SymIntArrayRef, ::std::optional<at::ScalarType>, ::std::optional<at::Layout>, "
        "::std::optional<at::Device>, ::std::optional<bool>, ::std::optional<at::MemoryFormat>)")


def test_native_kernel_defaults_tensor_options_to_braces(model) -> None:
    f = fn(model, "empty.memory_format")
    sig = NativeSignature(f.func, symint=False, options=ApiOptions.of(f, SPELLING))
    assert sig.decl(name="empty_cpu") == (
        "at::Tensor empty_cpu(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype={}, "
        "::std::optional<at::Layout> layout={}, ::std::optional<at::Device> device={}, "
        "::std::optional<bool> pin_memory={}, ::std::optional<at::MemoryFormat> memory_format=::std::nullopt)")


def test_out_arguments_come_first_except_in_the_faithful_overload(model) -> None:
    f = fn(model, "topk.values")
    group = CppSignatureGroup.from_native_function(f, method=False, spelling=SPELLING)
    assert group.signature.decl() == (
        "::std::tuple<at::Tensor &,at::Tensor &> topk_out(at::Tensor & values, at::Tensor & indices, "
        "const at::Tensor & self, int64_t k, int64_t dim=-1, bool largest=true, bool sorted=true)")
    assert group.faithful_signature.decl() == (
        "::std::tuple<at::Tensor &,at::Tensor &> topk_outf(const at::Tensor & self, int64_t k, int64_t dim, "
        "bool largest, bool sorted, at::Tensor & values, at::Tensor & indices)")


def test_multiple_returns_and_their_names(model) -> None:
    f = fn(model, "topk")
    returns = cpp.returns_type(f.func.returns, options=ApiOptions.of(f, SPELLING), symint=True)
    assert returns.cpp_type(SPELLING) == "::std::tuple<at::Tensor,at::Tensor>"
    assert cpp.return_names(f.func) == ["values", "indices"]
    assert cpp.return_names(fn(model, "topk.values").func) == ["values", "indices"]


def test_optional_lists(model) -> None:
    f = fn(model, "sum.dim_IntList")
    args = CppSignatureGroup.from_native_function(f, method=False, spelling=SPELLING).signature.arguments()
    assert [a.decl() for a in args] == [
        "const at::Tensor & self", "at::OptionalIntArrayRef dim", "bool keepdim=false",
        "::std::optional<at::ScalarType> dtype=::std::nullopt"]
    index = fn(model, "index.Tensor")
    decl = CppSignatureGroup.from_native_function(index, method=False, spelling=SPELLING).signature.decl()
    assert decl == "at::Tensor index(const at::Tensor & self, const c10::List<::std::optional<at::Tensor>> & indices)"


def test_structured_group_uses_tensor_list_refs(model) -> None:
    # Ops in structured groups take Tensor[] as const at::ITensorListRef &.
    f = fn(model, "cat")
    assert dispatcher_signature(f, spelling=SPELLING).type() == "at::Tensor (const at::ITensorListRef &, int64_t)"


def test_method_translation_uses_this(model) -> None:
    f = fn(model, "sum.dim_IntList")
    method = CppSignatureGroup.from_native_function(f, method=True, spelling=SPELLING).signature
    exprs = [e.expr for e in translate(method.arguments(), dispatcher_signature(f, spelling=SPELLING).arguments(), spelling=SPELLING,
                                            method=True)]
    assert exprs == ["const_cast<Tensor&>(*this)", "dim", "keepdim", "dtype"]


def test_translate_reports_what_it_cannot_build() -> None:
    with pytest.raises(UnsatError):
        translate([], [NamedCType("self", tensorT)], spelling=SPELLING)


def test_manual_cpp_binding_is_offered_as_dispatch_fallback(model) -> None:
    snippets = {s.title: s.code for s in Explainer(model, DEFAULT).explain("is_complex")}
    assert "inline bool __dispatch_is_complex(const at::Tensor & self) {" in snippets["C++ API (at::)"]
    assert snippets["Tensor method declaration"] == "  bool __dispatch_is_complex() const;"


def test_method_only_op_has_no_function(model) -> None:
    snippets = {s.title: s for s in Explainer(model, DEFAULT).explain("retain_grad")}
    assert "C++ API (at::)" not in snippets
    assert snippets["Operator struct (at::_ops)"].file == "MethodOperators.h"
    assert snippets["Tensor method declaration"].code == "  void __dispatch_retain_grad() const;"


def test_structured_kernel_and_meta_class_with_precomputed(model) -> None:
    snippets = {s.title: s.code for s in Explainer(model, DEFAULT).explain("cat.out")}
    assert snippets["CPU kernel declaration"] == (
        "struct TORCH_API structured_cat_out_cpu : public at::meta::structured_cat {\n"
        "void impl(const at::ITensorListRef & tensors, int64_t dim, int64_t valid, bool all_contiguous, "
        "bool all_same_dtype, const at::Tensor & out);\n};")
    meta = snippets["Structured meta class"]
    assert meta.startswith("struct TORCH_API structured_cat : public at::impl::MetaBase {\n")
    assert "template <bool DIM = false, bool VALID = false, bool ALL_CONTIGUOUS = false, bool ALL_SAME_DTYPE = false>" in meta
    assert "precompute_out<true, VALID, ALL_CONTIGUOUS, ALL_SAME_DTYPE> set_dim(int64_t value) {" in meta
    assert "using meta_return_ty = precompute_out <true, true, true, true>;" in meta
    assert meta.endswith("meta_return_ty meta(const at::ITensorListRef & tensors, int64_t dim);\n};")


def test_schema_registration_names_its_tag_vector(model) -> None:
    snippets = {s.title: s.code for s in Explainer(model, DEFAULT).explain("empty.memory_format")}
    assert snippets["Schema registration"] == (
        '  m.def("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? '
        'device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", tags_0);')


def test_out_of_tree_backend_declaration(model) -> None:
    snippets = Explainer(model, DEFAULT).explain("topk.values", "XLA")
    assert [(s.file, s.code) for s in snippets] == [(
        "XLANativeFunctions.h",
        "static ::std::tuple<at::Tensor &,at::Tensor &> topk_out(const at::Tensor & self, int64_t k, "
        "int64_t dim, bool largest, bool sorted, at::Tensor & values, at::Tensor & indices);")]


def test_as_in_file_mirrors_template_placement() -> None:
    assert as_in_file("\nint f();\n\n  \nint g();  \n", "  ") == "  int f();\n\n\n  int g();"
