"""The per-group memo of a NativeParser: it finds unchanged groups and keeps only the last pass's work."""

from __future__ import annotations

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.model.native_yaml import GroupMemo, NativeFunction
from opgen_lsp.releases import DEFAULT

TEXT = """\
- func: foo(Tensor self) -> Tensor
  structured_delegate: foo.out
- func: foo_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: foo.out
- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: foo_out
- func: bar(Tensor self, int x) -> Tensor
  autogen: bar.out
  dispatch:
    CPU: bar
- func: baz(Tensor(a) self) -> Tensor(a)
  dispatch:
    CompositeExplicitAutograd: baz
- func: baz_copy(Tensor self) -> Tensor
  tags: view_copy
  dispatch:
    CompositeExplicitAutogradNonFunctional: baz_copy
"""
TAGS = "- tag: view_copy\n  desc: a copy\n- tag: core\n  desc: core\n"
OTHER_TAGS = TAGS + "- tag: pointwise\n  desc: pointwise\n"


def _kept_functions(memo: GroupMemo) -> set[int]:
    return {id(a) for args, _ in memo._kept.values() for a in _walk(args)}


def _walk(value):
    if isinstance(value, NativeFunction):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _walk(item)


def test_unchanged_groups_are_found_and_edited_ones_recomputed() -> None:
    tags = TagsParser().parse(TAGS).names
    parser = NativeParser(release=DEFAULT)
    first = parser.parse(TEXT, tags).functions
    again = parser.parse("# a comment: every entry moves down a line\n" + TEXT, tags).functions
    assert [g for g in again.groups] == list(first.groups)
    assert all(a is b for a, b in zip(again.groups, first.groups))  # found, not recomputed
    assert all(a is b for a, b in zip(again.view_groups, first.view_groups))
    edited = parser.parse(TEXT.replace("int x", "int y"), tags).functions
    bar_out = [op for op in edited.ops if str(op.function.func.name) == "bar.out"]
    assert [str(op.function.func) for op in bar_out] == ["bar.out(Tensor self, int y, *, Tensor(a!) out) -> Tensor(a!)"]
    assert not edited.problems


def test_only_the_last_pass_is_kept() -> None:
    parser = NativeParser(release=DEFAULT)
    first = parser.parse(TEXT, TagsParser().parse(TAGS).names).functions
    memo = parser._assembly._memo
    assert _kept_functions(memo) >= {id(op.function) for op in first.ops}
    # Other tags: every entry is lowered again into new objects; the old ones must not stay in the memo.
    second = parser.parse(TEXT, TagsParser().parse(OTHER_TAGS).names).functions
    kept = _kept_functions(memo)
    assert kept >= {id(op.function) for op in second.ops}
    assert not kept & {id(op.function) for op in first.ops}
    assert second.groups == first.groups  # the same model, found afresh
