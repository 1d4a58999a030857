"""Register<Key>.cpp pieces of one op group for an external backend (gen_backend_stubs).

An external backend's kernels are static methods of its class
(`<cpp_namespace>::<ClassName>::<kernel>`), never structured. With
use_out_as_primary false, an out= or in-place variant without a kernel of its
own, whose functional variant has one, gets a wrapper that calls the
functional wrapper and copies the result into its outputs.

With `--experimental` (pytorch#172539's proposed gen_backend_stubs), a
PrivateUse1 kernel may be structured (its group gets the in-tree classes and
wrappers, guarded, deriving from the backend's class), and with
use_out_as_primary true a functional or in-place variant without a kernel of
its own calls the out= kernel directly (an output made with at::empty, or
self).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...frozen import PER_OP_AND_KEY_MEMO
from ...model import dispatch as dk
from ...model.backend_resolve import allocation_template
from ...model.native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup
from ...model.schema import SchemaKind
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api import cpp
from ..api.translate import translate
from ..api.types import Binding
from .native_declarations import kernel_signature
from .register import _is_inplace_meta, compute_wrapper, wrapper_name, wrapper_signature
from .register_structured import compute_structured_registration, compute_structured_wrapper


def gets_out_inplace_wrapper(f: NativeFunction, g: NativeFunctionsGroup | None, index: BackendIndex) -> bool:
    """A variant whose kernel torchgen writes around the functional kernel (use_out_as_primary: false)."""
    return (not index.use_out_as_primary and g is not None and f.func.kind() is not SchemaKind.functional
            and not index.has_kernel(f) and index.has_kernel(g.functional))


def gets_out_call(f: NativeFunction, g: NativeFunctionsGroup | None, index: BackendIndex) -> bool:
    """--experimental, PrivateUse1 with use_out_as_primary: a functional or in-place variant without a kernel,
    whose out= variant has one (of plain Tensor outputs), gets a wrapper calling the out= kernel."""
    return (index.dispatch_key is dk.K["PrivateUse1"] and index.use_out_as_primary and index.external
            and g is not None and f.func.kind() in (SchemaKind.functional, SchemaKind.inplace)
            and not index.has_kernel(f) and index.has_kernel(g.out)
            and not any(a.type.is_list_like() for a in g.out.func.arguments.out))


def _registered(f: NativeFunction, g: NativeFunctionsGroup | None, index: BackendIndex,
                *, experimental: bool) -> str | None:
    """How f is registered under this key: "kernel", "meta" (the in-place Meta check), "wrapper", "out call"
    (--experimental) or None."""
    if index.has_kernel(f):
        kind = "kernel"
    elif _is_inplace_meta(f, index):
        kind = "meta"
    elif gets_out_inplace_wrapper(f, g, index):
        kind = "wrapper"
    elif experimental and gets_out_call(f, g, index):
        kind = "out call"
    else:
        return None
    return None if f.manual_kernel_registration else kind


def _options_of(f: NativeFunction) -> str:
    """The TensorOptions a derived functional kernel makes its outputs with: the factory's own, else self's, else
    the first tensor argument's (the out= kernel then sizes them; their dtype is that argument's: OPG518)."""
    to = f.func.arguments.tensor_options
    if to is not None:
        return (f"at::TensorOptions().dtype({to.dtype.name}).layout({to.layout.name}).device({to.device.name})"
                f".pinned_memory({to.pin_memory.name})")
    template = allocation_template(f)
    if template is None:
        return "at::TensorOptions()"
    if template.type.is_nullable():
        return f"{template.name}.has_value() ? {template.name}->options() : at::TensorOptions()"
    return f"{template.name}.options()"


def out_call(f: NativeFunction, g: NativeFunctionsGroup, index: BackendIndex, class_name: str,
             kernel: BackendMetadata, release: Release) -> str:
    """The proposal's derived functional / in-place kernel: the out= kernel (`kernel`) called with fresh outputs,
    or self."""
    spelling = release.cpp_spelling
    sig = wrapper_signature(f, index, release=release)
    goals = kernel_signature(g.out, index, spelling).arguments()
    goals = goals[:len(goals) - len(g.out.func.arguments.out)]
    args = call_arguments(sig.arguments(), goals, spelling)
    returns = len(f.func.returns)
    if f.func.kind() is SchemaKind.functional:
        outs = ["out"] if returns == 1 else [f"out{i}" for i in range(returns)]
        options = _options_of(f)
        made = "".join(f"  auto {name} = at::empty({{0}}, {options});\n" for name in outs)
        result = outs[0] if returns == 1 else f"std::make_tuple({', '.join(outs)})"
    else:
        # union-attr: every in-place op has a mutable self (a schema rule)
        self_name = f.func.arguments.self_arg.argument.name  # type: ignore[union-attr]
        outs, made, result = [self_name], "", self_name
    impl = f"{kernel.cpp_namespace}::{class_name}::{kernel.kernel}"
    return f"{sig.defn()} {{\n{made}  {impl}({', '.join([*args, *outs])});\n  return {result};\n}}\n"


def out_inplace_wrapper(f: NativeFunction, g: NativeFunctionsGroup, index: BackendIndex, release: Release) -> str:
    """The out=/in-place wrapper: call the functional wrapper, copy its result into the outputs."""
    kind = f.func.kind()
    if kind is SchemaKind.inplace:
        copy = "at::_copy_from"
    elif kind is SchemaKind.out:
        copy = "at::_copy_from_and_resize"
    else:
        raise ValueError(f"{f.func.name}: only out= and in-place variants get a generated wrapper")
    spelling = release.cpp_spelling
    sig = wrapper_signature(f, index, release=release)
    name = sig.name()
    tmp = f"{name}_tmp"
    names = cpp.return_names(f.func)
    if len(names) > 1:
        updates = "\n  ".join(f"{copy}(std::get<{i}>({tmp}), {n});" for i, n in enumerate(names))
        returns = f"{sig.returns_type().cpp_type(spelling)}({', '.join(names)})"
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
    functional = wrapper_signature(g.functional, index, release=release)
    exprs = ", ".join(call_arguments(sig.arguments(), functional.arguments(), spelling))
    return (f"{sig.defn(name=name)} {{\n  auto {tmp} = {functional.name()}({exprs});\n  {updates}\n"
            f"  return {returns};\n}}\n")


def call_arguments(bindings: Sequence[Binding], goals: Sequence[Binding], spelling: CppSpelling) -> list[str]:
    """translate()'s expressions for a call, without translate() when every goal has a binding of its exact
    type (translate() answers those by the binding's name first): the common case of a wrapper calling a
    sibling variant, or a lazy kernel calling the meta kernel."""
    names = {b.nctype: b.name for b in bindings}
    direct = [names[g.nctype] for g in goals if g.nctype in names]
    if len(direct) == len(goals):
        return direct
    return [e.expr for e in translate(bindings, goals, spelling=spelling)]


def _functions(g: NativeFunction | NativeFunctionsGroup) -> list[tuple[NativeFunction, NativeFunctionsGroup | None]]:
    if isinstance(g, NativeFunction):
        return [(g, None)]
    return [(f, g) for f in g.functions()]


def _structured_group(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex) -> NativeFunctionsGroup | None:
    """g when its kernel is structured (only --experimental makes an external kernel so)."""
    if not isinstance(g, NativeFunctionsGroup) or not g.structured:
        return None
    kernel = index.get_kernel(g)
    return g if kernel is not None and kernel.structured else None


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per op and backend: frozen.PER_OP_AND_KEY_MEMO says why the bound fits
def anonymous_definitions(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex,
                          class_name: str, release: Release, *, experimental: bool) -> tuple[str, ...]:
    """The wrappers of one group, in g.functions() order."""
    group_of = _structured_group(g, index) if experimental else None
    if group_of is not None:
        return tuple(w for f in group_of.functions()
                     if (w := compute_structured_wrapper(f, group_of, index, release, rocm=False,
                                                         external_class=class_name)) is not None)
    out = []
    for f, group in _functions(g):
        kind = _registered(f, group, index, experimental=experimental)
        if kind == "wrapper" and group is not None:  # always: a wrapper is around the group's functional kernel
            out.append(out_inplace_wrapper(f, group, index, release))
        elif kind == "out call" and group is not None and (kernel := index.get_kernel(group.out)) is not None:
            out.append(out_call(f, group, index, class_name, kernel, release))  # (always: gets_out_call holds)
        elif kind is not None:
            text = compute_wrapper(f, index, release=release, class_method_name=class_name)
            if text is not None:
                out.append(text)
    return tuple(out)


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per op and backend: frozen.PER_OP_AND_KEY_MEMO says why the bound fits
def registrations(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex,
                  *, experimental: bool, release: Release) -> tuple[str, ...]:
    """The m.impl lines of one group."""
    group_of = _structured_group(g, index) if experimental else None
    if group_of is not None:
        return tuple(r for f in group_of.functions() if (r := compute_structured_registration(f, index, release)) is not None)
    return tuple(f'm.impl("{f.func.name}",\nTORCH_FN({wrapper_name(f, index, release)}));\n'
                 for f, group in _functions(g) if _registered(f, group, index, experimental=experimental) is not None)
