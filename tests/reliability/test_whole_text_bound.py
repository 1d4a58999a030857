"""The whole-text bound that lets a parse skip counting each entry (documents._whole_text_bound) never says less
than the quick count would count: where it clears a file, the quick count (so the exact one) would have too."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from opgen_lsp.index import documents
from opgen_lsp.syntax.entries import iter_chunks, stray_chunk_diagnostic

from . import costly

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _quick_count(text: str) -> int:
    """What _Repeats counts for the whole text (every placed entry at its full cost, every stray chunk)."""
    spent = 0
    for chunk in iter_chunks(text):
        if chunk.text[0] == "-" and (len(chunk.text) == 1 or chunk.text[1] in " \t\r\n"):
            spent += documents.PLACED_COST + documents.entry_cost(chunk.text)
        elif stray_chunk_diagnostic(chunk) is not None:
            spent += documents.STRAY_COST
    return spent


@functools.cache
def _texts() -> list[str]:
    made = [make(20_000) for make in costly.CLASSES.values()]
    samples = sorted(SAMPLES.rglob("*.yaml"))[:40]
    edge = ["", "-", "- ", "x", "\n-\n-", "# c\n- a: 1\n  b: [x, y]\n---\nstray\n- - 1\n", "-\n" * 50]
    return [*made, *(p.read_text(encoding="utf-8", errors="replace") for p in samples), *edge]


@pytest.mark.parametrize("index", range(len(_texts())))
def test_the_whole_text_bound_is_at_least_the_quick_count(index: int) -> None:
    text = _texts()[index]
    assert documents._whole_text_bound(text) >= _quick_count(text)
