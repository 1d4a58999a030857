"""What is at a position of an analysed operator yaml document: the entry, and the piece under the cursor.

Shared by hover, definition, references and symbols. Positions are 0-based
(line, column) with columns in code points, as everywhere below the LSP layer.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from ..frozen import record
from ..index.documents import Document, PlacedEntry
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YNode, YScalar, YSeq
from ..text import Span

# What a Hit is on.
ENTRY_KEY = "entry-key"  # a top-level key of an entry (func, dispatch, tags, ...)
FUNC = "func"  # the func: schema value
OP_REFERENCE = "op-reference"  # an operator named by structured_delegate or autogen
DISPATCH_KEY = "dispatch-key"  # one key of a dispatch: table (a key line may list several)
TAG = "tag"  # one tag named under tags:
VALUE = "value"  # any other value; `key` says whose


@record
class Hit:
    kind: str
    text: str
    span: Span  # absolute
    key: str | None  # the entry key the hit belongs to
    entry: PlacedEntry


def entry_index_at(document: Document, line: int) -> int | None:
    """The index of the entry whose lines contain `line` (an entry runs up to the next one)."""
    entries = document.entries
    if not entries:
        return None
    at = bisect.bisect_right(entries, line, key=lambda e: e.line) - 1
    if at < 0:
        return None
    entry = entries[at]
    if line >= entry.line + entry.result.text.count("\n") + (0 if entry.result.text.endswith("\n") else 1):
        return None
    return at


def entry_at(document: Document, line: int) -> PlacedEntry | None:
    at = entry_index_at(document, line)
    return None if at is None else document.entries[at]


def content_end(entry: PlacedEntry) -> tuple[int, int]:
    """The absolute (line, column) where the entry's last non-blank, non-comment line ends.

    The composed mapping ends wherever libyaml's next token is, which is after any
    blank lines and comments that follow an entry; ranges shown in an editor should not.
    """
    text = entry.result.text
    end = len(text)
    while True:
        start = text.rfind("\n", 0, end) + 1  # the line that ends at `end`
        line = text[start:end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return entry.line + text.count("\n", 0, start), len(line.rstrip("\r"))
        if start == 0:
            return entry.line, 0
        end = start - 1


def entry_range(entry: PlacedEntry) -> Span:
    end_line, end_col = content_end(entry)
    return Span(entry.line, 0, end_line, end_col)


def func_scalar(entry: PlacedEntry) -> tuple[YScalar, str] | None:
    """The entry's func: scalar and its text, when it is a string."""
    mapping = entry.result.mapping
    node = mapping.value("func") if mapping is not None else None
    return (node, node.value) if isinstance(node, YScalar) and isinstance(node.value, str) else None


def op_name_span(entry: PlacedEntry) -> Span | None:
    """Where the entry's operator name is written (`name.overload` at the start of func:)."""
    found = func_scalar(entry)
    if found is None:
        return None
    scalar, text = found
    head = text.split("(", 1)[0].rstrip()
    start = len(head) - len(head.lstrip())
    return ScalarText(scalar).span(start, len(head)).shifted(entry.line)


def pieces(text: str, separator: str = ",") -> Iterator[tuple[str, int, int]]:
    """The non-blank pieces of a separated list with their offsets: 'a, b' -> ('a', 0, 1), ('b', 3, 4)."""
    pos = 0
    for piece in text.split(separator):
        name = piece.strip()
        start = pos + (len(piece) - len(piece.lstrip()))
        if name:
            yield name, start, start + len(name)
        pos += len(piece) + len(separator)


def _scalar_piece_at(scalar: YScalar, entry: PlacedEntry, rel_line: int, col: int
                     ) -> tuple[str, Span] | None:
    """The comma-separated piece of a scalar under the cursor (relative line), with its absolute span."""
    if not isinstance(scalar.value, str):
        return None
    where = ScalarText(scalar)
    for name, start, end in pieces(scalar.value):
        span = where.span(start, end)
        if span.contains(rel_line, col):
            return name, span.shifted(entry.line)
    return None


def _contains(node: YNode, line: int, col: int) -> bool:
    return node.span.contains(line, col)


def hit_at(document: Document, line: int, col: int) -> Hit | None:
    """The piece of the entry under (line, col): a key, the func value, a dispatch key, a tag, an op name."""
    entry = entry_at(document, line)
    if entry is None or entry.result.mapping is None:
        return None
    rel = line - entry.line
    for key_node, value in entry.result.mapping.pairs:
        if not isinstance(key_node, YScalar):
            continue
        key = key_node.value if isinstance(key_node.value, str) else None
        if _contains(key_node, rel, col):
            return Hit(ENTRY_KEY, str(key_node.value), key_node.span.shifted(entry.line), key, entry)
        if not _contains(value, rel, col):
            continue
        return _hit_in_value(entry, key, value, rel, col)
    return None


def _hit_in_value(entry: PlacedEntry, key: str | None, value: YNode, rel: int, col: int) -> Hit | None:
    if isinstance(value, YScalar):
        if key == "func" and isinstance(value.value, str):
            return Hit(FUNC, value.value, value.span.shifted(entry.line), key, entry)
        if key in ("structured_delegate", "autogen", "tags"):
            found = _scalar_piece_at(value, entry, rel, col)
            if found is None:
                return None
            kind = TAG if key == "tags" else OP_REFERENCE
            return Hit(kind, found[0], found[1], key, entry)
        return Hit(VALUE, str(value.value), value.span.shifted(entry.line), key, entry)
    if isinstance(value, YSeq) and key == "tags":
        for item in value.items:
            if isinstance(item, YScalar) and isinstance(item.value, str) and _contains(item, rel, col):
                return Hit(TAG, item.value, item.span.shifted(entry.line), key, entry)
        return None
    if isinstance(value, YMap) and key == "dispatch":
        for k, _ in value.pairs:
            if isinstance(k, YScalar) and _contains(k, rel, col):
                found = _scalar_piece_at(k, entry, rel, col)
                if found is not None:
                    return Hit(DISPATCH_KEY, found[0], found[1], key, entry)
        return None
    return None
