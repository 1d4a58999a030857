"""The function schema model: value objects for what a `func:` string says.

These mirror torchgen's FunctionSchema family (same names, same printing,
same derived notions such as kind() and signature()) so that opgen and
torchgen can be compared field by field. They carry no positions: two equal
schemas are equal wherever they were written, which grouping relies on.
Positions live beside them, in `model.schema_parser.SchemaSpans`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import field, replace
from enum import auto

from ..frozen import IdentityHashEnum, record


class BaseTy(IdentityHashEnum):
    """The base types torchgen knows, in its order."""

    Generator = auto()
    ScalarType = auto()
    Tensor = auto()
    int = auto()
    DimVector = auto()
    float = auto()
    str = auto()
    bool = auto()
    Layout = auto()
    Device = auto()
    DeviceIndex = auto()
    Scalar = auto()
    MemoryFormat = auto()
    QScheme = auto()
    Storage = auto()
    Stream = auto()
    SymInt = auto()
    SymBool = auto()
    GraphModule = auto()
    # Named tensors, until torch 2.12 (later releases refuse it: model.lower, per release).
    Dimname = auto()
    # A type of torchgen's model with no C++ mapping (gen.py cannot generate for it), until torch 2.5 (later
    # releases refuse it: model.lower, per release).
    ConstQuantizerPtr = auto()


BASE_TYPE_NAMES: tuple[str, ...] = tuple(BaseTy.__members__)

CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."


class _TypeQueries:
    """What kind of value a type holds, looking through optionals and lists."""

    __slots__ = ()

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        raise NotImplementedError  # each type below answers it

    def is_tensor_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Tensor)

    def is_symint_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.SymInt)

    def is_generator_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Generator)


@record
class BaseType(_TypeQueries):
    name: BaseTy

    def __str__(self) -> str:
        return self.name.name

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.name == ty

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@record
class OptionalType(_TypeQueries):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(ty)

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@record
class CustomClassType(_TypeQueries):
    class_name: str

    def __str__(self) -> str:
        return CUSTOM_CLASS_PREFIX + self.class_name

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@record
class ListType(_TypeQueries):
    elem: Type
    size: int | None

    def __str__(self) -> str:
        return f"{self.elem}[{self.size or ''}]"

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(ty)

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


Type = BaseType | OptionalType | CustomClassType | ListType

TENSOR = BaseType(BaseTy.Tensor)


@record
class Annotation:
    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            text += " -> " + "|".join(self.alias_set_after)
        return text


def _annotated_type_text(ty: Type, annotation: Annotation | None) -> str:
    text = str(ty)
    if annotation is not None:
        text = text.replace("Tensor", f"Tensor({annotation})")
    return text


@record
class Argument:
    name: str
    type: Type
    default: str | None
    annotation: Annotation | None
    # Hashed often once hashed at all (memos, sets of arguments); computed on first use.
    _hash: int | None = field(init=False, repr=False, compare=False, default=None)
    _plain: str | None = field(init=False, repr=False, compare=False, default=None)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.name, self.type, self.default, self.annotation))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        default = f"={self.default}" if self.default else ""
        return f"{_annotated_type_text(self.type, self.annotation)} {self.name}{default}"

    @property
    def plain(self) -> str:
        """The argument as a signature prints it: without its alias annotation."""
        cached = self._plain
        if cached is None:
            default = f"={self.default}" if self.default else ""
            cached = f"{self.type} {self.name}{default}"
            object.__setattr__(self, "_plain", cached)
        return cached


@record
class Return:
    name: str | None
    type: Type
    annotation: Annotation | None
    _plain: str | None = field(init=False, repr=False, compare=False, default=None)

    @property
    def plain(self) -> str:
        """The return as a signature prints it: its type alone."""
        cached = self._plain
        if cached is None:
            cached = str(self.type)
            object.__setattr__(self, "_plain", cached)
        return cached

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        text = _annotated_type_text(self.type, self.annotation)
        return text if self.name is None else f"{text} {self.name}"


@record
class SelfArgument:
    argument: Argument


@record
class TensorOptionsArguments:
    dtype: Argument
    layout: Argument
    device: Argument
    pin_memory: Argument

    def all(self) -> tuple[Argument, ...]:
        return (self.dtype, self.layout, self.device, self.pin_memory)


@record
class Arguments:
    pre_self_positional: tuple[Argument, ...]
    self_arg: SelfArgument | None
    post_self_positional: tuple[Argument, ...]
    pre_tensor_options_kwarg_only: tuple[Argument, ...]
    tensor_options: TensorOptionsArguments | None
    post_tensor_options_kwarg_only: tuple[Argument, ...]
    out: tuple[Argument, ...]
    # Hashed often once hashed at all (memos); computed on first use.
    _hash: int | None = field(init=False, repr=False, compare=False, default=None)
    # The flat views, asked tens of thousands of times on a cold check (and more by the generators): made once.
    _flat_positional: tuple[Argument, ...] | None = field(init=False, repr=False, compare=False, default=None)
    _flat_kwarg_only: tuple[Argument, ...] | None = field(init=False, repr=False, compare=False, default=None)
    _flat_all: tuple[Argument, ...] | None = field(init=False, repr=False, compare=False, default=None)
    # signature_key's text of these arguments; schemas with the same argument list share their Arguments.
    _plain: str | None = field(init=False, repr=False, compare=False, default=None)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((
                self.pre_self_positional, self.self_arg, self.post_self_positional, self.pre_tensor_options_kwarg_only,
                self.tensor_options, self.post_tensor_options_kwarg_only, self.out))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def plain(self) -> str:
        """The arguments as a signature prints them: without alias annotations."""
        cached = self._plain
        if cached is None:
            parts = [a.plain for a in self.flat_positional]
            kwargs = self.pre_tensor_options_kwarg_only + self.post_tensor_options_kwarg_only
            if kwargs:
                parts.append("*")
                parts.extend(a.plain for a in kwargs)
            cached = ", ".join(parts)
            object.__setattr__(self, "_plain", cached)
        return cached

    @property
    def flat_positional(self) -> tuple[Argument, ...]:
        cached = self._flat_positional
        if cached is None:
            if self.self_arg is None:
                cached = self.pre_self_positional + self.post_self_positional
            else:
                cached = (*self.pre_self_positional, self.self_arg.argument, *self.post_self_positional)
            object.__setattr__(self, "_flat_positional", cached)
        return cached

    @property
    def flat_kwarg_only(self) -> tuple[Argument, ...]:
        cached = self._flat_kwarg_only
        if cached is None:
            options = self.tensor_options.all() if self.tensor_options is not None else ()
            cached = self.pre_tensor_options_kwarg_only + options + self.post_tensor_options_kwarg_only
            object.__setattr__(self, "_flat_kwarg_only", cached)
        return cached

    @property
    def flat_non_out(self) -> tuple[Argument, ...]:
        return self.flat_positional + self.flat_kwarg_only

    @property
    def flat_all(self) -> tuple[Argument, ...]:
        cached = self._flat_all
        if cached is None:
            cached = self.flat_positional + self.flat_kwarg_only + self.out
            object.__setattr__(self, "_flat_all", cached)
        return cached

    @property
    def post_self_positional_mutable(self) -> tuple[Argument, ...]:
        return tuple([a for a in self.post_self_positional if a.is_write])

    @property
    def positional(self) -> tuple[Argument | SelfArgument, ...]:
        middle = (self.self_arg,) if self.self_arg is not None else ()
        return (*self.pre_self_positional, *middle, *self.post_self_positional)

    @property
    def kwarg_only(self) -> tuple[Argument | TensorOptionsArguments, ...]:
        middle = (self.tensor_options,) if self.tensor_options is not None else ()
        return (*self.pre_tensor_options_kwarg_only, *middle, *self.post_tensor_options_kwarg_only)

    def has_tensor_arg(self) -> bool:
        return any(a.type.is_tensor_like() for a in self.flat_non_out)

    def has_symint_arg(self) -> bool:
        return any(a.type.is_symint_like() for a in self.flat_non_out)

    def has_generator_arg(self) -> bool:
        return any(a.type.is_generator_like() for a in self.flat_non_out)

    def signature(self, *, strip_default: bool = False) -> Arguments:
        def strip(a: Argument) -> Argument:
            if a.annotation is None and (a.default is None or not strip_default):
                return a
            return Argument(a.name, a.type, None if strip_default else a.default, None)

        return Arguments(
            pre_self_positional=tuple(map(strip, self.pre_self_positional)),
            self_arg=SelfArgument(strip(self.self_arg.argument)) if self.self_arg is not None else None,
            post_self_positional=tuple(map(strip, self.post_self_positional)),
            # Tensor options are dropped, so what followed them joins what preceded them.
            pre_tensor_options_kwarg_only=tuple(map(strip, self.pre_tensor_options_kwarg_only))
            + tuple(map(strip, self.post_tensor_options_kwarg_only)),
            tensor_options=None,
            post_tensor_options_kwarg_only=(),
            out=(),
        )

    # Built with the constructors: dataclasses.replace looks the fields up on every call.
    def remove_self_annotation(self) -> Arguments:
        assert self.self_arg is not None
        a = self.self_arg.argument
        return Arguments(self.pre_self_positional, SelfArgument(Argument(a.name, a.type, a.default, None)),
                         self.post_self_positional, self.pre_tensor_options_kwarg_only, self.tensor_options,
                         self.post_tensor_options_kwarg_only, self.out)

    def with_out_args(self, outs: tuple[Argument, ...]) -> Arguments:
        return Arguments(self.pre_self_positional, self.self_arg, self.post_self_positional,
                         self.pre_tensor_options_kwarg_only, self.tensor_options, self.post_tensor_options_kwarg_only,
                         tuple(outs))

    def __str__(self) -> str:
        parts = [str(a) for a in self.flat_positional]
        kwarg_only = self.flat_kwarg_only
        if kwarg_only or self.out:
            parts.append("*")
        parts.extend(str(a) for a in kwarg_only)
        parts.extend(str(a) for a in self.out)
        return ", ".join(parts)


# Names that may appear as __iXXX__ (in-place) dunder methods.
AUGMENTED_ASSIGNMENT_NAMES = ("add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or")


@record
class BaseOperatorName:
    base: str
    inplace: bool
    dunder_method: bool
    functional_overload: bool = False
    namespace: str | None = None
    # Names key every index; hash them once.
    _hash: int | None = field(init=False, repr=False, compare=False, default=None)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.base, self.inplace, self.dunder_method,
                           self.functional_overload, self.namespace))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __str__(self) -> str:
        prefix = f"{self.namespace}::" if self.namespace else ""
        if self.dunder_method:
            return f"{prefix}__{'i' if self.inplace else ''}{self.base}__"
        suffix = "_" if self.inplace else "_functional" if self.functional_overload else ""
        return f"{prefix}{self.base}{suffix}"


@record
class OperatorName:
    name: BaseOperatorName
    overload_name: str
    _hash: int | None = field(init=False, repr=False, compare=False, default=None)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.name, self.overload_name))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __str__(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else str(self.name)

    def unambiguous_name(self) -> str:
        return f"{self.name}_{self.overload_name}" if self.overload_name else str(self.name)

    def remove_inplace(self) -> OperatorName:
        return OperatorName(BaseOperatorName(self.name.base, False, self.name.dunder_method), self.overload_name)

    def with_overload(self, overload: str) -> OperatorName:
        return OperatorName(BaseOperatorName(self.name.base, False, self.name.dunder_method), overload)


class SchemaKind(IdentityHashEnum):
    functional = 1
    inplace = 2
    out = 3
    mutable = 4
    scratch = 5


@record
class FunctionSchema:
    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]
    # Memos (not part of the value): grouping hashes schemas and asks for signatures often.
    _hash: int | None = field(init=False, repr=False, compare=False, default=None)
    _signature: FunctionSchema | None = field(init=False, repr=False, compare=False, default=None)
    _kind: SchemaKind | None = field(init=False, repr=False, compare=False, default=None)
    _view_signature: FunctionSchema | None = field(init=False, repr=False, compare=False, default=None)
    _text: str | None = field(init=False, repr=False, compare=False, default=None)  # (each op's files print it)

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.name, self.arguments, self.returns))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __str__(self) -> str:
        cached = self._text
        if cached is None:
            if len(self.returns) == 1:
                returns = str(self.returns[0])
            else:
                returns = "(" + ", ".join(map(str, self.returns)) + ")"
            cached = f"{self.name}({self.arguments}) -> {returns}"
            object.__setattr__(self, "_text", cached)
        return cached

    def schema_order_arguments(self) -> Iterator[Argument]:
        a = self.arguments
        return itertools.chain(a.flat_positional, a.flat_kwarg_only, a.out)

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments.flat_all)

    def is_out_fn(self) -> bool:
        return bool(self.arguments.out)

    def is_functional_fn(self) -> bool:
        return "functional" in self.name.overload_name

    def has_symint(self, *, returns_too: bool) -> bool:
        """Whether the op has SymInt signatures beside its int ones: a SymInt argument, or (returns_too: until 2.0,
        CppSpelling.symint_returns_follow_signature) a SymInt return."""
        return self.arguments.has_symint_arg() or returns_too and any(r.type.is_symint_like() for r in self.returns)

    def returns_are_aliased(self) -> bool:
        return any(r.is_write for r in self.returns)

    @property
    def modifies_arguments(self) -> bool:
        return self.kind() in (SchemaKind.inplace, SchemaKind.out, SchemaKind.mutable)

    def kind(self) -> SchemaKind:
        cached = self._kind
        if cached is None:
            cached = schema_kind(self)
            object.__setattr__(self, "_kind", cached)
        return cached

    def signature(self, *, strip_default: bool = False, strip_view_copy_name: bool = False,
                  keep_return_names: bool = False) -> FunctionSchema:
        if strip_default or keep_return_names or (strip_view_copy_name and self.name.name.base.endswith(("_copy", "_scatter"))):
            return schema_signature(self, strip_default, strip_view_copy_name, keep_return_names)
        cached = self._signature
        if cached is None:
            cached = schema_signature(self, False, False, False)
            object.__setattr__(self, "_signature", cached)
        return cached

    def view_signature(self) -> FunctionSchema:
        cached = self._view_signature
        if cached is None:
            cached = self.signature(strip_view_copy_name=True)
            object.__setattr__(self, "_view_signature", cached)
        return cached

    def with_name(self, name: OperatorName) -> FunctionSchema:
        return FunctionSchema(name, self.arguments, self.returns)

    def aliased_return_names(self) -> list[str | None]:
        names: list[str | None] = []
        for r in self.returns:
            aliased = [a for a in self.arguments.flat_all if a.annotation is not None and a.annotation == r.annotation]
            names.append(aliased[0].name if len(aliased) == 1 else None)
        return names


class SchemaKindError(ValueError):
    """A schema that is both out= and in-place (torchgen refuses to classify it)."""


def schema_kind(func: FunctionSchema) -> SchemaKind:
    """What kind of variant a schema is: functional, inplace, out, mutable or scratch."""
    args = func.arguments
    is_out = bool(args.out)
    is_inplace = func.name.name.inplace
    if is_out and is_inplace:
        raise SchemaKindError("a schema cannot be both out= and in-place")
    if is_inplace:
        return SchemaKind.inplace
    if any(a.name.startswith("_scratch_") for a in args.out):
        return SchemaKind.scratch
    if is_out:
        return SchemaKind.out
    if any(a.is_write for a in args.post_self_positional):
        return SchemaKind.mutable
    return SchemaKind.functional


def schema_signature(func: FunctionSchema, strip_default: bool, strip_view_copy_name: bool,
                     keep_return_names: bool) -> FunctionSchema:
    """The core signature shared by the functional, inplace, out and mutable variants of an op."""
    base = func.name.name.base
    if strip_view_copy_name:
        if base.endswith("_copy"):
            base = base.replace("_copy", "")
        elif base.endswith("_scatter"):
            base = base.replace("scatter", "inverse")
    args = func.arguments
    mutable_inputs = itertools.chain(
        [args.self_arg.argument] if args.self_arg is not None else [], args.out, args.post_self_positional
    )
    extra_returns = tuple(
        Return(f"{a.name}_out" if keep_return_names else None, a.type, None)
        for a in mutable_inputs
        if a.is_write and not any(a.annotation == r.annotation for r in func.returns)
    )
    returns = tuple(Return(r.name if keep_return_names else None, r.type, None) for r in func.returns)
    arguments = args.signature(strip_default=strip_default)
    if str(func.name) == "bernoulli.p":
        # torchgen gives this one signature the default its functional variant has.
        arguments = _with_default(arguments, "p", "0.5")
    name = OperatorName(BaseOperatorName(base, False, func.name.name.dunder_method), "")
    return FunctionSchema(name, arguments, returns + extra_returns)


def signature_key(func: FunctionSchema, strip_view_copy_name: bool = False) -> str:
    """str(func.signature(strip_view_copy_name=...)), computed without building the signature.

    Grouping needs only to know which schemas share a signature; printing the
    signature from memoized argument texts is several times cheaper than building it.
    """
    base = func.name.name.base
    if strip_view_copy_name:
        if base.endswith("_copy"):
            base = base.replace("_copy", "")
        elif base.endswith("_scatter"):
            base = base.replace("scatter", "inverse")
    name = f"__{base}__" if func.name.name.dunder_method else base
    args = func.arguments
    arguments = args.plain
    if base == "bernoulli" and str(func.name) == "bernoulli.p":
        arguments = arguments.replace("float p", "float p=0.5")
    returns = [r.plain for r in func.returns]
    mutable_inputs = [a for a in itertools.chain([args.self_arg.argument] if args.self_arg is not None else [], args.out,
                                                 args.post_self_positional) if a.annotation is not None]
    if mutable_inputs:
        returns.extend(str(a.type) for a in mutable_inputs
                       if a.is_write and not any(a.annotation == r.annotation for r in func.returns))
    shown = returns[0] if len(returns) == 1 else "(" + ", ".join(returns) + ")"
    return f"{name}({arguments}) -> {shown}"


def _with_default(arguments: Arguments, name: str, default: str) -> Arguments:
    def patch(a: Argument) -> Argument:
        return replace(a, default=default) if a.name == name and str(a.type) == "float" else a

    return replace(arguments, post_self_positional=tuple(map(patch, arguments.post_self_positional)))

