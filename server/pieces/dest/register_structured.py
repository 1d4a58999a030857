"""Register<Key>.cpp pieces for structured kernels: the per-variant class, its wrapper and m.impl.

For each variant (functional, in-place, out=) of a structured group, torchgen
writes a class deriving from the kernel's meta/impl class that owns or
borrows the outputs, and a wrapper that runs meta() then impl() through it.
Meta gets only meta(); CompositeExplicitAutogradNonFunctional calls the out=
op instead of impl().
"""

from __future__ import annotations

import textwrap

from ...model import dispatch as dk
from ...model.native_aot import NativeAotDeclaration
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import SchemaKind
from ...releases import Release
from ..api import native, structured
from ..api.signatures import CppSignatureGroup, NativeSignature
from ..api.translate import translate
from ..api.types import ApiOptions, Binding, ConstRefCType, Expr, MutRefCType, NamedCType, tensorT
from .native_aot import stub_consultation
from .register import device_check, wrapper_prefix

META = dk.K["Meta"]
# An external backend's structured classes (pytorch#172539's proposal, with --experimental) are guarded and
# have functional variants on PrivateUse1, as MPS's and XPU's are (pytorch#196960 asks the same of torchgen).
PRIVATE_USE1 = dk.K["PrivateUse1"]
_DEVICE_GUARDED_KEYS = frozenset(dk.K[n] for n in ("CUDA", "MPS", "XPU")) | {dk.CEA_NON_FUNCTIONAL}
_FUNCTIONAL_KEYS = frozenset(dk.K[n] for n in ("Meta", "CPU", "CUDA", "MPS", "XPU", "MTIA")) | {dk.CEA_NON_FUNCTIONAL}
_GUARD_FIELDS = {dk.K["CUDA"]: "c10::cuda::OptionalCUDAGuard guard_;"} | {
    k: "c10::OptionalDeviceGuard guard_;" for k in (dk.CEA_NON_FUNCTIONAL, dk.K["MPS"], dk.K["XPU"], dk.K["MTIA"])}

_SET_GUARD = """
auto current_device = guard_.current_device();
if (C10_UNLIKELY(current_device.has_value())) {
  TORCH_INTERNAL_ASSERT(*current_device == options.device(),
    "structured kernels don't support multi-device outputs");
} else {
  guard_.reset_device(options.device());
}
"""


def _create_proxy(owned: bool) -> str:
    value = "std::move(maybe_proxy).value()"
    return f"""
auto maybe_proxy = maybe_create_proxy(out, sizes, strides, options);
if (C10_UNLIKELY(maybe_proxy.has_value())) {{
    proxy_outputs_[output_idx] = {f"c10::ExclusivelyOwned<Tensor>({value})" if owned else value};
}}
"""


def _owned_star(kind: SchemaKind, release: Release) -> str:
    """The dereference of a functional variant's output, which is an ExclusivelyOwned<Tensor> until 2.0."""
    return "*" if release.structured_outputs_exclusively_owned and kind is SchemaKind.functional else ""


class UnsupportedStructuredKind(ValueError):
    """torchgen has no structured codegen for mutable or scratch variants."""


def _unguarded_xpu(key: dk.DispatchKey, release: Release) -> bool:
    """XPU's structured classes in a release before 2.6: no guard_ field, and their set_output_* set none."""
    return key is dk.K["XPU"] and not release.structured_xpu_outputs_guard_device


def _set_output_body(key: dk.DispatchKey, kind: SchemaKind, maybe_create_proxy: bool, release: Release,
                     external: bool = False) -> str:
    private = external and key is PRIVATE_USE1
    guarded = key in _DEVICE_GUARDED_KEYS and not _unguarded_xpu(key, release) or private
    guard = _SET_GUARD + "\n" if guarded else ""
    proxy = _create_proxy(release.structured_outputs_exclusively_owned) if maybe_create_proxy else ""
    if kind is SchemaKind.functional:
        if key not in _FUNCTIONAL_KEYS and not private:
            raise UnsupportedStructuredKind(f"no structured functional variant for {key}")
        return f"{guard}\noutputs_[output_idx] = create_out(sizes, strides, options);"
    if kind is SchemaKind.inplace:
        return f"{guard}\nconst auto& out = outputs_[output_idx].get();\ncheck_inplace(out, sizes, options);\n{proxy}"
    if kind is SchemaKind.out:
        return f"{guard}\nconst auto& out = outputs_[output_idx].get();\nresize_out(out, sizes, strides, options);\n{proxy}"
    raise UnsupportedStructuredKind(f"{kind.name} structured operators are not supported")


def _set_output_functions(key: dk.DispatchKey, kind: SchemaKind, parent: str, generate_super: bool,
                          release: Release, external: bool = False) -> str:
    names = release.structured_outputs_propagate_names
    passed = ", names" if names else ""
    super_call = f"{parent}::set_output_raw_strided(output_idx, sizes, strides, options{passed});" \
        if generate_super else ""
    propagate = f"""
    if (!names.empty()) {{
      namedinference::propagate_names({_owned_star(kind, release)}outputs_[output_idx], names);
    }}""" if names else ""

    def one(name: str, maybe_create_proxy: bool) -> str:
        return f"""
void set_output_{name}(
    int64_t output_idx, IntArrayRef sizes, IntArrayRef strides,
    TensorOptions options{", DimnameList names" if names else ""}
) override {{
{textwrap.indent(_set_output_body(key, kind, maybe_create_proxy, release, external), "    ")}{propagate}
    // super must happen after, so that downstream can use maybe_get_output
    // to retrieve the output
{textwrap.indent(super_call, "    ")}
}}
"""

    return f"""
{one("strided", True)}
{one("raw_strided", False)}
"""


def _constructor(kind: SchemaKind, class_name: str, returns: int) -> str:
    if kind is SchemaKind.functional:
        return ""
    if kind is SchemaKind.inplace:
        return f"{class_name}(Tensor& self) : outputs_{{std::ref(self)}} {{}}"
    out_args = ", ".join(f"Tensor& out{i}" for i in range(returns))
    out_refs = ", ".join(f"std::ref(out{i})" for i in range(returns))
    return f"{class_name}({out_args}) : outputs_{{ {out_refs} }} {{}}"


def _guard_field(key: dk.DispatchKey, release: Release, rocm: bool, external: bool = False) -> str:
    if _unguarded_xpu(key, release):
        return ""
    if external and key is PRIVATE_USE1:
        return "c10::OptionalDeviceGuard guard_;"
    if rocm and key is dk.K["CUDA"] and release.rocm_guards_masquerade_as_cuda:
        return "c10::hip::OptionalHIPGuardMasqueradingAsCUDA guard_;"
    return _GUARD_FIELDS.get(key, "")


def _class(f: NativeFunction, key: dk.DispatchKey, kind: SchemaKind, class_name: str, parent: str,
           generate_super: bool, release: Release, rocm: bool, external: bool = False) -> str:
    returns = len(f.func.returns)
    owned = release.structured_outputs_exclusively_owned
    held = "c10::ExclusivelyOwned<Tensor>" if owned else "Tensor"
    if kind is SchemaKind.functional:
        output_type, output_value, proxy_field = held, f"{_owned_star(kind, release)}outputs_[output_idx]", ""
    else:
        output_type = "std::reference_wrapper<Tensor>"
        proxy = "**proxy_outputs_[output_idx]" if owned else "*proxy_outputs_[output_idx]"
        output_value = f"proxy_outputs_[output_idx].has_value() ? {proxy} : outputs_[output_idx].get()"
        proxy_field = f"std::array<{release.cpp_spelling.optional(held)}, {returns}> proxy_outputs_;"
    indent = " " * 4
    lines = (
        f"struct {class_name} final : public {parent} {{",
        textwrap.indent(_constructor(kind, class_name, returns), indent),
        textwrap.indent(_set_output_functions(key, kind, parent, generate_super, release, external), indent),
        "    const Tensor& maybe_get_output(int64_t output_idx) override {",
        f"      return {output_value};\n",
        "    }",
        f"    std::array<{output_type}, {returns}> outputs_;",
        textwrap.indent(proxy_field, indent),
        textwrap.indent(_guard_field(key, release, rocm, external), indent),
        "};",
    )
    return "\n".join(line for line in lines if line)


def wrapper_signature(f: NativeFunction, index: BackendIndex, release: Release) -> NativeSignature:
    kernel = index.get_kernel(f)
    symint = kernel is not None and kernel.supports_symint()
    return NativeSignature(f.func, symint, ApiOptions.of(f, release.cpp_spelling), wrapper_prefix(index, release))


def wrapper_name(f: NativeFunction, index: BackendIndex, release: Release) -> str:
    """The wrapper's name (wrapper_signature's), which no type enters."""
    return f"{wrapper_prefix(index, release)}{native.name(f.func)}"


def generates_structured(f: NativeFunction, index: BackendIndex) -> bool:
    return not (index.dispatch_key is dk.CEA_NON_FUNCTIONAL and f.func.kind() is SchemaKind.out)


def _names(g: NativeFunctionsGroup, index: BackendIndex, kind: SchemaKind, external_class: str | None = None
           ) -> tuple[str, str]:
    meta_name = structured.meta_name(g)
    if index.dispatch_key is META:
        return f"structured_{meta_name}_meta_{kind.name}", f"at::meta::structured_{meta_name}"
    if index.dispatch_key is dk.CEA_NON_FUNCTIONAL:
        return f"structured_{meta_name}_default_backend_{kind.name}", f"at::meta::structured_{meta_name}"
    meta = index.get_kernel(g)
    if meta is None:
        raise ValueError(f"no {index.dispatch_key} kernel for {g.functional.func.name}")
    owner = meta.cpp_namespace if external_class is None else f"{meta.cpp_namespace}::{external_class}"
    return f"structured_{meta.kernel}_{kind.name}", f"{owner}::structured_{meta.kernel}"


def _copy_back_and_return(f: NativeFunction, kind: SchemaKind, owned: bool) -> list[str]:
    """The wrapper's last lines: an out= or in-place op copies the outputs it had to allocate itself (proxies)
    into the caller's, then the outputs are returned (owned: taken out of their ExclusivelyOwned)."""
    returns = len(f.func.returns)
    lines: list[str] = []
    star = "**" if owned else "*"
    if kind in (SchemaKind.out, SchemaKind.inplace):
        lines += [f"if (op.proxy_outputs_[{i}].has_value()) op.outputs_[{i}].get().copy_({star}op.proxy_outputs_[{i}]);"
                  for i in range(returns)]
    if kind is SchemaKind.functional:
        take = ".take()" if owned else ""
        moved = [f"std::move(op.outputs_[{i}]){take}" for i in range(returns)]
        result = moved[0] if returns == 1 else f"std::make_tuple({', '.join(moved)})"
    elif kind is SchemaKind.inplace:
        result = "self"
    else:
        outs = f.func.arguments.out
        result = outs[0].name if returns == 1 else f"std::forward_as_tuple({', '.join(a.name for a in outs)})"
    lines.append(f"return {result};")
    return lines


def compute_structured_wrapper(f: NativeFunction, g: NativeFunctionsGroup, index: BackendIndex,
                               release: Release, aot: NativeAotDeclaration | None = None, *, rocm: bool,
                               external_class: str | None = None) -> str | None:
    """aot: the native-AOT declaration of g under the index's key, whose stub is consulted before op.impl. rocm:
    gen.py's --rocm (CUDA's classes then hold a HIP guard, until 2.10: Release.rocm_guards_masquerade_as_cuda).
    external_class: an external backend's class holding its structured kernels (only with --experimental)."""
    if not generates_structured(f, index):
        return None
    kind = f.func.kind()
    key = index.dispatch_key
    spelling = release.cpp_spelling
    sig = wrapper_signature(f, index, release)
    class_name, parent = _names(g, index, kind, external_class)
    body: list[str] = []
    context: list[Binding | Expr] = list(sig.arguments())
    kernel = index.get_kernel(g)
    if index.device_guard and (kernel is None or kernel.device_guard):  # an op's own device_guard: false
        body.append(device_check(f.device_check, [*f.func.arguments.out, *f.func.arguments.flat_positional], sig.name(),
                                 spelling))
    if kind is SchemaKind.functional:
        body.append(f"{class_name} op;")
    elif kind is SchemaKind.inplace:
        body.append(f"{class_name} op(self);")
    elif kind is SchemaKind.out:
        body.append(f"{class_name} op({', '.join(a.name for a in f.func.arguments.out)});")
    meta_exprs = ", ".join(e.expr for e in translate(context, structured.meta_arguments(g, spelling), spelling=spelling))
    precomputed = g.out.precomputed
    if precomputed:
        body.append(f"auto precompute = op.meta({meta_exprs});")
        for elements in [*(args for _, args in precomputed.replace), precomputed.add]:
            context.extend(Expr(f"precompute.{a.name}", structured.argument_type(a, binds=a.name)) for a in elements)
        body.append("(void)precompute;")
    else:
        body.append(f"op.meta({meta_exprs});")
    for i, out_arg in enumerate(structured.out_arguments(g, spelling)):
        if out_arg.nctype.type != ConstRefCType(tensorT):
            raise ValueError(f"structured out argument {out_arg.name} is not a plain Tensor")
        expr = f"op.maybe_get_output({i})" if kind is SchemaKind.out else f"{_owned_star(kind, release)}op.outputs_[{i}]"
        context.append(Expr(expr, NamedCType(out_arg.nctype.name, MutRefCType(tensorT))))
    if key is dk.CEA_NON_FUNCTIONAL:
        out_sig = CppSignatureGroup.from_native_function(g.out, method=False, spelling=spelling,
                                                         fallback_binding=f.manual_cpp_binding).most_faithful_signature()
        out_exprs = ", ".join(e.expr for e in translate(context, out_sig.arguments(), spelling=spelling))
        body.append(f"at::{out_sig.name()}({out_exprs});")
    elif key is not META:
        impl_exprs = ", ".join(e.expr for e in translate(context, structured.impl_arguments(g, spelling), spelling=spelling))
        body.append(stub_consultation(aot, impl_exprs) if aot is not None else f"op.impl({impl_exprs});")
    body += _copy_back_and_return(f, kind, release.structured_outputs_exclusively_owned)
    klass = _class(f, key, kind, class_name, parent, g.out.structured_inherits is not None, release, rocm,
                   external_class is not None)
    body_text = "\n".join(body)
    return f"""\
{klass}

{sig.defn()} {{
{body_text}
}}
"""


def compute_structured_registration(f: NativeFunction, index: BackendIndex, release: Release) -> str | None:
    if not generates_structured(f, index):
        return None
    return f'm.impl("{f.func.name}", TORCH_FN({wrapper_name(f, index, release)}));'
