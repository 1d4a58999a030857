"""YAML composed with libyaml (PyYAML's C loader) into positioned nodes (syntax/nodes.py).

A module of its own so that PyYAML loads only where text is composed with it: a canonical entry of
native_functions.yaml (syntax/canonical.py) needs none, so neither does `opgen check` after a one-entry edit.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from ..diagnostics import Diagnostic, diag
from ..text import Span
from .nodes import MAX_ALIAS_COPIES, MAX_DEPTH, YMap, YNode, YScalar, YSeq, duplicate_key_diagnostics, too_deep

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    # The pure-Python loader stands in for the C one: another class with the same interface.
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_STR_TAG = "tag:yaml.org,2002:str"
# Tags the safe loader can construct; anything else (e.g. !!python/object) is refused.
SAFE_TAGS = frozenset(t for t in SafeConstructor.yaml_constructors if t is not None)


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


def _code_point_offset(text: str, utf8_offset: int) -> int:
    return len(text.encode("utf-8")[:utf8_offset].decode("utf-8", "ignore"))


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
        elif tag not in SAFE_TAGS:
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
        if node.tag not in SAFE_TAGS:
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
