"""core/aten_interned_strings.h (every op and argument name) and enum_tag.h (the tags)."""

from __future__ import annotations

from ...model.native_function import NativeFunction
from ..plan import Env
from .context import GenContext, Part

# C++ alternative operator spellings cannot be symbol names.
_CPP_KEYWORDS = frozenset({"and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor",
                           "xor_eq"})


def _names_of(f: NativeFunction) -> tuple[str, str, list[str]]:
    return str(f.func.name.name), f.func.name.name.base, [a.name for a in f.func.schema_order_arguments()]


def interned_names_part(ctx: GenContext) -> Part:
    """Each op's name, base name and argument names: all aten_interned_strings.h reads of it."""
    return "interned-names", ctx.native_functions, _names_of


def aten_interned_strings_h(ctx: GenContext) -> Env:
    names: set[str] = set()
    attrs: set[str] = set()
    for name, base, arguments in ctx.per_items(*interned_names_part(ctx)):
        names.add(name)
        names.add(base)
        attrs.update(arguments)
    names -= _CPP_KEYWORDS
    return {"aten_symbols": " \\\n".join(f"_(aten, {n})" for n in sorted(names)),
            "attr_symbols": " \\\n".join(f"_(attr, {n})" for n in sorted(attrs))}


def enum_tag_h(ctx: GenContext) -> Env:
    return {"enum_of_valid_tags": ",\n".join(sorted(ctx.valid_tags))}
