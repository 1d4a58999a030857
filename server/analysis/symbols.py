"""Document and workspace symbols: the operators of native_functions.yaml, the tags of tags.yaml."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from ..frozen import record
from ..index.documents import PlacedEntry
from ..index.native import NativeSnapshot, TagsSnapshot
from ..syntax.nodes import YScalar
from ..text import Span
from .cursor import entry_range, func_scalar, op_name_span

OP = "op"
GROUP = "group"  # overloads of one base name, written one after another
TAG = "tag"

K = TypeVar("K")


@record
class Symbol:
    name: str
    kind: str
    detail: str
    range: Span  # the whole entry (or group of entries), up to its last content line
    selection: Span  # the operator's name in func: (a tag's name)
    children: tuple[Symbol, ...] = ()


def _op_symbol(entry: PlacedEntry) -> tuple[str, Symbol] | None:
    """The entry's symbol and the base name it groups under, if the entry names an operator."""
    lowered = entry.result.value
    name = getattr(lowered, "name", None)
    found = func_scalar(entry)
    selection = op_name_span(entry)
    if name is None or found is None or selection is None:
        return None
    text = found[1]
    paren = text.find("(")
    detail = text[paren:] if paren >= 0 else ""
    base = str(name.remove_inplace().name)
    return base, Symbol(str(name), OP, detail, entry_range(entry), selection)


def native_symbols(snapshot: NativeSnapshot) -> list[Symbol]:
    """One symbol per entry, named by its operator; overloads of one base name that follow each
    other are grouped under that name, so that every group's range holds exactly its entries."""
    out: list[Symbol] = []
    run: list[Symbol] = []
    run_base: str | None = None

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            first, last = run[0], run[-1]
            whole = first.range._replace(end_line=last.range.end_line, end_col=last.range.end_col)
            out.append(Symbol(run_base or first.name, GROUP, f"{len(run)} overloads", whole, first.selection,
                              tuple(run)))
        run.clear()

    for entry in snapshot.document.entries:
        found = _op_symbol(entry)
        if found is None:
            continue
        base, symbol = found
        if base != run_base:
            flush()
            run_base = base
        run.append(symbol)
    flush()
    return out


def tag_symbols(snapshot: TagsSnapshot) -> list[Symbol]:
    out = []
    for entry in snapshot.document.entries:
        mapping = entry.result.mapping
        node = mapping.value("tag") if mapping is not None else None
        if not (isinstance(node, YScalar) and isinstance(node.value, str)):
            continue
        tag = snapshot.tags.get(node.value)
        desc = tag.desc if tag is not None else ""
        out.append(Symbol(node.value, TAG, desc.split("\n", 1)[0], entry_range(entry), node.span.shifted(entry.line)))
    return out


def flatten(symbols: Iterable[Symbol]) -> Iterable[tuple[Symbol, Symbol | None]]:
    """Every symbol with its parent (None at the top)."""
    for symbol in symbols:
        if symbol.kind != GROUP:
            yield symbol, None
        for child in symbol.children:
            yield child, symbol


def fuzzy_score(query: str, name: str) -> int | None:
    """How well `name` matches `query` (higher is better), or None.

    Case-insensitive: an exact match beats the overloads of the name asked for ('add'
    finds 'add.Tensor' before 'addmm'), those beat a prefix, a prefix beats a substring,
    and a substring beats the query's characters found in order (fewer gaps is better).
    """
    if not query:
        return 0
    q, n = query.lower(), name.lower()
    if q == n:
        return 4000
    if n.partition(".")[0] == q:
        return 3500 - len(n)
    if n.startswith(q):
        return 3000 - len(n)
    at = n.find(q)
    if at >= 0:
        return 2000 - at - len(n)
    pos = 0
    gaps = 0
    for ch in q:
        found = n.find(ch, pos)
        if found < 0:
            return None
        gaps += found - pos
        pos = found + 1
    return 1000 - gaps - len(n)


def search_ops(sources: Iterable[tuple[K, NativeSnapshot]], query: str, limit: int) -> list[tuple[K, Symbol]]:
    """Operators of several documents whose names match `query`, best first, at most `limit`."""
    scored: list[tuple[int, str, int, K, PlacedEntry]] = []
    for key, snapshot in sources:
        for entry in snapshot.document.entries:
            name = getattr(entry.result.value, "name", None)
            if name is None:
                continue
            text = str(name)
            score = fuzzy_score(query, text)
            if score is not None:
                scored.append((-score, text, len(scored), key, entry))
    scored.sort(key=lambda item: item[:3])
    out: list[tuple[K, Symbol]] = []
    for _, _, _, key, entry in scored:
        if len(out) >= limit:
            break
        found = _op_symbol(entry)
        if found is not None:
            out.append((key, found[1]))
    return out
