"""Parse entry-list documents incrementally: unchanged entries are reused by their text.

A document is re-split on every change (cheap), and only entries whose text
is new are composed and lowered again. Results are position-independent
(spans relative to the entry), so an entry that merely moved is reused too.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import weakref
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from itertools import repeat
from typing import Any, Generic, NamedTuple, TypeVar, overload

from ..diagnostics import Diagnostic, diag
from ..frozen import new_tuple, record
from ..syntax.entries import compose_entry, entry_chunks, entry_mapping, iter_chunks, stray_chunk_diagnostic
from ..syntax.nodes import YMap
from ..text import BOM, Span
from .yaml_names import DEPRECATED_YAML as DEPRECATED_YAML
from .yaml_names import DERIVATIVES_YAML as DERIVATIVES_YAML

T = TypeVar("T")

# Larger than any real operator yaml by far; bigger input is almost surely a mistake.
MAX_DOCUMENT_CHARS = 64 * 1024 * 1024

# The memory a file may cost while it is read, in bytes: MEMORY_PER_CHAR times its size, and never less than
# MIN_MEMORY_BUDGET, so that memory stays linear in the input with a small constant (issue 16: at most 20x
# the input; the text itself, the bytes it was read from and transient lists take the other 4x). What an
# entry costs is estimated before it is composed, from upper bounds measured with tracemalloc on the costliest
# inputs of each kind (tests/reliability/test_bounded_memory.py): the real native_functions.yaml of every
# release is estimated at about 34 MB (it takes 18), well under the floor. Text shaped like the real file
# costs about 30 times its size (its model; estimated at 55), so a file of that kind over about 1.7 MB (three
# real files) is stopped too, unless OPGEN_MEMORY_BUDGET_MB raises the floor.
MEMORY_PER_CHAR = 16
MEMORY_BUDGET_VARIABLE = "OPGEN_MEMORY_BUDGET_MB"


def _floor_from_environment(default: int = 96 * 1024 * 1024) -> int:
    value = os.environ.get(MEMORY_BUDGET_VARIABLE, "")
    return int(value) * 1024 * 1024 if value.isascii() and value.isdigit() and int(value) > 0 else default


MIN_MEMORY_BUDGET = _floor_from_environment()
# Bytes per YAML value (a key, a value, a list item with its position, or a schema argument) and what each
# value can bring with it: a lowered list item, a diagnostic about it.
VALUE_COST = 500
# Bytes per entry of its own text, over its values: the entry's result, its lowered model (a NativeFunction
# of one argument, with its generated variants) or its diagnostics, and its place in the cache.
ENTRY_COST = 4_000
# Bytes per entry placed in the document (its first line and a reference to the shared result), and per
# diagnostic about text that is no entry.
PLACED_COST = 32
STRAY_COST = 400
# No text of n characters is estimated at more than n times this (a bound, not an estimate), so smaller
# files than their budget allows for are never counted.
_MOST_COST_PER_CHAR = ENTRY_COST + 2 * VALUE_COST + PLACED_COST + STRAY_COST


def memory_budget(chars: int) -> int:
    """The bytes a file of this many characters may cost while it is read."""
    return max(MIN_MEMORY_BUDGET, MEMORY_PER_CHAR * chars)


def estimated_nodes(text: str) -> int:
    """An upper estimate of the YAML values in text: each one after the first follows one of these marks."""
    return (text.count(",") + text.count("\n") + text.count(":") + text.count("- ") + text.count("[")
            + text.count("{") + 1)


def entry_cost(text: str) -> int:
    """An upper estimate of the bytes an entry of this text costs once composed and lowered."""
    return ENTRY_COST + len(text) + VALUE_COST * estimated_nodes(text)


@record
class EntryResult(Generic[T]):
    """One entry: its mapping (if it is one), what it lowers to, and its own diagnostics (relative)."""

    text: str
    mapping: YMap | None
    value: T | None
    diagnostics: tuple[Diagnostic, ...]
    # entry_cost(text) once a budget has counted it (see cost), else None.
    _cost: int | None = field(default=None, compare=False, repr=False)

    @property
    def cost(self) -> int:
        """entry_cost(text), counted when a budget first asks and kept so that a re-parse need not count again
        (a file too small to reach its budget is never counted: the real native_functions.yaml is not)."""
        cost = self._cost
        if cost is None:
            cost = entry_cost(self.text)
            object.__setattr__(self, "_cost", cost)
        return cost


class PlacedEntry(NamedTuple, Generic[T]):
    line: int  # first line of the entry in the document, 0-based
    result: EntryResult[T]

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(d.shifted(self.line) for d in self.result.diagnostics)


class PlacedEntries(Sequence[PlacedEntry[T]]):
    """A document's entries in order: their first lines in an array and their results (shared by entries of the
    same text) in a list. A placed entry costs 16 bytes this way, not the 100 of a tuple and an int each: a file
    of a million one-line entries. The PlacedEntry tuples are made as they are read."""

    __slots__ = ("_lines", "_results")

    def __init__(self, lines: array[int], results: list[EntryResult[T]]) -> None:
        self._lines = lines
        self._results = results

    def __len__(self) -> int:
        return len(self._results)

    @overload
    def __getitem__(self, index: int) -> PlacedEntry[T]: ...
    @overload
    def __getitem__(self, index: slice) -> PlacedEntries[T]: ...
    def __getitem__(self, index: int | slice) -> PlacedEntry[T] | PlacedEntries[T]:
        if isinstance(index, slice):
            return PlacedEntries(self._lines[index], self._results[index])
        return new_tuple(PlacedEntry, (self._lines[index], self._results[index]))

    def __iter__(self) -> Iterator[PlacedEntry[T]]:
        return map(new_tuple, repeat(PlacedEntry), zip(self._lines, self._results))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlacedEntries):
            return self._lines == other._lines and self._results == other._results
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PlacedEntries({list(self)!r})"


@record
class Document(Generic[T]):
    entries: Sequence[PlacedEntry[T]]
    # Diagnostics about the document as a whole (stray text, not a list, not text at all).
    diagnostics: tuple[Diagnostic, ...]
    # Where reading stopped (OPG007), as an offset into the text; -1: the document was read whole. A rule across
    # entries must not conclude "missing" about what may lie past it (names_past).
    unread_from: int = -1

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


def _new_cost(costs: dict[str, int], text: str) -> int:
    """entry_cost(text), counted once per text (seven scans of it) and kept for its EntryResult."""
    cost = costs.get(text)
    if cost is None:
        cost = costs[text] = entry_cost(text)
    return cost


class _Budget:
    """What the entries of one document are estimated to cost so far, against memory_budget of its size.

    Entries of the same text count once (they share one result); each placed entry and each stray diagnostic
    counts too. Counted the same way whatever the cache holds, so a re-parse stops where a fresh one does."""

    __slots__ = ("_seen", "limit", "new_costs", "spent")
    exact = True  # (it stops reading where the budget ends, with a diagnostic; _Repeats gives up instead)

    def __init__(self, chars: int) -> None:
        self.limit = memory_budget(chars)
        self.spent = 0
        self._seen: set[str] = set()
        self.new_costs: dict[str, int] = {}  # entry_cost of each text not in the cache, for its EntryResult

    def admits(self, text: str, cached: EntryResult[Any] | None) -> bool:
        """Counts one placed entry of this text; False once the document is over its budget."""
        self.spent += PLACED_COST
        if text not in self._seen:
            self._seen.add(text if cached is None else cached.text)  # the cache's copy: the chunk's is dropped
            self.spent += _new_cost(self.new_costs, text) if cached is None else cached.cost
        return self.spent <= self.limit

    def admits_stray(self) -> bool:
        self.spent += STRAY_COST
        return self.spent <= self.limit

    def stop(self, line: int) -> Diagnostic:
        return diag("OPG007", Span.point(line, 0), f"opgen stops reading this file here: its entries so far would "
                    f"take about {self.spent // 2**20:,} MB to read (about {VALUE_COST} bytes a YAML value: a key, "
                    f"a value, a list item), more than the {self.limit // 2**20:,} MB opgen allows a file of this "
                    f"size ({MEMORY_PER_CHAR} times its size, at least {MIN_MEMORY_BUDGET // 2**20:,} MB, which "
                    f"{MEMORY_BUDGET_VARIABLE} sets; the real native_functions.yaml takes about 34 MB by this "
                    "count); the rest of the file is not checked")


class _Repeats:
    """A quick count for files that may reach their budget: every placed entry at its full cost, each repeat of a
    text counted again. It counts at least what _Budget counts, with no set of texts to keep, so while it stays
    within the budget so would _Budget; once it is over, the file is counted again exactly (real files never
    are: the real native_functions.yaml is counted at about 34 MB of its 96)."""

    __slots__ = ("limit", "new_costs", "spent")
    exact = False

    def __init__(self, chars: int) -> None:
        self.limit = memory_budget(chars)
        self.spent = 0
        self.new_costs: dict[str, int] = {}

    def admits(self, text: str, cached: EntryResult[Any] | None) -> bool:
        self.spent += PLACED_COST + (_new_cost(self.new_costs, text) if cached is None else cached.cost)
        return self.spent <= self.limit

    def admits_stray(self) -> bool:
        self.spent += STRAY_COST
        return self.spent <= self.limit

    def stop(self, line: int) -> None:
        """Not the quick count's to say: the file is counted again, exactly."""
        return None


def _offset_of_line(text: str, line: int) -> int:
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset


def names_past(text: str, document: Document[Any], name: re.Pattern[str]) -> frozenset[str]:
    """The first group of each match of `name` (a pattern that starts with the line break before a line) in the text
    reading stopped before, none when it was read whole: a scan, not a parse, linear in the text it reads and
    costing no more memory than the names it finds."""
    start = document.unread_from
    if start < 0:
        return frozenset()
    found = {m.group(1) for m in name.finditer(text, max(start - 1, 0))}  # from the line break before the cut
    if start == 0 and (first := name.match("\n" + text[:4096])) is not None:  # the first line has none before it
        found.add(first.group(1))
    return frozenset(found)


# The fewest characters an entry has on average for _place_entries to hold every chunk at once (about 150 bytes an
# entry on top of its text: well inside the memory budget then; the real file's average is about 220). Files of many
# short entries are placed one chunk at a time.
_LONG_ENTRIES = 128


class _EntryCache(dict):  # type: ignore[type-arg]
    """A cache of entry results by text (a dict that can be referenced weakly), with the parsers that use it."""

    __slots__ = ("__weakref__", "users")

    def __init__(self) -> None:
        super().__init__()
        self.users: weakref.WeakSet[EntryListParser[Any]] = weakref.WeakSet()


class SharedEntries:
    """Entry caches shared by the parsers that lower entries alike (the same document kind and lowering context):
    an entry's result depends only on its text and that context, so documents of the same text share one model
    instead of each building its own (issue 27: 300 copies of the real file each lowered the whole file again).

    A cache lives as long as a parser uses it (weak values): closing the last document that used it frees it.
    Parsers run on one thread at a time (the server's analysis thread), as a single parser's cache already needs.
    """

    def __init__(self) -> None:
        self._caches: weakref.WeakValueDictionary[tuple[object, ...], _EntryCache] = weakref.WeakValueDictionary()

    def cache(self, context: tuple[object, ...]) -> dict[str, Any]:
        """The cache of the parsers of this context (hashable: the kind and what the lowering depends on)."""
        found = self._caches.get(context)
        if found is None:
            found = self._caches[context] = _EntryCache()
        return found

    def __len__(self) -> int:
        return len(self._caches)


class EntryListParser(Generic[T]):
    """Parses one document kind (native functions, tags) with a cache keyed by entry text."""

    def __init__(self, what: str, lower: Callable[[YMap], tuple[T | None, tuple[Diagnostic, ...]]],
                 prepare: Callable[[list[YMap]], None] | None = None, cache: dict[str, Any] | None = None) -> None:
        """prepare: runs once over all new entries before any is lowered (to fill memos in one loop); cache: one
        shared with other parsers whose lowering gives the same results (SharedEntries), else the parser's own."""
        self._what = what
        self._lower = lower
        self._prepare = prepare
        self._cache: dict[str, EntryResult[T]] = {} if cache is None else cache
        self._last: list[EntryResult[T]] = []  # the results of the last parse: what this parser uses of the cache
        if isinstance(cache, _EntryCache):
            cache.users.add(self)

    def _add_entries(self, texts: list[str], costs: dict[str, int]) -> None:
        """Compose all new entries, prepare, then lower them all: one kind of work per loop
        runs measurably faster than alternating (on a cold native_functions.yaml, 25-50 ms
        for composing apart, 30-40 ms more for parsing the schemas apart). costs: the entry_cost of texts the
        budget counted already."""
        what = self._what
        composed = [compose_entry(text) for text in texts]
        shaped = [entry_mapping(entry, what) for entry in composed]
        if self._prepare is not None:
            self._prepare([mapping for mapping, _ in shaped if mapping is not None])
        lower = self._lower
        cache = self._cache
        for text, entry, (mapping, shape) in zip(texts, composed, shaped):
            value, lowered = (None, ()) if mapping is None else lower(mapping)
            cache[text] = EntryResult(text, mapping, value, entry.diagnostics + shape + tuple(lowered),
                                      costs.get(text))

    def _place(self, text: str, budget: _Budget | _Repeats | None
               ) -> tuple[array[int], list[EntryResult[T] | str], array[int], dict[str, str], list[Diagnostic]] | None:
        """One pass over the chunks, keeping only a line and a reference per entry: the text of an entry not in
        the cache stands for its result (one string per new text) until the new entries are composed. Returns the
        lines, the results, where the pending ones are, the new texts and the stray diagnostics; None when a quick
        count (_Repeats) ran over the budget, which only the exact count may decide (its stop gives no diagnostic).

        A text of long entries only, with the quick count or none (the real native_functions.yaml, cold or
        re-parsed), goes to _place_entries instead, which does the same per-entry work (the cache look-up, the
        pending and new texts, the count) in bulk; this loop is for the rest: stray text, the exact count's stop
        line, and files of many short entries, whose chunks it never holds all at once."""
        if (budget is None or not budget.exact) and len(text) >= _LONG_ENTRIES * (text.count("\n-") + 1) \
                and (whole := entry_chunks(text)) is not None:
            return self._place_entries(*whole, budget)
        stray: list[Diagnostic] = []
        cache = self._cache
        lines: array[int] = array("q")
        results: list[EntryResult[T] | str] = []
        pending: array[int] = array("q")
        new: dict[str, str] = {}
        for chunk in iter_chunks(text):
            line, chunk_text = chunk
            if chunk_text[0] == "-" and (len(chunk_text) == 1 or chunk_text[1] in " \t\r\n"):
                result = cache.get(chunk_text)
                if budget is not None and not budget.admits(chunk_text, result):
                    if (stop := budget.stop(line)) is None:
                        return None
                    stray.append(stop)
                    break
                if result is None:
                    pending.append(len(results))
                    results.append(new.setdefault(chunk_text, chunk_text))
                else:
                    results.append(result)
                lines.append(line)
            elif (d := stray_chunk_diagnostic(chunk)) is not None:
                if budget is not None and not budget.admits_stray():
                    if (stop := budget.stop(line)) is None:
                        return None
                    stray.append(stop)
                    break
                stray.append(d)
        return lines, results, pending, new, stray

    def _place_entries(self, first_lines: list[int], texts: list[str], budget: _Budget | _Repeats | None
                       ) -> tuple[array[int], list[EntryResult[T] | str], array[int], dict[str, str], list[Diagnostic]] | None:
        """_place for a text of entries only, with the quick count or none: the same, in a few C loops and one sum
        (cutting, counting and looking up the chunks one by one: placing the real file took 6.1 ms cold and 3.0
        cached, now 5.5 and 2.5, the test of entry length included). The quick count's increments are all
        positive, so it runs over the budget somewhere if and only if its total does.

        Why the per-entry work is written twice: as one function that both call per entry, it puts a Python call
        per entry back on this path (placing the real file 2.9 -> 3.1 ms re-parsed, 5.9 -> 6.1 cold, medians of 9
        processes, 2026-12-03); and in bulk, as here, it needs every chunk's text at once, which _place must not
        hold for a file of many short entries (the memory bound)."""
        results: list[EntryResult[T] | str | None] = list(map(self._cache.get, texts))
        pending = array("q", [i for i, result in enumerate(results) if result is None])
        new: dict[str, str] = {}
        for i in pending:
            results[i] = new.setdefault(texts[i], texts[i])
        if budget is not None:
            costs = budget.new_costs
            each: list[int] = [_new_cost(costs, result) if isinstance(result, str) else result.cost  # type: ignore[union-attr]
                               for result in results]
            budget.spent += PLACED_COST * len(texts) + sum(each)
            if budget.spent > budget.limit:
                return None  # (as _place returns when the quick count runs over: the exact count decides)
        return array("q", first_lines), results, pending, new, []  # type: ignore[return-value]

    def parse(self, text: str) -> Document[T]:
        if text.startswith(BOM):  # PyYAML reads it as the stream's byte order mark, not as text of the first entry
            text = text[1:]
        problem = _not_text(text)
        if problem is not None:
            return Document((), (problem,))
        counted = len(text) * _MOST_COST_PER_CHAR > memory_budget(len(text))
        budget: _Budget | _Repeats | None = _Repeats(len(text)) if counted else None
        placed = self._place(text, budget)
        if placed is None:  # the quick count ran over the budget: only the exact count may stop reading
            budget = _Budget(len(text))
            placed = self._place(text, budget)
        assert placed is not None  # the exact count never gives up
        lines, results, pending, new, stray = placed
        cache = self._cache
        if new:
            self._add_entries(list(new), {} if budget is None else budget.new_costs)
            for i in pending:
                results[i] = cache[results[i]]  # type: ignore[index]
        entries = PlacedEntries(lines, results)  # type: ignore[arg-type]
        if not entries and not stray:
            stray.append(diag("OPG002", Span.point(0, 0), f"{self._what} has no entries; it must be a list of "
                                                          "entries starting with '- '"))
        self._last = results  # type: ignore[assignment]
        # Drop entries no longer in any user's text now and then, so the cache does not grow with every edit (in
        # place, so that a shared cache stays shared; what other parsers use stays, or a small file's every edit
        # would make a large one sharing the cache compose all its entries again).
        if len(cache) > 2 * len(entries) + 64:
            used = {result.text for result in self._last}
            for other in getattr(cache, "users", ()):
                if other is not self:
                    used.update(result.text for result in other._last)
            if len(cache) > 2 * len(used) + 64:
                for stale in [k for k in cache if k not in used]:
                    del cache[stale]
        stop = next((d.span.start_line for d in stray if d.code == "OPG007"), None)
        return Document(entries, tuple(stray), -1 if stop is None else _offset_of_line(text, stop))
