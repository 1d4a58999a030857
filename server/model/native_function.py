"""NativeFunction and what hangs off it: the model of one native_functions.yaml entry.

Names and meanings follow torchgen's model.py so the two can be compared
field by field; the containers are frozen (frozenset, tuple) so results can
be memoized.
"""

from __future__ import annotations

from dataclasses import field
from enum import auto

from ..frozen import IdentityHashEnum, record
from ..syntax.nodes import YMap, YScalar
from .dispatch import DispatchKey
from .schema import Argument, FunctionSchema, OperatorName
from .schema_parser import SchemaSpans


class Variant(IdentityHashEnum):
    function = 1
    method = 2


class DeviceCheckType(IdentityHashEnum):
    NoCheck = 0
    ExactSame = 1


class UfuncKey(IdentityHashEnum):
    CUDAFunctor = 1
    CUDAFunctorOnOther = 2
    CUDAFunctorOnSelf = 3
    CPUScalar = 4
    CPUVector = 5
    ScalarOnly = 6
    Generic = 7


class ScalarType(IdentityHashEnum):
    Byte = auto()
    Char = auto()
    Short = auto()
    Int = auto()
    Long = auto()
    Half = auto()
    Float = auto()
    Double = auto()
    ComplexHalf = auto()
    ComplexFloat = auto()
    ComplexDouble = auto()
    Bool = auto()
    BFloat16 = auto()
    Float8_e5m2 = auto()
    Float8_e5m2fnuz = auto()
    Float8_e4m3fn = auto()
    Float8_e4m3fnuz = auto()
    Float8_e8m0fnu = auto()


_S = ScalarType.__members__
_INTEGRAL = tuple(_S[n] for n in ("Byte", "Char", "Int", "Long", "Short"))
_FLOATING = (_S["Float"], _S["Double"])
_COMPLEX = (_S["ComplexFloat"], _S["ComplexDouble"])
# Names usable in ufunc_inner_loop dtype lists, each standing for several dtypes.
DTYPE_CLASSES: dict[str, tuple[ScalarType, ...]] = {
    "Integral": _INTEGRAL,
    "Floating": _FLOATING,
    "Complex": _COMPLEX,
    "All": _INTEGRAL + _FLOATING,
    "AllAndComplex": _INTEGRAL + _FLOATING + _COMPLEX,
    "FloatingAndComplex": _FLOATING + _COMPLEX,
}


@record
class UfuncInnerLoop:
    name: str
    supported_dtypes: tuple[ScalarType, ...]
    ufunc_key: UfuncKey


@record
class Precompute:
    # kernel argument name -> the precomputed arguments replacing it, in order
    replace: tuple[tuple[str, tuple[Argument, ...]], ...]
    add: tuple[Argument, ...]

    def to_list(self) -> list[str]:
        return [f"{name} -> {', '.join(map(str, args))}" for name, args in self.replace]


@record
class BackendMetadata:
    kernel: str
    structured: bool
    cpp_namespace: str
    # An external backend's per-op options under `opgen generate-backend --experimental` (pytorch#172539):
    # device_guard false keeps this op's wrappers unguarded even when the yaml's device_guard is true;
    # define_meta (the proposal's `ext_structured_meta`) declares the structured class's own meta().
    device_guard: bool = True
    define_meta: bool = False

    def supports_symint(self) -> bool:
        return "_symint" in self.kernel


@record
class NativeFunction:
    namespace: str
    func: FunctionSchema
    use_const_ref_for_mutable_tensors: bool
    device_guard: bool
    device_check: DeviceCheckType
    python_module: str | None
    category_override: str | None
    variants: frozenset[Variant]
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    autogen: tuple[OperatorName, ...]
    ufunc_inner_loop: tuple[tuple[UfuncKey, UfuncInnerLoop], ...]
    structured: bool
    structured_delegate: OperatorName | None
    structured_inherits: str | None
    precomputed: Precompute | None
    cpp_no_default_args: frozenset[str]
    is_abstract: bool
    has_composite_implicit_autograd_kernel: bool
    has_composite_implicit_autograd_nested_tensor_kernel: bool
    has_composite_explicit_autograd_kernel: bool
    has_composite_explicit_autograd_non_functional_kernel: bool
    tags: frozenset[str]
    # Where it came from; not part of the value. Spans are relative to the entry's first line.
    source: EntrySource | None = field(default=None, compare=False, repr=False)
    _hash: int | None = field(init=False, default=None, compare=False, repr=False)
    _is_view_op: bool | None = field(init=False, default=None, compare=False, repr=False)
    # Derived facts the whole-file passes read for every op (see native_yaml.facts).
    _facts: object = field(init=False, default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.namespace, self.func, self.variants, self.tags,
                           self.structured, self.structured_delegate, self.autogen))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def has_composite_kernel(self) -> bool:
        return (self.has_composite_implicit_autograd_kernel or self.has_composite_explicit_autograd_kernel
                or self.has_composite_explicit_autograd_non_functional_kernel)

    @property
    def is_view_op(self) -> bool:
        cached = self._is_view_op
        if cached is None:
            cached = self._compute_is_view_op()
            object.__setattr__(self, "_is_view_op", cached)
        return cached

    def _compute_is_view_op(self) -> bool:
        # A non-mutating aliased return, the inplace_view tag, or a wildcard alias; cheapest test first.
        # (Plain loops: asked of every function on a cold parse, where any() over a generator costs twice.)
        for r in self.func.returns:
            if r.annotation is not None and not r.annotation.is_write:
                return True
        # (torchgen 2.0 exempts resize_ only, so there a resize_as_ tagged inplace_view is a view op; it is OPG303
        # unless an out-of-place view op resize_as is declared too, which no release's file does: not modelled.)
        if "inplace_view" in self.tags and str(self.func.name) not in ("resize_", "resize_as_"):
            return True
        for a in self.func.schema_order_arguments():
            if a.annotation is not None and "*" in a.annotation.alias_set_after:
                return True
        return False

    @property
    def root_name(self) -> str:
        return self.func.name.name.base

    @property
    def part_of_structured_group(self) -> bool:
        return self.structured or self.structured_delegate is not None


@record
class EntrySource:
    """Links a NativeFunction to the yaml it was read from (spans relative to the entry)."""

    entry: YMap
    schema_spans: SchemaSpans
    # Maps offsets in the func string to spans in the entry.
    func_scalar: YScalar


class ViewSchemaKind(IdentityHashEnum):
    aliasing = 1
    aliasing_inplace = 2
    non_aliasing = 3


@record
class NativeFunctionsGroup:
    functional: NativeFunction
    inplace: NativeFunction | None
    mutable: NativeFunction | None
    out: NativeFunction

    @property
    def structured(self) -> bool:
        return self.out.structured

    def functions(self) -> tuple[NativeFunction, ...]:
        """functional, out, inplace, mutable: those there are (spelt out: called hundreds of thousands of times a
        run, a generator over the four costs three times as much)."""
        inplace, mutable = self.inplace, self.mutable
        if inplace is None:
            return (self.functional, self.out) if mutable is None else (self.functional, self.out, mutable)
        return (self.functional, self.out, inplace) if mutable is None else (self.functional, self.out, inplace,
                                                                              mutable)

    def signature(self) -> FunctionSchema:
        return self.out.func.signature()

    @property
    def root_name(self) -> str:
        return self.functional.root_name


@record
class NativeFunctionsViewGroup:
    view: NativeFunction
    view_copy: NativeFunction | None
    view_inplace: NativeFunction | None

    def functions(self, *, include_copy: bool = True) -> tuple[NativeFunction, ...]:
        fs = [self.view]
        if self.view_inplace is not None:
            fs.append(self.view_inplace)
        if self.view_copy is not None and include_copy:
            fs.append(self.view_copy)
        return tuple(fs)

    @property
    def root_name(self) -> str:
        return self.view.root_name


@record
class BackendIndex:
    dispatch_key: DispatchKey
    use_out_as_primary: bool
    device_guard: bool
    external: bool
    index: dict[OperatorName, BackendMetadata] = field(hash=False)

    def primary(self, g: NativeFunctionsGroup) -> NativeFunction:
        return g.out if self.use_out_as_primary else g.functional

    def get_kernel(self, g: NativeFunction | NativeFunctionsGroup) -> BackendMetadata | None:
        f = g if isinstance(g, NativeFunction) else self.primary(g)
        return self.index.get(f.func.name)

    def has_kernel(self, g: NativeFunction | NativeFunctionsGroup) -> bool:
        return self.get_kernel(g) is not None

    def native_function_class_name(self) -> str | None:
        return f"{self.dispatch_key}NativeFunctions" if self.external else None
