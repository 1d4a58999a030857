"""The NativeFunctions torchgen adds by itself: missing functional and out= variants.

Pure functions of NativeFunctions; the 'generated' functions they return are
exactly those torchgen 2.13's native_function_generation builds.
"""

from __future__ import annotations

from ..releases import Release
from . import dispatch as dk
from .native_function import BackendMetadata, DeviceCheckType, NativeFunction, Variant
from .schema import (
    TENSOR,
    Annotation,
    Argument,
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaKind,
)

# Lists torchgen keeps of existing ops that break its grouping rules.
OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY = frozenset({
    "adaptive_avg_pool3d_backward.grad_input",
    "_slow_conv2d_backward.grad_input",
})
MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = frozenset({"_cummax_helper", "_cummin_helper"})
# (The functional ops that cannot get one are the release's: Release.functional_ops_without_out_variant.)
INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY = frozenset({"polygamma_"})
# Mutable ops that break grouping, which functionalization leaves alone too (with the release's own list).
_GROUPING_EXCEPTIONS = (OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY | MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
                        | INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY)

# The alias letters torchgen hands out, in order (string.ascii_lowercase, whose module a check need not load).
_ALIAS_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def skips_functionalization(name: str, release: Release) -> bool:
    """Whether functionalization leaves the mutable op `name` (name.overload, or the bare name) alone."""
    return name in _GROUPING_EXCEPTIONS or name in release.skipped_by_functionalization


def writes_an_argument(f: NativeFunction) -> bool:
    return any(a.annotation is not None and a.annotation.is_write for a in f.func.arguments.flat_all)


def functionalization_refuses(f: NativeFunction, release: Release) -> bool:
    """Whether gen.py's functionalization fails on `f` when it is in no group: an op that writes an argument
    needs a functional variant to be lowered to, or a CompositeImplicitAutograd kernel (unless listed)."""
    return (not f.has_composite_implicit_autograd_kernel and writes_an_argument(f)
            and not skips_functionalization(str(f.func.name), release)
            and not skips_functionalization(str(f.func.name.name), release))


def expected_out_overload(overload: str) -> str:
    return f"{overload}_out" if overload else "out"


class GenerationError(ValueError):
    """The schema cannot be turned into the requested variant."""


def out_args_from_returns(func: FunctionSchema) -> tuple[tuple[Return, ...], tuple[Argument, ...]]:
    """Out arguments for the tensor-like returns, with fresh alias letters, and the new returns."""
    if any(r.is_write for r in func.returns):
        raise GenerationError("a mutable schema kind should not return its mutable arguments")
    if not any(r.type.is_tensor_like() for r in func.returns):
        raise GenerationError("there is no tensor-like return to turn into an out argument")
    used = {x for a in func.arguments.flat_all if a.annotation is not None for x in a.annotation.alias_set}
    free = [c for c in _ALIAS_LETTERS if c not in used]
    all_plain_tensors = all(r.type == TENSOR for r in func.returns)
    outs: list[Argument] = []
    returns: list[Return] = []
    for i, r in enumerate(func.returns):
        if r.type.is_tensor_like():
            out = Argument("out" if len(func.returns) == 1 else f"out{i}", r.type, None, Annotation((free[i],), True, ()))
            outs.append(out)
            if all_plain_tensors:
                returns.append(Return(None, out.type, out.annotation))
        else:
            returns.append(r)
    return tuple(returns), tuple(outs)


def out_signature(func: FunctionSchema) -> FunctionSchema:
    kind = func.kind()
    if kind is SchemaKind.inplace:
        self_arg = func.arguments.self_arg
        if self_arg is None:
            raise GenerationError("an in-place op without self")
        out = Argument("out", self_arg.argument.type, None, self_arg.argument.annotation)
        name = func.name.remove_inplace().with_overload(expected_out_overload(func.name.overload_name))
        return FunctionSchema(name, func.arguments.remove_self_annotation().with_out_args((out,)), func.returns)
    if kind is SchemaKind.mutable:
        returns, outs = out_args_from_returns(func)
        name = func.name.remove_inplace().with_overload(expected_out_overload(func.name.overload_name))
        return FunctionSchema(name, func.arguments.with_out_args(outs), returns)
    if kind is SchemaKind.functional:
        returns, outs = out_args_from_returns(func)
        name = func.name.with_overload(expected_out_overload(func.name.overload_name))
        return FunctionSchema(name, func.arguments.signature().with_out_args(outs), returns)
    raise GenerationError("out= variants are generated only from in-place, mutable or functional variants")


def functional_signature(func: FunctionSchema) -> FunctionSchema:
    kind = func.kind()
    if kind is SchemaKind.functional:
        raise GenerationError("the op is already functional")
    base = func.name.name
    name = OperatorName(BaseOperatorName(base.base, False, base.dunder_method,
                                         functional_overload=kind is SchemaKind.mutable), func.name.overload_name)
    return func.signature(keep_return_names=True).with_name(name)


def generate_function(f: NativeFunction, kind: SchemaKind, release: Release
                      ) -> tuple[NativeFunction, BackendMetadata]:
    """The generated variant of `f` of the given kind, and its CompositeExplicitAutograd kernel (in `release`)."""
    func = out_signature(f.func) if kind is SchemaKind.out else functional_signature(f.func)
    kernel = func.name.unambiguous_name() if func.kind() is SchemaKind.out else str(func.name.name)
    if f.func.has_symint(returns_too=release.cpp_spelling.symint_returns_follow_signature):
        kernel += "_symint"
    tags = {"generated"} | (f.tags & release.generated_variants_keep_tags)
    if release.generated_variants_tagged_by_kind and func.is_out_fn():
        tags.add("out")
    if release.generated_variants_tagged_by_kind and func.name.name.inplace:
        tags.add("inplace")
    generated = NativeFunction(
        namespace=f.namespace,
        func=func,
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        device_guard=False,
        device_check=DeviceCheckType.NoCheck,
        python_module=None,
        category_override=None,
        variants=frozenset({Variant.function}),
        manual_kernel_registration=False,
        manual_cpp_binding=False,
        autogen=(),
        ufunc_inner_loop=(),
        structured=False,
        structured_delegate=None,
        structured_inherits=None,
        precomputed=None,
        cpp_no_default_args=frozenset(),
        is_abstract=f.is_abstract,
        has_composite_implicit_autograd_kernel=False,
        has_composite_implicit_autograd_nested_tensor_kernel=False,
        has_composite_explicit_autograd_kernel=True,
        has_composite_explicit_autograd_non_functional_kernel=False,
        tags=frozenset(tags),
        source=f.source,
    )
    return generated, BackendMetadata(kernel, False, "at::native")


GENERATED_KEY = dk.CEA
