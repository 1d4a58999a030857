"""A column-accurate, error-tolerant parser for `func:` schema strings.

It accepts exactly what torchgen 2.13's FunctionSchema.parse accepts (the
same decomposition: split the arguments at ', ', a name after the last
space, a default after '=', and the printed form must equal the input), but
instead of stopping at the first problem it reports each one with the
offsets it concerns, and it records where every piece of the schema is.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ..frozen import PER_TEXT_MEMO, new_tuple, record
from ..suggest import did_you_mean
from .cpp_names import LINE_BREAKS, identifier_problem, latin1_problem
from .schema import (
    AUGMENTED_ASSIGNMENT_NAMES,
    BASE_TYPE_NAMES,
    Annotation,
    Argument,
    Arguments,
    BaseOperatorName,
    BaseTy,
    BaseType,
    CustomClassType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)

Offsets = tuple[int, int]


@record
class Issue:
    """A problem found in a schema string, at offsets into that string."""

    code: str
    start: int
    end: int
    message: str
    data: tuple[tuple[str, str], ...] = ()

    def moved(self, by: int) -> Issue:
        return Issue(self.code, self.start + by, self.end + by, self.message, self.data)


class ArgumentPieces(NamedTuple):
    """Offsets of an argument's pieces relative to the argument's own text (cached per text)."""

    whole: Offsets
    type: Offsets
    name: Offsets
    default: Offsets | None


class ArgumentSpans(NamedTuple):
    """Where one argument is: its start in the func string and its pieces relative to that."""

    at: int
    pieces: ArgumentPieces

    def _moved(self, offsets: Offsets) -> Offsets:
        return offsets[0] + self.at, offsets[1] + self.at

    @property
    def whole(self) -> Offsets:
        return self._moved(self.pieces.whole)

    @property
    def type(self) -> Offsets:
        return self._moved(self.pieces.type)

    @property
    def name(self) -> Offsets:
        return self._moved(self.pieces.name)

    @property
    def default(self) -> Offsets | None:
        default = self.pieces.default
        return None if default is None else self._moved(default)


@record
class SchemaSpans:
    """Where each piece of a schema is, as offsets into the func string."""

    whole: Offsets
    name: Offsets
    overload: Offsets | None
    # In the order of FunctionSchema.arguments.flat_all, which is source order.
    arguments: tuple[ArgumentSpans, ...]
    returns: Offsets
    each_return: tuple[Offsets, ...]


@record
class ParsedSchema:
    namespace: str
    schema: FunctionSchema | None
    spans: SchemaSpans | None
    issues: tuple[Issue, ...]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ANNOTATION = re.compile(r"([a-z])(\|[a-z])*(!?)( -> (\*|[a-z](\|[a-z])*))?\Z")
_ANNOTATED_TENSOR = re.compile(r"Tensor\((.+)\)(.*)")
_OPTIONAL = re.compile(r"(.+)\?\Z")
_LIST = re.compile(r"(.+)\[([0-9]+)?\]\Z")
_CUSTOM_CLASS = re.compile(r"__torch__\.torch\.classes\.([a-zA-Z0-9_.]+)\Z")
_DECL = re.compile(r"([^\(]+)\((.*)\) -> (.*)\Z")
_DUNDER = re.compile(r"__([^_]+)__\Z")


def _pieces(text: str, sep: str, start: int) -> list[tuple[str, int]]:
    """Split like str.split, keeping each piece's offset."""
    out = []
    pos = 0
    for piece in text.split(sep):
        out.append((piece, start + pos))
        pos += len(piece) + len(sep)
    return out


# ---------------------------------------------------------------- types

@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def parse_type(text: str) -> tuple[Type | None, str | None, tuple[tuple[str, str], ...]]:
    """A type, or an error message (with did-you-mean data)."""
    m = _OPTIONAL.match(text)
    if m is not None:
        inner, error, data = parse_type(m.group(1))
        result: Type | None = OptionalType(inner) if inner is not None else None
    elif (m := _LIST.match(text)) is not None:
        inner, error, data = parse_type(m.group(1))
        size = int(m.group(2)) if m.group(2) is not None else None
        result = ListType(inner, size) if inner is not None else None
    elif (m := _CUSTOM_CLASS.match(text)) is not None:
        return CustomClassType(m.group(1)), None, ()
    elif text in BASE_TYPE_NAMES:
        return BaseType(BaseTy[text]), None, ()
    else:
        hint, data = did_you_mean(text, BASE_TYPE_NAMES)
        return None, f"unknown type '{text}'{hint}", data
    if result is not None and str(result) != text:
        return None, f"type '{text}' is not written canonically; torchgen expects '{result}'", ()
    return result, error, data


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def parse_annotation(text: str) -> tuple[Annotation | None, str | None]:
    m = _ANNOTATION.match(text)
    if m is None:
        return None, (f"invalid alias annotation '{text}'; expected a lower-case letter set such as "
                      "'a', 'a!', 'a|b' or 'a! -> *'")
    before = m.group(1) + (m.group(2) or "")
    alias_set = tuple(before.split("|"))
    is_write = m.group(3) == "!"
    after = tuple(m.group(5).split("|")) if m.group(5) else ()
    if is_write and len(alias_set) > 1:
        return None, f"alias annotation '{text}': a set of several aliases cannot be written to ('!')"
    if len(alias_set) > 1 and len(after) > 1:
        return None, f"alias annotation '{text}': the sets before and after '->' cannot both have several aliases"
    result = Annotation(alias_set, is_write, after)
    if str(result) != text:
        return None, f"alias annotation '{text}': at most two aliases may be joined with '|' before '->'"
    return result, None


def _type_and_annotation(text: str, start: int, issues: list[Issue]) -> tuple[Type | None, Annotation | None]:
    annotation = None
    type_text = text
    m = _ANNOTATED_TENSOR.match(text)
    if m is not None:
        if m.group(2) not in ("", "?", "[]"):
            issues.append(Issue("OPG204", start, start + len(text),
                                f"an alias annotation is allowed only as Tensor(a), Tensor(a)? or Tensor(a)[], not '{text}'"))
            return None, None
        type_text = "Tensor" + m.group(2)
        annotation, error = parse_annotation(m.group(1))
        if error:
            issues.append(Issue("OPG204", start + m.start(1), start + m.end(1), error))
    ty, error, data = parse_type(type_text)
    if error:
        issues.append(Issue("OPG203", start, start + len(text), error, data))
    return ty, annotation


# ---------------------------------------------------------------- names

def parse_base_name(text: str, start: int, issues: list[Issue]) -> BaseOperatorName | None:
    end = start + len(text)
    if text == "":
        issues.append(Issue("OPG201", start, end, "the operator name is empty"))
        return None
    if text.endswith("_out"):
        issues.append(Issue("OPG201", start, end, f"'{text}': the suffix _out is reserved; "
                                                  "use an overload name such as '.out' instead"))
        return None
    namespace = None
    if "::" in text:
        namespace, text = text.rsplit("::", 1)
    m = _DUNDER.match(text) if text[:2] == "__" else None
    if m is not None:
        dunder, base = True, m.group(1)
        inplace = any(base == f"i{n}" for n in AUGMENTED_ASSIGNMENT_NAMES)
        if inplace:
            base = base[1:]
        elif base[0] == "i":
            issues.append(Issue("OPG201", start, end, f"'{text}': a dunder method starting with 'i' must be an "
                                                      "in-place augmented assignment such as __iadd__"))
            return None
    else:
        dunder, base = False, text
        inplace = base.endswith("_")
        if inplace:
            base = base[:-1]
    functional = base.endswith("_functional")
    if functional:
        base = base[: -len("_functional")]
        if dunder or inplace:
            issues.append(Issue("OPG201", start, end, f"'{text}': a _functional name cannot be in-place or a dunder method"))
            return None
    return BaseOperatorName(base, inplace, dunder, functional, namespace)


def parse_operator_name(text: str, start: int = 0) -> tuple[OperatorName | None, tuple[Issue, ...]]:
    """`name` or `name.overload`, as in structured_delegate, autogen and backend yaml."""
    issues: list[Issue] = []
    name, dot, overload = text.partition(".")
    base = parse_base_name(name, start, issues)
    if base is None:
        return None, tuple(issues)
    return OperatorName(base, overload), tuple(issues)


# Names the schema gives (op, overload, argument and return names, the namespace) are pasted into the C++ as they
# are: one outside the name grammar (cpp_names) is an error, since the C++ would not compile or would hold code of
# the yaml's choosing; an identifier only some compilers take ('$', non-ASCII letters, spaces around it) and a
# missing name, which torchgen also accepts, stay OPG207 warnings.
_NOT_A_CPP_NAME = ("torchgen accepts it and pastes it into the generated C++ as it is, so the C++ would not compile "
                   "or would hold code of the yaml's choosing")


def _identifier_warning(text: str, start: int, what: str) -> Issue | None:
    if _IDENTIFIER.match(text):
        return None
    if not text:
        return Issue("OPG207", start, start + 1, f"the {what} is missing; torchgen accepts this, "
                                                  "but the generated C++ will not compile")
    problem = identifier_problem(text, what)
    if problem is not None:
        return Issue("OPG143", start, start + len(text), f"{problem}; {_NOT_A_CPP_NAME}")
    return Issue("OPG207", start, start + len(text), f"{what} '{text}' is an identifier only to some compilers "
                                                      "(spaces around it, '$' or non-ASCII letters); torchgen "
                                                      "accepts it")


# Issues after which the schema is still built: the name is wrong, not the schema's shape.
_NAME_ISSUES = ("OPG207", "OPG143", "OPG144")


# What each character that cannot be in a file name does to gen.py --per-operator-headers, which names
# ops/<name>.h (and <name>_ops.h, ...) after the operator (checked against torchgen 2.13).
_NOT_IN_FILE_NAMES = {
    "\0": "a NUL byte: gen.py --per-operator-headers stops on it half-way (ValueError: embedded null byte)",
    "\n": "a line break: gen.py --per-operator-headers writes files named with it, which no #include can name",
    "\r": "a line break: gen.py --per-operator-headers writes files named with it, which no #include can name",
    "/": "'/': gen.py --per-operator-headers writes its headers into a folder of their own under ops/",
}


# A line break (or NUL) anywhere in a schema that otherwise parses: gen.py pastes the names and the schema
# into the C++ as they are, so the rest of that line becomes C++ of the yaml's own (checked against torchgen).
_LINE_BREAK = re.compile("[\0" + LINE_BREAKS + "]")
_PASTED_LINE_BREAK = ("a schema must be on one line: torchgen accepts this line break, and pastes what follows it "
                      "into the generated C++ as a line of its own")
_NOT_IN_FILE_NAME = re.compile("[" + re.escape("".join(_NOT_IN_FILE_NAMES)) + "]")


def _file_name_error(name: str, start: int) -> Issue | None:
    """An error at the first character of an operator name that cannot be in a file name."""
    m = _NOT_IN_FILE_NAME.search(name)
    if m is None:
        return None
    return Issue("OPG140", start + m.start(), start + m.end(), f"operator name {name!r} cannot be a file name: it "
                                                               f"has {_NOT_IN_FILE_NAMES[m.group()]}")


# ---------------------------------------------------------------- arguments

@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def _argument_from_text(text: str) -> tuple[Argument | None, ArgumentPieces | None, tuple[Issue, ...]]:
    """One argument, with spans and issues at offsets relative to its text (cached: pieces repeat)."""
    issues: list[Issue] = []
    end = len(text)
    if " " not in text:
        issues.append(Issue("OPG202", 0, end, f"argument '{text}' needs a type and a name separated by a space"))
        return None, None, tuple(issues)
    default: str | None = None
    default_span = None
    head = text
    if "=" in text:
        if text.count("=") != 1:
            issues.append(Issue("OPG202", 0, end, f"argument '{text}' has more than one '='"))
            return None, None, tuple(issues)
        head, default = text.split("=")
        default_span = (len(head) + 1, end)
        if default == "":
            issues.append(Issue("OPG202", len(head), end, f"argument '{text}' has '=' but no default value"))
            return None, None, tuple(issues)
        if " " not in head:
            issues.append(Issue("OPG202", 0, len(head), f"argument '{text}' needs a type and a name separated by a space"))
            return None, None, tuple(issues)
    type_text, name = head.rsplit(" ", 1)
    name_start = len(type_text) + 1
    ty, annotation = _type_and_annotation(type_text, 0, issues)
    if ty is None:
        return None, None, tuple(issues)
    warning = _identifier_warning(name, name_start, "argument name")
    if warning:
        issues.append(warning)
    spans = ArgumentPieces((0, end), (0, len(type_text)), (name_start, name_start + len(name)), default_span)
    return Argument(name, ty, default, annotation), spans, tuple(issues)


def parse_argument_text(text: str) -> tuple[Argument | None, tuple[Issue, ...]]:
    """One argument on its own, as in precomputed lines."""
    arg, _, issues = _argument_from_text(text)
    errors = any(i.code not in _NAME_ISSUES for i in issues)
    return (None if errors else arg), issues


def _tensor_option_like(a: Argument, name: str, ty: str) -> bool:
    return a.name == name and str(a.type) in (ty, ty + "?")


_TENSOR_OPTIONS = (("dtype", "ScalarType"), ("layout", "Layout"), ("device", "Device"), ("pin_memory", "bool"))


def _group_kwargs(kwargs: list[tuple[Argument, ArgumentSpans]], issues: list[Issue]
                  ) -> tuple[tuple[Argument, ...], TensorOptionsArguments | None, tuple[Argument, ...]]:
    """Split keyword-only arguments around the dtype/layout/device/pin_memory quadruple."""
    pre: list[Argument] = []
    options: TensorOptionsArguments | None = None
    post: list[Argument] = []
    acc = pre
    i = 0
    while i < len(kwargs):
        window = kwargs[i:i + 4] if kwargs[i][0].name == "dtype" else []  # (the quadruple starts with dtype)
        if len(window) == 4 and all(_tensor_option_like(a, n, t) for (a, _), (n, t) in zip(window, _TENSOR_OPTIONS)):
            if acc is not pre:
                s, e = window[0][1].whole[0], window[-1][1].whole[1]
                issues.append(Issue("OPG205", s, e, "tensor options (dtype, layout, device, pin_memory) may appear only once"))
            options = TensorOptionsArguments(*(a for a, _ in window))
            acc = post
            i += 4
            continue
        acc.append(kwargs[i][0])
        i += 1
    return tuple(pre), options, tuple(post)


def _parse_arguments(text: str, start: int, issues: list[Issue]) -> tuple[Arguments, tuple[ArgumentSpans, ...]] | None:
    """The arguments of the text at start in the func string (None when they do not parse; issues recorded)."""
    read, found = _arguments_from_text(text)
    if found:
        issues.extend(i.moved(start) for i in found)
    if read is None or not start:
        return read
    return read[0], tuple([new_tuple(ArgumentSpans, (s.at + start, s.pieces)) for s in read[1]])


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def _arguments_from_text(text: str) -> tuple[tuple[Arguments, tuple[ArgumentSpans, ...]] | None, tuple[Issue, ...]]:
    """_read_arguments at offset 0, and its issues (cached: half the argument lists of the real file are another
    entry's too, e.g. 'Tensor self, Tensor other')."""
    issues: list[Issue] = []
    return _read_arguments(text, 0, issues), tuple(issues)


def _read_arguments(text: str, start: int, issues: list[Issue]) -> tuple[Arguments, tuple[ArgumentSpans, ...]] | None:
    positional: list[tuple[Argument, ArgumentSpans]] = []
    kwarg_only: list[tuple[Argument, ArgumentSpans]] = []
    out: list[tuple[Argument, ArgumentSpans]] = []
    # Positional, then keyword-only, then out arguments: the source order.
    spans: list[ArgumentSpans] = []
    acc = positional
    star_at: int | None = None
    failed = False
    if text == "":
        return Arguments((), None, (), (), None, (), ()), ()
    at = start
    for piece in text.split(", "):
        piece_at = at
        at += len(piece) + 2
        if piece == "*":
            if acc is not positional:
                issues.append(Issue("OPG205", piece_at, piece_at + 1, "the keyword-only marker '*' may appear only once"))
            acc = kwarg_only
            star_at = piece_at
            continue
        if piece == "":
            issues.append(Issue("OPG200", piece_at, piece_at + 1, "empty argument: arguments are separated by exactly ', '"))
            failed = True
            continue
        arg, pieces, found = _argument_from_text(piece)
        if found:
            issues.extend(i.moved(piece_at) for i in found)
        if arg is None or pieces is None:
            failed = True
            continue
        if (annotation := arg.annotation) is not None and annotation.is_write:  # (arg.is_write, without a call)
            if acc is kwarg_only:
                acc = out
        elif acc is out:
            issues.append(Issue("OPG205", piece_at, piece_at + len(piece), f"non-mutable argument '{arg.name}' cannot "
                                                                             "follow the mutable out arguments"))
        placed = new_tuple(ArgumentSpans, (piece_at, pieces))
        spans.append(placed)
        acc.append((arg, placed))
    if star_at is not None and not kwarg_only and not out:
        issues.append(Issue("OPG205", star_at, star_at + 1, "'*' must be followed by at least one keyword-only argument"))
        failed = True
    if failed:
        return None
    plain = [a for a, _ in positional]
    self_ix = next((i for i, a in enumerate(plain) if a.name == "self"), None)
    pre_self: tuple[Argument, ...]
    if self_ix is None:
        pre_self, self_arg, post_self = (), None, tuple(plain)
    else:
        pre_self, self_arg, post_self = tuple(plain[:self_ix]), SelfArgument(plain[self_ix]), tuple(plain[self_ix + 1:])
    for a, where in positional[: self_ix or 0]:
        if a.is_write:
            issues.append(Issue("OPG206", *where.whole, f"argument '{a.name}' before self cannot be mutable"))
    pre_kw, options, post_kw = _group_kwargs(kwarg_only, issues) if kwarg_only else ((), None, ())
    arguments = Arguments(pre_self, self_arg, post_self, pre_kw, options, post_kw, tuple([a for a, _ in out]))
    return arguments, tuple(spans)


# ---------------------------------------------------------------- returns

@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def _return_from_text(text: str) -> tuple[Return | None, tuple[Issue, ...]]:
    """One return, with issues at offsets relative to its text (cached: returns repeat)."""
    issues: list[Issue] = []
    name: str | None = None
    type_text = text
    if " " in text:
        type_text, name = text.rsplit(" ", 1)
        warning = _identifier_warning(name, len(type_text) + 1, "return name")
        if warning:
            issues.append(warning)
    if type_text == "":
        issues.append(Issue("OPG200", 0, max(len(text), 1), "empty return: returns are separated by exactly ', '"))
        return None, tuple(issues)
    ty, annotation = _type_and_annotation(type_text, 0, issues)
    if ty is None:
        return None, tuple(issues)
    return Return(name, ty, annotation), tuple(issues)


def _parse_returns(text: str, start: int, issues: list[Issue]) -> tuple[tuple[Return, ...], tuple[Offsets, ...]] | None:
    """The returns of the text at start in the func string (None when they do not parse; issues recorded)."""
    read, found = _returns_from_text(text)
    if found:
        issues.extend(i.moved(start) for i in found)
    if read is None or not start:
        return read
    return read[0], tuple([(s + start, e + start) for s, e in read[1]])


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def _returns_from_text(text: str) -> tuple[tuple[tuple[Return, ...], tuple[Offsets, ...]] | None, tuple[Issue, ...]]:
    """_read_returns at offset 0, and its issues (cached: the real file has 100 return texts)."""
    issues: list[Issue] = []
    return _read_returns(text, 0, issues), tuple(issues)


def _read_returns(text: str, start: int, issues: list[Issue]) -> tuple[tuple[Return, ...], tuple[Offsets, ...]] | None:
    if text == "()":
        return (), ()
    inner, inner_start = text, start
    parenthesized = text[:1] == "(" and text[-1:] == ")"
    if parenthesized:
        inner, inner_start = text[1:-1], start + 1
    pieces = _pieces(inner, ", ", inner_start)
    if parenthesized and len(pieces) == 1:
        issues.append(Issue("OPG200", start, start + len(text), f"a single return is written without parentheses: '{inner}'"))
    if not parenthesized and len(pieces) > 1:
        issues.append(Issue("OPG200", start, start + len(text), f"several returns must be in parentheses: '({text})'"))
    returns = []
    offsets = []
    for piece, at in pieces:
        r, found = _return_from_text(piece)
        if found:
            issues.extend(i.moved(at) for i in found)
        if r is not None:
            returns.append(r)
            offsets.append((at, at + len(piece)))
    if len(returns) != len(pieces):
        return None
    return tuple(returns), tuple(offsets)


# ---------------------------------------------------------------- schemas

def _split_namespace(func: str, issues: list[Issue]) -> tuple[str, str, int]:
    if "::" not in func:
        return "aten", func, 0
    parts = func.split("::")
    if len(parts) > 2:
        second = func.index("::", len(parts[0]) + 2)
        issues.append(Issue("OPG108", 0, second, "a func: may have at most one namespace level, e.g. 'myops::foo(...)'"))
    entity = parts[-1]
    namespace = "::".join(parts[:-1]) or "aten"
    if len(parts) == 2 and parts[0] and (warning := _identifier_warning(parts[0], 0, "namespace")) is not None:
        issues.append(warning)
    return namespace, entity, len(func) - len(entity)


def _locate_decl_problem(text: str, start: int) -> Issue:
    paren = text.find("(")
    if paren <= 0:
        where = max(paren, 0)
        return Issue("OPG200", start + where, start + max(where, len(text)),
                     "a schema starts with 'name(' or 'name.overload(' followed by the arguments")
    arrow = text.rfind(") -> ")
    if arrow < paren:
        close = text.rfind(")")
        if close >= paren and text[close + 1:].strip().startswith("->"):
            return Issue("OPG200", start + close, start + len(text), "write the arrow as ') -> ' with single spaces")
        return Issue("OPG200", start + paren, start + len(text),
                     "missing ' -> ' and the return type after the closing parenthesis")
    newline = text.find("\n")
    if newline != -1:
        return Issue("OPG200", start + newline, start + newline + 1, "a schema must be on one line")
    return Issue("OPG200", start, start + len(text), "invalid function schema")


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per text: frozen.PER_TEXT_MEMO says why the bound fits
def parse_schema(func: str) -> ParsedSchema:
    """Parse a func: string (optionally `namespace::`-prefixed)."""
    issues: list[Issue] = []
    namespace, text, start = _split_namespace(func, issues)
    m = _DECL.match(text)
    if m is None:
        issues.append(_locate_decl_problem(text, start))
        return ParsedSchema(namespace, None, None, tuple(issues))
    op_text, args_text, returns_text = m.groups()
    name_span = (start, start + len(op_text))
    base_text, dot, overload = op_text.partition(".")
    base = parse_base_name(base_text, start, issues)
    name_warning = _identifier_warning(base_text.rstrip("_"), start, "operator name") if base_text else None
    # A name the warning passes is letters, digits and '_' only: no character a file name cannot have.
    not_a_file_name = _file_name_error(base_text, start) if name_warning is not None else None
    name_issue = not_a_file_name or name_warning
    if (name_issue is None or name_issue.code == "OPG207") and not base_text.isascii() \
            and (crash := latin1_problem(base_text)) is not None:  # (an ASCII name is Latin-1: a C test first)
        name_issue = Issue("OPG144", start, start + len(base_text), crash)
    if name_issue is not None:
        issues.append(name_issue)
    line_break = _LINE_BREAK.search(text) if not_a_file_name is None else None
    if line_break is not None:
        issues.append(Issue("OPG142", start + line_break.start(), start + line_break.end(), _PASTED_LINE_BREAK))
    if overload and (warning := _identifier_warning(overload, start + len(base_text) + 1, "overload name")):
        issues.append(warning)
    args_start = start + m.start(2)
    arguments = _parse_arguments(args_text, args_start, issues)
    returns_start = start + m.start(3)
    returns = _parse_returns(returns_text, returns_start, issues)
    if line_break is not None:  # told once, as the line break it is
        at = start + line_break.start()
        issues[:] = [i for i in issues if i.code != "OPG143" or not i.start <= at < i.end]
    if base is None or arguments is None or returns is None:
        return ParsedSchema(namespace, None, None, tuple(issues))
    # Every piece above is checked to print back as written, so str(schema) == text
    # (torchgen's round-trip rule); tests assert it on the whole real file.
    schema = FunctionSchema(OperatorName(base, overload), arguments[0], returns[0])
    # Positional (whole, name, overload, arguments, returns, each_return): a call by keywords costs more.
    spans = SchemaSpans((start, start + len(text)), name_span,
                        (start + len(base_text) + 1, name_span[1]) if dot else None, arguments[1],
                        (returns_start, returns_start + len(returns_text)), returns[1])
    errors = bool(issues) and any(i.code not in _NAME_ISSUES for i in issues)
    return ParsedSchema(namespace, None if errors else schema, spans, tuple(issues))
