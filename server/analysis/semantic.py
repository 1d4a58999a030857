"""Semantic tokens for the schemas inside `func:` values: operator name, overload, types, alias
annotations, argument names, defaults and return names.

Tokens are (line, column, length, type) with columns in code points, sorted by
position; each lies on one line (a schema that a scalar spreads over several
lines gets no tokens, since its offsets cannot be placed exactly).
"""

from __future__ import annotations

from typing import NamedTuple

from ..index.documents import Document
from ..model.schema_parser import parse_schema
from ..syntax.locate import ScalarText
from .cursor import func_scalar

NAMESPACE = "namespace"
FUNCTION = "function"
OVERLOAD = "enumMember"
TYPE = "type"
ANNOTATION = "decorator"
PARAMETER = "parameter"
RETURN_NAME = "property"
NUMBER = "number"
STRING = "string"
KEYWORD = "keyword"
CONSTANT = "variable"
TOKEN_TYPES = (NAMESPACE, FUNCTION, OVERLOAD, TYPE, ANNOTATION, PARAMETER, RETURN_NAME, NUMBER, STRING, KEYWORD,
               CONSTANT)


class Token(NamedTuple):
    line: int
    col: int
    length: int
    type: str


def _type_tokens(text: str, at: int) -> list[tuple[int, int, str]]:
    """A type's text: the type itself, and the alias annotation inside `Tensor(...)`."""
    open_at = text.find("(")
    close_at = text.rfind(")")
    if open_at == -1 or close_at < open_at:
        return [(at, len(text), TYPE)]
    out = [(at, open_at, TYPE), (at + open_at + 1, close_at - open_at - 1, ANNOTATION)]
    if close_at + 1 < len(text):
        out.append((at + close_at + 1, len(text) - close_at - 1, TYPE))
    return out


def _default_kind(text: str) -> str:
    if text in ("True", "False", "None"):
        return KEYWORD
    if text[:1] in "\"'":
        return STRING
    if text[:1].isdigit() or text[:1] in "-[." :
        return NUMBER
    return CONSTANT


def schema_pieces(func: str) -> list[tuple[int, int, str]]:
    """(offset, length, token type) of the pieces of one func string, in order."""
    parsed = parse_schema(func)
    spans = parsed.spans
    if spans is None:
        return []
    out: list[tuple[int, int, str]] = []
    if "::" in func[:spans.name[0]]:
        out.append((0, func.index("::"), NAMESPACE))
    name_end = spans.overload[0] - 1 if spans.overload is not None else spans.name[1]
    out.append((spans.name[0], name_end - spans.name[0], FUNCTION))
    if spans.overload is not None and spans.overload[1] > spans.overload[0]:
        out.append((spans.overload[0], spans.overload[1] - spans.overload[0], OVERLOAD))
    for argument in spans.arguments:
        t0, t1 = argument.type
        out.extend(_type_tokens(func[t0:t1], t0))
        n0, n1 = argument.name
        out.append((n0, n1 - n0, PARAMETER))
        default = argument.default
        if default is not None and default[1] > default[0]:
            out.append((default[0], default[1] - default[0], _default_kind(func[default[0]:default[1]])))
    for r0, r1 in spans.each_return:
        text = func[r0:r1]
        type_text, space, name = text.rpartition(" ")
        if not space or "(" in name:
            type_text, name = text, ""
        out.extend(_type_tokens(type_text, r0))
        if name:
            out.append((r0 + len(type_text) + 1, len(name), RETURN_NAME))
    return [p for p in out if p[1] > 0]


def schema_tokens(document: Document) -> list[Token]:
    """Tokens of every func: schema of a native_functions.yaml document, in document order."""
    tokens: list[Token] = []
    for entry in document.entries:
        found = func_scalar(entry)
        if found is None:
            continue
        scalar, text = found
        where = ScalarText(scalar)
        if not where.exact:
            continue
        line = scalar.span.start_line + entry.line
        base = scalar.span.start_col + (0 if scalar.style is None else 1)
        for offset, length, kind in schema_pieces(text):
            tokens.append(Token(line, base + offset, length, kind))
    return tokens
