"""Reading stopped by the memory budget (OPG007) never yields false errors about what lies past the cut: the rules
across entries (view groups, structured delegates, out= groups, functionalization, tags), and the other files checked
against the part that was read (a backend yaml's ops, derivatives.yaml and deprecated.yaml entries), say nothing is
missing that the unread rest may declare. A small budget stands in for a huge file (test_bounded_work's way)."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index import documents
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.derivatives import DeprecatedParser, DerivativesParser
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.releases import DEFAULT

# Each entry before the cut needs one after it: v its view_copy, d its structured out=, o its functional variant.
HEAD = """\
- func: v(Tensor(a) self) -> Tensor(a)
  variants: function
  dispatch:
    CompositeExplicitAutograd: v

- func: d(Tensor self) -> Tensor
  structured_delegate: d.out

- func: o.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: o_out

- func: t(Tensor self) -> Tensor
  tags: late
"""
# An entry costly enough (2,000 values) to take the whole budget.
COSTLY = "- func: costly(Tensor self) -> Tensor\n  tags: [" + ", ".join(["core"] * 2_000) + "]\n"
TAIL = """\
- func: v_copy(Tensor self) -> Tensor
  variants: function
  dispatch:
    CompositeExplicitAutogradNonFunctional: v_copy
  tags: view_copy
  autogen: v_copy.out

- func: d.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: d_out

- func: o(Tensor self) -> Tensor
  dispatch:
    CPU: o

- func: late(Tensor self) -> Tensor
"""
TAGS = "- tag: core\n  desc: x\n- tag: view_copy\n  desc: x\n"
LATE_TAG = "- tag: late\n  desc: x\n"
BUDGET = 500 * documents.VALUE_COST


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", BUDGET)


def _native(text: str, tags: frozenset[str] = frozenset({"core", "view_copy", "late"})) -> NativeSnapshot:
    return NativeParser(release=DEFAULT).parse(text, tags)


def _codes(snapshot: NativeSnapshot) -> list[str]:
    return sorted(d.code for d in snapshot.diagnostics)


def test_the_file_read_whole_is_clean_and_its_head_alone_is_not():
    """The rules do fire on the part before the cut when it is the whole file: what is told apart below is the cut."""
    assert _codes(_native(HEAD + COSTLY + TAIL)) == []
    assert _codes(_native(HEAD)) == ["OPG301", "OPG307", "OPG308", "OPG309"]


def test_no_rule_across_entries_calls_missing_what_lies_past_the_cut(small_budget):
    snapshot = _native(HEAD + COSTLY + TAIL)
    [stop] = [d for d in snapshot.diagnostics if d.code == "OPG007"]
    assert stop.span.start_line == HEAD.count("\n")  # reading stopped at the costly entry, before the tail
    assert _codes(snapshot) == ["OPG007"]


def test_what_is_wrong_before_the_cut_is_still_told(small_budget):
    """Only ops related to a name past the cut are spared: a view whose copy is nowhere is still an error."""
    alone = "- func: lonely(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CompositeExplicitAutograd: lonely\n"
    twice = "- func: twice(Tensor self) -> Tensor\n- func: twice(Tensor self) -> Tensor\n"
    assert _codes(_native(alone + twice + HEAD + COSTLY + TAIL)) == ["OPG007", "OPG300", "OPG304", "OPG308"]


def test_a_tag_past_the_cut_of_tags_yaml_is_no_unknown_tag(small_budget):
    tags = TagsParser().parse(TAGS + "- tag: costly\n  desc: " + ", ".join(["x"] * 2_000) + "\n" + LATE_TAG)
    assert [d.code for d in tags.diagnostics] == ["OPG007"] and "late" in tags.names
    assert "OPG107" not in _codes(_native(HEAD + COSTLY + TAIL, tags.names))


def test_other_files_are_not_told_an_op_past_the_cut_is_unknown(small_budget):
    native = _native(HEAD + COSTLY + TAIL)
    backend = check_backend("backend: XLA\ncpp_namespace: x\nsupported:\n- v_copy\n- o\n- d.out\n- nope\n", native)
    assert [(d.code, d.span.start_line) for d in backend.diagnostics] == [("OPG509", 6)]
    derivatives = DerivativesParser().parse("- name: late(Tensor self) -> Tensor\n  self: grad\n"
                                            "- name: nope(Tensor self) -> Tensor\n  self: grad\n")
    found = DerivativesChecker().check(derivatives, native.functions, DEFAULT).diagnostics
    assert [(d.code, d.span.start_line) for d in found] == [("OPG704", 2)]
    deprecated = ("- name: late(Tensor self, Scalar x) -> Tensor\n  aten: late(self)\n"
                  "- name: nope(Tensor self, Scalar x) -> Tensor\n  aten: nope(self)\n")
    assert [(d.code, d.span.start_line) for d in DeprecatedParser(DEFAULT).check(deprecated, native.functions)] \
        == [("OPG743", 3)]
