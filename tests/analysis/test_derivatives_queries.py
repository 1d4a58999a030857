"""Hover, completion, navigation and symbols of derivatives.yaml, as pure queries (the server's adapter aside)."""

from __future__ import annotations

from autograd_tree import DERIVATIVES, NATIVE

from opgen_lsp.analysis import derivatives as query
from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT

FUNCTIONS = NativeParser(release=DEFAULT).parse(NATIVE, frozenset()).functions


def check(text: str = DERIVATIVES):
    return DerivativesChecker().check(DerivativesParser().parse(text), FUNCTIONS, DEFAULT)


def at(text: str, marker: str, offset: int = 0) -> tuple[int, int]:
    index = text.index(marker) + offset
    return text.count("\n", 0, index), index - (text.rfind("\n", 0, index) + 1)


def hover_text(text: str, marker: str, offset: int = 0) -> str | None:
    found = query.hover(check(text), *at(text, marker, offset))
    return found.markdown if found is not None else None


def test_hover_of_names_in_formulas() -> None:
    assert hover_text(DERIVATIVES, "grad * other", 8) == \
        "argument `Tensor other` — C++ `const at::Tensor & other`"
    assert hover_text(DERIVATIVES, "grad * other", 1) == "the gradient of the (only differentiable) output"
    assert hover_text(DERIVATIVES, "self_p", 2) == "the primal value of argument `self` (forward formulas)"
    assert hover_text(DERIVATIVES, "values: self_t", 2) == "output 0 of `sort`: `Tensor values`"
    assert hover_text(DERIVATIVES, "output_differentiability", 3).startswith("`output_differentiability`: ")


def test_hover_of_a_name_line_has_the_schema_and_the_struct() -> None:
    text = hover_text(DERIVATIVES, "sort(", 1)
    assert text.startswith("```\nsort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)\n")
    assert "struct TORCH_API SortBackward0 : public TraceableFunction {" in text
    assert "  SavedVariable indices_;\n" in text  # saved: an output the backward formula reads


def test_a_broken_entry_is_not_taken_for_its_neighbour() -> None:
    broken = DERIVATIVES.replace("- name: sort", "- name: [sort") + "- name: mul.Tensor\n"
    assert hover_text(broken, "grad.gather", 1) is None
    assert hover_text(broken, "grad * other", 1) is not None


def test_completion_contexts() -> None:
    text = DERIVATIVES.replace("  other: grad * self\n", "  other: gr\n  ou\n")
    result, lines = check(text), text.split("\n")

    def labels(marker: str, offset: int) -> set[str]:
        return {c.label for c in query.complete(result, lines, *at(text, marker, offset))}

    assert labels("other: gr", 9) == {"grad", "grad_input_mask"}  # one output: no grads[i]
    assert labels("  ou\n", 4) == {"output_differentiability"}
    assert {"self_p", "other_t", "auto_linear"} <= labels("result: other_t", 8)
    assert "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)" in labels("- name: mul.Tensor", 8)


def test_navigation_sources_and_symbols() -> None:
    result = check()
    mul = next(f for f in FUNCTIONS.native_functions if str(f.func.name) == "mul.Tensor")
    mul_ = next(f for f in FUNCTIONS.native_functions if str(f.func.name) == "mul_.Tensor")
    assert query.function_at(result, *at(DERIVATIVES, "mul.Tensor", 2)) is mul
    sources = query.formula_sources(result)
    assert [(s.span.start_line, s.own) for s in sources[id(mul)]] == [(0, True)]
    assert [(s.span.start_line, s.own) for s in sources[id(mul_)]] == [(0, False)]  # formulas of its group
    symbols = query.symbols(result)
    assert [(s.name, s.detail, [c.name for c in s.children]) for s in symbols] == [
        ("mul.Tensor", "MulBackward0", ["self", "other", "result"]),
        ("sort", "SortBackward0", ["self", "values"])]


VIEWS = NativeParser(release=DEFAULT).parse(
    "- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n  variants: function, method\n"
    "  dispatch:\n    CompositeExplicitAutograd: transpose\n"
    "- func: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor\n  variants: function\n"
    "  tags: view_copy\n  dispatch:\n    CompositeExplicitAutogradNonFunctional: transpose_copy_int\n",
    frozenset({"view_copy"}))
TRANSPOSE = ("- name: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n"
             "  self: grad.transpose(dim0, dim1)\n")


def test_a_view_op_with_a_view_copy_gets_the_copy_node_and_lends_it_its_formulas() -> None:
    assert VIEWS.diagnostics == ()
    result = DerivativesChecker().check(DerivativesParser().parse(TRANSPOSE), VIEWS.functions, DEFAULT)
    assert [(n.op, n.canonical.func.name.name.base) for n in result.nodes] == [
        ("TransposeBackward0", "transpose"), ("TransposeBackward0_copy", "transpose_copy")]
    shown = query.hover(result, 0, 9).markdown
    assert "struct TORCH_API TransposeBackward0 : public Node {" in shown  # a view: not traceable
    assert "struct TORCH_API TransposeBackward0_copy : public TraceableFunction {" in shown
    assert "Autograd node of its view_copy function `transpose_copy.int`, in Functions.h (torch 2.13):" in shown
    copy = next(f for f in VIEWS.functions.native_functions if str(f.func.name) == "transpose_copy.int")
    assert [(s.span.start_line, s.own) for s in query.formula_sources(result)[id(copy)]] == [(0, False)]


def test_a_view_copy_with_formulas_of_its_own_gets_no_twin() -> None:
    own = TRANSPOSE + "- name: transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor\n  self: grad.t()\n"
    result = DerivativesChecker().check(DerivativesParser().parse(own), VIEWS.functions, DEFAULT)
    assert [n.op for n in result.nodes] == ["TransposeBackward0", "TransposeCopyBackward0"]
    copy = next(f for f in VIEWS.functions.native_functions if str(f.func.name) == "transpose_copy.int")
    assert [(s.span.start_line, s.own) for s in query.formula_sources(result)[id(copy)]] == [(2, True)]
