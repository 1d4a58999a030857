"""Incremental text sync: our edit application (slices at two offsets) gives pygls's text, edit for edit."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec
from pygls.workspace.text_document import TextDocument

from opgen_lsp.lsp.convert import ClientTextDocument, client_lines

ALPHABET = ["a", "b", "\n", "\r\n", "é", "😋", " ", "\x0c", "\r", "\u2028"]


class _Reference(TextDocument):
    """pygls's own line-by-line edit, on the lines as the LSP cuts them."""

    @property
    def lines(self):
        return client_lines(self.source)


# Long texts without a lone '\r' take the sliced path, where line starts are found by bisection.
@pytest.mark.parametrize("alphabet, longest, texts", [(ALPHABET, 30, 2000),
                                                      ([c for c in ALPHABET if c != "\r"], 3000, 200)])
def test_incremental_edits_match_pygls(alphabet, longest, texts):
    rnd = random.Random(7)
    encodings = [types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32]
    for _ in range(texts):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, longest)))
        encoding = rnd.choice(encodings)
        ours = ClientTextDocument("file:///x.yaml", text, position_codec=PositionCodec(encoding))
        reference = _Reference("file:///x.yaml", text, position_codec=PositionCodec(encoding))
        for _ in range(3):  # a few edits in a row, each on the text the previous one made
            lines = ours.source.count("\n") + 2
            a = (rnd.randint(0, lines), rnd.randint(0, 8))
            b = (rnd.randint(0, lines), rnd.randint(0, 8))
            if rnd.random() < 0.7:
                a, b = sorted([a, b])
            new = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 4)))

            def change(a: tuple[int, int] = a, b: tuple[int, int] = b, new: str = new) -> types.TextDocumentContentChangePartial:
                return types.TextDocumentContentChangePartial(range=types.Range(
                    start=types.Position(line=a[0], character=a[1]), end=types.Position(line=b[0], character=b[1])),
                    text=new)
            ours.apply_change(change())
            reference.apply_change(change())
            assert ours.source == reference.source, (text, a, b, new)


def test_an_edit_of_a_large_document_touches_only_its_lines():
    text = "".join(f"- func: op{i}(Tensor self) -> Tensor\n" for i in range(20000))
    document = ClientTextDocument("file:///native_functions.yaml", text)
    document.apply_change(types.TextDocumentContentChangePartial(range=types.Range(
        start=types.Position(line=10000, character=8), end=types.Position(line=10000, character=15)), text="renamed"))
    lines = document.source.split("\n")
    assert lines[10000] == "- func: renamed(Tensor self) -> Tensor" and lines[9999] == text.split("\n")[9999]
    assert len(lines) == 20001
