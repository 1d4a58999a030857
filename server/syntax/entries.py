"""Split a top-level yaml list into entries, the unit of incremental parsing.

native_functions.yaml, tags.yaml and similar files are a sequence of mappings
whose items start at column 0 with '- '. Each entry is composed on its own, so
a broken entry never hides its neighbours, and an edit re-composes only the
entries whose text changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate, chain, islice, repeat, tee
from typing import NamedTuple

from ..diagnostics import Diagnostic, diag
from ..frozen import new_tuple
from ..text import Span
from .canonical import compose_canonical_entry
from .nodes import YMap, YNode, YSeq


class Chunk(NamedTuple):
    """Lines of the document from one column-0 line to the next."""

    start_line: int
    text: str



# A chunk starts at every column-0 character that is not blank space or a comment.
_CHUNK_START = re.compile(r"\n[^ \t\r\n#]")


def iter_chunks(text: str) -> Iterator[Chunk]:
    """The chunks of the text, cut before every column-0 line that is not blank or a comment, one at a time.

    Every step is a C iterator (finditer, map, tee, accumulate): the server splits the whole text again on
    every keystroke, and nothing is built per chunk ahead of its use, so a file of a million one-line entries
    never holds a million chunks at once."""
    starts: Iterator[int] = map((1).__add__, map(re.Match.start, _CHUNK_START.finditer(text)))
    if text and text[0] not in " \t\r\n#":
        starts = chain((0,), starts)
    begins, counted, previous, following = tee(starts, 4)
    ends = chain(islice(following, 1, None), (len(text),))
    lines = accumulate(map(text.count, repeat("\n"), chain((0,), previous), counted))
    texts = map(text.__getitem__, map(slice, begins, ends))
    return map(new_tuple, repeat(Chunk), zip(lines, texts))


# An entry's chunk: '-' at column 0, then blank space, a line end or the end of the text (what EntryListParser takes
# for an entry; any other chunk is stray text).
_ENTRY_START = re.compile(r"\n-(?=[ \t\r\n]|\Z)")


def entry_chunks(text: str) -> tuple[list[int], list[str]] | None:
    """The first lines and texts of the chunks (iter_chunks) when every chunk is an entry, else None: the cut of a
    whole native_functions.yaml in a few C loops, for a reader that needs all of it at once."""
    starts = [m.start() + 1 for m in _CHUNK_START.finditer(text)]
    if text and text[0] not in " \t\r\n#":
        starts.insert(0, 0)
    entries = sum(1 for _ in _ENTRY_START.finditer(text)) + (text[:1] == "-" and text[1:2] in ("", " ", "\t", "\r", "\n"))
    if entries != len(starts):  # (every entry's start is a chunk's)
        return None
    ends = starts[1:]
    ends.append(len(text))
    texts = list(map(text.__getitem__, map(slice, starts, ends)))
    lines = list(accumulate(map(text.count, repeat("\n"), chain((0,), starts), starts)))
    return lines, texts


def split_chunks(text: str) -> tuple[Chunk, ...]:
    """All the chunks of the text (iter_chunks)."""
    return tuple(iter_chunks(text))


class ComposedEntry(NamedTuple):
    """One entry, composed. Spans are relative to the entry's first line. (A NamedTuple built by new_tuple for
    the canonical entries: one for every entry of a cold parse.)"""

    node: YNode | None
    diagnostics: tuple[Diagnostic, ...]


def compose_entry(chunk_text: str) -> ComposedEntry:
    canonical = compose_canonical_entry(chunk_text)
    if canonical is not None:
        return new_tuple(ComposedEntry, (canonical[0], tuple(canonical[1])))
    from .libyaml import compose  # (PyYAML loads for an entry out of the canonical shape only)

    root, diags = compose(chunk_text)
    if root is None:
        return ComposedEntry(None, tuple(diags))
    if not isinstance(root, YSeq) or len(root.items) != 1:
        span = root.span if root is not None else Span.point(0, 0)
        return ComposedEntry(None, (*diags, diag("OPG002", span, "expected one list item starting with '- '")))
    item = root.items[0]
    return ComposedEntry(item, tuple(diags))


def stray_chunk_diagnostic(chunk: Chunk) -> Diagnostic | None:
    """Column-0 text that is not an entry: a document marker is fine, anything else is not."""
    first = chunk.text.split("\n", 1)[0].rstrip("\r")
    if first.rstrip() in ("---", "..."):
        return None
    return diag(
        "OPG002",
        Span.on_line(chunk.start_line, 0, len(first)),
        "expected a list entry starting with '- ' at column 0; this file must be a list of entries",
    )


def entry_mapping(entry: ComposedEntry, what: str) -> tuple[YMap | None, tuple[Diagnostic, ...]]:
    """The entry's mapping, or a diagnostic saying it is not one."""
    node = entry.node
    if node is None:
        return None, ()
    if isinstance(node, YMap):
        return node, ()
    kind = "a list" if isinstance(node, YSeq) else f"the scalar {getattr(node, 'text', '')!r}"
    return None, (diag("OPG003", node.span, f"each {what} entry must be a mapping (key: value lines), but this is {kind}"),)
