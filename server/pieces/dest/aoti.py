"""AOTInductor C shims: for each fallback op an `extern "C"` function taking C types (handles, pointers
plus lengths, ints for enums) that converts them and calls the op's C++ API or a backend's kernel.

An op whose argument or return types have no C form gets no shim (None), as in gen_aoti_c_shim.py.
Versioned ops (a `vN` entry naming the arguments added in that version) get one shim per version,
newest first, each older one passing the defaults of the arguments added later. The release profile
says which form (gen.py before 2.8 writes an older one: the aoti_* fields of releases.Release).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache

from ...frozen import PER_OP_MEMO, record
from ...model import dispatch as dk
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup, Variant
from ...model.schema import Argument, BaseTy, BaseType, FunctionSchema, ListType, OperatorName, OptionalType, Type
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api import cpp
from ..api.signatures import CppSignatureGroup

B = BaseTy
# base type -> (C type, ATen type, call-site converter)
_BASE_TYPES: dict[BaseTy, tuple[str, str, str]] = {
    B.Tensor: ("AtenTensorHandle", "at::Tensor", "resolve_tensor_dispatch_flags"),
    B.bool: ("int32_t", "bool", ""),
    B.int: ("int64_t", "int64_t", ""),
    B.SymInt: ("int64_t", "c10::SymInt", ""),
    B.Scalar: ("double", "c10::Scalar", ""),
    B.float: ("double", "double", ""),
    B.str: ("const char*", "::std::string_view", ""),
    B.DeviceIndex: ("int32_t", "c10::DeviceIndex", "static_cast<c10::DeviceIndex>"),
    B.Layout: ("int32_t", "c10::Layout", "static_cast<c10::Layout>"),
    B.MemoryFormat: ("int32_t", "c10::MemoryFormat", "static_cast<c10::MemoryFormat>"),
    B.ScalarType: ("int32_t", "c10::ScalarType", "static_cast<c10::ScalarType>"),
    B.Generator: ("AtenGeneratorHandle", "at::Generator", "*generator_handle_to_generator_pointer"),
}
_TORCH_VERSION = re.compile(r"^TORCH_VERSION_\d+_\d+_\d+$")


class NoCShim(ValueError):
    """An argument or return type with no C shim form: the op gets no shim."""


class ShimFails(ValueError):
    """An argument gen.py's shim generator fails on (an assertion, where other types only leave the op out): a list
    whose element takes two C parameters (Device, Device?). Every release has it; check rule OPG960."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument


class FallbackOpsError(ValueError):
    """A malformed entry of the fallback ops lists (fallback_ops.py)."""


@record
class CArg:
    """One schema argument as C parameters (types and names), ATen types and call-site expressions."""

    c_types: tuple[str, ...]
    names: tuple[str, ...]
    aten_types: tuple[str, ...]
    exprs: tuple[str, ...]


def _has_c_form(t: BaseTy, release: Release) -> bool:
    return t in _BASE_TYPES and (t is not B.Generator or release.aoti_shim_form.generator_handles)


def _base_arg(t: BaseType, name: str, is_write: bool, release: Release) -> CArg:
    if _has_c_form(t.name, release):
        c_type, aten_type, conv = _BASE_TYPES[t.name]
        if t.name is B.str and not release.aoti_shim_form.str_is_std_string_view:
            aten_type = "c10::string_view"
        if t.name is B.Tensor and (is_write or not release.aoti_tensors_resolve_dispatch_flags):
            expr = f"*tensor_handle_to_tensor_pointer({name})"
        else:
            expr = f"{conv}({name})" if conv else name
        return CArg((c_type,), (name,), (aten_type,), (expr,))
    if t.name is B.Device:
        return CArg(("int32_t", "int32_t"), (name, name + "_index_"), ("c10::Device",),
                    (f"c10::Device(static_cast<c10::DeviceType>({name}), static_cast<c10::DeviceIndex>({name}_index_))",))
    raise NoCShim(f"arg type {t}")


def _optional_arg(t: OptionalType, name: str, release: Release) -> CArg:
    inner = convert_arg(t.elem, name, release=release)
    c_types, names = list(inner.c_types), inner.names
    aten_types, exprs = [], []
    j = 0
    for aten_type in inner.aten_types:
        c_types[j] += "*"  # a pointer stands for the optional
        aten_types.append(release.cpp_spelling.optional(aten_type))
        if aten_type.startswith("c10::ArrayRef<"):
            exprs.append(f"pointer_to_optional_list<{aten_type[len('c10::ArrayRef<'):-1]}>({names[j]}, {names[j + 1]})")
            j += 2
        elif aten_type == "c10::Device":
            exprs.append(f"pointer_to_optional_device({names[j]}, {names[j + 1]})")
            j += 2
        elif aten_type == "at::Tensor" and release.aoti_tensors_resolve_dispatch_flags:
            exprs.append(f"resolve_tensor_dispatch_flags({names[j]})")
            j += 1
        else:
            exprs.append(f"pointer_to_optional<{aten_type}>({names[j]})")
            j += 1
    return CArg(tuple(c_types), names, tuple(aten_types), tuple(exprs))


def _list_arg(t: ListType, name: str, is_write: bool, release: Release) -> CArg:
    inner = convert_arg(t.elem, name, release=release)
    if len(inner.c_types) != 1:
        raise ShimFails(name, f"a list of {t.elem} ('{t}', whose elements are two C parameters each)")
    name = inner.names[0]
    atype = inner.aten_types[0]
    if atype == "bool":
        if t.size is None:
            raise NoCShim("bool list without a size")
        expr = f"pointer_to_list<{t.size}>({name})"
    elif atype == "at::Tensor" and not is_write and release.aoti_tensors_resolve_dispatch_flags:
        expr = f"resolve_tensor_list_dispatch_flags({name}, {name}_len_)"
    elif atype == release.cpp_spelling.optional("at::Tensor"):
        resolved = (f"resolve_tensor_list_dispatch_flags({name}, {name}_len_)"
                    if release.aoti_tensors_resolve_dispatch_flags else f"pointer_to_list<{atype}>({name}, {name}_len_)")
        expr = f"c10::List<{atype}>(c10::ArrayRef<{atype}>({resolved}))"
    else:
        expr = f"pointer_to_list<{atype}>({name}, {name}_len_)"
    return CArg((f"const {inner.c_types[0]}*", "int64_t"), (name, name + "_len_"), (f"c10::ArrayRef<{atype}>",),
                (expr,))


def convert_arg(t: Type, name: str, is_write: bool = False, *, release: Release) -> CArg:
    if isinstance(t, BaseType):
        return _base_arg(t, name, is_write, release)
    if isinstance(t, OptionalType):
        return _optional_arg(t, name, release)
    if isinstance(t, ListType):
        return _list_arg(t, name, is_write, release)
    raise NoCShim(f"argument type {t}")


def gen_arguments(args: list[Argument], skipped: frozenset[str], release: Release
                  ) -> tuple[list[str], list[str]]:
    """The C parameters ("type name") and the call-site expressions; skipped arguments pass their default."""
    params: list[str] = []
    exprs: list[str] = []
    for a in args:
        if a.name in skipped:
            spelling = release.cpp_spelling
            exprs.append(cpp.default_expr(a.default, a.type, symint=False, spelling=spelling) if a.default is not None
                         else spelling.nullopt(rooted=False))
            continue
        c = convert_arg(a.type, a.name, a.is_write, release=release)
        params += [f"{t} {n}" for t, n in zip(c.c_types, c.names)]
        exprs += c.exprs
    return params, exprs


def _convert_return(t: BaseType, val: str, release: Release) -> str:
    if t.name is B.Tensor:
        return f"new_tensor_handle(std::move({val}))" + (";" if release.aoti_shim_form.tensor_return_ends_twice else "")
    if t.name is B.SymInt:
        return f"{val}.expect_int()"
    if t.name is B.Scalar:
        return f"{val}.toDouble()"
    return val


def gen_returns(schema: FunctionSchema, release: Release) -> tuple[list[str], list[str]]:
    """Returns become out pointers ret0, ret1, ...: their parameters and the assignments filling them (each
    checked first for ops named by a substring in the release's `aoti_nullable_returns`)."""
    types: list[BaseType] = []
    for r in schema.returns:
        if not (isinstance(r.type, BaseType) and _has_c_form(r.type.name, release)):
            raise NoCShim(f"return type {r.type}")
        types.append(r.type)
    params = [f"{_BASE_TYPES[t.name][0]}* ret{i}" for i, t in enumerate(types)]
    nullable = any(n in schema.name.unambiguous_name() for n in release.aoti_nullable_returns)
    assigns = []
    for i, t in enumerate(types):
        rval = _convert_return(t, "tmp_result" if len(types) == 1 else f"std::get<{i}>(tmp_result)", release)
        assigns.append(f"if (ret{i}) {{ *ret{i} = {rval}; }}" if nullable else f"*ret{i} = {rval};")
    return params, assigns


# ---------------------------------------------------------------------------------------------- versions


@record
class OpVersion:
    """One version of a fallback op: the arguments it added and the TORCH_VERSION_X_Y_Z it appeared in."""

    number: int
    new_args: tuple[str, ...] = ()
    since: str | None = None


def _since(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _TORCH_VERSION.match(value):
        raise FallbackOpsError(f"`since` value {value!r} is not of the form TORCH_VERSION_X_Y_Z")
    return value


def parse_versions(name: str, metadata: Mapping[str, object], with_since: bool = True) -> tuple[OpVersion, ...]:
    """An entry of fallback_ops.py, oldest first: {"since": ..., "v2": {"new_args": [...], "since": ...}}, or
    without `with_since` (the format until torch 2.12) {"v2": [...new args]}."""
    out = {1: OpVersion(1, (), _since(metadata.get("since")) if with_since else None)}
    for key, payload in sorted(metadata.items()):
        if key == "since" and with_since:
            continue
        if not key.startswith("v") or not key[1:].isdigit():
            raise FallbackOpsError(f"Version number for {name} is {key}, not of the form vN")
        number = int(key[1:])
        if number in out:
            raise FallbackOpsError(f"{key} for {name} has already been defined")
        if not with_since:
            # gen.py until 2.12 adds the entry's items to the arguments left out, whatever it is (a dict's keys,
            # a string's letters); only what it cannot add is refused.
            if not isinstance(payload, (list, dict, str)) or not all(isinstance(a, str) for a in payload):
                raise FallbackOpsError(f"Variant {key} for {name} must be a list of the argument names it adds")
            out[number] = OpVersion(number, tuple(payload))
            continue
        if not isinstance(payload, dict) or not isinstance(payload.get("new_args", []), list):
            raise FallbackOpsError(f"Variant {key} for {name} must be a dict with a list 'new_args'")
        out[number] = OpVersion(number, tuple(payload.get("new_args", [])), _since(payload.get("since")))
    return tuple(out[n] for n in sorted(out))


@dataclass(frozen=True)
class FallbackOps:
    """The two lists of fallback_ops.py: op name ("aten.add.Tensor") -> its versions (files.aoti reads them)."""

    inductor: tuple[tuple[str, tuple[OpVersion, ...]], ...]
    aten: tuple[tuple[str, tuple[OpVersion, ...]], ...]

    @cached_property
    def inductor_map(self) -> dict[str, tuple[OpVersion, ...]]:
        return dict(self.inductor)

    @cached_property
    def aten_map(self) -> dict[str, tuple[OpVersion, ...]]:
        return dict(self.aten)


@record
class Shim:
    declarations: str
    definitions: str


def _definition(declaration: str, call: str, exprs: list[str], assigns: list[str], release: Release) -> str:
    tmp = "auto tmp_result = " if assigns else ""
    args_line = f"            {', '.join(exprs)}" if exprs else ""
    if release.aoti_shim_form.returns_indented_with_tabs:
        returns = "\n" + "\n".join("\t\t" + a for a in assigns) + "\n"
    else:
        returns = "".join("\n        " + a for a in assigns) + "\n"
    return (f"\n{declaration} {{\n    AOTI_TORCH_CONVERT_EXCEPTION_TO_ERROR_CODE({{\n"
            f"        {tmp}{call}(\n{args_line}\n        );" + returns + "    });\n}\n")


def _shim_version(schema: FunctionSchema, device: str, call: str, func_name: str,
                  skipped: frozenset[str], release: Release) -> tuple[str, str]:
    if schema.is_out_fn():
        params, exprs = gen_arguments([*schema.arguments.out, *schema.arguments.flat_non_out], skipped, release)
        assigns: list[str] = []
    else:
        params, exprs = gen_arguments(list(schema.arguments.flat_all), skipped, release)
        ignored = schema.name.name.inplace and release.aoti_shim_form.inplace_returns_ignored
        ret_params, assigns = ([], []) if ignored else gen_returns(schema, release)
        params += ret_params
    declaration = f"AOTITorchError aoti_torch_{device}_{func_name}({', '.join(params)})"
    return declaration, _definition(declaration, call, exprs, assigns, release)


def compute_shim(schema: FunctionSchema, device: str, call: str, op_versions: tuple[OpVersion, ...],
                 release: Release) -> Shim:
    """Every version of the shim, newest first; each older one passes the defaults of later arguments."""
    base = schema.name.unambiguous_name()
    skipped: frozenset[str] = frozenset()
    decls, defns = [], []
    for v in reversed(op_versions):
        func_name = base if v.number == 1 else f"{base}_v{v.number}"
        declaration, definition = _shim_version(schema, device, call, func_name, skipped, release)
        skipped |= frozenset(v.new_args)
        decl = f"AOTI_TORCH_EXPORT {declaration};"
        if v.since is not None:
            decl = f"#if TORCH_FEATURE_VERSION >= {v.since}\n{decl}\n#endif // TORCH_FEATURE_VERSION >= {v.since}"
        decls.append(decl)
        defns.append(definition)
    return Shim("\n".join(decls), "\n".join(defns))


# ---------------------------------------------------------------------------------------------- backends


def backend_call(f: NativeFunction, index: BackendIndex | None, spelling: CppSpelling) -> str:
    """What the shim calls: a backend's kernel (at::<key>::<op>) or the C++ API (at::<op>)."""
    sigs = CppSignatureGroup.from_native_function(f, method=False, spelling=spelling)
    symint = f.func.has_symint(returns_too=spelling.symint_returns_follow_signature)
    cpp_sig = sigs.symint_signature if symint else sigs.signature
    assert cpp_sig is not None
    if index is not None:
        return f"at::{str(index.dispatch_key).lower()}::{cpp_sig.name()}"
    if symint and Variant.function not in f.variants:
        return f"at::symint::{cpp_sig.name().removesuffix('_symint')}<c10::SymInt>"
    return f"at::{cpp_sig.name()}"


def backend_index_for(f: NativeFunction, delegates: Mapping[OperatorName, NativeFunctionsGroup],
                      key: dk.DispatchKey, indices: Mapping[dk.DispatchKey, BackendIndex], *,
                      extend: bool = False) -> BackendIndex | None:
    """The backend whose kernel a device shim calls: the device's own, else a composite one; None: no shim.
    extend (--extend-aoti-c-shim): out-of-tree ops get shims for their own kernels only, the in-tree
    shims already cover the composite ones."""
    index = indices[key]
    group = delegates.get(f.structured_delegate) if f.structured_delegate is not None else None
    if index.has_kernel(f) or (group is not None and index.has_kernel(group)):
        return index
    if extend:
        return None
    for composite in (dk.CEA, dk.CEA_NON_FUNCTIONAL, dk.CIA):
        if indices[composite].has_kernel(f):
            return indices[composite]
    return None


def every_op_backend_index(f: NativeFunction, key: dk.DispatchKey, indices: Mapping[dk.DispatchKey, BackendIndex]
                           ) -> BackendIndex | None:
    """The backend a device shim calls in the every-op form (gen.py until 2.3): the device's own kernel, else a
    CompositeExplicitAutograd(NonFunctional) one; None (no shim) for a pointwise op or one with neither."""
    if "pointwise" in f.tags:
        return None
    return next((indices[k] for k in (key, dk.CEA, dk.CEA_NON_FUNCTIONAL) if indices[k].has_kernel(f)), None)


@lru_cache(maxsize=PER_OP_MEMO)  # per op and device: frozen.PER_OP_MEMO says why the bound fits
def shim(f: NativeFunction, device: str, call: str, op_versions: tuple[OpVersion, ...],
         release: Release) -> Shim | None:
    """The op's shim for a device, calling `call` (None when its types have no C form)."""
    try:
        return compute_shim(f.func, device, call, op_versions, release)
    except NoCShim:
        return None
