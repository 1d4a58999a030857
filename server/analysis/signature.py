"""Signature help inside `func:`: the schema being written, its arguments, and the one under the cursor.

Read from the line's text (while typing, the entry is rarely valid yaml).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..frozen import record
from ..model.schema_parser import parse_argument_text

_FUNC = re.compile(r"(?:- |  )func:\s*(['\"]?)")


@record
class Signature:
    label: str  # the schema as written on the line
    parameters: tuple[tuple[int, int], ...]  # offsets of each argument in `label`
    active: int
    documentation: str


def _arguments(label: str, open_at: int, close_at: int) -> list[tuple[int, int]]:
    out = []
    pos = open_at + 1
    for piece in label[open_at + 1:close_at].split(", "):
        if piece.strip():
            out.append((pos, pos + len(piece)))
        pos += len(piece) + 2
    return out


def signature_at(lines: Sequence[str], line: int, col: int) -> Signature | None:
    """The signature when (line, col) is inside the argument list of a func: schema."""
    if not 0 <= line < len(lines):
        return None
    text = lines[line]
    m = _FUNC.match(text)
    if m is None:
        return None
    start = m.end()
    label = text[start:]
    if m.group(1) and label.endswith(m.group(1)):
        label = label[:-1]
    label = label.split(" #", 1)[0].rstrip()
    cursor = col - start
    open_at = label.find("(")
    if open_at == -1 or cursor <= open_at:
        return None
    depth, close_at = 0, len(label)
    for i in range(open_at, len(label)):
        if label[i] == "(":
            depth += 1
        elif label[i] == ")":
            depth -= 1
            if depth == 0:
                close_at = i
                break
    if cursor > close_at:
        return None
    parameters = _arguments(label, open_at, close_at)
    active = label[open_at + 1:cursor].count(", ")
    # The keyword-only marker '*' is an argument slot in the text but no parameter of its own: keep it, so
    # that the active index counts pieces as written.
    docs = []
    for p0, p1 in parameters:
        argument, issues = parse_argument_text(label[p0:p1]) if label[p0:p1] != "*" else (None, ())
        if issues:
            docs.append(f"- `{label[p0:p1]}`: {issues[0].message}")
    return Signature(label, tuple(parameters), min(active, max(len(parameters) - 1, 0)), "\n".join(docs))
