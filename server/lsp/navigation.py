"""Inlay hints, selection ranges and document links of native_functions.yaml: conversions of the analyses."""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import from_fs_path

from ..analysis import inlay, links, selection
from ..index.kernels import KernelIndex
from ..text import Span
from .convert import Encoding, from_position, position, span_to_range
from .kernels import KernelState
from .workspace import Analysis


def _index(kernels: KernelState) -> KernelIndex | None:
    return kernels.index if kernels.roots else None


def inlay_hints(analysis: Analysis, rng: types.Range, kernels: KernelState, root: str | None, encoding: Encoding
                ) -> list[types.InlayHint]:
    if analysis.native is None:
        return []
    first, _ = from_position(analysis.lines, rng.start, encoding)
    last, _ = from_position(analysis.lines, rng.end, encoding)
    return [types.InlayHint(position=position(analysis.lines, h.line, h.col, encoding), label=h.label,
                            tooltip=h.tooltip, padding_left=True)
            for h in inlay.inlay_hints(analysis.native, _index(kernels), first, last, root)]


def _document_end(analysis: Analysis) -> tuple[int, int]:
    lines = analysis.lines.lines
    return len(lines) - 1, len(lines[-1])


def selection_ranges(analysis: Analysis, positions: list[types.Position], encoding: Encoding
                     ) -> list[types.SelectionRange]:
    """For each position, its ranges from the innermost out (a position outside any entry: itself, then the
    document)."""
    out = []
    for pos in positions:
        line, col = from_position(analysis.lines, pos, encoding)
        if analysis.native is not None:
            spans = selection.selection_spans(analysis.native.document, line, col, analysis.native,
                                              _document_end(analysis))
        else:
            spans = [Span.point(line, col), Span(0, 0, *_document_end(analysis))]
        parent = None
        for span in reversed(spans):
            parent = types.SelectionRange(range=span_to_range(analysis.lines, span, encoding), parent=parent)
        out.append(parent)
    return [p for p in out if p is not None]


def document_links(analysis: Analysis, kernels: KernelState, encoding: Encoding) -> list[types.DocumentLink]:
    if analysis.native is None:
        return []
    found = links.comment_links(analysis.document.text, analysis.document.path)
    index = _index(kernels)
    if index is not None:
        found += links.kernel_links(analysis.native, index)
    out = []
    for link in sorted(found, key=lambda k: k.span):
        target = from_fs_path(link.path) or link.path
        if link.line is not None:
            target += f"#L{link.line + 1}"
        out.append(types.DocumentLink(range=span_to_range(analysis.lines, link.span, encoding), target=target,
                                      tooltip=link.tooltip or None))
    return out
