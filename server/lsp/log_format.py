"""Tracebacks in the server log, formatted without `ast.parse` (issue 27).

Python 3.11's traceback module parses each source line with `ast.parse` to place its ^^^ marks, and 3.11's
AST constructor keeps one recursion count per interpreter: two formattings that overlap (two threads, or a
finalizer logging an error during a garbage collection in the middle of one) make one of them raise
SystemError. The log keeps file, line, function and source text of every frame, without the marks.
"""

from __future__ import annotations

import logging
import traceback
from types import TracebackType

_CAUSE = "The above exception was the direct cause of the following exception:"
_CONTEXT = "During handling of the above exception, another exception occurred:"


def _frames(tb: TracebackType | None) -> list[str]:
    """Frames as `traceback` prints them, from FrameSummary objects without columns (so: no ^^^ marks)."""
    plain = [traceback.FrameSummary(f.filename, f.lineno, f.name, line=f.line)
             for f in traceback.extract_tb(tb)]
    return traceback.format_list(plain)


def format_exception(exc: BaseException) -> str:
    """The exception, its frames and the exceptions it was raised from or during, like traceback.format_exception."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        block = ["".join(traceback.format_exception_only(type(current), current))]
        if current.__traceback__ is not None:
            block.insert(0, "Traceback (most recent call last):\n" + "".join(_frames(current.__traceback__)))
        parts.insert(0, "".join(block))
        if current.__cause__ is not None:
            parts.insert(0, f"\n{_CAUSE}\n\n")
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            parts.insert(0, f"\n{_CONTEXT}\n\n")
            current = current.__context__
        else:
            current = None
    return "".join(parts).rstrip("\n")


class Formatter(logging.Formatter):
    def formatException(self, ei) -> str:  # noqa: N802  (logging's name)
        return format_exception(ei[1]) if ei[1] is not None else ""
