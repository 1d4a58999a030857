"""NativeFunctions.h (kernel declarations by namespace) and NativeMetaFunctions.h (structured meta classes)."""

from __future__ import annotations

from collections.abc import Sequence

from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...pieces.dest.native_declarations import (
    compute_meta_function_declaration,
    compute_native_function_declaration,
    merge_export_variants,
)
from ...pieces.dest.register_namespaced import DEFAULT_KERNEL_NAMESPACE
from ..plan import Env, PlanError
from .context import GenContext, Part
from .narrow import narrow_index


def namespace_prologue(namespace: str, max_level: int) -> tuple[str, str]:
    """`namespace a {` lines and their closing lines, for a::b::c (at most max_level levels)."""
    parts = namespace.split("::")
    if len(parts) > max_level:
        raise PlanError(f"Codegen doesn't support more than {max_level} level(s) of custom namespace. "
                        f"Got {namespace}.")
    return ("\n".join(f"namespace {p} {{" for p in parts),
            "\n".join(f"}} // namespace {p}" for p in reversed(parts)))


def namespaced_blocks(by_namespace: dict[str, list[str]], max_level: int, *, skip_empty: bool) -> list[str]:
    """Each namespace's (deduplicated) declarations wrapped in its namespaces, as lines."""
    lines: list[str] = []
    for namespace, decls in by_namespace.items():
        if skip_empty and not decls:
            continue
        prologue, epilogue = namespace_prologue(namespace, max_level)
        body = "\n".join(dict.fromkeys(decls))
        lines.extend(f"\n{prologue}\n{body}\n{epilogue}\n        ".split("\n"))
    return lines


def native_function_declarations(ctx: GenContext, groups: Sequence[NativeFunction | NativeFunctionsGroup] | None = None
                                 ) -> list[str]:
    """Kernel declarations of these groups (default: all) under every backend, by kernel namespace."""
    by_namespace: dict[str, list[str]] = {}
    for declared in ctx.per_items(*native_declarations_part(ctx, groups)):
        for namespace, decls in declared:
            by_namespace.setdefault(namespace, []).extend(decls)
    if ctx.options.release.device_family_kernel_exports:
        by_namespace = {namespace: merge_export_variants(decls) for namespace, decls in by_namespace.items()}
    return namespaced_blocks(by_namespace, 4, skip_empty=False)


def native_declarations_part(ctx: GenContext, groups: Sequence[NativeFunction | NativeFunctionsGroup] | None = None
                             ) -> Part:
    """Each group's kernel declarations under every index NativeFunctions.h walks."""
    indices = tuple(ctx.declared_indices.values())
    return f"native-declarations:{ctx.declared_flags}", ctx.groups if groups is None else groups, \
        lambda g: _declarations_of(ctx, g, indices)


def native_meta_part(ctx: GenContext) -> Part:
    return "native-meta", ctx.structured_groups, lambda g: compute_meta_function_declaration(
        g, ctx.options.release.cpp_spelling)


def _declarations_of(ctx: GenContext, g: NativeFunction | NativeFunctionsGroup, indices: Sequence[BackendIndex]
                     ) -> list[tuple[str, list[str]]]:
    """g's kernel declarations under each index in order, each with its kernel namespace."""
    out: list[tuple[str, list[str]]] = []
    namespaces = set()
    for index in indices:
        narrowed = narrow_index(index, g)
        if not narrowed.index:  # (no kernel of g's under this key, as under most: no declaration)
            out.append((DEFAULT_KERNEL_NAMESPACE, []))
            continue
        meta = narrowed.get_kernel(g)
        namespace = meta.cpp_namespace if meta is not None else DEFAULT_KERNEL_NAMESPACE
        if meta is not None:
            namespaces.add(namespace)
        if len(namespaces) > 1:
            raise PlanError(f"Codegen only supports one namespace per operator, got {sorted(namespaces)}")
        out.append((namespace, compute_native_function_declaration(g, narrowed, ctx.options.release)))
    return out


def native_functions_h(ctx: GenContext) -> Env:
    return {"NativeFunctions_includes": ["#include <ATen/NativeMetaFunctions.h>"],
            "NativeFunctions_declarations": native_function_declarations(ctx)}


def native_meta_functions_h(ctx: GenContext) -> Env:
    return {"NativeMetaFunctions_includes": [],
            "NativeMetaFunctions_declarations": [d for d in ctx.per_items(*native_meta_part(ctx)) if d is not None]}
