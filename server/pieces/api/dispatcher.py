"""The dispatcher API: schema order, no defaults, no TensorOptions packing, SymInt by default."""

from __future__ import annotations

from ...model.schema import Argument, FunctionSchema, Return
from . import cpp
from .types import ApiOptions, Binding, CType

name = cpp.name


def jit_arguments(func: FunctionSchema) -> list[Argument]:
    """Every schema argument in schema order, tensor options unpacked."""
    return list(func.arguments.flat_all)


def argument(a: Argument, *, options: ApiOptions, symint: bool = True,
             remove_non_owning_ref_types: bool = False, owning_tensors_by_value: bool = False) -> Binding:
    nctype = cpp.argumenttype_type(a.type, mutable=a.is_write, binds=a.name, options=options, symint=symint,
                                   remove_non_owning_ref_types=remove_non_owning_ref_types,
                                   owning_tensors_by_value=owning_tensors_by_value)
    return Binding(a.name, nctype, a, options.spelling)


def arguments(func: FunctionSchema, *, options: ApiOptions, symint: bool = True) -> list[Binding]:
    return [argument(a, options=options, symint=symint) for a in jit_arguments(func)]


def returns_type(rs: tuple[Return, ...], *, options: ApiOptions, symint: bool = True) -> CType:
    return cpp.returns_type(rs, options=options, symint=symint)
