"""Operators.h, MethodOperators.h (the at::_ops structs) and Operators_N.cpp (their definitions)."""

from __future__ import annotations

from ...model.native_function import Variant
from ..dest.dispatcher_calls import compute_operator_definition
from ..dest.functions import compute_operator_declaration
from ..plan import Env, shard_envs
from .context import GenContext


def method_operators_h(ctx: GenContext) -> Env:
    return {"MethodOperators_includes": [],
            "MethodOperators_declarations": [compute_operator_declaration(f) for f in ctx.native_functions
                                             if Variant.method in f.variants]}


def operators_h(ctx: GenContext) -> Env:
    return {"Operators_includes": ["#include <ATen/MethodOperators.h>"],
            "Operators_declarations": [compute_operator_declaration(f) for f in ctx.native_functions
                                       if Variant.method not in f.variants]}


OPERATORS_CPP_SHARDS = 5


def operators_cpp_shards(ctx: GenContext) -> list[dict]:
    return shard_envs(
        ctx.native_functions, key_fn=lambda f: f.root_name,
        env_fn=lambda f: {"operator_headers": [f"#include <ATen/ops/{f.root_name}.h>"],
                          "definitions": [compute_operator_definition(f)]},
        num_shards=OPERATORS_CPP_SHARDS, base_env={"static_dispatch_extra_headers": []},
        sharded_keys=frozenset({"operator_headers", "definitions", "static_dispatch_extra_headers"}))
