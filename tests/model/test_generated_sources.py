"""Diagnostics on generated (autogen) ops point into the current text of the entry they came from.

The per-group memos once compared NativeFunctions by value, which leaves `source` out: after an
edit that moved keys within an entry (the op itself unchanged), the memo handed back a variant
carrying the source of an earlier parse, whose spans were the old ones.
"""

from __future__ import annotations

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT
from opgen_lsp.text import Span

TAGS = TagsParser().parse("- tag: core\n  desc: core\n").names

# autogen: foo.out generates a foo.out whose CompositeExplicitAutograd kernel clashes with the
# declared foo.out (of another signature): OPG300 on the generated op, at foo's name.
BEFORE = """\
- func: foo(Tensor self) -> Tensor
  autogen: foo.out
  dispatch:
    CPU: foo

- func: foo.out(Tensor self, *, int x, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: foo_out
"""
AFTER = BEFORE.replace("- func: foo(Tensor self) -> Tensor\n  autogen: foo.out\n",
                       "- autogen: foo.out\n  # func moved down two lines\n  func: foo(Tensor self) -> Tensor\n")


def _clash_spans(text: str) -> list[Span]:
    return [d.span for d in NativeParser(release=DEFAULT).parse(text, TAGS).diagnostics if d.code == "OPG300"]


def test_a_generated_op_s_diagnostic_follows_its_entry_after_an_edit() -> None:
    assert _clash_spans(BEFORE) == [Span(0, 8, 0, 11)]
    assert _clash_spans(AFTER) == [Span(2, 8, 2, 11)]
    assert _clash_spans(BEFORE) == [Span(0, 8, 0, 11)]
