"""Positioned YAML trees: the nodes every reader of operator yaml builds, and what they share.

Scalars carry the value PyYAML's safe loader would construct, so every rule
sees what torchgen sees, and the span of their text, so every diagnostic can
point at it. libyaml composes them in syntax/libyaml.py; syntax/canonical.py
composes the canonical shape of native_functions.yaml without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from ..diagnostics import Diagnostic, diag
from ..text import Span


# NamedTuples, not frozen dataclasses: ~30,000 nodes are built for the real file and
# tuples are built twice as fast. They are compared by identity of purpose only
# through isinstance, never by equality across kinds.
class YScalar(NamedTuple):
    value: object
    span: Span
    # None for plain scalars, else one of ' " | >
    style: str | None
    text: str


class YSeq(NamedTuple):
    items: tuple[YNode, ...]
    span: Span


class YMap(NamedTuple):
    pairs: tuple[tuple[YNode, YNode], ...]
    span: Span

    def get(self, key: str) -> tuple[YNode, YNode] | None:
        for pair in self.pairs:
            k = pair[0]
            if isinstance(k, YScalar) and k.value == key:
                return pair
        return None

    def value(self, key: str) -> YNode | None:
        pair = self.get(key)
        return pair[1] if pair else None

    def key_span(self, key: str) -> Span | None:
        pair = self.get(key)
        return pair[0].span if pair else None


YNode = YScalar | YSeq | YMap


# Deeper nesting than any operator yaml needs (they use 4 levels at most). libyaml's composer recurses on the
# C stack (50,000 levels of "- - - ..." crash the process) and its scanner is quadratic in flow depth
# (20,000 "[" take seconds), so deeper text is refused before libyaml sees it.
MAX_DEPTH = 64
# Nodes that aliases may copy in one document (the real files use no aliases at all).
MAX_ALIAS_COPIES = 10_000
_FLOW = re.compile(r"[\[\]{}]")
_BLOCK_LEAD = re.compile(r"^( *)((?:[-?:](?:[ \t]+|$))*)", re.M)


def too_deep(text: str) -> int | None:
    """The offset where the text nests more than MAX_DEPTH collections (flow or block), if it does.

    A cheap over-estimate: brackets count even inside quotes and comments, and a block level is counted
    for each space of indentation and each leading '- ', '? ' or ': ' of a line.
    """
    if text.count("[") + text.count("{") > MAX_DEPTH:
        depth = 0
        for m in _FLOW.finditer(text):
            depth = depth + 1 if m.group() in "[{" else max(depth - 1, 0)
            if depth > MAX_DEPTH:
                return m.start()
    if " " * MAX_DEPTH in text or "- - " in text or "? " in text:
        for m in _BLOCK_LEAD.finditer(text):
            lead = m.group(2)
            indent = len(m.group(1))
            if indent + lead.count("-") + lead.count("?") + lead.count(":") > MAX_DEPTH:
                return m.start() + (MAX_DEPTH if indent > MAX_DEPTH else indent + 2 * (MAX_DEPTH - indent))
    return None


def to_python(node: YNode) -> object:
    """The plain Python value, as torchgen's loader builds it (without __line__)."""
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [to_python(n) for n in node.items]
    out: dict[object, object] = {}
    for k, v in node.pairs:
        key = to_python(k)
        try:
            out[key] = to_python(v)
        except TypeError:  # an unhashable key; torchgen would fail too
            out[repr(key)] = to_python(v)
    return out


def duplicate_key_diagnostics(pairs: Iterable[tuple[YNode, YNode]]) -> list[Diagnostic]:
    """OPG004 for every key equal to an earlier key of the same mapping."""
    out = []
    seen: dict[object, YNode] = {}
    for key, _ in pairs:
        k = to_python(key)
        try:
            hash(k)
        except TypeError:
            k = repr(k)
        if k in seen:
            out.append(diag("OPG004", key.span, f"duplicate key {k!r}: this mapping already has it"))
        else:
            seen[k] = key
    return out
