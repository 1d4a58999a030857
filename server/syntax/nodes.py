"""Positioned YAML trees, composed with libyaml (PyYAML's C loader).

Scalars carry the value PyYAML's safe loader would construct, so every rule
sees what torchgen sees, and the span of their text, so every diagnostic can
point at it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from ..diagnostics import Diagnostic, diag
from ..text import Span

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    # The pure-Python loader stands in for the C one: another class with the same interface.
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


YNode = YScalar | YSeq | YMap


def node_span(node: yaml.Node, line_offset: int = 0) -> Span:
    s, e = node.start_mark, node.end_mark
    return Span(s.line + line_offset, s.column, e.line + line_offset, e.column)


# libyaml ends a line at \r\n, \n, \r, NEL, LS and PS (YAML 1.1); opgen's lines end at \n only (the \r of a
# \r\n is the last character of its line). Texts with the other breaks get their marks translated.
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


class _MarkMap:
    """libyaml's (line, column) of a text -> opgen's (line, column), for texts with breaks other than \n."""

    __slots__ = ("_yaml_starts", "_starts", "_length")

    def __init__(self, text: str) -> None:
        self._yaml_starts = [0] + [m.end() for m in _YAML_BREAK.finditer(text)]
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._length = len(text)

    def position(self, line: int, column: int) -> tuple[int, int]:
        starts = self._yaml_starts
        offset = min(starts[min(line, len(starts) - 1)] + column, self._length)
        ours = bisect.bisect_right(self._starts, offset) - 1
        return ours, offset - self._starts[ours]

    def span(self, node: yaml.Node) -> Span:
        s, e = node.start_mark, node.end_mark
        return Span(*self.position(s.line, s.column), *self.position(e.line, e.column))


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


def _code_point_offset(text: str, utf8_offset: int) -> int:
    return len(text.encode("utf-8")[:utf8_offset].decode("utf-8", "ignore"))


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


class _Lowering:
    """Turns libyaml nodes into Y-nodes, collecting diagnostics on the way."""

    def __init__(self, span: Callable[[yaml.Node], Span] = node_span) -> None:
        self.span = span
        self.constructor = SafeConstructor()
        self.diagnostics: list[Diagnostic] = []
        # Collections being lowered: an alias back into one of them would recurse forever.
        self.open: set[int] = set()
        # Collections lowered once; lowering one again (through an alias) copies it. Nested aliases
        # ("billion laughs": 1 KB of text, 10^9 nodes) would never end: the copies have a budget.
        self.seen: set[int] = set()
        self.in_alias = 0
        self.copied = 0

    def scalar(self, node: yaml.ScalarNode) -> YScalar:
        span = self.span(node)
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
        if self.in_alias:
            self.copied += 1
            if self.copied > MAX_ALIAS_COPIES:
                span = self.span(node)
                if self.copied == MAX_ALIAS_COPIES + 1:
                    self.diagnostics.append(diag("OPG001", span, f"YAML aliases here expand to more than "
                                                                 f"{MAX_ALIAS_COPIES:,} nodes; opgen stops reading them"))
                return YScalar(None, span, None, "")
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        key = id(node)
        if key in self.open:
            span = self.span(node)
            self.diagnostics.append(diag("OPG001", span, "a YAML alias refers to a collection that contains it"))
            return YScalar(None, span, None, "")
        again = key in self.seen
        if again:
            self.in_alias += 1
        else:
            self.seen.add(key)
        self.open.add(key)
        try:
            return self._collection(node)
        finally:
            self.open.discard(key)
            if again:
                self.in_alias -= 1

    def _collection(self, node: yaml.Node) -> YNode:
        if node.tag not in _SAFE_TAGS:
            self.diagnostics.append(diag("OPG005", self.span(node),
                                         f"the tag {node.tag!r} is not allowed; opgen reads YAML with a safe loader"))
        if isinstance(node, yaml.SequenceNode):
            return YSeq(tuple(self.node(n) for n in node.value), self.span(node))
        assert isinstance(node, yaml.MappingNode)  # the composer makes no other kind of node
        return self.mapping(node)

    def mapping(self, node: yaml.MappingNode) -> YMap:
        pairs = tuple((self.node(k), self.node(v)) for k, v in node.value)
        self.diagnostics.extend(duplicate_key_diagnostics(pairs))
        return YMap(pairs, self.span(node))


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


def compose(text: str) -> tuple[YNode | None, list[Diagnostic]]:
    """Compose one YAML document. Positions are relative to `text`."""
    deep = too_deep(text)
    if deep is not None:
        col = deep - (text.rfind("\n", 0, deep) + 1)
        return None, [diag("OPG001", Span.point(text.count("\n", 0, deep), col),
                           f"the YAML nests more than {MAX_DEPTH} levels deep here; operator yaml needs a few")]
    marks = _MarkMap(text) if _ODD_BREAK.search(text) else None
    try:
        loader = _Loader(text)
    except UnicodeEncodeError as exc:  # a lone surrogate (e.g. "\ud800" escaped in an LSP message)
        col = exc.start - (text.rfind("\n", 0, exc.start) + 1)
        span = Span.on_line(text.count("\n", 0, exc.start), col, col + 1)
        return None, [diag("OPG001", span, f"the character U+{ord(text[exc.start]):04X} is a lone surrogate, "
                                           "not text; YAML cannot contain it")]
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        span = Span.point(0, 0)
        if mark:
            span = Span.point(*marks.position(mark.line, mark.column)) if marks else Span.point(mark.line, mark.column)
        problem = exc.problem or "invalid YAML"
        context = f" {exc.context}" if exc.context else ""
        return None, [diag("OPG001", span, f"YAML syntax error: {problem}{context}")]
    except yaml.reader.ReaderError as exc:
        # A character YAML does not allow (a control character, say): point at it.
        offset = _code_point_offset(text, exc.position)
        col = offset - (text.rfind("\n", 0, offset) + 1)
        span = Span.on_line(text.count("\n", 0, offset), col, col + 1)
        return None, [diag("OPG001", span, f"YAML error: the character U+{exc.character:04X} is not allowed in YAML "
                                           "(a control or non-printable character)")]
    except yaml.YAMLError as exc:
        return None, [diag("OPG001", Span.point(0, 0), f"YAML error: {exc}")]
    finally:
        loader.dispose()
    if root is None:
        return None, []
    lowering = _Lowering(marks.span if marks else node_span)
    return lowering.node(root), lowering.diagnostics
