"""RegisterFunctionalization_N.cpp, FunctionalInverses.h, ViewMetaClasses.h/.cpp, CompositeViewCopyKernels.cpp."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...model import dispatch as dk
from ...model.native_function import NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup
from ...pieces.dest.functionalization import (
    FunctionalizationError,
    Grouped,
    compute_composite_functional_kernel,
    compute_composite_out_kernel,
    compute_functionalization_definitions,
    compute_functionalization_registrations,
    compute_view_copy_kernel,
    compute_view_inverse_declaration,
    compute_view_meta_declarations,
    compute_view_meta_implementations,
)
from ..plan import Env, PlanError, shard_envs, shard_keys
from .context import GenContext, Part
from .deferred import Deferred, computed, failed, values
from .narrow import index_flags, narrow_index

REGISTER_FUNCTIONALIZATION_SHARDS = 4

T = TypeVar("T")
_SHARDED_KEYS = frozenset({"ops_headers", "func_definitions", "func_registrations",
                           "func_add_back_views_definitions", "func_add_back_views_registrations"})


def _pair(root: str) -> list[str]:
    return [f"#include <ATen/ops/{root}_native.h>", f"#include <ATen/ops/{root}_ops.h>"]


def op_headers(g: Grouped) -> list[str]:
    """The per-op headers a functionalization kernel of g includes."""
    if isinstance(g, NativeFunctionsViewGroup):
        fs = [g.view, g.view_copy]
    elif isinstance(g, NativeFunctionsGroup):
        fs = [g.functional, g.out, g.inplace, g.mutable]
    else:
        fs = [g]
    return [h for f in fs if f is not None for h in _pair(f.root_name)]


def functionalization_groups(ctx: GenContext) -> list[Grouped]:
    """Groups, then view groups, then the ops in neither (gen.py's all_groups)."""
    groups: list[NativeFunctionsGroup | NativeFunctionsViewGroup] = [*ctx.structured_groups, *ctx.view_groups]
    grouped = {f.func.name for g in groups for f in g.functions()}
    return [*groups, *(f for f in ctx.native_functions if f.func.name not in grouped)]


def _functionalization_env(ctx: GenContext) -> Callable[[Grouped], dict[str, list[str]]]:
    cia = ctx.backend_index(dk.CIA)
    release = ctx.options.release

    def env(g: Grouped) -> dict[str, list[str]]:
        if not ctx.selection.include_all_operators:  # a selective (mobile) build has no functionalization kernels
            return {"ops_headers": op_headers(g), "func_definitions": [], "func_registrations": []}
        try:
            return {"ops_headers": op_headers(g),
                    "func_definitions": list(compute_functionalization_definitions(g, release)),
                    "func_registrations": compute_functionalization_registrations(g, narrow_index(cia, g), release)}
        except FunctionalizationError as exc:
            raise PlanError(str(exc)) from exc
    return env


def _functionalization_family(ctx: GenContext) -> str:
    return f"register-functionalization:{index_flags(ctx.backend_index(dk.CIA))}"


def register_functionalization_keys(ctx: GenContext) -> Callable[[int], Callable[[], str] | None] | None:
    """The keys of the RegisterFunctionalization files (plan.sharded's keys; None without a memo)."""
    if ctx.contributions is None:
        return None
    family, env = _functionalization_family(ctx), _functionalization_env(ctx)
    groups: list[list[Grouped]] = []

    def all_groups() -> list[Grouped]:
        if not groups:
            groups.append(functionalization_groups(ctx))
        return groups[0]
    return shard_keys(REGISTER_FUNCTIONALIZATION_SHARDS, all_groups, lambda g: g.root_name,
                      lambda i, gs: ctx.parts_key(f"RegisterFunctionalization:{i}", (family, gs, env)))


def register_functionalization_shards(ctx: GenContext) -> list[dict]:
    groups = functionalization_groups(ctx)
    values = ctx.per_items(_functionalization_family(ctx), groups, _functionalization_env(ctx))
    return shard_envs(zip(groups, values, strict=True), key_fn=lambda pair: pair[0].root_name,
                      env_fn=lambda pair: pair[1],
                      num_shards=REGISTER_FUNCTIONALIZATION_SHARDS, sharded_keys=_SHARDED_KEYS)


def _guard(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except FunctionalizationError as exc:
        raise PlanError(str(exc)) from exc


def _guarded(compute: Callable[[NativeFunctionsViewGroup], list[str]]
             ) -> Callable[[NativeFunctionsViewGroup], Deferred[list[str]]]:
    """compute as a per-item contribution, its error deferred (deferred.py): keying a file never raises."""
    def guarded(g: NativeFunctionsViewGroup) -> Deferred[list[str]]:
        try:
            return computed(compute(g))
        except FunctionalizationError as exc:
            return failed(exc)
    return guarded


def _lines(found: list[Deferred[list[str]]]) -> list[str]:
    """The lines of _guarded's values, in order (PlanError at the first that failed)."""
    return [line for lines in values(found) for line in lines]


def _view_meta_groups(ctx: GenContext) -> tuple[NativeFunctionsViewGroup, ...]:
    return ctx.view_groups if ctx.selection.include_all_operators else ()


def functional_inverses_part(ctx: GenContext) -> Part:
    release = ctx.options.release
    return "view-inverse", ctx.view_groups, _guarded(lambda g: [
        d for d in (compute_view_inverse_declaration(g, release),) if d is not None])


def view_meta_declarations_part(ctx: GenContext) -> Part:
    release = ctx.options.release
    return "view-meta-declarations", _view_meta_groups(ctx), _guarded(
        lambda g: list(compute_view_meta_declarations(g, release)))


def view_meta_implementations_part(ctx: GenContext) -> Part:
    release = ctx.options.release
    return "view-meta-implementations", _view_meta_groups(ctx), _guarded(
        lambda g: list(compute_view_meta_implementations(g, release)))


def view_op_headers_part(ctx: GenContext) -> Part:
    return "view-op-headers", ctx.view_groups, op_headers


def functional_inverses_h(ctx: GenContext) -> Env:
    return {"view_inverse_declarations": _lines(ctx.per_items(*functional_inverses_part(ctx)))}


def view_meta_classes_h(ctx: GenContext) -> Env:
    return {"view_meta_declarations": _lines(ctx.per_items(*view_meta_declarations_part(ctx)))}


def view_meta_classes_cpp(ctx: GenContext) -> Env:
    implementations = _lines(ctx.per_items(*view_meta_implementations_part(ctx)))
    return {"view_meta_implementations": implementations,
            "op_headers": [h for headers in ctx.per_items(*view_op_headers_part(ctx)) for h in headers]}


def _ops_and_native(fs: list[NativeFunction], native: bool = True) -> str:
    return "\n".join(f"#include <ATen/ops/{f.root_name}_ops.h>" +
                     (f"\n#include <ATen/ops/{f.root_name}_native.h>" if native else "") for f in fs)


def composite_view_copy_kernels_cpp(ctx: GenContext) -> Env:
    index = ctx.backend_index(dk.CEA_NON_FUNCTIONAL)
    views = ctx.view_groups
    groups = ctx.structured_groups
    release = ctx.options.release
    headers = [_ops_and_native([g.view] if g.view_copy is None else [g.view, g.view_copy],
                               release.view_copy_kernels_by_backend_index) for g in views]
    natives = release.view_copy_kernels_include_group_natives
    spelling = release.cpp_spelling
    headers += [_ops_and_native([f for f in (g.inplace, g.mutable, g.functional)
                                 if f is not None and "generated" not in f.tags], natives) for g in groups]
    family = f"view-copy:{index_flags(index)}"
    return _guard(lambda: {
        "ops_headers": headers,
        "CompositeViewCopyKernel_Definitions": [
            d for g in views if (d := ctx.per_item(family, g, lambda g: compute_view_copy_kernel(
                g, narrow_index(index, g), release))) is not None],
        "GeneratedCompositeFunctional_Definitions": [
            d for g in groups if (d := ctx.per_item("composite-functional", g, lambda g: compute_composite_functional_kernel(
                g, spelling))) is not None],
        "GeneratedCompositeOut_Definitions": [
            d for g in groups if (d := ctx.per_item("composite-out", g, lambda g: compute_composite_out_kernel(
                g, spelling))) is not None],
    })
