"""Our positions and diagnostics <-> lsprotocol types.

Below this layer columns count code points. LSP columns count code units of
the negotiated position encoding (UTF-16 unless the client offers another),
so every conversion needs the text of the line it is on.
"""

from __future__ import annotations

from typing import Sequence

from lsprotocol import types

from ..diagnostics import Diagnostic
from ..text import Span

SOURCE = "opgen"


class Lines(Sequence[str]):
    """The lines of one version of a document (split at '\\n', without the '\\r' of a '\\r\\n'), split once."""

    __slots__ = ("_text", "_lines")

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = [line[:-1] if line.endswith("\r") else line for line in self._text.split("\n")]
        return self._lines

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, index):  # type: ignore[override]
        return self.lines[index]

    def line(self, index: int) -> str:
        lines = self.lines
        return lines[index] if 0 <= index < len(lines) else ""


class Encoding:
    """Counts columns in code units of one LSP position encoding."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._utf16 = name == types.PositionEncodingKind.Utf16.value
        self._utf8 = name == types.PositionEncodingKind.Utf8.value

    @classmethod
    def of(cls, kind: object) -> Encoding:
        value = getattr(kind, "value", kind)
        if value not in (e.value for e in types.PositionEncodingKind):
            value = types.PositionEncodingKind.Utf16.value
        return cls(str(value))

    def unit_count(self, char: str) -> int:
        code = ord(char)
        if self._utf16:
            return 2 if code > 0xFFFF else 1
        if self._utf8:
            return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        return 1

    def units(self, text: str) -> int:
        """Code units of `text`."""
        if text.isascii():
            return len(text)
        return sum(self.unit_count(c) for c in text)

    def to_units(self, line: str, col: int) -> int:
        """A code point column of `line` as code units (columns past the end count as plain characters)."""
        if col <= len(line):
            return self.units(line[:col])
        return self.units(line) + (col - len(line))

    def from_units(self, line: str, units: int) -> int:
        """A code unit column of `line` as a code point column (a column inside a character rounds down;
        a column past the end is clamped to the end of the line)."""
        if line.isascii():
            return max(0, min(units, len(line)))
        count = 0
        for i, char in enumerate(line):
            count += self.unit_count(char)
            if count > units:
                return i
        return len(line)


UTF16 = Encoding(types.PositionEncodingKind.Utf16.value)


def position(lines: Lines, line: int, col: int, encoding: Encoding = UTF16) -> types.Position:
    return types.Position(line=max(line, 0), character=encoding.to_units(lines.line(line), max(col, 0)))


def span_to_range(lines: Lines, span: Span, encoding: Encoding = UTF16) -> types.Range:
    return types.Range(start=position(lines, span.start_line, span.start_col, encoding),
                       end=position(lines, span.end_line, span.end_col, encoding))


def from_position(lines: Lines, pos: types.Position, encoding: Encoding = UTF16) -> tuple[int, int]:
    """An LSP position as our (line, code point column)."""
    return pos.line, encoding.from_units(lines.line(pos.line), pos.character)


def range_to_span(lines: Lines, rng: types.Range, encoding: Encoding = UTF16) -> Span:
    return Span(*from_position(lines, rng.start, encoding), *from_position(lines, rng.end, encoding))


def diagnostic(lines: Lines, d: Diagnostic, encoding: Encoding = UTF16) -> types.Diagnostic:
    return types.Diagnostic(
        range=span_to_range(lines, d.span, encoding),
        message=d.message,
        severity=types.DiagnosticSeverity(int(d.severity)),
        code=d.code,
        source=SOURCE,
        data=[list(pair) for pair in d.data] if d.data else None,
    )


def diagnostics(lines: Lines, ds: Sequence[Diagnostic], encoding: Encoding = UTF16) -> list[types.Diagnostic]:
    return [diagnostic(lines, d, encoding) for d in ds]
