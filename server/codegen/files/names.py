"""core/aten_interned_strings.h (every op and argument name) and enum_tag.h (the tags)."""

from __future__ import annotations

from ..plan import Env
from .context import GenContext

# C++ alternative operator spellings cannot be symbol names.
_CPP_KEYWORDS = frozenset({"and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor",
                           "xor_eq"})


def aten_interned_strings_h(ctx: GenContext) -> Env:
    names: set[str] = set()
    attrs: set[str] = set()
    for f in ctx.native_functions:
        names.add(str(f.func.name.name))
        names.add(f.func.name.name.base)
        attrs.update(a.name for a in f.func.schema_order_arguments())
    names -= _CPP_KEYWORDS
    return {"aten_symbols": " \\\n".join(f"_(aten, {n})" for n in sorted(names)),
            "attr_symbols": " \\\n".join(f"_(attr, {n})" for n in sorted(attrs))}


def enum_tag_h(ctx: GenContext) -> Env:
    return {"enum_of_valid_tags": ",\n".join(sorted(ctx.valid_tags))}
