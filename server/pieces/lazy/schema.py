"""The lazy-IR view of a schema: each argument's IR type and role (gen_lazy_tensor's LazyIrSchema).

An IR node keeps tensors as IR values (`torch::lazy::Value`) and everything
else by value (vectors instead of array refs). Which arguments are values
("operands") and which are scalars (hashed and stored members) drives every
piece of generated code: the node class, its lowering, the kernel building it.
Everything here is frozen; nothing is configured through global state (the
value type is a parameter, torchgen's `setValueT`).
"""

from __future__ import annotations

from dataclasses import replace

from ...frozen import record
from ...model.schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, OperatorName, OptionalType, Return, Type
from ...releases.profile import CppSpelling
from ..api.types import BASE_TYPE_TO_CPP, BaseCType, CType, ListCType, OptionalCType, SymIntT, VectorCType, longT, scalarT

VALUE_T = BaseCType("torch::lazy::Value")


class LazyTypeError(ValueError):
    """A schema type the lazy codegen has no IR type for (torchgen fails with an AssertionError)."""


# Mutually exclusive property groups of an IR node; at most one member of each group is set.
PROPERTY_GROUPS: tuple[tuple[str, ...], ...] = (
    ("ShapePrecompute", "ShapeCompute", "ShapeCache"),
    ("Lower", "LowerDeclOnly"),
    ("CanBeReused", "CanBeReusedDeclOnly"),
    ("CreateFn", "CreateFnDeclOnly"),
    ("TreatScalarsAsConstants",),
)
ALL_PROPERTIES = frozenset(p for group in PROPERTY_GROUPS for p in group)


@record
class LazyIrProperties:
    """One chosen member (or None) per property group."""

    chosen: tuple[str | None, ...] = (None,) * len(PROPERTY_GROUPS)

    def with_(self, name: str) -> LazyIrProperties:
        """Set name, clearing the other members of its group; an unknown name raises KeyError."""
        for i, group in enumerate(PROPERTY_GROUPS):
            if name in group:
                return LazyIrProperties(self.chosen[:i] + (name,) + self.chosen[i + 1:])
        raise KeyError(f"Invalid property: {name}")

    def has(self, name: str) -> bool:
        return name in self.chosen

    @staticmethod
    def of(*names: str) -> LazyIrProperties:
        props = LazyIrProperties()
        for n in names:
            props = props.with_(n)
        return props


DEFAULT_PROPERTIES = LazyIrProperties.of("ShapePrecompute", "Lower", "CanBeReused")
NON_NATIVE_PROPERTIES = LazyIrProperties.of("ShapeCache", "CanBeReused", "LowerDeclOnly")

_BASE = {BaseTy.ScalarType: "ScalarType", BaseTy.int: "int", BaseTy.bool: "bool", BaseTy.float: "float",
         BaseTy.str: "str", BaseTy.Device: "Device", BaseTy.Generator: "Generator", BaseTy.Layout: "Layout",
         BaseTy.MemoryFormat: "MemoryFormat"}


def ir_type(t: Type, props: LazyIrProperties, *, symint: bool, value: BaseCType = VALUE_T) -> CType:
    """The C++ type an IR node stores for a schema type."""
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return value
        if t.name is BaseTy.Scalar:
            return scalarT if props.has("TreatScalarsAsConstants") else value
        if t.name is BaseTy.SymInt:
            return value if symint else longT
        if t.name in _BASE:
            return BASE_TYPE_TO_CPP[_BASE[t.name]]
        raise LazyTypeError(f"the lazy codegen does not support the type {t}")
    if isinstance(t, OptionalType):
        return OptionalCType(ir_type(t.elem, props, symint=symint, value=value))
    if isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "Tensor?":
            return ListCType(OptionalCType(value))
        if elem == "Tensor":
            return TENSOR_LIST_T
        if elem == "SymInt":
            return VectorCType(longT)
        return VectorCType(ir_type(t.elem, props, symint=symint, value=value))
    raise LazyTypeError(f"the lazy codegen does not support the type {t}")


# A Tensor[] comes in as one Value (GetTensorList). Same C++ spelling as VALUE_T, a different role: kept apart
# by the `is_tensor_list` flag of the argument rather than by object identity.
TENSOR_LIST_T = BaseCType("torch::lazy::Value")


def is_value_type(t: CType, treat_scalars_as_constants: bool = False, value: BaseCType = VALUE_T) -> bool:
    """Whether an IR type holds (or wraps) IR values."""
    if isinstance(t, BaseCType):
        return t == value or (t == scalarT and not treat_scalars_as_constants) or t == SymIntT
    if t == VectorCType(SymIntT):
        return False
    if isinstance(t, (OptionalCType, ListCType, VectorCType)):
        return is_value_type(t.elem, treat_scalars_as_constants, value)
    return False


def _is_symint(t: Type) -> bool:
    return isinstance(t, BaseType) and t.name is BaseTy.SymInt


def _is_wrapped_scalar(t: Type) -> bool:
    if isinstance(t, BaseType):
        return t.name is BaseTy.Scalar
    if isinstance(t, (OptionalType, ListType)):
        return _is_wrapped_scalar(t.elem)
    return False


def _is_generator(t: Type) -> bool:
    if isinstance(t, BaseType):
        return t.name is BaseTy.Generator
    if isinstance(t, OptionalType):
        return _is_generator(t.elem)
    return False


@record
class LazyArgument:
    name: str
    orig_type: Type
    lazy_type: CType
    symint: bool
    is_optional: bool
    is_generator: bool
    is_wrapped_scalar: bool
    # A SymInt (or SymInt?) passed as a value when the kernel is symint; SymInt[] is not.
    is_symint_or_list: bool
    # Holds or wraps an IR value under the node's properties.
    is_lazy_value: bool
    is_tensor_list: bool

    @staticmethod
    def of(arg: Argument, props: LazyIrProperties, *, symint: bool, value: BaseCType = VALUE_T) -> LazyArgument:
        t = arg.type
        lazy = ir_type(t, props, symint=symint, value=value)
        return LazyArgument(
            arg.name, t, lazy, symint, isinstance(t, OptionalType), _is_generator(t), _is_wrapped_scalar(t),
            symint and (_is_symint(t) or (isinstance(t, OptionalType) and _is_symint(t.elem))),
            is_value_type(lazy, props.has("TreatScalarsAsConstants"), value),
            isinstance(t, ListType) and str(t.elem) == "Tensor")

    def cpp_type(self, spelling: CppSpelling) -> str:
        return self.lazy_type.cpp_type(spelling)


@record
class LazyIrSchema:
    name: OperatorName
    func: FunctionSchema
    positional_args: tuple[LazyArgument, ...]
    keyword_args: tuple[LazyArgument, ...]
    returns: tuple[Return, ...]
    symint: bool
    # A Generator argument is one of the node's (Release.lazy_ir_keeps_generators); before 2.2 it is left out.
    generators_in_ir: bool
    properties: LazyIrProperties = DEFAULT_PROPERTIES
    opkind: str | None = None

    @property
    def node_name(self) -> str:
        """CamelCase of `<name>_<overload>`: bitwise_and.Tensor -> BitwiseAndTensor."""
        words = f"{self.name.name}_{self.name.overload_name}".lower().split("_")
        return "".join(w.capitalize() for w in words)

    @property
    def aten_name(self) -> str:
        return str(self.name.name)

    def filtered_args(self, positional: bool = True, keyword: bool = True, values: bool = True,
                      scalars: bool = True, generator: bool | None = None) -> list[LazyArgument]:
        """generator: whether Generator arguments are kept (None: as the release's IR nodes keep them)."""
        if generator is None:
            generator = self.generators_in_ir
        args: list[LazyArgument] = []
        if positional:
            args.extend(self.positional_args)
        if keyword:
            args.extend(self.keyword_args)
        if values and scalars and generator:
            return args
        if values and scalars:
            return [a for a in args if not a.is_generator]
        if values:
            return [a for a in args if a.is_lazy_value]
        if scalars:
            return [a for a in args if not a.is_lazy_value and (generator or not a.is_generator)]
        return []

    @property
    def positional_values(self) -> list[LazyArgument]:
        return self.filtered_args(keyword=False, scalars=False)

    @property
    def positional_scalars(self) -> list[LazyArgument]:
        return self.filtered_args(keyword=False, values=False)

    @property
    def keyword_values(self) -> list[LazyArgument]:
        return self.filtered_args(positional=False, scalars=False)

    @property
    def keyword_scalars(self) -> list[LazyArgument]:
        return self.filtered_args(positional=False, values=False)

    def with_opkind(self, opkind: str | None) -> LazyIrSchema:
        return replace(self, opkind=opkind)


def lazy_schema(func: FunctionSchema, props: LazyIrProperties = DEFAULT_PROPERTIES, *, symint: bool,
                generators_in_ir: bool, value: BaseCType = VALUE_T) -> LazyIrSchema:
    """The IR view of a schema; raises LazyTypeError on a type the codegen does not support.
    generators_in_ir: Release.lazy_ir_keeps_generators (before 2.2 a Generator must be optional: it is left out)."""
    a = func.arguments
    positional = [*a.pre_self_positional, *([a.self_arg.argument] if a.self_arg is not None else []),
                  *a.post_self_positional]
    keyword = [*a.pre_tensor_options_kwarg_only, *(a.tensor_options.all() if a.tensor_options else ()),
               *a.post_tensor_options_kwarg_only, *a.out]
    if sum(1 for arg in keyword if _is_generator(arg.type)) > 1:
        raise LazyTypeError(f"{func.name}: the lazy codegen expects at most one generator argument")
    if not generators_in_ir and any(isinstance(x.type, BaseType) and x.type.name is BaseTy.Generator
                                    for x in (*positional, *keyword)):
        raise LazyTypeError(f"{func.name}: the lazy codegen of this release expects every generator to be optional "
                            "(Generator?)")
    return LazyIrSchema(func.name, func,
                        tuple(LazyArgument.of(x, props, symint=symint, value=value) for x in positional),
                        tuple(LazyArgument.of(x, props, symint=symint, value=value) for x in keyword),
                        func.returns, symint, generators_in_ir, props)
