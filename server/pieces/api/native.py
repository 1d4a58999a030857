"""The native API: the signatures of in-tree kernels (at::native::foo)."""

from __future__ import annotations

from ...model.schema import Argument, FunctionSchema, Return, SelfArgument, TensorOptionsArguments, Type
from . import cpp
from .types import (
    ApiOptions,
    ArgName,
    Binding,
    ConstRefCType,
    CType,
    ListCType,
    MutRefCType,
    NamedCType,
    OptionalCType,
    boolT,
    deviceT,
    layoutT,
    scalarT,
    scalarTypeT,
    tensorT,
)


def name(func: FunctionSchema) -> str:
    text = str(func.name.name) + ("_out" if func.is_out_fn() else "")
    return text + (f"_{func.name.overload_name}" if func.name.overload_name else "")


def argumenttype_type(t: Type, *, mutable: bool, binds: ArgName, symint: bool, options: ApiOptions) -> NamedCType:
    text = str(t)
    if text == "Tensor?":
        optional = OptionalCType(tensorT)
        if mutable and not options.use_const_ref_for_mutable_tensors:
            return NamedCType(binds, MutRefCType(optional))
        return NamedCType(binds, ConstRefCType(optional))
    if text == "Tensor?[]":
        return NamedCType(binds, ConstRefCType(ListCType(OptionalCType(tensorT))))
    if text == "Scalar":
        return NamedCType(binds, ConstRefCType(scalarT))
    if text == "Scalar?":
        return NamedCType(binds, ConstRefCType(OptionalCType(scalarT)))
    return cpp.argumenttype_type(t, mutable=mutable, binds=binds, symint=symint, options=options)


_TENSOR_OPTION_PARTS = (("dtype", scalarTypeT), ("layout", layoutT), ("device", deviceT), ("pin_memory", boolT))


def argument(a: Argument | SelfArgument | TensorOptionsArguments, *, is_out: bool, symint: bool,
             options: ApiOptions) -> list[Binding]:
    # Kernels are defaulted (callers rely on it) except out= kernels, where no default fits.
    should_default = not is_out
    if isinstance(a, Argument):
        default = (cpp.default_expr(a.default, a.type, symint=symint, spelling=options.spelling)
                   if should_default and a.default is not None else None)
        nctype = argumenttype_type(a.type, mutable=a.is_write, binds=a.name, symint=symint, options=options)
        return [Binding(a.name, nctype, a, options.spelling, default)]
    if isinstance(a, SelfArgument):
        return argument(a.argument, is_out=is_out, symint=symint, options=options)
    default = "{}" if should_default else None
    return [Binding(part, NamedCType(part, OptionalCType(ctype)), a, options.spelling, default)
            for part, ctype in _TENSOR_OPTION_PARTS]


def arguments(func: FunctionSchema, *, symint: bool, options: ApiOptions) -> list[Binding]:
    args = [*func.arguments.positional, *func.arguments.kwarg_only, *func.arguments.out]
    return [b for a in args for b in argument(a, is_out=func.is_out_fn(), symint=symint, options=options)]


def returns_type(rs: tuple[Return, ...], *, options: ApiOptions, symint: bool) -> CType:
    return cpp.returns_type(rs, options=options, symint=symint)
