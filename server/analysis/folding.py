"""Folding ranges: one per entry of an entry-list document (native_functions.yaml, tags.yaml)."""

from __future__ import annotations

from ..index.documents import Document
from .cursor import content_end


def entry_folds(document: Document) -> list[tuple[int, int]]:
    """(first line, last content line) of every entry longer than one line."""
    folds = []
    for entry in document.entries:
        end_line, _ = content_end(entry)
        if end_line > entry.line:
            folds.append((entry.line, end_line))
    return folds
