"""The public C++ API (at::op and Tensor::op): names, types, defaults and argument lists.

Mirrors torchgen.api.cpp; the per-operator switches come in an ApiOptions value
instead of thread-local state.
"""

from __future__ import annotations

import functools

from ...frozen import PER_TEXT_MEMO
from ...model.schema import (
    Argument,
    Arguments,
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)
from ...releases.profile import CppSpelling
from .types import (
    BASE_TYPE_TO_CPP,
    ApiOptions,
    ArgName,
    ArrayCType,
    ArrayRefCType,
    BaseCType,
    Binding,
    ConstRefCType,
    CType,
    ListCType,
    MutRefCType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    SymIntT,
    TupleCType,
    VectorCType,
    boolT,
    intArrayRefT,
    iTensorListRefT,
    longT,
    optionalIntArrayRefT,
    optionalSymIntArrayRefT,
    scalarT,
    symIntArrayRefT,
    tensorListT,
    tensorOptionsT,
    tensorT,
    voidT,
)


def name(func: FunctionSchema, *, faithful_name_for_out_overloads: bool = False, symint_overload: bool = False) -> str:
    text = str(func.name.name) + ("_symint" if symint_overload else "")
    if func.is_out_fn():
        text += "_outf" if faithful_name_for_out_overloads else "_out"
    return text


def valuetype_type(t: Type, *, binds: ArgName, symint: bool = False) -> NamedCType | None:
    """Types that look the same as arguments and returns; None for the rest."""
    ctype = _value_ctype(t, symint)
    return None if ctype is None else NamedCType(binds, ctype)


def argumenttype_type(t: Type, *, mutable: bool, binds: ArgName, options: ApiOptions,
                      remove_non_owning_ref_types: bool = False, symint: bool = False,
                      owning_tensors_by_value: bool = False) -> NamedCType:
    """remove_non_owning_ref_types: the owning type (std::vector for lists, and with owning_tensors_by_value,
    the Release field of that name, Tensor and Scalar by value)."""
    by_value = remove_non_owning_ref_types and owning_tensors_by_value
    return NamedCType(binds, _argument_ctype(t, mutable, options, remove_non_owning_ref_types, symint, by_value))


# The C++ type of a schema type does not depend on the argument's name: memoized without it (every
# signature of every op asks again, for the same few hundred types).
@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per type: frozen.PER_TEXT_MEMO says why the bound fits
def _value_ctype(t: Type, symint: bool) -> CType | None:
    if isinstance(t, BaseType):
        if t.name in (BaseTy.Tensor, BaseTy.Scalar):
            return None
        if t.name is BaseTy.SymInt:
            return SymIntT if symint else longT
        return BASE_TYPE_TO_CPP[t.name.name]
    if isinstance(t, OptionalType):
        elem = _value_ctype(t.elem, symint)
        return None if elem is None else OptionalCType(elem)
    if isinstance(t, ListType):
        if str(t.elem) == "bool":
            if t.size is None:
                raise ValueError("a bool list type must have a size")
            return ArrayCType(boolT, t.size)
        return None
    raise ValueError(f"unrecognized type {t!r}")


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per type and flags: frozen.PER_TEXT_MEMO says why the bound fits
def _argument_ctype(t: Type, mutable: bool, options: ApiOptions, remove_non_owning_ref_types: bool,
                    symint: bool, by_value: bool = False) -> CType:
    value = _value_ctype(t, symint)
    if value is not None:
        return value
    mutable_ref = mutable and not options.use_const_ref_for_mutable_tensors
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return MutRefCType(tensorT) if mutable_ref else tensorT if by_value else ConstRefCType(tensorT)
        if t.name is BaseTy.Scalar:
            return scalarT if by_value else ConstRefCType(scalarT)
        raise ValueError(f"base type should have been a value type: {t}")
    if isinstance(t, OptionalType):
        elem = str(t.elem)
        if elem == "Tensor":
            if mutable_ref:
                return MutRefCType(tensorT)
            return OptionalCType(tensorT) if by_value else ConstRefCType(OptionalCType(tensorT))
        if elem == "Scalar":
            return OptionalCType(scalarT) if by_value else ConstRefCType(OptionalCType(scalarT))
        if isinstance(t.elem, ListType) and str(t.elem.elem) == "int":
            return optionalIntArrayRefT
        if isinstance(t.elem, ListType) and str(t.elem.elem) == "SymInt":
            return optionalSymIntArrayRefT if symint else optionalIntArrayRefT
        return OptionalCType(_argument_ctype(t.elem, mutable, options, False, symint))
    if isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "int":
            return VectorCType(longT) if remove_non_owning_ref_types else intArrayRefT
        if elem == "SymInt":
            if remove_non_owning_ref_types:
                return VectorCType(SymIntT if symint else longT)
            return symIntArrayRefT if symint else intArrayRefT
        if elem == "Tensor":
            return ConstRefCType(iTensorListRefT) if options.use_ilistref_for_tensor_lists else tensorListT
        if elem == "Scalar":
            return ArrayRefCType(scalarT)
        if elem == "Tensor?":
            return ConstRefCType(ListCType(OptionalCType(tensorT)))
        if elem == "Dimname":  # named tensors, until torch 2.12
            return BaseCType("at::DimnameList")
        return ArrayRefCType(_argument_ctype(t.elem, mutable, options, False, symint))
    raise ValueError(f"unrecognized type {t!r}")


def argument_type(a: Argument, *, binds: ArgName, options: ApiOptions, symint: bool = False) -> NamedCType:
    return argumenttype_type(a.type, mutable=a.is_write, binds=binds, options=options, symint=symint)


def returntype_type(t: Type, *, mutable: bool, options: ApiOptions, symint: bool) -> CType:
    """symint: the signature's; a SymInt return follows it until 2.0 (int64_t in the int signature), and is always
    c10::SymInt from 2.1 (CppSpelling.symint_returns_follow_signature)."""
    symint = symint or not options.spelling.symint_returns_follow_signature
    value = valuetype_type(t, binds="__placeholder__", symint=symint)
    if value is not None:
        return value.type
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            if not mutable:
                return tensorT
            return ConstRefCType(tensorT) if options.use_const_ref_for_mutable_tensors else MutRefCType(tensorT)
        if t.name is BaseTy.Scalar:
            return scalarT
    elif isinstance(t, ListType):
        if mutable:
            raise ValueError("native functions never return a mutable tensor list; they return void")
        if t.size is not None:
            raise ValueError(f"fixed size list returns are not supported: {t}")
        return VectorCType(returntype_type(t.elem, mutable=False, options=options, symint=symint))
    elif isinstance(t, OptionalType):
        elem = returntype_type(t.elem, mutable=mutable, options=options, symint=symint)
        if str(t.elem) == "Tensor":
            return OptionalCType(elem)
    raise ValueError(f"unrecognized return type {t}")


def return_type(r: Return, *, options: ApiOptions, symint: bool) -> CType:
    return returntype_type(r.type, mutable=r.is_write, options=options, symint=symint)


def returns_type(rs: tuple[Return, ...], *, options: ApiOptions, symint: bool) -> CType:
    if not rs:
        return voidT
    if len(rs) == 1:
        return return_type(rs[0], options=options, symint=symint)
    return TupleCType(tuple(return_type(r, options=options, symint=symint) for r in rs))


def return_names(func: FunctionSchema, *, fallback_name: str = "result") -> list[str]:
    names = []
    for i, r in enumerate(func.returns):
        if func.name.name.inplace:
            if i != 0:
                raise ValueError("an in-place function with several returns")
            names.append("self")
        elif func.is_out_fn():
            names.append(func.arguments.out[i].name)
        elif r.name:
            clash = any(r.name == a.name for a in func.schema_order_arguments())
            names.append(f"{r.name}_return" if clash else r.name)
        else:
            names.append(fallback_name if len(func.returns) == 1 else f"{fallback_name}{i}")
    return names


JIT_TO_CPP_DEFAULT = {
    "False": "false",
    "True": "true",
    "Mean": "at::Reduction::Mean",
    "[]": "{}",
    "contiguous_format": "c10::MemoryFormat::Contiguous",
    "long": "at::kLong",
}


def _cpp_string_literal(d: str) -> str:
    """A schema string default ('...' with backslash escapes) as a C++ string literal."""
    out = []
    i = 1
    while i + 1 < len(d):
        if d[i] != "\\":
            out.append('\\"' if d[i] == '"' else d[i])
            i += 1
        else:
            out.append("'" if d[i + 1] == "'" else d[i:i + 2])
            i += 2
    return '"' + "".join(out) + '"'


def default_expr(d: str, t: Type, *, symint: bool, spelling: CppSpelling) -> str:
    """A schema default as a C++ expression (None as the release spells nullopt)."""
    if d == "None" and str(t) == "Tensor?":
        return "{}"
    if isinstance(t, BaseType) and t.name is BaseTy.str and len(d) >= 2 and d[0] == "'" and d[-1] == "'":
        return _cpp_string_literal(d)
    if isinstance(t, OptionalType):
        return spelling.nullopt() if d == "None" else default_expr(d, t.elem, symint=symint, spelling=spelling)
    if isinstance(t, ListType):
        if d.startswith("[") and d.endswith("]"):
            return "{" + d[1:-1] + "}"
        if symint and spelling.symint_list_defaults_wrapped and d.isdigit() and str(t.elem) == "SymInt":
            return f"c10::SymInt({d})"
        if t.size is None:
            raise ValueError(f"expected a list default '[...]' but found '{d}'")
    return spelling.nullopt() if d == "None" else JIT_TO_CPP_DEFAULT.get(d, d)


def argument(a: Argument | TensorOptionsArguments | SelfArgument, *, cpp_no_default_args: frozenset[str],
             method: bool, faithful: bool, symint: bool, has_tensor_options: bool,
             options: ApiOptions) -> list[Binding]:
    if isinstance(a, Argument):
        binds: ArgName = a.name
        if a.name == "memory_format" and has_tensor_options:
            binds = SpecialArgName.possibly_redundant_memory_format
        default = None
        if a.name not in cpp_no_default_args and a.default is not None:
            default = default_expr(a.default, a.type, symint=symint, spelling=options.spelling)
        return [Binding(a.name, argument_type(a, binds=binds, options=options, symint=symint), a, options.spelling,
                        default)]
    if isinstance(a, TensorOptionsArguments):
        if faithful:
            return [b for part in a.all() for b in argument(
                part, cpp_no_default_args=cpp_no_default_args, method=method, faithful=faithful, symint=symint,
                has_tensor_options=has_tensor_options, options=options)]
        default = None
        if all(x.default == "None" for x in a.all()):
            default = "{}"
        elif a.dtype.default == "long":
            default = "at::kLong"
        return [Binding("options", NamedCType("options", tensorOptionsT), a, options.spelling, default)]
    if method:
        return []  # the implicit `this`
    return argument(a.argument, cpp_no_default_args=cpp_no_default_args, method=method, faithful=faithful,
                    symint=symint, has_tensor_options=has_tensor_options, options=options)


def arguments(args: Arguments, *, faithful: bool, symint: bool, method: bool, cpp_no_default_args: frozenset[str],
              options: ApiOptions) -> list[Binding]:
    """The C++ API's parameters: out arguments first, unless faithful (schema order)."""
    ordered = [*args.positional, *args.kwarg_only, *args.out] if faithful else \
        [*args.out, *args.positional, *args.kwarg_only]
    has_options = args.tensor_options is not None
    bindings = [b for a in ordered for b in argument(
        a, cpp_no_default_args=cpp_no_default_args, method=method, faithful=faithful, symint=symint,
        has_tensor_options=has_options, options=options)]
    return [b.no_default() for b in bindings] if faithful else bindings
