"""OPG535's quick fix: where to insert a missing `compute_shape_` declaration into the shape-inference header.

gen_lazy_tensor accepts a declaration only as a whole line of the header, exactly as it writes it, so
the line goes in unindented and unchanged; the fix only chooses the place: in alphabetical position
inside the header's longest sorted block of declarations (PyTorch's header keeps its generated ones
sorted), else after the last declaration, else before the namespace's closing brace, else at the end.
"""

from __future__ import annotations

import re

from ..text import Span

_NAME = re.compile(r"\bcompute_shape_(\w+)\s*\(")
_CLOSE = re.compile(r"^\}\s*(//.*)?$")


def shape_function(declaration: str) -> str | None:
    """The function a declaration declares (`compute_shape_relu`), if it declares one."""
    m = _NAME.search(declaration)
    return f"compute_shape_{m.group(1)}" if m else None


def _declared(line: str) -> str | None:
    """The compute_shape_ name a header line declares (comments are not declarations)."""
    if line.lstrip().startswith(("//", "/*", "*")):
        return None
    m = _NAME.search(line)
    return m.group(1) if m else None


def insert_declaration(text: str, declaration: str) -> tuple[Span, str] | None:
    """(point, text) inserting `declaration` as a line of the header `text`; None when it is already there."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if not declaration or declaration in lines:  # a whole line, as gen_lazy_tensor looks for it
        return None
    name = _declared(declaration) or ""
    # Blocks of consecutive declaration lines: [(first line, names)].
    runs: list[tuple[int, list[str]]] = []
    for i, line in enumerate(lines):
        found = _declared(line)
        if found is None:
            continue
        if runs and runs[-1][0] + len(runs[-1][1]) == i:
            runs[-1][1].append(found)
        else:
            runs.append((i, [found]))
    sorted_runs = [r for r in runs if len(r[1]) > 1 and r[1] == sorted(r[1])]
    if sorted_runs:
        first, names = max(sorted_runs, key=lambda r: len(r[1]))
        # After the last name that sorts before or equal (an overload joins its siblings).
        before = sum(1 for n in names if n <= name)
        if before == 0:
            return Span.point(first, 0), declaration + newline
        after = first + before - 1
        return Span.point(after, len(lines[after])), newline + declaration
    if runs:
        first, names = runs[-1]
        after = first + len(names) - 1
        return Span.point(after, len(lines[after])), newline + declaration
    if any(line.lstrip().startswith("namespace") for line in lines):
        close = next((i for i in range(len(lines) - 1, -1, -1) if _CLOSE.match(lines[i].strip())), None)
        if close is not None:
            # The innermost of the closing braces at the end (`} // lazy` before `} // torch`).
            while close > 0 and _CLOSE.match(lines[close - 1].strip()):
                close -= 1
            return Span.point(close, 0), declaration + newline
    last = len(lines) - 1
    if lines[last] == "":  # the file ends with a newline
        return Span.point(last, 0), declaration + newline
    return Span.point(last, len(lines[last])), newline + declaration + newline
