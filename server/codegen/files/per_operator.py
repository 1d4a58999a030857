"""--per-operator-headers: the ATen/ops/ folder and the aggregate headers that include it.

For every root name (the op name without overload or trailing underscore) gen.py writes
ops/<name>_ops.h (at::_ops structs), ops/<name>.h (at::<name> functions), ops/<name>_native.h
(kernel declarations), ops/<name>_meta.h (structured meta classes, if any), and for each key
with a <Key>Functions.h, ops/<name>_<key>_dispatch.h when that key has declarations for it.
Functions.h, Operators.h, NativeFunctions.h, NativeMetaFunctions.h, MethodOperators.h and
<Key>Functions_inl.h then only include these files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

from ...model import dispatch as dk
from ...model.native_function import NativeFunction, NativeFunctionsGroup, Variant
from ...pieces.dest.functions import compute_function, compute_operator_declaration, in_functions_h, symint_template_form
from ...pieces.dest.native_declarations import compute_meta_function_declaration, key_export_macro
from ...pieces.dest.register_namespaced import group_pieces, has_pieces, with_export_macro
from ...pieces.dest.static_dispatch import static_dispatch_ops_header
from ...releases.profile import CppSpelling
from ..plan import Env, Manager, PlannedFile, single
from .context import GenContext
from .narrow import index_flags, narrow_index
from .native import native_function_declarations
from .operators import static_backends_of

Grouped = NativeFunction | NativeFunctionsGroup


@dataclass(frozen=True)
class RootNames:
    """The ops and op groups of each root name, in order of first appearance."""

    functions: dict[str, tuple[NativeFunction, ...]]
    groups: dict[str, tuple[Grouped, ...]]

    @staticmethod
    def of(ctx: GenContext) -> RootNames:
        functions: dict[str, list[NativeFunction]] = {}
        for f in ctx.native_functions:
            functions.setdefault(f.root_name, []).append(f)
        groups: dict[str, list[Grouped]] = {}
        for g in ctx.groups:
            groups.setdefault(g.root_name, []).append(g)
        return RootNames({k: tuple(v) for k, v in functions.items()}, {k: tuple(v) for k, v in groups.items()})

    @cached_property
    def sorted_names(self) -> list[str]:
        return sorted(self.functions)

    def structured(self, name: str) -> list[NativeFunctionsGroup]:
        return [g for g in self.groups.get(name, ()) if isinstance(g, NativeFunctionsGroup) and g.structured]


def _ops_h(static_constexpr: bool, spelling: CppSpelling, fs: tuple[NativeFunction, ...]) -> Env:
    return {"declarations": [compute_operator_declaration(f, static_constexpr, spelling) for f in fs]}


def _function_h(ctx: GenContext, name: str, fs: tuple[NativeFunction, ...]) -> Env:
    # Static dispatch headers: one entry (empty without --static-dispatch-backend) per op bound by codegen.
    headers = [static_dispatch_ops_header(f, static_backends_of(ctx, f)) for f in fs]
    return {"static_dispatch_ops_headers": [h for h in headers if h is not None],
            "operator_includes": f"#include <ATen/ops/{name}_ops.h>",
            "function_definitions": [compute_function(f, symint_template_form(ctx.options.release),
                                                      ctx.options.release.cpp_default_qualifies_memory_format,
                                                      ctx.options.release.cpp_spelling)
                                     for f in fs if in_functions_h(f, ctx.options.release)]}


def _meta_h(structured: list[NativeFunctionsGroup], spelling: CppSpelling) -> Env:
    return {"meta_function_declarations": [d for g in structured
                                           if (d := compute_meta_function_declaration(g, spelling)) is not None]}


def _native_h(ctx: GenContext, name: str, groups: tuple[Grouped, ...], is_structured: bool) -> Env:
    return {"extra_includes": f"#include <ATen/ops/{name}_meta.h>" if is_structured else [],
            "native_function_declarations": native_function_declarations(ctx, groups)}


def dispatch_declarations(ctx: GenContext, key: dk.DispatchKey, groups: tuple[Grouped, ...]) -> list[str]:
    index = ctx.backend_index(key)
    macro = key_export_macro(key, ctx.options.release)
    return [with_export_macro(d, macro)
            for g in groups
            for d in group_pieces(g, narrow_index(index, g), release=ctx.options.release,
                                  rocm=ctx.options.rocm).namespaced_declarations]


def items_key(ctx: GenContext, what: str, items: Sequence[object]) -> Callable[[], str] | None:
    """The key of a file made from these items alone (and the run's constants, and `what` names every other
    thing of the model it reads): None without fingerprints (no memo)."""
    memo = ctx.contributions
    if memo is None:
        return None
    of = memo.fingerprints.of
    return lambda: hashlib.sha1(what.encode() + b"\0" + b"".join(map(of, items))).hexdigest()


def plan_ops_files(ctx: GenContext, roots: RootNames) -> list[PlannedFile]:
    out: list[PlannedFile] = []
    static_constexpr, spelling = ctx.options.release.operator_names_static_constexpr, ctx.options.release.cpp_spelling
    # (what the files read of the indices besides their own items' kernels)
    static = ",".join(index_flags(ctx.backend_index(key)) for key in ctx.static_dispatch_backends)
    declared = ctx.declared_flags
    for name, fs in roots.functions.items():
        groups = roots.groups.get(name, ())
        structured = roots.structured(name)
        out.append(single(Manager.ops, f"{name}_ops.h", partial(_ops_h, static_constexpr, spelling, fs), template="Operator.h",
                          key=items_key(ctx, f"ops:{name}", fs)))
        out.append(single(Manager.ops, f"{name}.h", partial(_function_h, ctx, name, fs),
                          template="Function.h", key=items_key(ctx, f"function:{name}:{static}", fs)))
        if structured:
            out.append(single(Manager.ops, f"{name}_meta.h", partial(_meta_h, structured, spelling),
                              template="NativeMetaFunction.h", key=items_key(ctx, f"meta:{name}", structured)))
        out.append(single(Manager.ops, f"{name}_native.h",
                          partial(_native_h, ctx, name, groups, bool(structured)),
                          template="NativeFunction.h", key=items_key(ctx, f"native:{name}:{declared}", groups)))
    return out


def aggregate_header(roots: RootNames, category: str, suffix: str) -> Env:
    return {f"{category}_includes": [f"#include <ATen/ops/{name}{suffix}.h>" for name in roots.sorted_names],
            f"{category}_declarations": []}


def method_operators_h(roots: RootNames) -> Env:
    return {"MethodOperators_includes": sorted(
        f"#include <ATen/ops/{name}_ops.h>" for name, fs in roots.functions.items()
        if any(Variant.method in f.variants for f in fs)),
        "MethodOperators_declarations": []}


def dispatch_names(ctx: GenContext, roots: RootNames, key: dk.DispatchKey) -> list[str]:
    """The root names that get an ops/<name>_<key>_dispatch.h (those with declarations under the key; decided
    without building them, so that planning stays cheap and the building happens in the writers)."""
    index = ctx.backend_index(key)
    family = f"has-pieces:{key}:{index_flags(index)}"
    found = dict(zip(map(id, ctx.groups), ctx.per_items(family, ctx.groups, lambda g: has_pieces(
        g, narrow_index(index, g))), strict=True))
    return [name for name in roots.functions if any(found[id(g)] for g in roots.groups.get(name, ()))]


def plan_dispatch_files(ctx: GenContext, roots: RootNames, key: dk.DispatchKey, names: list[str]
                        ) -> list[PlannedFile]:
    """names: dispatch_names(ctx, roots, key)."""
    namespace = str(key).lower()

    def build(name: str) -> Env:
        return {"dispatch_namespace": namespace,
                "dispatch_namespaced_declarations": dispatch_declarations(ctx, key, roots.groups.get(name, ()))}

    flags = index_flags(ctx.backend_index(key))
    return [single(Manager.ops, f"{name}_{namespace}_dispatch.h", partial(build, name),
                   template="DispatchKeyFunction.h", shares=f"Register{key}.cpp",  # the same group pieces
                   key=items_key(ctx, f"dispatch:{name}:{key}:{flags}", roots.groups.get(name, ())))
            for name in names]


def dispatch_key_functions_inl_h(key: dk.DispatchKey, names: list[str]) -> Env:
    """names: dispatch_names(ctx, roots, key)."""
    namespace = str(key).lower()
    return {"dispatch_namespace": namespace,
            "DispatchKeyFunctions_inl_includes": [f"#include <ATen/ops/{name}_{namespace}_dispatch.h>"
                                                  for name in sorted(names)],
            "dispatch_namespaced_declarations": []}
