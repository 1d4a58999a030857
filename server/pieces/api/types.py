"""C++ types, named types, bindings and expressions: the vocabulary of every calling convention."""

from __future__ import annotations

import functools
from dataclasses import field
from enum import Enum
from typing import ClassVar, Protocol, Self

from ...frozen import record
from ...model.native_function import NativeFunction, NativeFunctionsGroup
from ...releases.profile import CppSpelling


class SpecialArgName(Enum):
    # memory_format next to TensorOptions: the two may disagree, and the C++ API checks it.
    possibly_redundant_memory_format = 1


ArgName = str | SpecialArgName


class _HashSlot(Protocol):
    @property
    def _hash(self) -> int | None: ...


def _kept_hash(value: _HashSlot, fields: tuple[object, ...]) -> int:
    """The hash of a frozen value from its fields, kept in its _hash slot: its __hash__ returns the slot when set
    (and only builds the fields' tuple when not: hashed hundreds of thousands of times a run)."""
    cached = hash(fields)
    object.__setattr__(value, "_hash", cached)
    return cached


@record
class BaseCType:
    """A plain C++ type, fully qualified, e.g. at::Tensor or int64_t."""

    name: str

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return self.name

    def remove_const_ref(self) -> CType:
        return self


@record
class ConstRefCType:
    elem: CType

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return self.elem.cpp_type(spelling, strip_ref=True) if strip_ref else f"const {self.elem.cpp_type(spelling)} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@record
class MutRefCType:
    elem: CType

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return self.elem.cpp_type(spelling, strip_ref=True) if strip_ref else f"{self.elem.cpp_type(spelling)} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@record
class _TemplateCType:
    """A one-parameter C++ template type; reference stripping does not reach inside it."""

    elem: CType
    TEMPLATE: ClassVar[str]

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return self.TEMPLATE.format(self.elem.cpp_type(spelling))

    def remove_const_ref(self) -> Self:
        return type(self)(self.elem.remove_const_ref())


@record
class OptionalCType(_TemplateCType):
    # No TEMPLATE: the release spells it (CppSpelling).

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return spelling.optional(self.elem.cpp_type(spelling))


@record
class VectorCType(_TemplateCType):
    TEMPLATE = "::std::vector<{}>"


@record
class ListCType(_TemplateCType):
    TEMPLATE = "c10::List<{}>"


@record
class ArrayRefCType(_TemplateCType):
    TEMPLATE = "at::ArrayRef<{}>"


@record
class VectorizedCType(_TemplateCType):
    TEMPLATE = "at::vec::Vectorized<{}>"


@record
class ArrayCType:
    elem: CType
    size: int

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return f"::std::array<{self.elem.cpp_type(spelling)},{self.size}>"

    def remove_const_ref(self) -> CType:
        return ArrayCType(self.elem.remove_const_ref(), self.size)


@record
class TupleCType:
    elems: tuple[CType, ...]

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return f"::std::tuple<{','.join(e.cpp_type(spelling) for e in self.elems)}>"

    def remove_const_ref(self) -> CType:
        return TupleCType(tuple(e.remove_const_ref() for e in self.elems))


CType = (BaseCType | ConstRefCType | MutRefCType | ArrayCType | TupleCType | OptionalCType | VectorCType
         | ListCType | ArrayRefCType | VectorizedCType)


@record
class NamedCType:
    """A C++ type plus what the value means (its argument name), which translation matches on."""

    name: ArgName
    type: CType
    # Named types and bindings key translate()'s memo and its lookups: hash each once (see _kept_hash).
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        cached = self._hash
        return cached if cached is not None else _kept_hash(self, (self.name, self.type))

    def cpp_type(self, spelling: CppSpelling, *, strip_ref: bool = False) -> str:
        return self.type.cpp_type(spelling, strip_ref=strip_ref)

    def remove_const_ref(self) -> NamedCType:
        return NamedCType(self.name, self.type.remove_const_ref())

    def with_name(self, name: str) -> NamedCType:
        return NamedCType(name, self.type)


def spelled_default(default: str, qualified_memory_format: bool) -> str:
    """A C++ default as the release's torchgen spells it: the schema's contiguous_format is
    c10::MemoryFormat::Contiguous, MemoryFormat::Contiguous when not `qualified_memory_format` (before 2.5:
    Release.cpp_default_qualifies_memory_format)."""
    if not qualified_memory_format and default == "c10::MemoryFormat::Contiguous":
        return "MemoryFormat::Contiguous"
    return default


@record
class Binding:
    """A formal parameter of some C++ function."""

    name: str
    nctype: NamedCType
    argument: object  # the schema Argument, SelfArgument or TensorOptionsArguments it comes from
    spelling: CppSpelling  # the release's, for the type as written
    default: str | None = None
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        cached = self._hash
        return cached if cached is not None else \
            _kept_hash(self, (self.name, self.nctype, self.argument, self.spelling, self.default))

    @property
    def type(self) -> str:
        return self.nctype.cpp_type(self.spelling)

    def no_default(self) -> Binding:
        return Binding(self.name, self.nctype, self.argument, self.spelling, None)

    def with_name(self, name: str) -> Binding:
        return Binding(name, self.nctype, self.argument, self.spelling, self.default)

    def decl(self, *, func_ptr_cast: bool = False, qualified_memory_format: bool = True) -> str:
        if func_ptr_cast:
            return self.type
        default = f"={spelled_default(self.default, qualified_memory_format)}" if self.default is not None else ""
        return f"{self.type} {self.name}{default}"

    def defn(self) -> str:
        return f"{self.type} {self.name}"


@record
class Expr:
    """A C++ expression and the named type it provides."""

    expr: str
    type: NamedCType
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        cached = self._hash
        return cached if cached is not None else _kept_hash(self, (self.expr, self.type))


@record
class ApiOptions:
    """Per-operator switches of the C++ conventions (torchgen keeps them in thread-locals)."""

    use_const_ref_for_mutable_tensors: bool
    use_ilistref_for_tensor_lists: bool
    spelling: CppSpelling  # the release's (not a switch of the operator, but rendered with it everywhere)
    # The options key the memos of every convention: one object for each (see of) and its hash kept.
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        cached = self._hash
        return cached if cached is not None else \
            _kept_hash(self, (self.use_const_ref_for_mutable_tensors, self.use_ilistref_for_tensor_lists, self.spelling))

    @staticmethod
    def of(f: NativeFunction | NativeFunctionsGroup, spelling: CppSpelling) -> ApiOptions:
        fn = f.out if isinstance(f, NativeFunctionsGroup) else f
        return _api_options(fn.use_const_ref_for_mutable_tensors, fn.part_of_structured_group, spelling)


@functools.lru_cache(maxsize=16)  # four switches' values per spelling, and a run has one spelling
def _api_options(use_const_ref_for_mutable_tensors: bool, use_ilistref_for_tensor_lists: bool,
                 spelling: CppSpelling) -> ApiOptions:
    return ApiOptions(use_const_ref_for_mutable_tensors, use_ilistref_for_tensor_lists, spelling)


# The C++ types the conventions name.
tensorT = BaseCType("at::Tensor")
scalarT = BaseCType("at::Scalar")
longT = BaseCType("int64_t")
boolT = BaseCType("bool")
voidT = BaseCType("void")
doubleT = BaseCType("double")
SymIntT = BaseCType("c10::SymInt")
SymBoolT = BaseCType("c10::SymBool")
intArrayRefT = BaseCType("at::IntArrayRef")
symIntArrayRefT = BaseCType("c10::SymIntArrayRef")
optionalIntArrayRefT = BaseCType("at::OptionalIntArrayRef")
optionalSymIntArrayRefT = BaseCType("at::OptionalSymIntArrayRef")
tensorListT = BaseCType("at::TensorList")
iTensorListRefT = BaseCType("at::ITensorListRef")
iOptTensorListRefT = BaseCType("at::IOptTensorListRef")
tensorOptionsT = BaseCType("at::TensorOptions")
scalarTypeT = BaseCType("at::ScalarType")
layoutT = BaseCType("at::Layout")
deviceT = BaseCType("at::Device")
memoryFormatT = BaseCType("at::MemoryFormat")
optionalTensorRefT = BaseCType("at::OptionalTensorRef")
optionalScalarRefT = BaseCType("at::OptionalScalarRef")
opmath_t = BaseCType("opmath_t")
scalar_t = BaseCType("scalar_t")

# Schema base types that map one to one onto a C++ type.
BASE_TYPE_TO_CPP: dict[str, BaseCType] = {
    "int": longT,
    "float": doubleT,
    "bool": boolT,
    "str": BaseCType("c10::string_view"),
    "Generator": BaseCType("at::Generator"),
    "ScalarType": scalarTypeT,
    "Tensor": tensorT,
    "DimVector": BaseCType("at::DimVector"),
    "Layout": layoutT,
    "Device": deviceT,
    "DeviceIndex": BaseCType("at::DeviceIndex"),
    "Scalar": scalarT,
    "MemoryFormat": memoryFormatT,
    "QScheme": BaseCType("at::QScheme"),
    "Storage": BaseCType("at::Storage"),
    "Stream": BaseCType("at::Stream"),
    "SymInt": SymIntT,
    "SymBool": SymBoolT,
    "Dimname": BaseCType("at::Dimname"),  # named tensors, until torch 2.12
}
