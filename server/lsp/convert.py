"""Our positions and diagnostics <-> lsprotocol types.

Below this layer columns count code points. LSP columns count code units of
the negotiated position encoding (UTF-16 unless the client offers another),
so every conversion needs the text of the line it is on.

Lines: below this layer a line ends at '\n' (the '\r' of a '\r\n' is the
last character of its line, never counted in a column). The LSP ends lines
at '\n', '\r\n' and '\r', and at nothing else. A text with a lone '\r' has
more client lines than ours; `Lines` maps between the two. pygls applies
incremental edits to lines cut by `str.splitlines`, which also cuts at
'\x0b', '\x0c', '\x1c'-'\x1e', NEL, LS and PS: `use_client_lines` makes the
documents of a pygls workspace cut lines as the LSP does.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Sequence

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from ..diagnostics import Diagnostic
from ..text import Span

SOURCE = "opgen"


def usable_path(path: str | None) -> str | None:
    """path when the file system can take it: absolute, no NUL byte, encodable; else None (issue 27)."""
    if not path or "\0" in path or not os.path.isabs(path):
        return None
    try:
        os.fsencode(path)
    except UnicodeError:  # a lone surrogate that is not an undecodable byte
        return None
    return path


def fs_path(uri: str) -> str | None:
    """The file a document uri names, None when it names none the file system can take (untitled:, a
    %00 or other byte no path may hold): such a document is checked from its text alone."""
    try:
        return usable_path(to_fs_path(uri))
    except (ValueError, TypeError):
        return None


def client_lines(text: str) -> tuple[str, ...]:
    """The lines of `text` as an LSP client counts them (each with its line end: '\\n', '\\r\\n' or '\\r')."""
    pieces = text.splitlines(True)
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    if len(pieces) == breaks + (0 if not pieces or pieces[-1].endswith(("\n", "\r")) else 1):
        return tuple(pieces)  # splitlines cut at the LSP's line ends only
    out: list[str] = []
    pending = ""
    for piece in pieces:
        pending += piece
        if pending.endswith(("\n", "\r")):
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return tuple(out)


def _after_newline(text: str, n: int) -> int:
    """The offset just after the n-th '\n' of text (0 for n == 0; n at most their count).

    A bisection over offsets with str.count, which runs in C: about 15 counts over the text in all, where
    splitting off the lines before line 8,000 of native_functions.yaml made 8,000 strings (2 ms a keystroke).
    """
    lo, hi, before = 0, len(text), 0  # `before` newlines in text[:lo]; the n-th lies in text[lo:hi]
    while hi - lo > 64:
        mid = (lo + hi) // 2
        at_mid = before + text.count("\n", lo, mid)
        if at_mid >= n:
            hi = mid
        else:
            lo, before = mid, at_mid
    at = lo - 1
    for _ in range(n - before):
        at = text.find("\n", at + 1)
    return at + 1


class _NewlineLines(Sequence[str]):
    """The client lines of a text whose only line ends are '\\n' and '\\r\\n', each found on demand (no split of
    the whole text: an edit of a 15,000-line document looks at the two lines it touches)."""

    __slots__ = ("_text", "_count", "_starts")

    def __init__(self, text: str) -> None:
        self._text = text
        self._count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
        self._starts: dict[int, int] = {0: 0}

    def __len__(self) -> int:
        return self._count

    def start(self, index: int) -> int:
        """The offset where line `index` (0 <= index < len) starts."""
        found = self._starts.get(index)
        if found is None:
            found = self._starts[index] = _after_newline(self._text, index)
        return found

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        start = self.start(index)
        end = self._text.find("\n", start)
        return self._text[start:] if end == -1 else self._text[start:end + 1]


class _SplitLines(tuple):
    """Client lines split beforehand, with the offsets where they start."""

    def start(self, index: int) -> int:
        return sum(map(len, itertools.islice(self, index)))


class ClientTextDocument(TextDocument):
    """A pygls document whose incremental edits are placed on the client's lines.

    An incremental edit is applied by slicing the text at the two offsets it touches (pygls rewrites the
    whole document line by line, about 15 ms on native_functions.yaml); the result is the same.
    """

    @property
    def lines(self) -> Sequence[str]:
        return client_lines(self.source)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        source = self.source
        lone_cr = "\r" in source and source.count("\r") != source.count("\r\n")
        # A lone '\r' ends a line too: then the lines are split (pygls' own way rewrote every line, 20 ms a keystroke).
        lines: _NewlineLines | _SplitLines = _SplitLines(client_lines(source)) if lone_cr else _NewlineLines(source)
        rng = self._position_codec.range_from_client_units(lines, change.range)
        if rng.start.line == len(lines):
            self._source = source + change.text
            return
        if rng.start.line > rng.end.line:  # a reversed range: pygls leaves the text as it is
            return

        def offset(line: int, col: int) -> int:
            start = lines.start(line)
            return start + min(col, len(lines[line]))
        start = offset(rng.start.line, rng.start.character)
        end = offset(rng.end.line, rng.end.character) if rng.end.line < len(lines) else len(source)
        self._source = source[:start] + change.text + source[end:]  # as pygls, even when end < start


def use_client_lines(workspace: object) -> bool:
    """Make the documents the pygls `workspace` creates from now on ClientTextDocuments; False if it cannot."""
    create = getattr(workspace, "_create_text_document", None)
    if create is None:
        return False

    def create_document(*args, **kwargs):
        document = create(*args, **kwargs)
        if type(document) is TextDocument:
            document.__class__ = ClientTextDocument
        return document
    workspace._create_text_document = create_document  # type: ignore[attr-defined]
    return True


class Lines(Sequence[str]):
    """The lines of one version of a document (split at '\\n', without the '\\r' of a '\\r\\n'), split once.

    Indexed by our line numbers; `client_segment` and `from_client` map to and from the client's lines,
    which differ when the text has a lone '\\r'.
    """

    __slots__ = ("_text", "_lines", "_first", "_simple")

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: list[str] | None = None
        # Per line of ours, the client line it starts (only when the text has a lone '\r').
        self._first: list[int] | None = None
        self._simple: bool | None = None

    @property
    def simple(self) -> bool:
        """ASCII without '\\r': columns are the same in every encoding and no line needs splitting to convert."""
        if self._simple is None:
            self._simple = "\r" not in self._text and self._text.isascii()
        return self._simple

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            if "\r" not in self._text:
                self._lines = self._text.split("\n")
                return self._lines
            self._lines = [line[:-1] if line.endswith("\r") else line for line in self._text.split("\n")]
            if "\r" in self._text and any("\r" in line for line in self._lines):
                first, count = [], 0
                for line in self._lines:
                    first.append(count)
                    count += line.count("\r") + 1
                self._first = first
        return self._lines

    def client_segment(self, line: int, col: int) -> tuple[int, str, int]:
        """Our (line, col) as (client line, the text of that client line, code point column in it)."""
        text = self.line(line)
        first = self._first
        if first is None:
            return line, text, col
        if not 0 <= line < len(first):
            return line + first[-1] + 1 - len(first), text, col
        k = text.count("\r", 0, max(col, 0))
        start = 0 if k == 0 else _nth_index(text, "\r", k) + 1
        end = text.find("\r", start)
        return first[line] + k, text[start:] if end == -1 else text[start:end], col - start

    def from_client(self, client_line: int) -> tuple[int, str, int]:
        """A client line as (our line, the client line's text, the column of ours where it starts)."""
        self.lines  # noqa: B018  (splits the text and finds the lone '\r's, once)
        first = self._first
        if first is None:
            return client_line, self.line(client_line), 0
        line = bisect.bisect_right(first, client_line) - 1
        if line < 0:
            return client_line, "", 0
        text = self.lines[line]
        k = client_line - first[line]
        if k > text.count("\r"):  # past the last line
            return line + k - text.count("\r"), "", 0
        start = 0 if k == 0 else _nth_index(text, "\r", k) + 1
        end = text.find("\r", start)
        return line, text[start:] if end == -1 else text[start:end], start

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, index):  # type: ignore[override]
        return self.lines[index]

    def line(self, index: int) -> str:
        lines = self.lines  # also sets _first
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
        if value not in tuple(e.value for e in types.PositionEncodingKind):
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


def _nth_index(text: str, char: str, n: int) -> int:
    """Index of the n-th (1-based) `char` in `text`."""
    at = -1
    for _ in range(n):
        at = text.index(char, at + 1)
    return at


def position(lines: Lines, line: int, col: int, encoding: Encoding = UTF16) -> types.Position:
    if lines.simple:
        return types.Position(line=max(line, 0), character=max(col, 0))
    client_line, text, col = lines.client_segment(max(line, 0), max(col, 0))
    return types.Position(line=client_line, character=encoding.to_units(text, col))


def span_to_range(lines: Lines, span: Span, encoding: Encoding = UTF16) -> types.Range:
    return types.Range(start=position(lines, span.start_line, span.start_col, encoding),
                       end=position(lines, span.end_line, span.end_col, encoding))


def from_position(lines: Lines, pos: types.Position, encoding: Encoding = UTF16) -> tuple[int, int]:
    """An LSP position as our (line, code point column)."""
    line, text, start = lines.from_client(pos.line)
    return line, start + encoding.from_units(text, pos.character)


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
