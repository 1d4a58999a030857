"""Operators.h, MethodOperators.h (the at::_ops structs) and Operators_N.cpp (their definitions)."""

from __future__ import annotations

from collections.abc import Callable

from ...model.native_function import BackendIndex, NativeFunction, Variant
from ...pieces.dest.dispatcher_calls import compute_operator_definition
from ...pieces.dest.functions import compute_operator_declaration
from ...pieces.dest.static_dispatch import static_dispatch, static_dispatch_extra_headers
from ..plan import Env, shard_envs, shard_keys
from .context import GenContext, Part
from .narrow import index_flags, narrow_index


def operators_part(ctx: GenContext, methods: bool) -> Part:
    """The at::_ops declarations of MethodOperators.h (methods) or Operators.h (the others)."""
    static_constexpr, spelling = ctx.options.release.operator_names_static_constexpr, ctx.options.release.cpp_spelling
    fs = [f for f in ctx.native_functions if (Variant.method in f.variants) == methods]
    return "operator-declaration", fs, lambda f: compute_operator_declaration(f, static_constexpr, spelling)


def method_operators_h(ctx: GenContext) -> Env:
    return {"MethodOperators_includes": [], "MethodOperators_declarations": ctx.per_items(*operators_part(ctx, True))}


def operators_h(ctx: GenContext) -> Env:
    return {"Operators_includes": ["#include <ATen/MethodOperators.h>"],
            "Operators_declarations": ctx.per_items(*operators_part(ctx, False))}


OPERATORS_CPP_SHARDS = 5


def static_backends_of(ctx: GenContext, f: NativeFunction) -> tuple[BackendIndex, ...]:
    """The --static-dispatch-backend indices, narrowed to f (small, stable cache keys)."""
    return tuple(narrow_index(ctx.backend_index(key), f) for key in ctx.static_dispatch_backends)


def _definition(ctx: GenContext, f: NativeFunction) -> str:
    static_constexpr, spelling = ctx.options.release.operator_names_static_constexpr, ctx.options.release.cpp_spelling
    if not ctx.static_dispatch_backends:
        return compute_operator_definition(f, static_constexpr, spelling)
    return compute_operator_definition(f, static_constexpr, spelling,
                                       static_dispatch(f, static_backends_of(ctx, f), spelling))


def _operators_cpp_part(ctx: GenContext) -> Part:
    # (what a definition reads of the static dispatch indices besides f's kernels: their keys and flags)
    family = "operators-cpp:" + ",".join(index_flags(ctx.backend_index(key)) for key in ctx.static_dispatch_backends)
    return family, ctx.native_functions, lambda f: {"operator_headers": [f"#include <ATen/ops/{f.root_name}.h>"],
                                                    "definitions": [_definition(ctx, f)]}


def operators_cpp_keys(ctx: GenContext) -> Callable[[int], Callable[[], str] | None] | None:
    """The keys of the Operators.cpp files (plan.sharded's keys; None without a memo)."""
    if ctx.contributions is None:
        return None
    family, _, compute = _operators_cpp_part(ctx)
    base = repr(static_dispatch_extra_headers(ctx.static_dispatch_backends))
    return shard_keys(OPERATORS_CPP_SHARDS, lambda: ctx.native_functions, lambda f: f.root_name,
                      lambda i, fs: ctx.parts_key(f"Operators.cpp:{i}:{base}", (family, fs, compute)))


def operators_cpp_shards(ctx: GenContext) -> list[dict]:
    fs = ctx.native_functions
    envs = ctx.per_items(*_operators_cpp_part(ctx))
    return shard_envs(
        zip(fs, envs, strict=True), key_fn=lambda pair: pair[0].root_name, env_fn=lambda pair: pair[1],
        num_shards=OPERATORS_CPP_SHARDS,
        base_env={"static_dispatch_extra_headers": static_dispatch_extra_headers(ctx.static_dispatch_backends)},
        sharded_keys=frozenset({"operator_headers", "definitions", "static_dispatch_extra_headers"}))
