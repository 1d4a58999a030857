"""derivatives.yaml rules on inputs of our own (no torch needed): each diagnostic, where it points, and that one
run reports them all. tests/conformance/test_derivatives_mutations.py holds the same rules to torch's loader."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.autograd.functions_h import node_declaration
from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT, RELEASES

NATIVE = NativeParser(release=DEFAULT).parse(
    "- func: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n"
    "- func: foo_(Tensor(a!) self, Tensor other, int dim=0) -> Tensor(a!)\n"
    "- func: bar(Tensor self) -> (Tensor values, Tensor indices)\n"
    "- func: cat_like(Tensor[] tensors, int dim=0) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: cat_like\n"
    "- func: probe(Tensor self, Tensor result) -> Tensor\n", frozenset())
FOO = "- name: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n"
BAR = "- name: bar(Tensor self) -> (Tensor values, Tensor indices)\n"


def check(text: str):
    assert NATIVE.diagnostics == ()
    return DerivativesChecker().check(DerivativesParser().parse(text), NATIVE.functions, DEFAULT)


def codes(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.start_line, d.span.start_col) for d in check(text).diagnostics]


@pytest.mark.parametrize("text, expected", [
    ("- self: grad\n", [("OPG700", 0, 2)]),
    ("- name: [foo]\n", [("OPG701", 0, 8)]),
    ("- name: foo\n  self: grad\n", [("OPG703", 0, 8)]),
    (FOO + "  self: 1\n", [("OPG702", 1, 8)]),
    (FOO + "  dispatch: Default\n", [("OPG708", 1, 12)]),
    (FOO + "  dispatch:\n    AutogradCPUU:\n      self: grad\n", [("OPG707", 2, 4)]),
    (BAR + "  output_differentiability: True\n  self: grad\n", [("OPG709", 1, 28)]),
    ("- name: foo(Tensor self, Tensor other, int dim=1) -> Tensor\n  self: grad\n", [("OPG704", 0, 8)]),
    ("- name: probe(Tensor self, Tensor result) -> Tensor\n  self: grad\n", [("OPG706", 0, 8)]),
    (FOO + "  slef: grad\n", [("OPG711", 1, 2)]),
    (BAR + "  result: self_t\n", [("OPG712", 1, 2)]),
    (FOO + "  self: grad\n  self, other: non_differentiable\n", [("OPG713", 2, 2)]),
    (FOO + "  self: grads[1]\n", [("OPG714", 1, 8)]),
    (FOO + "  self: grad * self.sizes()[0]\n", [("OPG715", 1, 19)]),
    (FOO + "  self, other: grad * self.sym_strides()[0]\n", [("OPG716", 1, 22)]),
    (BAR + "  self: grad + grads[1]\n", [("OPG717", 1, 8)]),
    (BAR + "  self: grads[0]\n", [("OPG718", 1, 8)]),
    (BAR + "  self: grad_values + grad\n", [("OPG719", 1, 8)]),
    (FOO + "  self: grad\n  result: self * 2\n", [("OPG720", 2, 10)]),
    (FOO + "  self: grad\n  other: grad\n  result: auto_element_wise\n", [("OPG721", 3, 10)]),
    (FOO + "  self: non_differentiable\n  result: auto_linear\n", [("OPG722", 2, 10)]),
    (FOO + "  self: grad\n  dispatch:\n    Default:\n      other: grad\n", [("OPG750", 1, 2)]),
    (FOO + "  self, othr: grad\n", [("OPG751", 1, 8)]),
    # an in-place entry has its own formulas (its canonical function is itself): no duplicate
    (FOO + "  self: grad\n" + FOO.replace("foo(", "foo_(").replace("Tensor self", "Tensor(a!) self")
     .replace("-> Tensor", "-> Tensor(a!)") + "  self: grad\n", []),
    (FOO + "  self: grad\n\n" + FOO + "  self: grad * 2\n", [("OPG752", 3, 8)]),
    (BAR + "  self: grad\n  output_differentiability: [True, False, True]\n", [("OPG754", 2, 28)]),
    (FOO + "  self, : grad\n", [("OPG755", 1, 2)]),
    (FOO + "  self, dim: grad\n", [("OPG756", 1, 8)]),
    # torchgen iterates whatever output_differentiability holds: one character or one key is one condition
    (FOO + "  output_differentiability: x\n  self: grad\n", [("OPG757", 1, 28)]),
    (FOO + "  output_differentiability: {x: 1}\n  self: grad\n", [("OPG757", 1, 28)]),
    (FOO + "  output_differentiability: xy\n  self: grad\n", [("OPG709", 1, 28), ("OPG754", 1, 28)]),
])
def test_each_rule(text: str, expected: list) -> None:
    assert codes(text) == expected


def test_all_reported_in_one_run() -> None:
    text = FOO + "  slef: grad\n\n" + BAR + "  self: grads[0]\n\n- name: nope(Tensor self) -> Tensor\n  self: grad\n"
    assert [c for c, _, _ in codes(text)] == ["OPG711", "OPG718", "OPG704"]


def test_messages_suggest_the_fix() -> None:
    (d,) = check(FOO + "  slef: grad\n").diagnostics
    assert d.message == "'slef' is neither an argument nor an output of foo; did you mean 'self'?"
    assert d.data == (("replace", "self"),)
    (d,) = check("- name: foo(Tensor self, Tensor other, int dim=1) -> Tensor\n  self: grad\n").diagnostics
    assert "did you mean 'foo(Tensor self, Tensor other, int dim=0) -> Tensor'?" in d.message


def test_nodes_are_numbered_in_file_order_and_save_what_formulas_use() -> None:
    text = (FOO + "  self: grad * other.sym_sizes()[0]\n  other: zeros_like(other)\n\n"
            "- name: cat_like(Tensor[] tensors, int dim=0) -> Tensor\n  tensors: cat_backward(grad, dim)\n")
    result = check(text)
    assert result.diagnostics == ()
    assert [n.op for n in result.nodes] == ["FooBackward0", "CatLikeBackward0"]
    foo, cat = result.nodes
    # formulas are read in the order of their keys (other before self); the struct sorts fields by name
    assert [(s.name, s.nctype.type.cpp_type(DEFAULT.cpp_spelling)) for s in foo.key.all_saved_inputs] == [
        ("other_info", "torch::autograd::generated::TypeAndSize"), ("other_sym_sizes", "c10::SymIntArrayRef")]
    assert ("  torch::autograd::generated::TypeAndSize other_info;\n  std::vector<c10::SymInt> other_sym_sizes;\n"
            "\n};\n") in node_declaration(foo, DEFAULT)
    assert "  int64_t dim = 0;\n  size_t tensors_size_;\n};\n" in node_declaration(cat, DEFAULT)


def test_1_13_saves_plain_sizes_where_2_0_refuses_them() -> None:
    """1.13's loader saves `.sizes()`, `.size(x)` and `.strides()` as integers (no OPG715) and lays the struct out
    in save order, without compiled autograd's members (test_release_autograd.py holds it to that loader)."""
    text = FOO + "  self: grad * self.sizes()[0] * self.size(dim) * self.strides()[0]\n"
    old, new = (next(r for r in RELEASES if r.series == s) for s in ("1.13", "2.0"))
    result = DerivativesChecker().check(DerivativesParser().parse(text), NATIVE.functions, old)
    assert result.diagnostics == ()
    struct = node_declaration(result.nodes[0], old)
    assert struct.startswith("struct TORCH_API FooBackward0 : public TraceableFunction {\n") and "compiled_args" not in struct
    assert "  std::vector<int64_t> self_sizes;\n  int64_t self_argsize_dim = 0;\n  std::vector<int64_t> self_strides;\n" in struct
    refused = DerivativesChecker().check(DerivativesParser().parse(text), NATIVE.functions, new).diagnostics
    assert [d.code for d in refused] == ["OPG715"] * 2  # (2.0 refuses .size() of a literal only: not .size(dim))
    shared = FOO + "  self, other: grad * self.strides()[0]\n"  # 1.13: only for that tensor alone
    found = DerivativesChecker().check(DerivativesParser().parse(shared), NATIVE.functions, old).diagnostics
    assert [(d.code, d.span.start_line, d.span.start_col, d.message.split(" is ")[0]) for d in found] == [
        ("OPG716", 1, 22, "self.strides()")]


def test_incremental_recheck_reuses_unchanged_entries() -> None:
    parser, checker = DerivativesParser(), DerivativesChecker()
    first = checker.check(parser.parse(FOO + "  self: grad\n\n" + BAR + "  self: grad\n"), NATIVE.functions, DEFAULT)
    second = checker.check(parser.parse(FOO + "  self: grad * 2\n\n" + BAR + "  self: grad\n"), NATIVE.functions, DEFAULT)
    assert first.analyses[1][2] is second.analyses[1][2]
    assert first.analyses[0][2] is not second.analyses[0][2]


def test_native_edit_reanalyses_only_the_entries_of_the_functions_it_changed() -> None:
    native_text = ("- func: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n"
                   "- func: bar(Tensor self) -> (Tensor values, Tensor indices)\n")
    native_parser, parser, checker = NativeParser(release=DEFAULT), DerivativesParser(), DerivativesChecker()
    document = parser.parse(FOO + "  self: grad\n  other: grad\n\n" + BAR + "  self: grad\n")
    first = checker.check(document, native_parser.parse(native_text, frozenset()).functions, DEFAULT)
    renamed = native_parser.parse(native_text.replace("Tensor other", "Tensor othr"), frozenset())
    second = checker.check(document, renamed.functions, DEFAULT)
    assert first.analyses[1][2] is second.analyses[1][2]  # bar did not change
    assert first.analyses[0][2] is not second.analyses[0][2]
    assert [d.code for d in second.diagnostics] == ["OPG704"]  # foo's schema no longer reads that way
    restored = checker.check(document, native_parser.parse(native_text, frozenset()).functions, DEFAULT)
    assert restored.diagnostics == first.diagnostics == ()


def test_an_entry_naming_no_schema_is_reused_while_the_schemas_by_name_are_the_same() -> None:
    """Its did-you-mean reads every schema: kept across edits of other entries and of native entries that keep
    every name and schema, made anew when one changes."""
    native_text = "- func: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n- func: bar(Tensor self) -> Tensor\n"
    native_parser, parser, checker = NativeParser(release=DEFAULT), DerivativesParser(), DerivativesChecker()
    unknown = "- name: fooo(Tensor self) -> Tensor\n  self: grad\n\n"
    first = checker.check(parser.parse(unknown + FOO + "  self: grad\n"),
                          native_parser.parse(native_text, frozenset()).functions, DEFAULT)
    edited = checker.check(parser.parse(unknown + FOO + "  self: grad * 2\n"),
                           native_parser.parse(native_text + "# a comment\n", frozenset()).functions, DEFAULT)
    assert edited.analyses[0][2] is first.analyses[0][2]
    renamed = checker.check(parser.parse(unknown + FOO + "  self: grad * 2\n"),
                            native_parser.parse(native_text.replace("bar(", "fooo_bar("), frozenset()).functions, DEFAULT)
    assert renamed.analyses[0][2] is not first.analyses[0][2]
    assert [d.code for d in renamed.diagnostics] == ["OPG704"]


@pytest.mark.slow  # (the real file checked many times: about 2 s)
def test_native_edits_recheck_like_a_fresh_check_on_the_real_file(aten) -> None:
    """Edits of the real native_functions.yaml (schemas the derivatives name, others beside them), each followed by
    an incremental re-check of the real derivatives.yaml and one from scratch: the same diagnostics and nodes."""
    from opgen_lsp.index.native import TagsParser

    native_dir = aten / "native"
    names = TagsParser().parse((native_dir / "tags.yaml").read_text()).names
    native_text = (native_dir / "native_functions.yaml").read_text()
    document = DerivativesParser().parse((aten.parent / "autograd" / "derivatives.yaml").read_text())
    native_parser, checker = NativeParser(release=DEFAULT), DerivativesChecker()
    checker.check(document, native_parser.parse(native_text, names).functions, DEFAULT)
    edits = [("- func: _sparse_mm_reduce_impl(Tensor self, Tensor other, str reduce)",
              "- func: _sparse_mm_reduce_impl(Tensor self, Tensor other, str mode)"),
             ("- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n",
              "- func: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)\n  variants: method\n"),
             ("- func: sin(Tensor self) -> Tensor\n", "- func: sin(Tensor self) -> Tensor\n  # a comment\n")]
    errors = 0
    for old, new in edits:
        assert native_text.count(old) == 1, old
        native_text = native_text.replace(old, new)
        functions = native_parser.parse(native_text, names).functions
        incremental = checker.check(document, functions, DEFAULT)
        full = DerivativesChecker().check(document, NativeParser(release=DEFAULT).parse(native_text, names).functions, DEFAULT)
        assert incremental.diagnostics == full.diagnostics
        assert [n.op for n in incremental.nodes] == [n.op for n in full.nodes]
        errors = sum(d.is_error for d in full.diagnostics)
    assert errors >= 1  # _sparse_mm_reduce_impl's entry no longer names a schema


@pytest.mark.slow  # (the real file checked many times: about 2 s)
def test_incremental_equals_full_on_the_real_file(aten) -> None:
    """Edits of the real derivatives.yaml, each re-checked incrementally and from scratch: the same diagnostics."""
    import random

    from opgen_lsp.index.native import TagsParser

    native_dir = aten / "native"
    native = NativeParser(release=DEFAULT).parse((native_dir / "native_functions.yaml").read_text(),
                                  TagsParser().parse((native_dir / "tags.yaml").read_text()).names)
    text = (aten.parent / "autograd" / "derivatives.yaml").read_text()
    parser, checker = DerivativesParser(), DerivativesChecker()
    checker.check(parser.parse(text), native.functions, DEFAULT)
    edits = [("  self: grad", "  slef: grad"), ("grad * ", "grads[3] * "), ("self.sym_sizes()", "self.sizes()"),
             ("- name: abs(", "- name: abss("), ("result: auto_element_wise", "result: auto_linear")]
    rng = random.Random(20)
    lines = text.splitlines(keepends=True)
    for _ in range(12):
        old, new = rng.choice([e for e in edits if any(e[0] in line for line in lines)])
        site = rng.choice([i for i, line in enumerate(lines) if old in line])
        lines[site] = lines[site].replace(old, new, 1)
        edited = "".join(lines)
        incremental = checker.check(parser.parse(edited), native.functions, DEFAULT)
        full = DerivativesChecker().check(DerivativesParser().parse(edited), native.functions, DEFAULT)
        assert incremental.diagnostics == full.diagnostics
        assert [n.op for n in incremental.nodes] == [n.op for n in full.nodes]
    assert len([d for d in full.diagnostics if d.is_error]) >= 6  # the edits made mistakes that are reported


@pytest.mark.slow  # (over a second: the quick loop keeps inside its 2 minutes)
def test_damaged_text_never_raises(aten) -> None:
    """Cuts, duplicated lines and stray characters through the real file: diagnostics, never an exception, and
    every hover and completion on the damaged lines answers."""
    import random

    from opgen_lsp.analysis import derivatives as query
    from opgen_lsp.index.native import TagsParser

    native_dir = aten / "native"
    native = NativeParser(release=DEFAULT).parse((native_dir / "native_functions.yaml").read_text(),
                                  TagsParser().parse((native_dir / "tags.yaml").read_text()).names)
    text = (aten.parent / "autograd" / "derivatives.yaml").read_text()
    parser, checker = DerivativesParser(), DerivativesChecker()
    rng = random.Random(7)
    junk = ["", ":", "- ", "[", "{", "'", '"', "\t", "grads[", "result", ", ", "(", "\n", "#", "dispatch:"]
    damaged_runs = 0
    for _ in range(40):
        lines = text.splitlines(keepends=True)
        for _ in range(5):
            i = rng.randrange(len(lines))
            j = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:j] + rng.choice(junk) + lines[i][j + rng.randrange(4):]
            if rng.random() < 0.2:
                lines.insert(i, lines[i])
        damaged = "".join(lines)
        result = checker.check(parser.parse(damaged), native.functions, DEFAULT)
        damaged_runs += any(d.is_error for d in result.diagnostics)
        split = damaged.split("\n")
        for line in rng.sample(range(len(split)), 20):
            col = rng.randrange(len(split[line]) + 1)
            query.hover(result, line, col)
            query.complete(result, split, line, col)
    assert damaged_runs > 30  # most damage is reported as errors
