"""Register<Key>.cpp pieces of one op group for an external backend (gen_backend_stubs).

An external backend's kernels are static methods of its class
(`<cpp_namespace>::<ClassName>::<kernel>`), never structured. With
use_out_as_primary false, an out= or in-place variant without a kernel of its
own, whose functional variant has one, gets a wrapper that calls the
functional wrapper and copies the result into its outputs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...frozen import PER_OP_AND_KEY_MEMO
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import SchemaKind
from ...releases import Release
from ..api import cpp
from ..api.translate import translate
from ..api.types import Binding
from .register import _is_inplace_meta, compute_wrapper, wrapper_signature


def gets_out_inplace_wrapper(f: NativeFunction, g: NativeFunctionsGroup | None, index: BackendIndex) -> bool:
    """A variant whose kernel torchgen writes around the functional kernel (use_out_as_primary: false)."""
    return (not index.use_out_as_primary and g is not None and f.func.kind() is not SchemaKind.functional
            and not index.has_kernel(f) and index.has_kernel(g.functional))


def _registered(f: NativeFunction, g: NativeFunctionsGroup | None, index: BackendIndex) -> str | None:
    """How f is registered under this key: "kernel", "meta" (the in-place Meta check), "wrapper" or None."""
    if index.has_kernel(f):
        kind = "kernel"
    elif _is_inplace_meta(f, index):
        kind = "meta"
    elif gets_out_inplace_wrapper(f, g, index):
        kind = "wrapper"
    else:
        return None
    return None if f.manual_kernel_registration else kind


def out_inplace_wrapper(f: NativeFunction, g: NativeFunctionsGroup, index: BackendIndex) -> str:
    """The out=/in-place wrapper: call the functional wrapper, copy its result into the outputs."""
    kind = f.func.kind()
    if kind is SchemaKind.inplace:
        copy = "at::_copy_from"
    elif kind is SchemaKind.out:
        copy = "at::_copy_from_and_resize"
    else:
        raise ValueError(f"{f.func.name}: only out= and in-place variants get a generated wrapper")
    sig = wrapper_signature(f, index)
    name = sig.name()
    tmp = f"{name}_tmp"
    names = cpp.return_names(f.func)
    if len(names) > 1:
        updates = "\n  ".join(f"{copy}(std::get<{i}>({tmp}), {n});" for i, n in enumerate(names))
        returns = f"{sig.returns_type().cpp_type()}({', '.join(names)})"
    elif len(names) == 1:
        updates, returns = f"{copy}({tmp}, {names[0]});", names[0]
    else:
        outs = f.func.arguments.out
        if len(outs) != 1:
            raise ValueError(f"{f.func.name}: expected exactly 1 out argument, got {len(outs)}")
        returns = ""
        if outs[0].type.is_list_like():
            updates = (f"    for (int64_t i = 0; i < {tmp}.size(); ++i) {{\n"
                       f"        {copy}({tmp}[i], {outs[0].name}[i]);\n    }}")
        else:
            updates = f"{copy}({tmp}, {outs[0].name});"
    functional = wrapper_signature(g.functional, index)
    exprs = ", ".join(call_arguments(sig.arguments(), functional.arguments()))
    return (f"{sig.defn(name=name)} {{\n  auto {tmp} = {functional.name()}({exprs});\n  {updates}\n"
            f"  return {returns};\n}}\n")


def call_arguments(bindings: Sequence[Binding], goals: Sequence[Binding]) -> list[str]:
    """translate()'s expressions for a call, without translate() when every goal has a binding of its exact
    type (translate() answers those by the binding's name first): the common case of a wrapper calling a
    sibling variant, or a lazy kernel calling the meta kernel."""
    names = {b.nctype: b.name for b in bindings}
    direct = [names[g.nctype] for g in goals if g.nctype in names]
    if len(direct) == len(goals):
        return direct
    return [e.expr for e in translate(bindings, goals)]


def _functions(g: NativeFunction | NativeFunctionsGroup) -> list[tuple[NativeFunction, NativeFunctionsGroup | None]]:
    if isinstance(g, NativeFunction):
        return [(g, None)]
    return [(f, g) for f in g.functions()]


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per op and backend: frozen.PER_OP_AND_KEY_MEMO says why the bound fits
def anonymous_definitions(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex,
                          class_name: str, release: Release) -> tuple[str, ...]:
    """The wrappers of one group, in g.functions() order."""
    out = []
    for f, group in _functions(g):
        kind = _registered(f, group, index)
        if kind == "wrapper" and group is not None:  # always: a wrapper is around the group's functional kernel
            out.append(out_inplace_wrapper(f, group, index))
        elif kind is not None:
            text = compute_wrapper(f, index, release=release, class_method_name=class_name)
            if text is not None:
                out.append(text)
    return tuple(out)


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per op and backend: frozen.PER_OP_AND_KEY_MEMO says why the bound fits
def registrations(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex) -> tuple[str, ...]:
    """The m.impl lines of one group."""
    return tuple(f'm.impl("{f.func.name}",\nTORCH_FN({wrapper_signature(f, index).name()}));\n'
                 for f, group in _functions(g) if _registered(f, group, index) is not None)
