"""Go to definition and find references of operators inside native_functions.yaml.

An operator is defined by its `- func:` entry; it is referred to by
`structured_delegate:` and `autogen:` values. An operator that only exists
because an entry's autogen generates it is "defined" by that entry.
"""

from __future__ import annotations

from ..index.documents import PlacedEntry
from ..index.native import NativeSnapshot
from ..model.native_yaml import Op
from ..syntax.locate import ScalarText
from ..syntax.nodes import YScalar
from ..text import Span
from . import cursor
from .cursor import FUNC, OP_REFERENCE, entry_at, op_name_span, pieces


def find_op(snapshot: NativeSnapshot, name: str) -> Op | None:
    """The operator called `name` (`base.overload`), preferring one written in the file over a generated one."""
    found = None
    for op in snapshot.functions.ops:
        if str(op.function.func.name) == name:
            if not op.generated:
                return op
            found = found or op
    return found


def op_name_at(snapshot: NativeSnapshot, line: int, col: int) -> tuple[str, Span] | None:
    """The operator named under the cursor: the entry's own (on func:) or one it refers to."""
    hit = cursor.hit_at(snapshot.document, line, col)
    if hit is None:
        return None
    if hit.kind == OP_REFERENCE:
        return hit.text, hit.span
    if hit.kind == FUNC:
        name = getattr(hit.entry.result.value, "name", None)
        span = op_name_span(hit.entry)
        if name is not None and span is not None:
            return str(name), span
    return None


def declaration_span(snapshot: NativeSnapshot, op: Op) -> Span | None:
    entry = entry_at(snapshot.document, op.line)
    return op_name_span(entry) if entry is not None else None


def definition(snapshot: NativeSnapshot, line: int, col: int) -> Span | None:
    """Where the operator named by a structured_delegate or autogen value under the cursor is defined."""
    hit = cursor.hit_at(snapshot.document, line, col)
    if hit is None or hit.kind != OP_REFERENCE:
        return None
    op = find_op(snapshot, hit.text)
    return declaration_span(snapshot, op) if op is not None else None


def _references_in(entry: PlacedEntry, name: str) -> list[Span]:
    mapping = entry.result.mapping
    if mapping is None:
        return []
    out: list[Span] = []
    for key in ("structured_delegate", "autogen"):
        node = mapping.value(key)
        if not (isinstance(node, YScalar) and isinstance(node.value, str)) or name not in node.value:
            continue
        where = ScalarText(node)
        out.extend(where.span(start, end).shifted(entry.line)
                   for piece, start, end in pieces(node.value) if piece == name)
    return out


def references(snapshot: NativeSnapshot, line: int, col: int, include_declaration: bool) -> list[Span]:
    """The operator under the cursor: its `- func:` entry (if asked) and every structured_delegate and
    autogen value naming it, in file order."""
    found = op_name_at(snapshot, line, col)
    if found is None:
        return []
    name = found[0]
    spans: list[Span] = []
    if include_declaration:
        op = find_op(snapshot, name)
        if op is not None and not op.generated:
            declared = declaration_span(snapshot, op)
            if declared is not None:
                spans.append(declared)
    for entry in snapshot.document.entries:
        spans.extend(_references_in(entry, name))
    return sorted(spans)
