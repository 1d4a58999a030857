"""Parameter types spelled one way (cpp_types): what tells C++ overloads of a kernel name apart."""

from __future__ import annotations

import pytest

from opgen_lsp.syntax.cpp_types import normalized_type, parameter_key, type_aliases, types_key, with_aliases


@pytest.mark.parametrize(("written", "canonical"), [
    ("const Tensor& self", "const Tensor&"),
    ("Tensor const &self", "const Tensor&"),
    ("const at::Tensor &", "const Tensor&"),  # (the codegen's spelling)
    ("Tensor& out", "Tensor&"),
    ("const ::std::optional<at::Tensor> &", "const optional<Tensor>&"),
    ("const std::optional<Tensor>& bias_opt", "const optional<Tensor>&"),
    ("c10::optional<Tensor> const& w", "const optional<Tensor>&"),
    ("IntArrayRef size = {}", "ArrayRef<int64_t>"),
    ("c10::ArrayRef<int64_t> size", "ArrayRef<int64_t>"),
    ("at::OptionalIntArrayRef dim", "OptionalArrayRef<int64_t>"),
    ("c10::SymIntArrayRef", "ArrayRef<SymInt>"),
    ("const SparseTensor& t", "const Tensor&"),
    ("const int64_t dim", "int64_t"),  # a by-value parameter's own const is no part of its type
    ("const std::optional<c10::ScalarType> dtype", "optional<ScalarType>"),
    ("std::string_view reduce", "string_view"),
    ("c10::string_view reduce", "string_view"),
    ("int64_t", "int64_t"),  # no name
    ("unsigned int", "unsigned int"),
    ("const float* const data", "const float*"),
    ("int64_t sizes[3]", "int64_t*"),
    ("[[maybe_unused]] const Tensor& self", "const Tensor&"),
    ("C10_UNUSED const Tensor& self", "const Tensor&"),
    ("std::array<bool, 3> output_mask", "array<bool,3>"),
    ("const c10::List<::std::optional<at::Tensor>> & indices", "const List<optional<Tensor>>&"),
])
def test_a_parameter_type_has_one_spelling(written: str, canonical: str) -> None:
    assert normalized_type(written) == canonical


def test_overloads_differ_and_spellings_of_one_signature_do_not() -> None:
    tensor = parameter_key("const Tensor& self, const Tensor& other, Tensor& out")
    assert tensor == types_key(["const at::Tensor &", "const at::Tensor &", "at::Tensor &"])
    assert tensor != parameter_key("const Tensor& self, const Scalar& other, Tensor& out")
    assert tensor != parameter_key("const Tensor& self, const Tensor& other, const Tensor& out")
    assert parameter_key("void") == parameter_key("") == types_key([]) == ""


def test_a_files_own_aliases_are_spelled_out() -> None:
    code = "using hx_type = const Tensor&;\ntypedef std::vector<int64_t> dims_t;\nusing namespace at;\n"
    aliases = type_aliases(code)
    assert aliases == {"hx_type": "const Tensor&", "dims_t": "vector<int64_t>"}
    assert with_aliases("const Tensor&,hx_type,optional<dims_t>", aliases) == \
        "const Tensor&,const Tensor&,optional<vector<int64_t>>"
    assert with_aliases("const Tensor&", aliases) == "const Tensor&"
