"""Positioned YAML trees, composed with libyaml (PyYAML's C loader).

Scalars carry the value PyYAML's safe loader would construct, so every rule
sees what torchgen sees, and the span of their text, so every diagnostic can
point at it.
"""

from __future__ import annotations

from typing import NamedTuple, Union

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from ..diagnostics import Diagnostic, diag
from ..text import Span

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_STR_TAG = "tag:yaml.org,2002:str"
# Tags the safe loader can construct; anything else (e.g. !!python/object) is refused.
_SAFE_TAGS = frozenset(t for t in SafeConstructor.yaml_constructors if t is not None)


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


YNode = Union[YScalar, YSeq, YMap]


def node_span(node: yaml.Node, line_offset: int = 0) -> Span:
    s, e = node.start_mark, node.end_mark
    return Span(s.line + line_offset, s.column, e.line + line_offset, e.column)


def to_python(node: YNode) -> object:
    """The plain Python value, as torchgen's loader builds it (without __line__)."""
    if isinstance(node, YScalar):
        return node.value
    if isinstance(node, YSeq):
        return [to_python(n) for n in node.items]
    out: dict = {}
    for k, v in node.pairs:
        key = to_python(k)
        try:
            out[key] = to_python(v)
        except TypeError:  # an unhashable key; torchgen would fail too
            out[repr(key)] = to_python(v)
    return out


class _Lowering:
    """Turns libyaml nodes into Y-nodes, collecting diagnostics on the way."""

    def __init__(self) -> None:
        self.constructor = SafeConstructor()
        self.diagnostics: list[Diagnostic] = []
        # Collections being lowered: an alias back into one of them would recurse forever.
        self.open: set[int] = set()

    def scalar(self, node: yaml.ScalarNode) -> YScalar:
        span = node_span(node)
        tag = node.tag
        if tag == _STR_TAG:
            value: object = node.value
        elif tag not in _SAFE_TAGS:
            self.diagnostics.append(diag("OPG005", span, f"the tag {tag!r} is not allowed; opgen reads YAML with a safe loader"))
            value = node.value
        else:
            try:
                value = self.constructor.construct_object(node, deep=True)
            except (ConstructorError, ValueError, TypeError) as exc:
                self.diagnostics.append(diag("OPG001", span, f"cannot read this value: {exc}"))
                value = node.value
        return YScalar(value, span, node.style or None, node.value)

    def node(self, node: yaml.Node) -> YNode:
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if id(node) in self.open:
            span = node_span(node)
            self.diagnostics.append(diag("OPG001", span, "a YAML alias refers to a collection that contains it"))
            return YScalar(None, span, None, "")
        self.open.add(id(node))
        try:
            return self._collection(node)
        finally:
            self.open.discard(id(node))

    def _collection(self, node: yaml.Node) -> YNode:
        if node.tag not in _SAFE_TAGS:
            self.diagnostics.append(diag("OPG005", node_span(node), f"the tag {node.tag!r} is not allowed; opgen reads YAML with a safe loader"))
        if isinstance(node, yaml.SequenceNode):
            return YSeq(tuple(self.node(n) for n in node.value), node_span(node))
        return self.mapping(node)

    def mapping(self, node: yaml.MappingNode) -> YMap:
        pairs = tuple((self.node(k), self.node(v)) for k, v in node.value)
        seen: dict[object, YNode] = {}
        for key, _ in pairs:
            k = to_python(key)
            try:
                hash(k)
            except TypeError:
                k = repr(k)
            if k in seen:
                self.diagnostics.append(diag("OPG004", key.span, f"duplicate key {k!r}: this mapping already has it"))
            else:
                seen[k] = key
        return YMap(pairs, node_span(node))


def compose(text: str) -> tuple[YNode | None, list[Diagnostic]]:
    """Compose one YAML document. Positions are relative to `text`."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        span = Span.point(mark.line, mark.column) if mark else Span.point(0, 0)
        problem = exc.problem or "invalid YAML"
        context = f" {exc.context}" if exc.context else ""
        return None, [diag("OPG001", span, f"YAML syntax error: {problem}{context}")]
    except yaml.YAMLError as exc:
        return None, [diag("OPG001", Span.point(0, 0), f"YAML error: {exc}")]
    finally:
        loader.dispose()
    if root is None:
        return None, []
    lowering = _Lowering()
    return lowering.node(root), lowering.diagnostics
