"""Structured kernels: the arguments of TORCH_META_FUNC and TORCH_IMPL_FUNC."""

from __future__ import annotations

from ...model.native_function import NativeFunctionsGroup
from ...model.schema import (
    TENSOR,
    Argument,
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)
from ...releases.profile import CppSpelling
from . import cpp
from .types import (
    ArgName,
    ArrayRefCType,
    BaseCType,
    Binding,
    ConstRefCType,
    NamedCType,
    OptionalCType,
    intArrayRefT,
    iOptTensorListRefT,
    iTensorListRefT,
    optionalIntArrayRefT,
    optionalScalarRefT,
    optionalTensorRefT,
    scalarT,
    tensorT,
)


def argumenttype_type(t: Type, *, mutable: bool, binds: ArgName) -> NamedCType:
    value = cpp.valuetype_type(t, binds=binds, symint=False)
    if value is not None:
        return value
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return NamedCType(binds, ConstRefCType(tensorT))
        if t.name is BaseTy.Scalar:
            return NamedCType(binds, ConstRefCType(scalarT))
        raise ValueError(f"base type should have been a value type: {t}")
    if isinstance(t, OptionalType):
        if t.elem == TENSOR:
            return NamedCType(binds, optionalTensorRefT)
        if t.elem == BaseType(BaseTy.Scalar):
            return NamedCType(binds, optionalScalarRefT)
        if isinstance(t.elem, ListType) and str(t.elem.elem) == "int":
            return NamedCType(binds, optionalIntArrayRefT)
        return NamedCType(binds, OptionalCType(argumenttype_type(t.elem, mutable=mutable, binds=binds).type))
    if isinstance(t, ListType):
        if t.elem == TENSOR:
            return NamedCType(binds, ConstRefCType(iTensorListRefT))
        if t.elem == OptionalType(TENSOR):
            return NamedCType(binds, iOptTensorListRefT)
        if str(t.elem) == "int":
            return NamedCType(binds, intArrayRefT)
        if str(t.elem) == "Dimname":  # named tensors, until torch 2.12
            return NamedCType(binds, BaseCType("at::DimnameList"))
        return NamedCType(binds, ArrayRefCType(argumenttype_type(t.elem, mutable=mutable, binds=binds).type))
    raise ValueError(f"unrecognized type {t!r}")


def argument_type(a: Argument, *, binds: ArgName) -> NamedCType:
    return argumenttype_type(a.type, mutable=a.is_write, binds=binds)


def argument(a: Argument | SelfArgument | TensorOptionsArguments, spelling: CppSpelling) -> list[Binding]:
    if isinstance(a, SelfArgument):
        a = a.argument
    if not isinstance(a, Argument):
        raise ValueError("structured kernels do not support TensorOptions")
    return [Binding(a.name, argument_type(a, binds=a.name), a, spelling)]


def _non_out(func: FunctionSchema) -> list[Argument | SelfArgument | TensorOptionsArguments]:
    return [*func.arguments.positional, *func.arguments.kwarg_only]


def impl_arguments(g: NativeFunctionsGroup, spelling: CppSpelling) -> list[Binding]:
    """TORCH_IMPL_FUNC: the inputs, with precomputed values in place of what they replace, then the outs."""
    out = g.out
    args: list[Argument | SelfArgument | TensorOptionsArguments] = []
    if out.precomputed:
        replace = dict(out.precomputed.replace)
        for a in _non_out(out.func):
            args.extend(replace[a.name] if isinstance(a, Argument) and a.name in replace else [a])
        args.extend(out.precomputed.add)
    else:
        args.extend(_non_out(out.func))
    args.extend(out.func.arguments.out)
    return [b for a in args for b in argument(a, spelling)]


def meta_arguments(g: NativeFunctionsGroup, spelling: CppSpelling) -> list[Binding]:
    return [b for a in _non_out(g.functional.func) for b in argument(a, spelling)]


def out_arguments(g: NativeFunctionsGroup, spelling: CppSpelling) -> list[Binding]:
    return [b for a in g.out.func.arguments.out for b in argument(a, spelling)]


def meta_name(g: NativeFunctionsGroup) -> str:
    """The meta class name: the functional variant's name with the overload joined by '_'."""
    return str(g.functional.func.name).replace(".", "_")
