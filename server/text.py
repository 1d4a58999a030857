"""Positions in text: spans of (line, column), and conversion from offsets.

Lines and columns are 0-based; columns count code points. The LSP adapter
converts columns to UTF-16 at the edge.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple


class Span(NamedTuple):
    """A half-open range from (start_line, start_col) to (end_line, end_col).

    A NamedTuple rather than a frozen dataclass: every yaml node has one, and a
    tuple is built twice as fast (measured on the real native_functions.yaml).
    """

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def shifted(self, lines: int) -> Span:
        if not lines:
            return self
        return Span(self.start_line + lines, self.start_col, self.end_line + lines, self.end_col)

    def contains(self, line: int, col: int) -> bool:
        return (self.start_line, self.start_col) <= (line, col) <= (self.end_line, self.end_col)

    @staticmethod
    def point(line: int, col: int) -> Span:
        return Span(line, col, line, col)

    @staticmethod
    def on_line(line: int, start: int, end: int) -> Span:
        return Span(line, start, line, end)


class LineIndex:
    """Maps character offsets of one text to (line, column) and back."""

    __slots__ = ("_starts", "_length")

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self._starts = starts
        self._length = len(text)

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, self._length))
        line = bisect.bisect_right(self._starts, offset) - 1
        return line, offset - self._starts[line]

    def offset(self, line: int, col: int) -> int:
        if line >= len(self._starts):
            return self._length
        return min(self._starts[line] + col, self._length)

    def span(self, start: int, end: int) -> Span:
        return Span(*self.position(start), *self.position(end))


BOM = "\ufeff"


def as_python_reads(text: str) -> str:
    """The text as torchgen sees a file: open() in text mode ends lines at a lone '\\r' too (universal newlines;
    '\\r\\n' is left alone, as the engine reads it already), and PyYAML drops a byte order mark."""
    if text.startswith(BOM):
        text = text[1:]
    if "\r" not in text or text.count("\r") == text.count("\r\n"):
        return text
    return "\r\n".join(part.replace("\r", "\n") for part in text.split("\r\n"))
