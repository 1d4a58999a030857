"""Register<Key>.cpp and <Key>Functions_inl.h per op group: what each target of torchgen's
RegisterDispatchKey produces for one group under one key.

- the namespaced definitions (at::<key>::op, calling the anonymous wrapper),
- their declarations (<Key>Functions_inl.h),
- and, by delegating to register.py / register_structured.py, the anonymous wrappers and m.impl lines.
"""

from __future__ import annotations

import functools

from ...frozen import PER_OP_AND_KEY_MEMO, record
from ...model import dispatch as dk
from ...model.native_aot import NativeAotDeclaration
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import OperatorName
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api.signatures import CppSignature, CppSignatureGroup, DispatcherSignature, NativeSignature
from ..api.translate import translate
from .register import compute_registration, compute_wrapper, is_structured_for, registers_unstructured
from .register import wrapper_signature as unstructured_wrapper_signature
from .register_structured import compute_structured_registration, compute_structured_wrapper, generates_structured
from .register_structured import wrapper_signature as structured_wrapper_signature

DEFAULT_KERNEL_NAMESPACE = "at::native"
META = dk.K["Meta"]


class KernelNamespaceError(ValueError):
    """An in-tree kernel namespace that does not end in ::native."""


@record
class GroupPieces:
    """One group's code under one key, per target, in g.functions() order."""

    namespaced_definitions: tuple[str, ...]
    namespaced_declarations: tuple[str, ...]
    anonymous_definitions: tuple[str, ...]
    registrations: tuple[str, ...]


def kernel_namespace(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex) -> str:
    meta = index.get_kernel(g)
    if meta is None:
        return DEFAULT_KERNEL_NAMESPACE
    if "::native" not in meta.cpp_namespace:
        name = g.func.name if isinstance(g, NativeFunction) else g.functional.func.name
        raise KernelNamespaceError(f"The kernel for function {name} with dispatch key {index.dispatch_key} has a "
                                   f"namespace {meta.cpp_namespace} and it's not ending with '::native'.")
    return meta.cpp_namespace


def _direct_signatures(f: NativeFunction, spelling: CppSpelling) -> list[CppSignature]:
    """at::<key>::op overloads: no methods, no fallback bindings, SymInt twins included."""
    return CppSignatureGroup.from_native_function(f, method=False, spelling=spelling,
                                                  fallback_binding=False).signatures(symint=True)


def _declaration(f: NativeFunction, release: Release) -> str:
    """Each line starts with TORCH_API, which with_export_macro swaps for the key's macro."""
    qualified = release.cpp_default_qualifies_memory_format
    return "".join(f"TORCH_API {s.decl(qualified_memory_format=qualified)};\n" for s in _direct_signatures(f, release.cpp_spelling))


def with_export_macro(declarations: str, macro: str) -> str:
    """_declaration's lines under another export macro (the pieces are shared by every release)."""
    if macro == "TORCH_API":
        return declarations
    return "".join(f"{macro} {line.removeprefix('TORCH_API ')}" for line in declarations.splitlines(keepends=True))


def _definition(f: NativeFunction, wrapper: DispatcherSignature | NativeSignature) -> str:
    out = ""
    spelling = wrapper.options.spelling
    for s in _direct_signatures(f, spelling):
        exprs = ", ".join(e.expr for e in translate(s.arguments(), wrapper.arguments(), spelling=spelling))
        out += f"\n{s.defn()} {{\nreturn {wrapper.name()}({exprs});\n}}\n"
    return out


def _unstructured(f: NativeFunction, index: BackendIndex, skip_registration: bool, release: Release
                  ) -> tuple[str, str, str, str | None] | None:
    if not registers_unstructured(f, index):
        return None
    wrapper = compute_wrapper(f, index, release=release)
    if wrapper is None:
        return None
    sig = unstructured_wrapper_signature(f, index, release=release)
    registration = None if skip_registration else compute_registration(f, index, release)
    return _definition(f, sig), _declaration(f, release), wrapper, registration


def _structured(f: NativeFunction, g: NativeFunctionsGroup, index: BackendIndex, release: Release,
                aot: NativeAotDeclaration | None, rocm: bool) -> tuple[str, str, str, str | None] | None:
    if f.manual_kernel_registration:  # OPG116: the check refuses it for a structured group's variant
        raise ValueError(f"Function {f.func.name} has manual_kernel_registration=True")
    if not generates_structured(f, index):
        return None
    wrapper = compute_structured_wrapper(f, g, index, release, aot, rocm=rocm)
    if wrapper is None:
        return None
    sig = structured_wrapper_signature(f, index, release)
    return _definition(f, sig), _declaration(f, release), wrapper, compute_structured_registration(f, index, release)


NO_PIECES = GroupPieces((), (), (), ())


def certainly_no_pieces(index: BackendIndex) -> bool:
    """Whether a group whose narrowed index is `index` has no pieces: it has no kernel under the key, and
    only Meta (in-place checks) and CompositeExplicitAutogradNonFunctional (structured groups) generate
    wrappers without one. Most groups under most keys: answered without a cache entry."""
    return not index.index and index.dispatch_key not in (META, dk.CEA_NON_FUNCTIONAL)


def has_pieces(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex) -> bool:
    """Whether group_pieces(g, index) is not empty, without building the pieces (what decides it: the
    predicates _unstructured and _structured start with)."""
    if certainly_no_pieces(index):
        return False
    if isinstance(g, NativeFunction):
        return registers_unstructured(g, index)
    if is_structured_for(g, index):
        return any(generates_structured(f, index) for f in g.functions())
    return any(registers_unstructured(f, index) for f in g.functions())


def group_pieces(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex,
                 skip_registration: bool = False, unselected: frozenset[OperatorName] = frozenset(),
                 *, release: Release, aot: NativeAotDeclaration | None = None, rocm: bool) -> GroupPieces:
    """`index`: narrowed to g (files.dispatch_key.narrow_index). `unselected`: the ops of g left out by operator
    selection; their kernels are defined, not registered. `release`: the torch release whose gen.py is matched.
    `aot`: g's native-AOT declaration under the key (its structured wrappers consult the stub).
    (One cache for every caller: functools.cache keys positional and keyword spellings apart.)"""
    if certainly_no_pieces(index):
        return NO_PIECES
    return _group_pieces(g, index, skip_registration, unselected, release, aot, rocm)


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per op and backend: frozen.PER_OP_AND_KEY_MEMO says why the bound fits
def _group_pieces(g: NativeFunction | NativeFunctionsGroup, index: BackendIndex, skip_registration: bool,
                  unselected: frozenset[OperatorName], release: Release,
                  aot: NativeAotDeclaration | None, rocm: bool) -> GroupPieces:
    if isinstance(g, NativeFunction):
        results = [(g, _unstructured(g, index, skip_registration, release))]
    elif is_structured_for(g, index):
        results = [(f, _structured(f, g, index, release, aot, rocm)) for f in g.functions()]
    else:
        results = [(f, _unstructured(f, index, skip_registration, release)) for f in g.functions()]
    present = [(f, r) for f, r in results if r is not None]
    return GroupPieces(
        tuple(r[0] for _, r in present),
        tuple(r[1] for _, r in present),
        tuple(r[2] for _, r in present),
        tuple(r[3] for f, r in present if r[3] is not None and f.func.name not in unselected),
    )
