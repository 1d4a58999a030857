"""OPG535's quick fix as a pure edit: where a missing compute_shape_ declaration goes in the header."""

from __future__ import annotations

from opgen_lsp.analysis.shape_fix import insert_declaration, shape_function
from opgen_lsp.text import Span


def decl(name: str, params: str = "const at::Tensor & self") -> str:
    return f"TORCH_API std::vector<torch::lazy::Shape> compute_shape_{name}({params});"


def applied(text: str, declaration: str) -> str:
    """The header with the edit applied (the edit is one point: an insertion)."""
    found = insert_declaration(text, declaration)
    assert found is not None
    span, new = found
    assert span == Span.point(span.start_line, span.start_col)
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[:span.start_line]) + span.start_col
    return text[:offset] + new + text[offset:]


def header(*declarations: str, newline: str = "\n") -> str:
    body = ["#pragma once", "namespace torch::lazy {", "// clang-format off", *declarations, "// clang-format on",
            "} // namespace torch::lazy", ""]
    return newline.join(body)


def test_sorted_block_gets_the_declaration_in_alphabetical_place():
    text = header(decl("abs"), decl("cat", "at::TensorList tensors, int64_t dim"), decl("zero"))
    assert applied(text, decl("relu")) == header(decl("abs"), decl("cat", "at::TensorList tensors, int64_t dim"),
                                                 decl("relu"), decl("zero"))
    assert applied(text, decl("_adaptive")) == header(decl("_adaptive"), decl("abs"),
                                                      decl("cat", "at::TensorList tensors, int64_t dim"), decl("zero"))
    assert applied(text, decl("zeta")).split("\n")[6] == decl("zeta")  # after the last one, inside the block


def test_an_overload_joins_its_siblings():
    text = header(decl("abs"), decl("std"), decl("sum"))
    assert applied(text, decl("std", "const at::Tensor & self, bool unbiased")) == header(
        decl("abs"), decl("std"), decl("std", "const at::Tensor & self, bool unbiased"), decl("sum"))


def test_unsorted_declarations_get_it_after_the_last_one():
    text = header(decl("zero"), decl("abs"), "", "// Non-native ops", decl("scalar"), decl("cast"))
    assert applied(text, decl("relu")) == header(decl("zero"), decl("abs"), "", "// Non-native ops", decl("scalar"),
                                                 decl("cast"), decl("relu"))


def test_the_longest_sorted_block_wins():
    text = header(decl("abs"), decl("cat"), decl("zero"), "", decl("expand"), decl("view"))
    assert applied(text, decl("relu")).split("\n")[5:7] == [decl("relu"), decl("zero")]


def test_a_single_declaration_gets_it_after():
    text = header(decl("zero"))
    assert applied(text, decl("abs")) == header(decl("zero"), decl("abs"))


def test_no_declarations_yet_goes_inside_the_innermost_namespace():
    text = "#pragma once\nnamespace torch {\nnamespace lazy {\n} // namespace lazy\n} // namespace torch\n"
    assert applied(text, decl("relu")) == (
        f"#pragma once\nnamespace torch {{\nnamespace lazy {{\n{decl('relu')}\n}} // namespace lazy\n"
        "} // namespace torch\n")


def test_no_namespace_appends_at_the_end():
    assert applied("#pragma once\n", decl("relu")) == f"#pragma once\n{decl('relu')}\n"
    assert applied("#pragma once", decl("relu")) == f"#pragma once\n{decl('relu')}\n"
    assert applied("", decl("relu")) == f"{decl('relu')}\n"


def test_crlf_headers_keep_their_line_endings():
    text = header(decl("abs"), decl("zero"), newline="\r\n")
    assert applied(text, decl("relu")) == header(decl("abs"), decl("relu"), decl("zero"), newline="\r\n")
    assert applied(text, decl("zz")) == header(decl("abs"), decl("zero"), decl("zz"), newline="\r\n")


def test_indented_declarations_are_placed_but_the_line_stays_exact():
    """gen_lazy_tensor compares whole lines: the declaration is never indented."""
    text = header("  " + decl("abs"), "  " + decl("zero"))
    assert applied(text, decl("relu")).split("\n")[4] == decl("relu")


def test_comments_are_not_declarations():
    text = header(decl("abs"), "// compute_shape_old(const at::Tensor & self) is gone", decl("zero"))
    assert applied(text, decl("relu")) == header(decl("abs"), "// compute_shape_old(const at::Tensor & self) is gone",
                                                 decl("zero"), decl("relu"))


def test_idempotent():
    text = header(decl("abs"), decl("relu"))
    assert insert_declaration(text, decl("relu")) is None
    assert insert_declaration(applied(header(decl("abs")), decl("relu")), decl("relu")) is None
    assert insert_declaration(text, "") is None


def test_shape_function():
    assert shape_function(decl("relu")) == "compute_shape_relu"
    assert shape_function(decl("_to_copy")) == "compute_shape__to_copy"
    assert shape_function("int x;") is None


def test_a_commented_out_declaration_does_not_count():
    # gen_lazy_tensor wants the declaration as a whole line; in a comment it is still missing.
    text = header(decl("abs"), "// " + decl("relu"), decl("zero"))
    assert insert_declaration(text, decl("relu")) is not None
