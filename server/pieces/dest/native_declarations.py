"""Kernel declarations: NativeFunctions.h (and <Backend>NativeFunctions.h) and NativeMetaFunctions.h."""

from __future__ import annotations

from ...model import dispatch as dk
from ...model.dispatch import DispatchKey
from ...model.native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api import structured
from ..api.signatures import DispatcherSignature, NativeSignature
from ..api.types import ApiOptions


class SymIntKernelError(ValueError):
    """A kernel declared symint for an op whose schema has no SymInt."""


def kernel_signature(f: NativeFunction, index: BackendIndex, spelling: CppSpelling, *, prefix: str = ""
                     ) -> NativeSignature | DispatcherSignature:
    """In-tree kernels follow the native API; out-of-tree backends follow the dispatcher API."""
    meta = index.get_kernel(f)
    symint = meta is not None and meta.supports_symint()
    if symint and not f.func.has_symint(returns_too=spelling.symint_returns_follow_signature):
        raise SymIntKernelError(f"attempted to define symint kernel for {index.dispatch_key} without SymInt in schema")
    options = ApiOptions.of(f, spelling)
    if index.external:
        return DispatcherSignature(f.func, options, prefix, symint)
    return NativeSignature(f.func, symint, options, prefix)


def kernel_parameter_types(f: NativeFunction, index: BackendIndex, spelling: CppSpelling) -> tuple[str, ...] | None:
    """The C++ parameter types of the kernel's declaration, or None when the codegen cannot declare it (the
    missing-kernel check then matches its definition by name alone)."""
    try:
        return tuple(a.type for a in kernel_signature(f, index, spelling).arguments())
    except Exception:  # a model the codegen rejects elsewhere, with its own diagnostic
        return None


def key_export_macro(key: DispatchKey, release: Release) -> str:
    """The DLL export macro of the in-tree kernels and at::<key>:: functions of a dispatch key."""
    if release.device_family_kernel_exports:
        if dk.is_cuda_dispatch_key(key):
            return "TORCH_CUDA_CPP_API"
        if dk.is_xpu_dispatch_key(key):
            return "TORCH_XPU_API"
    return "TORCH_API"


def _kernel_export_macro(index: BackendIndex, kernel: str, release: Release) -> str:
    macro = key_export_macro(index.dispatch_key, release)
    if macro == "TORCH_CUDA_CPP_API" and kernel in release.cuda_kernels_in_torch_cpu:
        return "TORCH_API"
    return macro


def _structured_prefix(index: BackendIndex, kernel: str, release: Release) -> str:
    if index.external:
        return ""
    if release.structured_xpu_kernels_export_xpu and index.dispatch_key.name == "XPU":
        return "TORCH_XPU_API "
    return _kernel_export_macro(index, kernel, release) + " "


def _unstructured(f: NativeFunction, index: BackendIndex, release: Release) -> str | None:
    meta = index.get_kernel(f)
    if meta is None or "legacy::" in meta.kernel:
        return None
    prefix = "static" if index.external else _kernel_export_macro(index, meta.kernel, release)
    decl = kernel_signature(f, index, release.cpp_spelling).decl(name=meta.kernel,
                                           qualified_memory_format=release.cpp_default_qualifies_memory_format)
    return f"{prefix} {decl};"


_EXPORT_PREFIXES = ("TORCH_CUDA_CPP_API ", "TORCH_XPU_API ", "TORCH_API ")


def _without_export(line: str) -> str:
    text = line.strip()
    struct = text.startswith("struct ")
    if struct:
        text = text.removeprefix("struct ").lstrip()
    for prefix in _EXPORT_PREFIXES:
        if text.startswith(prefix):
            text = text.removeprefix(prefix).lstrip()
            break
    return "struct " + text if struct else text


def _exports_first(decl: str) -> bool:
    first = next((line.strip() for line in decl.splitlines() if line.strip()), "")
    return first.removeprefix("struct ").lstrip().startswith("TORCH_API ")


def _merge_key(decl: str) -> str:
    return "\n".join(text for line in decl.splitlines() if (text := _without_export(line)))


def _merged(decls: list[str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for decl in decls:
        if not decl.strip():
            continue
        key = _merge_key(decl)
        if key not in merged or (not _exports_first(merged[key]) and _exports_first(decl)):
            merged[key] = decl
    return merged


def merge_export_variants(decls: list[str]) -> list[str]:
    """Declarations that differ only in their export macro, once (a kernel shared by CPU and CUDA keys): the
    TORCH_API one if any, else the first, in the place of the first (gen.py from torch 2.15)."""
    return list(_merged(decls).values())


def merged_variant(decl: str, decls: list[str]) -> str:
    """The declaration of decls that stands for `decl` once merge_export_variants has merged them."""
    return _merged(decls).get(_merge_key(decl), decl)


def _structured(g: NativeFunctionsGroup, index: BackendIndex, release: Release) -> list[str]:
    meta = index.get_kernel(g)
    if meta is None:
        return []
    args = ", ".join(a.decl() for a in structured.impl_arguments(g, release.cpp_spelling))
    return [f"""\
struct {_structured_prefix(index, meta.kernel, release)}structured_{meta.kernel} : public at::meta::structured_{structured.meta_name(g)} {{
void impl({args});
}};
"""]


def _external_structured(g: NativeFunctionsGroup, meta: BackendMetadata, spelling: CppSpelling) -> list[str]:
    """An external backend's structured class (pytorch#172539's proposal, only with --experimental): no export
    macro; with define_meta (its ext_structured_meta) the backend declares a meta() of its own, and `base` names
    the upstream meta class it replaces."""
    parent = f"at::meta::structured_{structured.meta_name(g)}"
    lines = [f"struct structured_{meta.kernel} : public {parent} {{"]
    if meta.define_meta:
        meta_args = ", ".join(a.decl() for a in structured.meta_arguments(g, spelling))
        lines += ["// Alias to the base meta class for easy access to native meta logic", f"using base = {parent};",
                  f"void meta({meta_args});"]
    lines += [f"void impl({', '.join(a.decl() for a in structured.impl_arguments(g, spelling))});", "};"]
    return ["\n".join(lines) + "\n"]


def compute_native_function_declaration(g: NativeFunctionsGroup | NativeFunction, index: BackendIndex,
                                        release: Release) -> list[str]:
    """What NativeFunctions.h declares for an op (or op group) under one backend, in `release`."""
    meta = index.get_kernel(g)
    if isinstance(g, NativeFunctionsGroup):
        if meta is not None and meta.structured:
            if index.external:  # only --experimental makes an external kernel structured
                return _external_structured(g, meta, release.cpp_spelling)
            return _structured(g, index, release)
        return [d for f in g.functions() if (d := _unstructured(f, index, release)) is not None]
    d = _unstructured(g, index, release)
    return [] if d is None else [d]


def compute_meta_function_declaration(g: NativeFunctionsGroup, spelling: CppSpelling) -> str | None:
    """The at::meta::structured_<op> class (NativeMetaFunctions.h)."""
    if not g.structured:
        return None
    name = structured.meta_name(g)
    args = ", ".join(a.decl() for a in structured.meta_arguments(g, spelling))
    parent = g.out.structured_inherits or "at::impl::MetaBase"
    precomputed = g.out.precomputed
    if not precomputed:
        return f"""\
struct TORCH_API structured_{name} : public {parent} {{
    
    
    void meta({args});
}};
"""  # noqa: W293 (the blank lines with spaces are gen.py's bytes)
    elements = [e for _, replaced in precomputed.replace for e in replaced] + list(precomputed.add)
    params = [e.name.upper() for e in elements]
    types = [structured.argument_type(e, binds=e.name).cpp_type(spelling, strip_ref=True) for e in elements]
    setters = []
    for i, element in enumerate(elements):
        returned = f"precompute_out<{', '.join(params[:i] + ['true'] + params[i + 1:])}>"
        body = "\n".join([f"{returned} ret;"]
                         + [f"ret.{e.name} = value;" if i == j else f"ret.{e.name} = this->{e.name};"
                            for j, e in enumerate(elements)]
                         + ["return ret;"])
        setters.append(f"""
                    {returned} set_{element.name}({types[i]} value) {{
                        static_assert({params[i]} == false, "{element.name} already set");
                        {body}
                    }}
                """)
    template = "template <" + ", ".join(f"bool {p} = false" for p in params) + ">"
    fields = ";\n".join(f"{t} {e.name}" for t, e in zip(types, elements))
    precomputed_decl = f"""
                {template}
                struct TORCH_API precompute_out {{
                    {chr(10).join(setters)}
                    {fields};
            }};"""
    typedef = f"using meta_return_ty = precompute_out <{', '.join(['true'] * len(params))}>;"
    return f"""\
struct TORCH_API structured_{name} : public {parent} {{
    {precomputed_decl}
    {typedef}
    meta_return_ty meta({args});
}};
"""
