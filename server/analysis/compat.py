"""Forward and backward compatibility of schemas, as c10's FunctionSchema judges them.

PyTorch's CI (test/forward_backward_compatibility/check_forward_backward_compatibility.py) parses every
schema of the previous build and asks, for each, whether a schema of the new build with the same name is
backward compatible with it (old callers still work: `is_backward_compatible_with`) and forward compatible
(new callers work against the old build: `check_forward_compatible_with`). c10 compares the JIT view of a
schema: a type as TorchScript sees it (SymInt, ScalarType, Layout, MemoryFormat and DeviceIndex are ints;
Scalar is `number`), defaults as typed values (`float x=1` is 1.0; `Scalar x=1` is the int 1), alias sets
as sets, out arguments as the keyword-only ones that are written to.

Everything here is a pure function of opgen's schema model; torch is the reference in the tests.
"""

from __future__ import annotations

import ast
import datetime
import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..model.schema import Argument, BaseTy, BaseType, CustomClassType, FunctionSchema, ListType, OptionalType, Return, Type
from ..model.schema_parser import parse_schema
from ..syntax.entries import compose_entry, entry_mapping, iter_chunks
from ..syntax.nodes import YScalar
from ..text import Span

# ---------------------------------------------------------------- the JIT view of a schema

# TorchScript's type of each base type (the "fake" type c10 compares): the enums and symbolic ints are ints.
_JIT_BASE = {BaseTy.SymInt: "int", BaseTy.ScalarType: "int", BaseTy.Layout: "int", BaseTy.MemoryFormat: "int",
             BaseTy.DeviceIndex: "int", BaseTy.Scalar: "number", BaseTy.Dimname: "str"}
_NUMBER_SUBTYPES = frozenset({"int", "float"})

JitType = tuple[object, ...]  # ("int",), ("opt", elem), ("list", elem), ("class", name)


def jit_type(ty: Type) -> JitType:
    if isinstance(ty, BaseType):
        return (_JIT_BASE.get(ty.name, ty.name.name),)
    if isinstance(ty, OptionalType):
        return ("opt", jit_type(ty.elem))
    if isinstance(ty, ListType):
        return ("list", jit_type(ty.elem))
    assert isinstance(ty, CustomClassType)
    return ("class", ty.class_name)


def is_subtype(sub: JitType, sup: JitType) -> bool:
    """TorchScript's isSubtypeOf over the types a schema can name: Optional is a union with None, number takes
    int and float, lists are invariant."""
    if sub == sup:
        return True
    if sup[0] == "opt":
        inner = sup[1]
        assert isinstance(inner, tuple)
        if sub[0] == "opt":
            elem = sub[1]
            assert isinstance(elem, tuple)
            return is_subtype(elem, inner)
        return is_subtype(sub, inner)
    return sup == ("number",) and sub[0] in _NUMBER_SUBTYPES and len(sub) == 1


@record
class JitArgument:
    """An argument or a return as c10 compares it."""

    name: str
    type: JitType
    size: int | None  # N of `int[2]`
    alias: tuple[bool, frozenset[str], frozenset[str], bool] | None  # (on the list's elements, before, after, write)
    kwarg_only: bool
    default: object  # a typed value (see default_value); NO_DEFAULT when there is none
    is_out: bool


NO_DEFAULT = ("no default",)


def _alias(ty: Type, argument: Argument | Return) -> tuple[bool, frozenset[str], frozenset[str], bool] | None:
    a = argument.annotation
    if a is None:
        return None
    return (isinstance(ty, ListType), frozenset(a.alias_set), frozenset(a.alias_set_after), a.is_write)


def _list_size(ty: Type) -> int | None:
    while isinstance(ty, OptionalType):
        ty = ty.elem
    return ty.size if isinstance(ty, ListType) else None


def _scalar_value(text: str, ty: JitType) -> object:
    kind = ty[0]
    if text == "None":
        return ("None",)
    if kind == "opt":
        inner = ty[1]
        assert isinstance(inner, tuple)
        return _scalar_value(text, inner)
    if text in ("True", "False") and kind in ("bool", "number", "SymBool"):
        return ("bool", text == "True")
    if text[:1] in "'\"" and len(text) >= 2:
        try:
            return ("str", ast.literal_eval(text))
        except (ValueError, SyntaxError):
            return ("str", text[1:-1])
    number = _number(text)
    if number is not None:
        if kind == "float":
            return ("float", float(number))
        return ("float" if isinstance(number, float) else "int", number)
    return ("name", text)  # an enum value (contiguous_format, strided, Mean, a dtype): equal when spelt alike


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def default_value(text: str | None, ty: Type) -> object:
    """The default as a typed value, as c10's parser makes it: lists are tuples, `int[2] x=1` is (1, 1)."""
    if text is None:
        return NO_DEFAULT
    jit = jit_type(ty)
    base = jit[1] if jit[0] == "opt" and text != "None" else jit
    assert isinstance(base, tuple)
    if base[0] != "list" or text == "None":
        return _scalar_value(text, jit)
    elem = base[1]
    assert isinstance(elem, tuple)
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        items = [item.strip() for item in inner.split(",")] if inner else []
        return ("list", tuple(_scalar_value(item, elem) for item in items))
    size = _list_size(ty) or 1
    return ("list", tuple(_scalar_value(text, elem) for _ in range(size)))


def jit_arguments(schema: FunctionSchema) -> tuple[JitArgument, ...]:
    args = schema.arguments
    kwarg_only = {id(a) for a in (*args.flat_kwarg_only, *args.out)}
    result = []
    for a in args.flat_all:
        keyword = id(a) in kwarg_only
        alias = _alias(a.type, a)
        result.append(JitArgument(a.name, jit_type(a.type), _list_size(a.type), alias, keyword,
                                  default_value(a.default, a.type), keyword and alias is not None and alias[3]))
    return tuple(result)


def jit_returns(schema: FunctionSchema) -> tuple[JitArgument, ...]:
    return tuple(JitArgument(r.name or "", jit_type(r.type), _list_size(r.type), _alias(r.type, r), False, NO_DEFAULT,
                             False) for r in schema.returns)


def _first_out(args: tuple[JitArgument, ...]) -> int:
    return next((i for i, a in enumerate(args) if a.is_out), len(args))


def _same_shape(new: JitArgument, old: JitArgument) -> bool:
    return new.name == old.name and new.size == old.size and new.alias == old.alias


def _argument_incompatibility(new: JitArgument, old: JitArgument, forward: bool) -> str | None:
    """c10's Argument::isBackwardCompatibleWith (`new` accepts every call `old` accepted) or, `forward`,
    isForwardCompatibleWith (a call written for `new` works with `old`): None, or why not."""
    if not _same_shape(new, old):
        return f"'{old.name}' changed its name, size or alias annotation"
    if new.kwarg_only and not old.kwarg_only:
        return f"'{new.name}' became keyword-only"
    if forward and not is_subtype(new.type, old.type):
        return f"'{new.name}' takes values its old type did not"
    if not forward and not is_subtype(old.type, new.type):
        return f"'{new.name}' no longer takes every value of its old type"
    if old.default is not NO_DEFAULT and new.default != old.default:
        return f"'{new.name}' changed its default"
    if forward and new.default is not NO_DEFAULT and old.default is NO_DEFAULT:
        return f"'{new.name}' got a default it did not have"
    return None


def argument_backward_compatible(new: JitArgument, old: JitArgument) -> str | None:
    return _argument_incompatibility(new, old, forward=False)


def argument_forward_compatible(new: JitArgument, old: JitArgument) -> str | None:
    return _argument_incompatibility(new, old, forward=True)


def backward_incompatibility(new: FunctionSchema, old: FunctionSchema) -> str | None:
    """None when `new` is backward compatible with `old` (FunctionSchema::isBackwardCompatibleWith), else why not."""
    if str(new.name) != str(old.name):
        return "the operator name or overload changed"
    new_args, old_args = jit_arguments(new), jit_arguments(old)
    new_returns, old_returns = jit_returns(new), jit_returns(old)
    if len(new_returns) != len(old_returns):
        return f"returns {len(new_returns)} values instead of {len(old_returns)}"
    if len(new_args) < len(old_args):
        return f"takes {len(new_args)} arguments instead of {len(old_args)}"
    for new_return, old_return in zip(new_returns, old_returns):
        # returns are contravariant: the old return must accept what the new one gives
        if not _same_shape(old_return, new_return) or not is_subtype(new_return.type, old_return.type):
            return "a return changed its name, type or alias annotation"
    old_out, new_out = _first_out(old_args), _first_out(new_args)
    for i in range(old_out):
        if (why := argument_backward_compatible(new_args[i], old_args[i])) is not None:
            return why
    for i in range(old_out, new_out):
        if new_args[i].default is NO_DEFAULT:
            return f"the new argument '{new_args[i].name}' has no default"
    for i in range(old_out, len(old_args)):
        if (why := argument_backward_compatible(new_args[i - old_out + new_out], old_args[i])) is not None:
            return why
    return None


def forward_incompatibility(new: FunctionSchema, old: FunctionSchema) -> str | None:
    """None when `new` is forward compatible with `old` (FunctionSchema::isForwardCompatibleWith), else why not."""
    if str(new.name) != str(old.name):
        return "the operator name or overload changed"
    new_args, old_args = jit_arguments(new), jit_arguments(old)
    if len(jit_returns(new)) != len(jit_returns(old)):
        return "the number of returns changed"
    old_out, new_out = _first_out(old_args), _first_out(new_args)
    if len(old_args) - old_out != len(new_args) - new_out:
        return "the number of out arguments changed"
    for i in range(min(old_out, new_out)):
        if (why := argument_forward_compatible(new_args[i], old_args[i])) is not None:
            return why
    for i in range(old_out, new_out):
        default = new_args[i].default
        if default is NO_DEFAULT:
            return f"the new argument '{new_args[i].name}' has no default"
        if isinstance(default, tuple) and default[:1] == ("list",):
            return f"the new argument '{new_args[i].name}' has a list as its default"
    for i in range(old_out, len(old_args)):
        if (why := argument_forward_compatible(new_args[i - old_out + new_out], old_args[i])) is not None:
            return why
    return None


# ---------------------------------------------------------------- the allow-list

@record
class AllowItem:
    """One row of the check's ALLOW_LIST: (name regex, valid until, optional argument regex)."""

    name: re.Pattern[str]
    until: datetime.date
    arguments: re.Pattern[str] | None


_DATE = re.compile(r"datetime\.date\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
_ITEM = re.compile(r"\(\s*(?P<name>(?:\"[^\"]*\"|'[^']*'))\s*,\s*(?P<date>datetime\.date\([^)]*\))\s*"
                   r"(?:,\s*(?P<args>(?:\"[^\"]*\"|'[^']*'))\s*)?,?\s*\)")


def parse_allow_list(text: str) -> tuple[AllowItem, ...]:
    """The rows of an ALLOW_LIST written as the check writes it: `("aten::name", datetime.date(Y, M, D))` or
    with a third item, an argument regex; one or more a line, comments and the surrounding list ignored."""
    items = []
    for match in _ITEM.finditer(text):
        date = _DATE.fullmatch(match["date"])
        if date is None:
            continue
        args = match["args"]
        items.append(AllowItem(re.compile(ast.literal_eval(match["name"])),
                               datetime.date(int(date[1]), int(date[2]), int(date[3])),
                               re.compile(ast.literal_eval(args)) if args else None))
    return tuple(items)


def allow_listed(schema_text: str, items: Iterable[AllowItem], today: datetime.date) -> bool:
    """As the check's allow_listed: the first row still valid whose name regex is found in the schema decides."""
    for item in items:
        if item.until >= today and item.name.search(schema_text):
            return item.arguments is None or bool(item.arguments.search(schema_text))
    return False


# ---------------------------------------------------------------- comparing two native_functions.yaml


@record
class SchemaAt:
    text: str  # the func: as written
    schema: FunctionSchema
    line: int  # 0-based line of the func: value
    column: int
    end_column: int


@record
class SchemaChange:
    """A schema of the base whose text is not in the current file, and what c10 says of the change."""

    old: SchemaAt
    new: SchemaAt | None  # the current schema of the same name.overload; None when it is gone
    backward: str | None  # why it breaks backward compatibility, or None
    forward: str | None
    allowed: bool  # on the allow-list: the check skips it


def schemas_of(text: str) -> dict[str, SchemaAt]:
    """Every parsable func: of a native_functions.yaml, by name.overload (the first when repeated)."""
    found: dict[str, SchemaAt] = {}
    for chunk in iter_chunks(text):
        mapping, _ = entry_mapping(compose_entry(chunk.text), "native_functions.yaml")
        node = mapping.value("func") if mapping is not None else None
        if not isinstance(node, YScalar) or not isinstance(node.value, str):
            continue
        parsed = parse_schema(node.value)
        if parsed.schema is None:
            continue
        key = str(parsed.schema.name)
        span = node.span
        end = span.end_col if span.end_line == span.start_line else span.start_col + len(node.value)
        found.setdefault(key, SchemaAt(node.value, parsed.schema, chunk.start_line + span.start_line, span.start_col, end))
    return found


def schema_changes(base: str, current: str, allow: tuple[AllowItem, ...] = (),
                   today: datetime.date | None = None) -> tuple[SchemaChange, ...]:
    """The schemas of `base` whose text changed or that are gone in `current`, each with c10's verdicts, in the
    current file's order (gone ones last)."""
    old_schemas, new_schemas = schemas_of(base), schemas_of(current)
    day = today or datetime.date.today()
    changes = []
    for key, old in old_schemas.items():
        new = new_schemas.get(key)
        if new is not None and new.text == old.text:
            continue
        if new is None:
            backward: str | None = "the schema is gone"
            forward: str | None = "the schema is gone"
        else:
            backward = backward_incompatibility(new.schema, old.schema)
            forward = forward_incompatibility(new.schema, old.schema)
        changes.append(SchemaChange(old, new, backward, forward, allow_listed(f"aten::{old.text}", allow, day)))
    return tuple(sorted(changes, key=lambda c: (c.new is None, c.new.line if c.new else c.old.line)))


def change_diagnostics(changes: Iterable[SchemaChange], current: str, base_name: str) -> tuple[Diagnostic, ...]:
    """OPG209 where a change breaks backward compatibility, OPG210 where it breaks forward compatibility, on the
    changed func: (a schema that is gone: on the line it had, within the current file). Allow-listed changes are
    skipped, as the check skips them."""
    last_line = max(current.count("\n") - (1 if current.endswith("\n") else 0), 0)
    found = []
    for change in changes:
        if change.allowed:
            continue
        if change.new is not None:
            span = Span(change.new.line, change.new.column, change.new.line, change.new.end_column)
            what = f"aten::{change.new.schema.name} changed since {base_name}"
        else:
            span = Span.point(min(change.old.line, last_line), 0)
            what = f"aten::{change.old.schema.name} was removed since {base_name}"
        if change.backward is not None:
            found.append(diag("OPG209", span, f"{what} and breaks backward compatibility: {change.backward} "
                                              f"(was: {change.old.text})"))
        if change.forward is not None:
            found.append(diag("OPG210", span, f"{what} and breaks forward compatibility: {change.forward}"))
    return tuple(found)
