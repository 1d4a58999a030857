"""A fast composer for entries in the canonical shape of native_functions.yaml.

Almost every entry is a block mapping of plain scalars, with at most one nested
level (`dispatch:` mappings, `precomputed:` lists) and one-line flow lists such
as `[core, pointwise]`. This module composes exactly that shape line by line and
builds the same nodes (values, styles, spans) libyaml's path does, and the plainest
literal block scalars (tags.yaml's `desc: |`); for anything
else (quotes outside flow lists, other multi-line scalars, anchors, tabs, non-ASCII,
odd line ends, deeper nesting, empty values, ...) it returns None and the
caller composes the entry with libyaml. tests/syntax/test_canonical.py checks
the two agree on every entry of the real file and the corpus, and on fuzzed text.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic
from ..frozen import new_tuple
from ..text import Span
from .nodes import MAX_DEPTH, YMap, YNode, YScalar, YSeq, duplicate_key_diagnostics, too_deep

# 'key: value' or 'key:'. Keys: words, dots, and ', ' between dispatch keys ('CPU, CUDA'); nothing a YAML
# indicator could start. The value (group 2) is what follows the first ': ' and its spaces.
_KEY_VALUE = re.compile(r"(\w(?:[\w., ]*\w)?):(?: +(.*))?\Z")
# Items of a one-line flow list: a word-like plain scalar, or a quoted one without quotes or escapes inside.
_FLOW_ITEM = re.compile(r"\w[\w.]*|'[^']*'|\"[^\"\\]*\"")
# A plain scalar may start with these; YAML indicators (- ? : , [ ] { } # & * ! | > ' " % @ `) are left out.
_PLAIN_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_~")

_STR_TAG = "tag:yaml.org,2002:str"
# Implicit tags whose values the fast path constructs as the safe loader would; others fall back.
_CONSTRUCTED_TAGS = frozenset({"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                               "tag:yaml.org,2002:null"})
# The first characters of the plain scalars PyYAML's resolver may read as something other than a string (the keys
# of Resolver.yaml_implicit_resolvers; tests/syntax/test_canonical.py holds the two equal). A scalar starting with
# any other character is a string.
_FIRST_CHARS_RESOLVED = frozenset("yYnNtTfFoO-+0123456789.<~=!&*")
# Where a scalar starts with a letter or '~', only YAML 1.1's booleans and nulls can resolve it, each a fixed word
# (the bool and null resolvers): those words are the whole table, so such scalars need no PyYAML. The others
# (numbers, timestamps, '<<', '=') are resolved by PyYAML itself.
_WORDS: dict[str, object] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("~", "null", "Null", "NULL"), None),
}
_WORD_STARTS = frozenset("yYnNtTfFoO~")


_DEEP_INDENT = " " * MAX_DEPTH


class _NotCanonical(Exception):
    """The entry leaves the canonical shape: compose it with libyaml instead."""


_FALLBACK = object()
# The memos below stay small on real files; the limit keeps a long editing session from growing them.
_MEMO_LIMIT = 20_000
# Longer keys are left to libyaml, which refuses implicit keys over 1024 characters; real keys are short.
_LONGEST_KEY = 200
_plain_values: dict[str, object] = {}
# Key nodes by (text, line, column); _plain raises for keys left to libyaml, which are not kept.
_key_nodes: dict[tuple[str, int, int], YScalar] = {}
# Lines read by _key_value, by (text, line, indent); lines it refuses are not kept.
_pairs: dict[tuple[str, int, int], tuple[YScalar, YNode | None]] = {}


def forget_interned() -> None:
    """Empty the memos above (a server whose documents are all closed: they hold the first documents' nodes)."""
    _plain_values.clear()
    _key_nodes.clear()
    _pairs.clear()


def _resolve_plain(text: str) -> object:
    """The value PyYAML's safe loader gives a plain scalar, or _FALLBACK for tags handled elsewhere."""
    if text[0] in _WORD_STARTS:
        return _WORDS.get(text, text)
    return _resolve_with_pyyaml(text)


def _resolve_with_pyyaml(text: str) -> object:
    """_resolve_plain by PyYAML's own resolver and safe constructor (numbers, timestamps and the rest)."""
    import yaml  # noqa: PLC0415  (loaded for such a scalar only: a check after a one-entry edit seldom meets one)
    from yaml.constructor import ConstructorError, SafeConstructor  # noqa: PLC0415
    from yaml.resolver import Resolver  # noqa: PLC0415

    # types-PyYAML leaves Resolver.resolve unannotated.
    tag = Resolver().resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _STR_TAG:
        return text
    if tag not in _CONSTRUCTED_TAGS:
        return _FALLBACK
    try:
        return SafeConstructor().construct_object(yaml.ScalarNode(tag, text), deep=True)
    except (ConstructorError, ValueError, TypeError):
        return _FALLBACK


def _plain(text: str, line: int, col: int) -> YScalar:
    if text[0] not in _FIRST_CHARS_RESOLVED:
        value: object = text
    else:
        value = _plain_values.get(text, _plain_values)
        if value is _plain_values:
            value = _resolve_plain(text)
            if len(_plain_values) < _MEMO_LIMIT:
                _plain_values[text] = value
        if value is _FALLBACK:
            raise _NotCanonical
    return new_tuple(YScalar, (value, new_tuple(Span, (line, col, line, col + len(text))), None, text))


def _block_plain(text: str, line: int, col: int) -> YScalar:
    """A plain scalar in block context that ends on its line."""
    if text[0] not in _PLAIN_START or ": " in text or text[-1] == ":":
        raise _NotCanonical
    return _plain(text, line, col)


def _flow_list(text: str, line: int, col: int) -> YSeq:
    """'[a, b]' on one line (text stripped, starting at col)."""
    if text[-1] != "]":
        raise _NotCanonical
    span = Span(line, col, line, col + len(text))
    inner = text[1:-1]
    if not inner.strip(" "):
        return YSeq((), span)
    items = []
    at = col + 1
    for piece in inner.split(","):
        item = piece.strip(" ")
        if not _FLOW_ITEM.fullmatch(item):
            raise _NotCanonical
        start = at + len(piece) - len(piece.lstrip(" "))
        if item[0] in "'\"":
            items.append(YScalar(item[1:-1], Span(line, start, line, start + len(item)), item[0], item[1:-1]))
        else:
            items.append(_plain(item, line, start))
        at += len(piece) + 1
    return YSeq(tuple(items), span)


def _key_value(content: str, indent: int, line: int) -> tuple[YScalar, YNode | None]:
    """'key: value' at indent; the value is None when it is empty (a nested block follows)."""
    # Half the lines of the real file repeat at the same line of other entries ('  variants: function'; spans
    # are relative to the entry): their nodes, immutable, are shared rather than read again.
    where = (content, line, indent)
    pair = _pairs.get(where)
    if pair is None:
        pair = _read_key_value(content, indent, line)
        if len(_pairs) < _MEMO_LIMIT:
            _pairs[where] = pair
    return pair


def _read_key_value(content: str, indent: int, line: int) -> tuple[YScalar, YNode | None]:
    m = _KEY_VALUE.match(content, indent)
    if m is None:
        raise _NotCanonical
    key_text, value_text = m.groups()
    if len(key_text) > _LONGEST_KEY:
        raise _NotCanonical  # libyaml refuses implicit keys longer than 1024 characters
    # The hot path (every line of the real file): keys and their places repeat from entry to entry (spans
    # are relative to the entry), so equal key nodes are shared; values are mostly plain.
    where = (key_text, line, indent)
    key = _key_nodes.get(where)
    if key is None:
        key = _plain(key_text, line, indent)
        if len(_key_nodes) < _MEMO_LIMIT:
            _key_nodes[where] = key
    if value_text is None:
        return key, None
    start = m.start(2)
    if value_text[0] == "[":
        return key, _flow_list(value_text, line, start)
    if value_text == "{}":
        return key, YMap((), Span(line, start, line, start + 2))
    return key, _block_plain(value_text, line, start)


def _mapping(pairs: list[tuple[YScalar, YNode]], span: Span, diagnostics: list[Diagnostic]) -> YMap:
    try:
        unique = len({k.value for k, _ in pairs}) == len(pairs)
    except TypeError:
        unique = False
    if not unique:
        diagnostics.extend(duplicate_key_diagnostics(pairs))
    return YMap(tuple(pairs), span)


def _nested(lines: list[tuple[int, int, str]], end: tuple[int, int], diagnostics: list[Diagnostic]) -> YNode:
    """The block under a 'key:' line: a mapping of one-line pairs or a list of one-line plain items."""
    if not lines:
        raise _NotCanonical  # an empty value: null, with a span libyaml places; rare
    first_line, indent, first = lines[0]
    if first[indent] == "-":
        items = []
        for line, ind, content in lines:
            if ind != indent or content[indent:indent + 2] != "- " or content[indent + 2:indent + 3] == " ":
                raise _NotCanonical
            items.append(_block_plain(content[indent + 2:], line, indent + 2))
        return YSeq(tuple(items), Span(first_line, indent, *end))
    pairs = []
    for line, ind, content in lines:
        if ind != indent:
            raise _NotCanonical
        key, value = _key_value(content, indent, line)
        if value is None:
            raise _NotCanonical
        pairs.append((key, value))
    return _mapping(pairs, Span(first_line, indent, *end), diagnostics)


def _content_lines(text: str) -> list[tuple[int, int, str]]:
    """(line, indent, text without comment and trailing spaces) of every line that has content.

    Raises _NotCanonical at a tab, \r or control character (the text is ASCII: printable is ' '-'~')."""
    out = []
    for number, line in enumerate(text.split("\n")):
        if not line.isprintable():
            raise _NotCanonical
        cut = line.find(" #")
        if cut >= 0:
            line = line[:cut]
        content = line.rstrip(" ")
        if not content:
            continue
        indent = len(content) - len(content.lstrip(" "))
        if content[indent] == "#":
            continue
        out.append((number, indent, content))
    return out


def compose_canonical_entry(text: str) -> tuple[YMap, list[Diagnostic]] | None:
    """The entry's mapping and diagnostics (duplicate keys), as libyaml's path gives them; None if the
    entry is not in the canonical shape."""
    if not text.isascii() or not text.startswith("- "):
        return None
    try:
        composed = _compose(text)
    except _NotCanonical:
        return None
    # libyaml's path first refuses text that too_deep over-estimates as deeper than MAX_DEPTH. In a canonical
    # entry every line starts with at most one '- ' after its indentation, so only 64 spaces in a row or more
    # than 64 brackets can make it say so.
    if (_DEEP_INDENT in text or text.count("[") + text.count("{") > MAX_DEPTH) and too_deep(text) is not None:
        return None
    return composed


def _compose(text: str) -> tuple[YMap, list[Diagnostic]]:
    lines = _content_lines(text)
    last_line = text.count("\n")
    if not text.endswith("\n") and lines[-1][0] != last_line:
        # A last line of blanks or a comment without a line end: libyaml ends blocks at its column.
        raise _NotCanonical
    # libyaml ends the stream at the start of the line after the last one (it adds a final break).
    stream_end = (last_line + (0 if text.endswith("\n") else 1), 0)
    first_line, _, first = lines[0]
    if first_line != 0 or len(first) < 3 or first[2] == " ":
        raise _NotCanonical
    lines[0] = (0, 2, first)
    diagnostics: list[Diagnostic] = []
    pairs: list[tuple[YScalar, YNode]] = []
    open_key: YScalar | None = None  # a top-level key whose value is the block below it
    literal: tuple[int, int] | None = None  # where the open key's '|' stands, when its value is a literal block
    block: list[tuple[int, int, str]] = []

    def close(end: tuple[int, int]) -> YNode:
        if literal is None:
            return _nested(block, end, diagnostics)
        if not text.endswith("\n"):
            raise _NotCanonical
        return _literal(text.split("\n"), literal, end[0])
    for entry in lines:
        line, indent, content = entry
        if indent > 2 or (indent == 2 and content[2] == "-" and line != 0):
            if open_key is None:
                raise _NotCanonical  # a continuation line of a multi-line scalar, or stray nesting
            block.append(entry)
            continue
        if indent != 2:
            raise _NotCanonical
        if open_key is not None:
            pairs.append((open_key, close((line, 2))))
            open_key, literal, block = None, None, []
        if content.endswith(": |"):  # 'key: |' (tags.yaml's descriptions): the key, then the block below it
            key, value = _key_value(content[:-2].rstrip(" "), 2, line)
            if value is not None:
                raise _NotCanonical
            literal = (line, len(content) - 1)
        else:
            key, value = _key_value(content, 2, line)
        if value is None:
            open_key = key
        else:
            pairs.append((key, value))
    if open_key is not None:
        pairs.append((open_key, close(stream_end)))
    return _mapping(pairs, Span(0, 2, *stream_end), diagnostics), diagnostics


def _literal(raw: list[str], indicator: tuple[int, int], end: int) -> YScalar:
    """The literal block scalar whose '|' stands at `indicator`, before the line `end` (the next key's, or the
    stream's end). Only its plainest form: no comment after the indicator, lines none less indented than the first
    (deeper than the key) and none blank, then only empty lines and comments; its value is each line's text past
    that indentation with a line end (clip chomping), and it ends where libyaml ends it, after the empty lines."""
    line, col = indicator
    if raw[line] != raw[line].rstrip(" ") or raw[line][col:] != "|":
        raise _NotCanonical  # (a comment or blanks after the indicator: left to libyaml)
    first = raw[line + 1] if line + 1 < end else ""
    indent = len(first) - len(first.lstrip(" "))
    if indent <= 2 or not first.strip(" "):
        raise _NotCanonical  # (an empty block, or one not deeper than its key)
    margin = " " * indent
    stop = line + 1
    while stop < end and raw[stop].startswith(margin) and raw[stop].strip(" "):
        stop += 1
    value = "".join(f"{part[indent:]}\n" for part in raw[line + 1:stop])
    while stop < end and not raw[stop]:
        stop += 1
    if any(part.strip(" ")[:1] != "#" for part in raw[stop:end]):
        raise _NotCanonical  # (blanks, a blank line inside the block, or a line less indented than its first)
    return new_tuple(YScalar, (value, new_tuple(Span, (line, col, stop, 0)), "|", value))
