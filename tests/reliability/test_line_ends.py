"""Line ends: the client, pygls's document copy and the engine agree on where every position is.

- The LSP ends lines at '\\n', '\\r\\n' and '\\r' only. pygls cut lines with str.splitlines
  (also at VT, FF, FS/GS/RS, NEL, LS, PS), so an incremental edit after such a character
  landed in the wrong place: the server's copy of the document silently differed from
  the editor's. `convert.use_client_lines` makes the server's documents cut as the LSP does.
- libyaml ends lines at '\\r', NEL, LS and PS too; the engine's lines end at '\\n' only.
  Marks are translated (syntax/nodes.py), so a diagnostic after such a character is on
  the right line.
- A lone '\\r' is a line end for the client, not for the engine: `convert.Lines` maps.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument

from opgen_lsp.index.native import NativeParser
from opgen_lsp.lsp.convert import UTF16, ClientTextDocument, Encoding, Lines, client_lines, from_position, position
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import DEFAULT

_CLIENT_BREAK = re.compile(r"\r\n|\r|\n")


def client_position(text: str, offset: int, encoding: Encoding = UTF16) -> types.Position:
    """What an LSP client calls the position of `offset` (the reference: spec line ends only)."""
    starts = [0] + [m.end() for m in _CLIENT_BREAK.finditer(text)]
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return types.Position(line=line, character=encoding.units(text[starts[line]:offset]))


def engine_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


ODD = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\r\n", "\n"]
TEXT = st.lists(st.sampled_from(ODD + ["a", "é", "😀", " ", "-", "x: y"]), max_size=40).map("".join)


def _apply_incremental(document: TextDocument, text: str, start: int, end: int, new: str) -> None:
    document.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(start=client_position(text, start), end=client_position(text, end)), text=new))


@settings(settings.get_profile("reliability"), max_examples=300)
@given(TEXT, st.data())
def test_incremental_edits_land_where_the_client_put_them(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    # A client never puts a position between the \r and \n of one line end.
    if 0 < start < len(text) and text[start - 1:start + 1] == "\r\n" or 0 < end < len(text) and text[end - 1:end + 1] == "\r\n":
        return
    new = data.draw(st.sampled_from(["", "X", "\n", "é\u2028", "\r"]))
    document = ClientTextDocument("file:///t.yaml", text, sync_kind=types.TextDocumentSyncKind.Incremental)
    _apply_incremental(document, text, start, end, new)
    assert document.source == text[:start] + new + text[end:]


def test_plain_pygls_puts_edits_after_a_line_separator_on_the_wrong_line():
    text = "a\u2028b\nc\n"
    plain = TextDocument("file:///t.yaml", text, sync_kind=types.TextDocumentSyncKind.Incremental)
    ours = ClientTextDocument("file:///t.yaml", text, sync_kind=types.TextDocumentSyncKind.Incremental)
    for document in (plain, ours):
        _apply_incremental(document, text, text.index("c"), text.index("c"), "X")
    assert plain.source == "a\u2028Xb\nc\n"  # the bug this guards against
    assert ours.source == "a\u2028b\nXc\n"


def test_client_lines():
    assert client_lines("a\u2028b\nc\rd\r\ne") == ("a\u2028b\n", "c\r", "d\r\n", "e")
    assert client_lines("") == () and client_lines("x\n") == ("x\n",)
    assert client_lines("\x0c\n\x85") == ("\x0c\n", "\x85")


@settings(settings.get_profile("reliability"), max_examples=300)
@given(TEXT, st.data())
def test_lines_map_engine_positions_to_client_positions(text, data):
    offset = data.draw(st.integers(0, len(text)))
    if 0 < offset < len(text) and text[offset - 1:offset + 1] == "\r\n":
        return
    lines = Lines(text)
    line, col = engine_position(text, offset)
    if text[offset - 1:offset] == "\r" and text[offset:offset + 1] == "\n":
        return
    if text.endswith("\r", 0, offset) and offset < len(text) and text[offset] == "\n":
        return
    expected = client_position(text, offset)
    # The engine never places a column on the \r of a \r\n; the client calls that the line's end.
    if col > len(lines.line(line)):
        return
    assert position(lines, line, col) == expected
    assert from_position(lines, expected) == (line, col)


def test_diagnostics_after_a_line_separator_are_on_the_engine_line():
    for sep in ("\u2028", "\u2029", "\x85", "\r"):
        text = ("- func: abs(Tensor self) -> Tensor\n  # note" + sep + " more\n  variants: functio\n")
        [d] = NativeParser(release=DEFAULT).parse(text, frozenset()).diagnostics
        # The comment's continuation is bad yaml for libyaml; the place is on the comment's line in our lines.
        assert d.code == "OPG001" and d.span.start_line == 1, (sep, d)
        text = "- func: abs(Tensor self) -> Tensor\n  # note" + sep + "\n  variants: functio\n"
        [d] = NativeParser(release=DEFAULT).parse(text, frozenset()).diagnostics
        assert d.code == "OPG103" and tuple(d.span) == (2, 12, 2, 19), (sep, d)


def test_a_scalar_folded_at_a_line_separator_is_not_mapped_character_by_character():
    text = "- func: abs(Tensor self) -> Tensr\u2028    more\n"
    ds = NativeParser(release=DEFAULT).parse(text, frozenset()).diagnostics
    # The value is "... -> Tensr more": its offsets are not source columns, so the whole scalar is shown.
    assert ds and all(tuple(d.span) == (0, 8, 0, len(text) - 1) for d in ds), ds


def test_hover_and_diagnostic_ranges_with_a_lone_cr():
    # The client counts the lone \r as a line end: the variants line is its line 3, not 2.
    text = "- func: abs(Tensor self) -> Tensor\n  # a\r  # b\n  variants: functio\n"
    workspace = Workspace()
    uri = "untitled:native"
    workspace.open(uri, None, "- func: x() -> ()\n", 1)
    workspace.change(uri, text, 2)
    analysis = workspace.analyse(uri)
    from opgen_lsp.lsp import features

    [item] = [i for i in features.diagnostic_items(analysis, features.Client()) if i.code == "OPG103"]
    assert (item.range.start.line, item.range.start.character) == (3, 12)
    hover = features.hover(analysis, types.Position(line=3, character=4), features.Client())
    assert hover is not None and hover.range.start.line == 3
