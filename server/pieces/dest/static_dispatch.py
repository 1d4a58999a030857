"""Static dispatch (--static-dispatch-backend): at::_ops::<op>::call() calls a backend's kernel directly
(at::cpu::add(...)) instead of going through the dispatcher; ops without a kernel for any of the
backends fall back to a composite kernel, or fail at run time.
"""

from __future__ import annotations

from functools import lru_cache

from ...frozen import PER_OP_MEMO
from ...model import dispatch as dk
from ...model.native_function import BackendIndex, NativeFunction
from ...model.schema import Argument, SelfArgument
from ...releases.profile import CppSpelling
from ..api.signatures import CppSignature, CppSignatureGroup, DispatcherSignature, dispatcher_signature
from ..api.translate import translate
from ..api.types import Binding, NamedCType, SpecialArgName
from .register_namespaced import DEFAULT_KERNEL_NAMESPACE

# The composite keys a static build also calls, in the order of their headers and of precedence.
COMPOSITE_FALLBACKS = (
    (lambda f: f.has_composite_explicit_autograd_kernel, dk.CEA),
    (lambda f: f.has_composite_explicit_autograd_non_functional_kernel, dk.CEA_NON_FUNCTIONAL),
    (lambda f: f.has_composite_implicit_autograd_kernel, dk.CIA),
    (lambda f: f.has_composite_implicit_autograd_nested_tensor_kernel, dk.CIA_NESTED),
)


def static_dispatch_keys(backends: tuple[dk.DispatchKey, ...]) -> list[dk.DispatchKey]:
    if not backends:
        return []
    return [*backends, dk.CIA, dk.CIA_NESTED, dk.CEA, dk.CEA_NON_FUNCTIONAL]


def static_dispatch_extra_headers(backends: tuple[dk.DispatchKey, ...]) -> list[str]:
    """Functions.h and Operators_N.cpp include the <Key>Functions.h of the backends and composite keys."""
    return [f"#include <ATen/{key}Functions.h>" for key in static_dispatch_keys(backends)]


def static_dispatch_backend(f: NativeFunction, index: BackendIndex) -> dk.DispatchKey | None:
    """The key whose at::<key>::op the per-operator header must include for this backend."""
    if f.structured_delegate is not None or index.has_kernel(f):
        return index.dispatch_key
    return next((key for has, key in COMPOSITE_FALLBACKS if has(f)), None)


def static_dispatch_ops_header(f: NativeFunction, backends: tuple[BackendIndex, ...]) -> str | None:
    if f.manual_kernel_registration:
        return None
    keys = [k for index in backends if (k := static_dispatch_backend(f, index)) is not None]
    return "\n".join(f"#include <ATen/ops/{f.root_name}_{str(k).lower()}_dispatch.h>" for k in keys)


def backend_call_signature(f: NativeFunction, spelling: CppSpelling) -> CppSignature:
    """The at::<key>:: overload a static call uses: the SymInt one when the schema has SymInts."""
    sigs = CppSignatureGroup.from_native_function(f, method=False, spelling=spelling, fallback_binding=False)
    sig = sigs.symint_signature if f.func.has_symint(returns_too=spelling.symint_returns_follow_signature) \
        else sigs.signature
    assert sig is not None
    return sig


def _with_memory_format_special(bindings: list[Binding]) -> list[Binding]:
    return [Binding(b.name, NamedCType(SpecialArgName.possibly_redundant_memory_format, b.nctype.type), b.argument,
                    b.spelling, b.default) if b.name == "memory_format" else b for b in bindings]


def translate_args(sig: DispatcherSignature, cpp_sig: CppSignature) -> str:
    src = list(sig.arguments())
    goals = cpp_sig.arguments()
    if any(g.nctype.name == SpecialArgName.possibly_redundant_memory_format for g in goals):
        src = _with_memory_format_special(src)
    return ", ".join(e.expr for e in translate(src, goals, spelling=sig.options.spelling))


def backend_call(sig: DispatcherSignature, f: NativeFunction, index: BackendIndex) -> str:
    cpp_sig = backend_call_signature(f, sig.options.spelling)
    meta = index.get_kernel(f)
    ns = (meta.cpp_namespace if meta and meta.cpp_namespace else DEFAULT_KERNEL_NAMESPACE).replace("::native", "")
    return f"return {ns}::{str(index.dispatch_key).lower()}::{cpp_sig.name()}({translate_args(sig, cpp_sig)});"


def fallback_call(sig: DispatcherSignature, f: NativeFunction, backends: tuple[BackendIndex, ...]) -> str:
    cpp_sig = backend_call_signature(f, sig.options.spelling)
    name = cpp_sig.name()
    ns = DEFAULT_KERNEL_NAMESPACE.replace("::native", "")
    for has, key in COMPOSITE_FALLBACKS:
        if has(f):
            return f"return {ns}::{str(key).lower()}::{name}({translate_args(sig, cpp_sig)});"
    keys = ", ".join(str(index.dispatch_key) for index in backends)
    return f'TORCH_CHECK(false, "Static dispatch does not support {name} for{keys} ");'


def _switch(sig: DispatcherSignature, f: NativeFunction, keys: list[BackendIndex],
            backends: tuple[BackendIndex, ...]) -> str:
    """Several backends have a kernel: pick one at run time from the arguments' dispatch keys."""
    tensors = [a.name for a in sig.arguments() if isinstance(a.argument, SelfArgument)
               or isinstance(a.argument, Argument) and a.argument.type.is_tensor_like()]
    subexprs = []
    if f.func.arguments.tensor_options is not None:
        subexprs.append("DispatchKeySet(c10::computeDispatchKey(dtype, layout, device))")
    if tensors:
        subexprs.append(f"c10::detail::multi_dispatch_key_set({', '.join(tensors)})")
    stmts = [f"DispatchKeySet _dk_set = {' | '.join(subexprs)};",
             "DispatchKey _dk = c10::highestPriorityBackendTypeId(_dk_set);"]
    cases = []
    for index in keys:
        cases += [f"case DispatchKey::{index.dispatch_key}:", f"\t{backend_call(sig, f, index)};"]
    connector = "\n\t\t"
    return f"""
    {connector.join(stmts)}
    switch (_dk) {{
        {connector.join(cases)}
        default:
            {fallback_call(sig, f, backends)}
    }}
    """


@lru_cache(maxsize=PER_OP_MEMO)  # per op and backends: frozen.PER_OP_MEMO says why the bound fits
def static_dispatch(f: NativeFunction, backends: tuple[BackendIndex, ...], spelling: CppSpelling) -> str:
    """The body of at::_ops::<op>::call() under static dispatch to `backends` (each narrowed to f)."""
    if not backends or f.manual_kernel_registration:
        return ""
    sig = dispatcher_signature(f, spelling=spelling)
    keys = [b for b in backends if b.has_kernel(f)
            or (f.structured_delegate is not None and b.dispatch_key in dk.STRUCTURED_DISPATCH_KEYS)]
    if len(keys) == 1:
        return backend_call(sig, f, keys[0])
    if not keys:
        return fallback_call(sig, f, backends)
    return _switch(sig, f, keys, backends)
