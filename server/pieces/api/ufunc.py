"""The calling conventions of ufunc codegen: dispatch stubs, CUDA functors and the inner-loop templates.

A ufunc op (an out= structured kernel with `ufunc_inner_loop`) gets its CPU and CUDA kernels
generated. Tensors travel inside the TensorIterator, so stubs take only the other arguments;
CUDA functors take some arguments in their constructor (widened to opmath_t) and the tensors
in operator(); the inner-loop template computes in a compute type chosen by the caller.
"""

from __future__ import annotations

from ...frozen import record
from ...model.native_function import NativeFunctionsGroup
from ...model.schema import Argument, BaseTy, BaseType, Type
from ...releases.profile import CppSpelling
from . import cpp, structured
from .types import ArgName, Binding, CType, NamedCType, opmath_t, scalar_t

_TENSOR = BaseType(BaseTy.Tensor)
_SCALAR = BaseType(BaseTy.Scalar)


class UfuncError(ValueError):
    """A ufunc op whose arguments or loops ufunc codegen cannot handle."""


def kernel_name(g: NativeFunctionsGroup, dispatch_key: object) -> str:
    """The structured kernel ufunc codegen defines for a backend: ufunc_<op>_<Key>."""
    return f"ufunc_{g.out.func.name.name}_{dispatch_key}"


def _scalar_or_tensor(t: Type, binds: ArgName, scalar: CType, tensor: CType | None) -> NamedCType | None:
    value = cpp.valuetype_type(t, binds=binds, symint=False)
    if value is not None:
        return value
    if t == _SCALAR:
        return NamedCType(binds, scalar)
    if t == _TENSOR:
        return None if tensor is None else NamedCType(binds, tensor)
    raise UfuncError(f"ufunc codegen does not handle arguments of type {t}")


def ufunctor_ctor_type(t: Type, binds: ArgName) -> NamedCType:
    """A CUDA functor's constructor parameter: scalars and scalar tensors are held in opmath_t."""
    r = _scalar_or_tensor(t, binds, opmath_t, opmath_t)
    assert r is not None
    return r


def ufunctor_apply_type(t: Type, binds: ArgName) -> NamedCType:
    if t != _TENSOR:
        raise UfuncError(f"only tensors are passed to a functor's operator(), not {t}")
    return NamedCType(binds, scalar_t)


def ufunc_type(t: Type, binds: ArgName, compute_t: CType) -> NamedCType:
    r = _scalar_or_tensor(t, binds, compute_t, compute_t)
    assert r is not None
    return r


def _bind(a: Argument, nctype: NamedCType, spelling: CppSpelling) -> Binding:
    return Binding(a.name, nctype, a, spelling)


@record
class UfunctorBindings:
    ctor: tuple[Binding, ...]
    apply: tuple[Binding, ...]


def ufunctor_arguments(g: NativeFunctionsGroup, scalar_tensor_idx: int | None, spelling: CppSpelling
                       ) -> UfunctorBindings:
    """Split the functional arguments between constructor and operator(); the tensor at
    `scalar_tensor_idx` (a CPU scalar) goes to the constructor too."""
    ctor: list[Binding] = []
    apply: list[Binding] = []
    for a in g.functional.func.arguments.flat_non_out:
        if a.type.is_tensor_like() and scalar_tensor_idx != 0:
            if scalar_tensor_idx is not None:
                scalar_tensor_idx -= 1
            apply.append(_bind(a, ufunctor_apply_type(a.type, a.name), spelling))
            continue
        if a.type.is_tensor_like():
            scalar_tensor_idx = None
        ctor.append(_bind(a, ufunctor_ctor_type(a.type, a.name), spelling))
    if scalar_tensor_idx is not None:
        raise UfuncError(f"{g.functional.func.name}: not enough tensors for a scalar specialization")
    return UfunctorBindings(tuple(ctor), tuple(apply))


def ufunc_arguments(g: NativeFunctionsGroup, compute_t: CType, spelling: CppSpelling) -> list[Binding]:
    return [_bind(a, ufunc_type(a.type, a.name, compute_t), spelling) for a in g.functional.func.arguments.flat_non_out]


def stub_arguments(g: NativeFunctionsGroup, spelling: CppSpelling) -> list[Binding]:
    """A DispatchStub's arguments after the TensorIterator: every non-tensor input of the out= schema."""
    return [b for a in g.out.func.arguments.flat_non_out if not a.type.is_tensor_like()
            for b in structured.argument(a, spelling)]

