"""Review of the cold-parse performance changes (2b76b02..1656fdb).

paused_gc (server/index/documents.py) calls gc.freeze() after a cold parse. gc.freeze() moves *every*
object the collector tracks into the permanent generation, not only the parse's: cyclic garbage that
is waiting for a collection, and live cycles that die later, are never collected again. A freeze after
every cold parse (the first open, then every tags.yaml edit that changes the set of tag names) leaked a
little more each time; the freeze now happens once per process, as the server's own freeze did before.
"""

from __future__ import annotations

import gc
import random
import weakref
from pathlib import Path

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.entries import Chunk, split_chunks


class _Node:
    """A weakly referenceable object to put in a reference cycle."""

    me: object


def _cycle() -> tuple[_Node, weakref.ref]:
    node = _Node()
    node.me = node
    return node, weakref.ref(node)


@pytest.fixture
def restore_gc():
    enabled = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()  # what the parses froze goes back to the collector, for the tests after this one
    if not enabled:
        gc.disable()


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_tags_change_reparse_does_not_leak_pending_cyclic_garbage(native_yaml: Path, tags_yaml: Path, restore_gc):
    text = native_yaml.read_text()
    names = TagsParser().parse(tags_yaml.read_text()).names
    parser = NativeParser(release=DEFAULT)
    first = parser.parse(text, names)  # the server's first analysis

    # Garbage made while (or just before) the next parse runs, e.g. by the event loop thread.
    node, pending = _cycle()
    del node
    # tags.yaml edited: a new tag name; the whole file is lowered again, the old snapshot still held.
    second = parser.parse(text, names | {"a_new_tag"})
    assert first.functions.ops and second.functions.ops
    gc.collect()
    assert pending() is None, "an unreachable cycle survived gc.collect(): it was frozen by the parse"


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_later_cold_parses_do_not_freeze_again(native_yaml: Path, tags_yaml: Path, restore_gc):
    text = native_yaml.read_text()
    names = TagsParser().parse(tags_yaml.read_text()).names
    NativeParser(release=DEFAULT).parse(text, names)  # the first cold parse of the process has frozen the heap by now
    frozen = gc.get_freeze_count()
    node, alive = _cycle()  # e.g. an asyncio task or request in flight while the worker thread parses
    NativeParser(release=DEFAULT).parse(text, names | {"a_new_tag"})
    assert gc.get_freeze_count() == frozen
    del node
    gc.collect()
    assert alive() is None, "a cycle dropped after the parse survived gc.collect(): it was frozen by the parse"


# ---------------------------------------------------------------- checked, no defect: split_chunks


def _split_chunks_before(text: str) -> tuple[Chunk, ...]:
    """split_chunks as it was before 1656fdb."""
    import re

    starts = [m.start() + 1 for m in re.finditer(r"\n[^ \t\r\n#]", text)]
    if text and text[0] not in " \t\r\n#":
        starts.insert(0, 0)
    chunks = []
    line = 0
    previous = 0
    for start, end in zip(starts, starts[1:] + [len(text)]):
        line += text.count("\n", previous, start)
        previous = start
        chunks.append(Chunk(line, text[start:end]))
    return tuple(chunks)


def test_split_chunks_same_as_before():
    rng = random.Random(7)
    pieces = ["\n", " ", "\t", "\r", "#", "-", "a", "- b: c", "\x0b", "\x85", "\u2028", ""]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        got = split_chunks(text)
        assert got == _split_chunks_before(text), repr(text)
        assert all(type(c) is Chunk for c in got)
