"""Selection ranges of an operator yaml: from the name part under the cursor (an operator's base, an overload, a
kernel) out to the piece, the value, the key's line(s), the entry and the whole document."""

from __future__ import annotations

from ..index.documents import Document
from ..index.native import NativeSnapshot
from ..text import Span
from . import cursor
from .rename import native_target


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


def _pair_at(document: Document, line: int, col: int) -> tuple[Span, Span] | None:
    """(value span, key-and-value span) of the entry's top-level pair under the cursor."""
    entry = cursor.entry_at(document, line)
    if entry is None or entry.result.mapping is None:
        return None
    rel = line - entry.line
    for key, value in entry.result.mapping.pairs:
        whole = Span(key.span.start_line, key.span.start_col, value.span.end_line, value.span.end_col)
        if whole.contains(rel, col):
            return value.span.shifted(entry.line), whole.shifted(entry.line)
    return None


def selection_spans(document: Document, line: int, col: int, snapshot: NativeSnapshot | None = None,
                    end: tuple[int, int] | None = None) -> list[Span]:
    """The ranges around (line, col), innermost first, each inside the next; `end`: where the document ends."""
    found: list[Span] = []
    if snapshot is not None:
        target = native_target(snapshot, line, col)
        if target is not None:
            found.append(target.span)
    hit = cursor.hit_at(document, line, col)
    if hit is not None:
        found.append(hit.span)
    pair = _pair_at(document, line, col)
    if pair is not None:
        found.extend(pair)
    entry = cursor.entry_at(document, line)
    if entry is not None:
        found.append(cursor.entry_range(entry))
    if end is not None:
        found.append(Span(0, 0, *end))
    out: list[Span] = []
    for span in found:
        if (not out or (span != out[-1] and _inside(out[-1], span))) and span.start_line <= line <= span.end_line:
            out.append(span)
    return out or [Span.point(line, col)]
