"""The lazy codegen's pieces and generate-lazy's diagnostics (OPG535-537), without running torchgen."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.lazy.nonnative import read_non_native
from opgen_lsp.analysis.lazy.shape import parse_shape_header
from opgen_lsp.cli import build_parser
from opgen_lsp.cli.generate_lazy import options_from
from opgen_lsp.codegen.lazy.run import LazyRunOptions, generate_lazy
from opgen_lsp.model.schema_parser import parse_schema
from opgen_lsp.pieces.lazy.options import LazyOptions
from opgen_lsp.pieces.lazy.schema import LazyIrProperties, lazy_schema
from opgen_lsp.releases import DEFAULT

HEAD = "backend: XLA\ncpp_namespace: torch_xla\n"
ABS_DECL = "TORCH_API std::vector<torch::lazy::Shape> compute_shape_abs(const at::Tensor & self);"


def test_properties_are_exclusive_per_group():
    p = LazyIrProperties.of("ShapePrecompute", "Lower").with_("ShapeCache")
    assert p.has("ShapeCache") and not p.has("ShapePrecompute") and p.has("Lower")
    with pytest.raises(KeyError):
        p.with_("NoSuchProperty")


def test_node_names_and_value_roles():
    schema = lazy_schema(parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> "
                                      "Tensor(a!)").schema, symint=False,
                         generators_in_ir=True)
    assert schema.node_name == "AddTensor"
    assert [a.name for a in schema.filtered_args(scalars=False)] == ["self", "other", "alpha"]
    assert [a.name for a in schema.filtered_args(values=False)] == []
    constants = lazy_schema(schema.func, LazyIrProperties.of("TreatScalarsAsConstants"), symint=False,
                            generators_in_ir=True)
    assert [a.name for a in constants.filtered_args(values=False)] == ["alpha"]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_shape_header_lines_and_names(newline):
    text = f"#pragma once\n{ABS_DECL}\nTORCH_API int compute_shape_cos (int);\n".replace("\n", newline)
    header = parse_shape_header("h.h", text)  # gen_lazy_tensor opens it with universal newlines
    assert ABS_DECL in header.lines
    assert header.names == {"abs", "cos"}


def test_non_native_entries_and_their_problems():
    text = HEAD + ("non_native:\n"
                   "  - func: scalar(Scalar value, ScalarType type) -> Tensor\n"
                   "    opkind: at::prim::Constant\n"
                   "    properties:\n"
                   "      - ShapeCompute\n"
                   "      - TreatScalarsAsConstants\n"
                   "  - opkind: nothing\n"
                   "  - func: view(Tensor input, int[] output_size) -> Tensor\n"
                   "    properties:\n"
                   "      - Shapecompute\n")
    ops, problems = read_non_native(text, DEFAULT)
    assert [o.schema.node_name for o in ops] == ["Scalar"]
    assert ops[0].schema.opkind == "at::prim::Constant" and ops[0].schema.properties.has("ShapeCompute")
    assert [(d.code, d.span.start_line) for d in problems] == [("OPG536", 8), ("OPG536", 11)]
    assert "Shapecompute" in problems[1].message


def test_backend_name_is_build_in_tree_as_in_torch_2_13():
    args = build_parser().parse_args(["generate-lazy", "-s", "x.yaml", "-o", "out", "--backend-name", "Foo"])
    lazy = options_from(args, DEFAULT).lazy
    assert lazy.build_in_tree and lazy.backend_name == "TorchScript"
    args = build_parser().parse_args(["generate-lazy", "-s", "x.yaml", "-o", "out", "--backend-name", ""])
    assert not options_from(args, DEFAULT).lazy.build_in_tree
    args = build_parser().parse_args(["generate-lazy", "-s", "x.yaml", "-o", "out", "--dry-run", "False"])
    assert options_from(args, DEFAULT).dry_run  # argparse type=bool: any non-empty value


def _run(tmp_path, native_yaml, yaml_text: str, header_text: str):
    source, header = tmp_path / "b.yaml", tmp_path / "shape_inference.h"
    source.write_text(yaml_text)
    header.write_text(header_text)
    return generate_lazy(LazyRunOptions(str(source), str(tmp_path / "out"), dry_run=True,
                                        lazy=LazyOptions(shape_inference_hdr=str(header), release=DEFAULT),
                                        native_functions=str(native_yaml)))


def test_missing_shape_declaration_is_placed_on_the_op(tmp_path, native_yaml):
    result = _run(tmp_path, native_yaml, HEAD + "full_codegen:\n- sin\n- abs\n", "#pragma once\n")
    errors = [d.diagnostic for d in result.diagnostics if d.diagnostic.is_error]
    assert [(d.code, d.span.start_line) for d in errors] == [("OPG535", 4)]  # sin is structured: its meta kernel
    assert "does not declare compute_shape_abs" in errors[0].message and ABS_DECL in errors[0].message
    assert not result.files


def test_other_signature_is_named(tmp_path, native_yaml):
    result = _run(tmp_path, native_yaml, HEAD + "full_codegen:\n- abs\n",
                  "TORCH_API std::vector<torch::lazy::Shape> compute_shape_abs(const at::Tensor& self);\n")
    (error,) = [d.diagnostic for d in result.diagnostics if d.diagnostic.is_error]
    assert "declares compute_shape_abs, but not with the signature" in error.message


def test_declared_header_generates(tmp_path, native_yaml):
    result = _run(tmp_path, native_yaml, HEAD + "full_codegen:\n- abs\n", ABS_DECL + "\n")
    assert not result.has_errors
    assert [f.path for f in result.files] == ["XLANativeFunctions.h", "RegisterXLA.cpp", "XLANativeFunctions.cpp",
                                              "LazyIr.h", "LazyNonNativeIr.h"]
    ir = next(f.data.decode() for f in result.files if f.path == "LazyIr.h")
    assert "class Abs : public Node {" in ir


def test_unsupported_type_is_an_error_on_the_op(tmp_path, native_yaml):
    # set_.source_Storage takes a Storage, which has no lazy IR type.
    result = _run(tmp_path, native_yaml, HEAD + "supported:\n- abs\nir_gen:\n- set_.source_Storage\n", "")
    errors = [d.diagnostic for d in result.diagnostics if d.diagnostic.is_error]
    assert [(d.code, d.span.start_line) for d in errors] == [("OPG537", 5)]
    assert "Storage" in errors[0].message


def test_unreadable_header_is_an_input_error(tmp_path, native_yaml):
    source = tmp_path / "b.yaml"
    source.write_text(HEAD + "full_codegen:\n- abs\n")
    result = generate_lazy(LazyRunOptions(str(source), "out", lazy=LazyOptions(shape_inference_hdr="nope/x.h", release=DEFAULT),
                                          native_functions=str(native_yaml)))
    assert not result.read and "Unable to read from the specified shape_inference_hdr file: nope/x.h" in \
        result.errors[0]
