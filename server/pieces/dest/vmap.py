"""VmapGeneratedPlumbing.h: for each op a functorch batching template that unwraps batched tensors at
the current vmap level, calls the batch rule and wraps the results again."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable
from functools import lru_cache

from ...frozen import PER_OP_MEMO
from ...model.native_function import NativeFunction
from ...model.schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Return, SchemaKind, Type
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api.signatures import dispatcher_signature

CUR_LEVEL = "cur_level"
RESULTS = "results"


def is_tensor(t: Type) -> bool:
    return isinstance(t, BaseType) and t.name is BaseTy.Tensor


def is_optional_tensor(t: Type) -> bool:
    return isinstance(t, OptionalType) and is_tensor(t.elem)


def is_tensor_list(t: Type) -> bool:
    return isinstance(t, ListType) and is_tensor(t.elem)


def _unwrap_tensor(name: str, structured_binding: bool) -> list[str]:
    if not structured_binding:
        return [f"Tensor {name}_value;", f"optional<int64_t> {name}_bdim;",
                f"std::tie({name}_value, {name}_bdim) = unwrapTensorAtLevel({name}, {CUR_LEVEL});"]
    return [f"auto [{name}_value, {name}_bdim] = unwrapTensorAtLevel({name}, {CUR_LEVEL});"]


def _unwrap_optional_tensor(name: str, structured_binding: bool) -> list[str]:
    std = "std::" if structured_binding else ""
    return [f"{std}optional<Tensor> {name}_value;", f"{std}optional<int64_t> {name}_bdim;", f"if ({name}) {{",
            f"    std::tie({name}_value, {name}_bdim) = unwrapTensorAtLevel({name}.value(), {CUR_LEVEL});", "}"]


def gen_unwraps(args: tuple[Argument, ...], structured_binding: bool) -> tuple[str, list[str]]:
    """The code unwrapping tensors (then optional tensors) and the batch rule's arguments
    (Release.vmap_unwraps_by_structured_binding)."""
    tensors = [a.name for a in args if is_tensor(a.type)]
    optionals = [a.name for a in args if is_optional_tensor(a.type)]
    lines = [line for n in tensors for line in _unwrap_tensor(n, structured_binding)]
    lines += [line for n in optionals for line in _unwrap_optional_tensor(n, structured_binding)]
    unwrapped: list[str] = []
    for a in args:
        unwrapped += [f"{a.name}_value", f"{a.name}_bdim"] if a.name in tensors or a.name in optionals else [a.name]
    return "\n".join(lines), unwrapped


def gen_case_where_all_bdims_are_none(f: NativeFunction, spelling: CppSpelling) -> str:
    schema = f.func
    conditions = [f"!isBatchedAtLevel({a.name}, {CUR_LEVEL})" for a in schema.arguments.flat_all
                  if a.type.is_tensor_like()]
    args = ", ".join(b.name for b in dispatcher_signature(f, spelling=spelling).arguments())
    return f"""\
if ({" && ".join(conditions)}) {{
  return at::_ops::{schema.name.unambiguous_name()}::call({args});
}}"""


def gen_returns(returns: tuple[Return, ...]) -> str:
    idx = 0
    wrapped = []
    for r in returns:
        if is_tensor(r.type) or is_tensor_list(r.type):
            make = "makeBatched" if is_tensor(r.type) else "makeBatchedVector"
            wrapped.append(f"{make}(std::get<{idx}>({RESULTS}), std::get<{idx + 1}>({RESULTS}), {CUR_LEVEL})")
            idx += 2
        else:
            wrapped.append(f"std::get<{idx}>({RESULTS})")
            idx += 1
    if len(wrapped) == 1:
        return f"return {wrapped[0]};"
    return f"return std::make_tuple({', '.join(wrapped)});"


def _accepts_tensor(schema: FunctionSchema) -> bool:
    return any(a.type.is_tensor_like() for a in schema.arguments.flat_all)


def _is_mutated(a: Argument) -> bool:
    return a.annotation is not None and a.annotation.is_write


def _plumbing(f: NativeFunction, check_name: str, tail: Callable[[str], str], release: Release) -> str:
    """The shared shape of the three kinds of plumbing; `tail(batch rule arguments)` calls it and returns."""
    schema = f.func
    unwraps, unwrapped = gen_unwraps(schema.arguments.flat_all, release.vmap_unwraps_by_structured_binding)
    name = schema.name.unambiguous_name() + "_generated_plumbing"
    check = (f'vmap_check_escaped(maybe_layer, "{check_name}");' if release.vmap_checks_escaped_layer
             else "TORCH_INTERNAL_ASSERT(maybe_layer.has_value());")
    return f"""\
template <typename batch_rule_t, batch_rule_t batch_rule>
{dispatcher_signature(f, spelling=release.cpp_spelling).decl(name=name)} {{
  c10::impl::ExcludeDispatchKeyGuard guard(DispatchKey::FuncTorchBatched);
  auto maybe_layer = maybeCurrentDynamicLayer();
  {check}
  int64_t {CUR_LEVEL} = maybe_layer->layerId();
{textwrap.indent(gen_case_where_all_bdims_are_none(f, release.cpp_spelling), "  ")}
{textwrap.indent(unwraps, "  ")}
{tail(", ".join(unwrapped))}
}}"""


def gen_vmap_inplace_plumbing(f: NativeFunction, release: Release) -> str | None:
    """In-place ops whose first argument is the only one written, returning tensors."""
    args = f.func.arguments.flat_all
    returns = f.func.returns
    if not _is_mutated(args[0]) or sum(1 for a in args if _is_mutated(a)) != 1:
        return None
    if not returns or not all(is_tensor(r.type) or is_tensor_list(r.type) for r in returns):
        return None
    if not _accepts_tensor(f.func):
        return None
    return _plumbing(f, "gen_vmap_inplace_plumbing", lambda a: f"  batch_rule({a});\n  return {args[0].name};",
                     release)


@lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_vmap_plumbing(f: NativeFunction, release: Release) -> str | None:
    """The op's plumbing template, or None for the kinds functorch does not generate."""
    schema = f.func
    if not _accepts_tensor(schema):
        return None
    if not schema.returns:
        return _plumbing(f, "gen_vmap_plumbing_no_returns", lambda a: f"  batch_rule({a});", release)
    if not all(r.type.is_tensor_like() for r in schema.returns) and \
            schema.name.unambiguous_name() not in release.vmap_symint_return_overrides:
        return None
    if "inplace_view" in f.tags:
        return None
    kind = schema.kind()
    if kind is SchemaKind.inplace:
        return gen_vmap_inplace_plumbing(f, release)
    if kind is not SchemaKind.functional:
        return None
    returns = gen_returns(schema.returns)
    return _plumbing(f, "gen_vmap_plumbing", lambda a: f"  auto {RESULTS} = batch_rule({a});\n  {returns}", release)


def vmap_generated_plumbing_h(plumbing: Iterable[str | None]) -> str:
    """The file of the ops' plumbing (compute_vmap_plumbing's, None for an op with none), in order."""
    body = "\n".join(p for p in plumbing if p is not None)
    return f"""
#pragma once
#include <ATen/Operators.h>
#include <ATen/functorch/PlumbingHelper.h>

namespace at {{ namespace functorch {{

{body}

}}}} // namespace at::functorch
"""
