"""Parse entry-list documents incrementally: unchanged entries are reused by their text.

A document is re-split on every change (cheap), and only entries whose text
is new are composed and lowered again. Results are position-independent
(spans relative to the entry), so an entry that merely moved is reused too.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from ..diagnostics import Diagnostic, diag
from ..frozen import fast_init
from ..syntax.entries import Chunk, compose_entry, entry_mapping, split_chunks, stray_chunk_diagnostic
from ..syntax.nodes import YMap
from ..text import BOM, Span

T = TypeVar("T")

# Larger than any real operator yaml by far; bigger input is almost surely a mistake.
MAX_DOCUMENT_CHARS = 64 * 1024 * 1024
# At most about this many YAML values (mappings, keys, list items) composed for one file: every one costs some
# 150-300 bytes with its position, so that a 50 MB `tags: [core, core, ...]` would need gigabytes. The real
# native_functions.yaml has about 46,000 by this count, a ten times larger one 460,000.
MAX_DOCUMENT_NODES = 1_000_000


def estimated_nodes(text: str) -> int:
    """An upper estimate of the YAML values in text: each one after the first follows one of these marks."""
    return (text.count(",") + text.count("\n") + text.count(":") + text.count("- ") + text.count("[")
            + text.count("{") + 1)


@fast_init
@dataclass(frozen=True, slots=True)
class EntryResult(Generic[T]):
    """One entry: its mapping (if it is one), what it lowers to, and its own diagnostics (relative)."""

    text: str
    mapping: YMap | None
    value: T | None
    diagnostics: tuple[Diagnostic, ...]


_tuple = tuple.__new__


class PlacedEntry(NamedTuple, Generic[T]):
    line: int  # first line of the entry in the document, 0-based
    result: EntryResult[T]

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(d.shifted(self.line) for d in self.result.diagnostics)


@fast_init
@dataclass(frozen=True, slots=True)
class Document(Generic[T]):
    entries: tuple[PlacedEntry[T], ...]
    # Diagnostics about the document as a whole (stray text, not a list, not text at all).
    diagnostics: tuple[Diagnostic, ...]

    def all_diagnostics(self) -> list[Diagnostic]:
        return list(self.each_diagnostic())

    def each_diagnostic(self) -> Iterator[Diagnostic]:
        """The document's diagnostics, then each entry's placed in the document, one at a time."""
        yield from self.diagnostics
        for entry in self.entries:
            if entry.result.diagnostics:
                yield from entry.diagnostics()

    def diagnostic_count(self) -> int:
        return len(self.diagnostics) + sum(len(entry.result.diagnostics) for entry in self.entries)


# More new objects than this after a parse: it was a cold one (the real file leaves ~170,000).
FREEZE_ABOVE_OBJECTS = 50_000
_heap_frozen = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a document is parsed.

    Parsing allocates tens of thousands of small acyclic objects; the collector's
    passes over them cost more than the parse itself at times (measured: up to 60 ms
    stalls in a 20 ms re-check). Nothing here forms reference cycles.

    After the first cold parse of the process, its objects are moved out of the
    collector's reach for good (gc.freeze): they live as long as their entries' texts,
    and the first young collection would otherwise walk them all to find nothing (18 ms
    on the real file; every later full collection again). Reference counting still
    frees them. Only once: a freeze takes whatever else is alive or pending too, and the
    cycles among those are never freed, so a freeze on every cold parse (each tags.yaml
    edit re-lowers the whole file) would leak a little more every time.
    """
    global _heap_frozen
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not _heap_frozen and gc.get_count()[0] > FREEZE_ABOVE_OBJECTS:
                _heap_frozen = True
                gc.freeze()
            gc.enable()


def _not_text(text: str, limit: int = MAX_DOCUMENT_CHARS) -> Diagnostic | None:
    if len(text) > limit:
        return diag("OPG006", Span.point(0, 0), f"this file has {len(text):,} characters; opgen reads operator yaml "
                                                f"files of up to {limit:,}")
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00"))
        return diag("OPG006", Span.point(line, 0), "this file contains NUL bytes; it is not a text yaml file")
    return None


def _within_node_budget(placed: list[Chunk], stray: list[Diagnostic]) -> list[Chunk]:
    """The entries up to the one whose values pass MAX_DOCUMENT_NODES (entries of the same text counted once, as
    they are composed once); an OPG007 where reading stops."""
    seen: set[str] = set()
    total = 0
    for i, (line, chunk_text) in enumerate(placed):
        if chunk_text in seen:
            continue
        seen.add(chunk_text)
        total += estimated_nodes(chunk_text)
        if total > MAX_DOCUMENT_NODES:
            stray.append(diag("OPG007", Span.point(line, 0), f"opgen stops reading this file here: its entries so "
                              f"far hold about {total:,} YAML values (keys, values, list items), more than the "
                              f"{MAX_DOCUMENT_NODES:,} opgen reads in one file (the real native_functions.yaml "
                              "has about 46,000); the rest of the file is not checked"))
            return placed[:i]
    return placed


class EntryListParser(Generic[T]):
    """Parses one document kind (native functions, tags) with a cache keyed by entry text."""

    def __init__(self, what: str, lower: Callable[[YMap], tuple[T | None, tuple[Diagnostic, ...]]],
                 prepare: Callable[[list[YMap]], None] | None = None) -> None:
        """prepare: runs once over all new entries before any is lowered (to fill memos in one loop)."""
        self._what = what
        self._lower = lower
        self._prepare = prepare
        self._cache: dict[str, EntryResult[T]] = {}

    def _add_entries(self, texts: list[str]) -> None:
        """Compose all new entries, prepare, then lower them all: one kind of work per loop
        runs measurably faster than alternating (on a cold native_functions.yaml, 25-50 ms
        for composing apart, 30-40 ms more for parsing the schemas apart)."""
        what = self._what
        composed = [compose_entry(text) for text in texts]
        shaped = [entry_mapping(entry, what) for entry in composed]
        if self._prepare is not None:
            self._prepare([mapping for mapping, _ in shaped if mapping is not None])
        lower = self._lower
        cache = self._cache
        for text, entry, (mapping, shape) in zip(texts, composed, shaped):
            value, lowered = (None, ()) if mapping is None else lower(mapping)
            cache[text] = EntryResult(text, mapping, value, entry.diagnostics + shape + tuple(lowered))

    def parse(self, text: str) -> Document[T]:
        if text.startswith(BOM):  # PyYAML reads it as the stream's byte order mark, not as text of the first entry
            text = text[1:]
        problem = _not_text(text)
        if problem is not None:
            return Document((), (problem,))
        stray: list[Diagnostic] = []
        cache = self._cache
        placed: list[Chunk] = []
        for chunk in split_chunks(text):
            chunk_text = chunk[1]
            if chunk_text[0] == "-" and (len(chunk_text) == 1 or chunk_text[1] in " \t\r\n"):
                placed.append(chunk)
            elif (d := stray_chunk_diagnostic(chunk)) is not None:
                stray.append(d)
        # An entry's estimate is at most its length (it starts with "- ", one mark of two characters): a text
        # within the budget in characters is within it in values, and the real file is not counted at all.
        if len(text) > MAX_DOCUMENT_NODES:
            placed = _within_node_budget(placed, stray)
        new = list(dict.fromkeys([chunk_text for _, chunk_text in placed if chunk_text not in cache]))
        if new:
            self._add_entries(new)
        # tuple.__new__: a NamedTuple's own __new__ is Python code, and this runs on every keystroke.
        entries: list[PlacedEntry[T]] = [_tuple(PlacedEntry, (line, cache[chunk_text])) for line, chunk_text in placed]
        if not entries and not stray:
            stray.append(diag("OPG002", Span.point(0, 0), f"{self._what} has no entries; it must be a list of "
                                                          "entries starting with '- '"))
        # Drop entries no longer in the text now and then, so the cache does not grow with every edit.
        if len(cache) > 2 * len(entries) + 64:
            used = {e.result.text for e in entries}
            self._cache = {k: v for k, v in cache.items() if k in used}
        return Document(tuple(entries), tuple(stray))
