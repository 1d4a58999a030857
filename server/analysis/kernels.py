"""Kernels named in native_functions.yaml that no C++ source defines: caught before the link.

Every kernel of a dispatch table (and the implicit CompositeImplicitAutograd
one) must be defined in its namespace; a structured out= kernel needs its
TORCH_IMPL_FUNC, and its group's TORCH_META_FUNC. Generated kernels (ufunc,
autogen, and the view_copy kernels of CompositeViewCopyKernels.cpp) are left out:
the codegen writes them. So are MTIA kernels, which PyTorch's own tree does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

from ..diagnostics import Diagnostic, Severity, diag
from ..index.kernels import KernelIndex, Located
from ..index.native import problem_span
from ..model import dispatch as dk
from ..model.native_function import (BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup,
                                     NativeFunctionsViewGroup)
from ..model.native_yaml import Op
from ..syntax.cpp_scan import ANONYMOUS, DECLARATION, DEFINITION, DEVICE, IMPL, META, STATIC, TEMPLATE
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from ..text import Span

# The declaration a kernel must have, from the codegen (a layer above); None leaves it out.
Declare = Callable[[NativeFunction, BackendIndex], str]


def _kernel_span(op: Op, key: dk.DispatchKey) -> Span:
    """The kernel name in the dispatch table, or the op name for the implicit kernel."""
    source = op.function.source
    entry = source.entry if source is not None else None
    table = entry.value("dispatch") if isinstance(entry, YMap) else None
    if isinstance(table, YMap):
        for k, v in table.pairs:
            if isinstance(k, YScalar) and isinstance(k.value, str) and isinstance(v, YScalar) \
                    and key.name in (part.strip() for part in k.value.split(",")):
                text = ScalarText(v)
                name = str(v.value).split("::")[-1]
                start = str(v.value).rfind(name)
                return text.span(start, start + len(name)).shifted(op.line)
    return problem_span(op, "name")


def _defined(index: KernelIndex, name: str, namespace: str) -> tuple[bool, bool]:
    """(defined, declared) for a function in a namespace."""
    hits = index.find(name, (DEFINITION, DECLARATION))
    in_namespace = [h for h in hits if h.symbol.namespace == namespace]
    return any(h.symbol.kind == DEFINITION for h in in_namespace), bool(in_namespace)


_WHY_UNCALLABLE = {ANONYMOUS: "in an anonymous namespace", STATIC: "static", TEMPLATE: "a template",
                   DEVICE: "CUDA device code"}


def _uncallable_definition(index: KernelIndex, name: str, namespace: str) -> Located | None:
    """A definition of name in namespace that the codegen cannot call (internal linkage, template, device)."""
    return next((h for h in index.find(name, (DEFINITION,))
                 if h.symbol.namespace.startswith(f"{namespace}::(")
                 and h.symbol.namespace.rsplit("::", 1)[-1] in _WHY_UNCALLABLE), None)


def _where(index: KernelIndex) -> str:
    return ", ".join(index.roots)


def _meta_name(group: NativeFunctionsGroup) -> str:
    return str(group.functional.func.name).replace(".", "_")


class KernelModel(Protocol):
    """What these checks read of a NativeFunctions (the server passes a few ops at a time, without view_groups)."""

    @property
    def ops(self) -> Sequence[Op]: ...

    @property
    def groups(self) -> Sequence[NativeFunction | NativeFunctionsGroup]: ...

    @property
    def backend_indices(self) -> Mapping[dk.DispatchKey, BackendIndex]: ...


class KernelSnapshot(Protocol):
    """A NativeSnapshot, as missing_kernels reads it."""

    @property
    def functions(self) -> KernelModel: ...


def generated_view_copies(model: KernelModel) -> frozenset[NativeFunction]:
    """The view_copy ops whose CompositeExplicitAutogradNonFunctional kernel the codegen writes
    (CompositeViewCopyKernels.cpp): those named <view>_copy, as torchgen's gen_composite_view_copy_kernel."""
    return frozenset(g.view_copy for g in getattr(model, "view_groups", ())
                     if isinstance(g, NativeFunctionsViewGroup) and g.view_copy is not None
                     and g.view_copy.func.name.name.base == f"{g.view.func.name.name.base}_copy")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One C++ definition the yaml needs: a dispatch kernel (DEFINITION, or IMPL when structured) or a META."""

    op: Op
    kind: str  # DEFINITION, IMPL or META
    name: str
    namespace: str  # DEFINITION only; IMPL and META are found by name
    key: dk.DispatchKey | None = None  # None for META
    metadata: BackendMetadata | None = None


# MTIA kernels live outside PyTorch's repository (torchgen registers them only when run with --mtia).
OUT_OF_TREE_KEYS = frozenset({dk.DispatchKey.MTIA})


def requirements(model: KernelModel, view_copies: frozenset[NativeFunction] = frozenset()) -> Iterator[Requirement]:
    """Every kernel and meta function the ops of model need, generated and out-of-tree ones left out."""
    groups = {g.out.func.name: g for g in model.groups if isinstance(g, NativeFunctionsGroup)}
    for op in model.ops:
        if op.generated:
            continue
        f = op.function
        skipped = set(OUT_OF_TREE_KEYS) | (set(dk.UFUNC_DISPATCH_KEYS) if f.ufunc_inner_loop else set())
        if f in view_copies:
            skipped.add(dk.DispatchKey.CompositeExplicitAutogradNonFunctional)
        for key, meta in op.metadata:
            if key in skipped or "legacy::" in meta.kernel or key not in model.backend_indices:
                continue
            yield Requirement(op, IMPL if meta.structured else DEFINITION, meta.kernel, meta.cpp_namespace, key, meta)
        group = groups.get(f.func.name)
        if f.structured and group is not None:
            yield Requirement(op, META, _meta_name(group), "at::meta")


def is_met(index: KernelIndex, need: Requirement) -> bool:
    if need.kind == DEFINITION:
        return _defined(index, need.name, need.namespace)[0]
    return bool(index.find(need.name, (need.kind,)))


def missing_kernels(snapshot: KernelSnapshot, index: KernelIndex, *, declare: Declare | None = None,
                    severity: Severity = Severity.WARNING,
                    view_copies: frozenset[NativeFunction] | None = None) -> list[Diagnostic]:
    model = snapshot.functions
    copies = generated_view_copies(model) if view_copies is None else view_copies
    out: list[Diagnostic] = []
    for need in requirements(model, copies):
        if is_met(index, need):
            continue
        if need.kind == META:
            out.append(diag("OPG601", problem_span(need.op, "structured"),
                            f"no TORCH_META_FUNC({need.name}) (or TORCH_META_FUNC2) in {_where(index)}: the "
                            "structured op needs its meta function", severity=severity))
            continue
        assert need.key is not None and need.metadata is not None  # requirements() gives both to every kernel
        message = _missing(need.op.function, need.key, need.metadata, index, model.backend_indices[need.key], declare)
        out.append(diag("OPG600", _kernel_span(need.op, need.key), message, severity=severity))
    return out


def _missing(f: NativeFunction, key: dk.DispatchKey, meta: BackendMetadata, index: KernelIndex,
             backend: BackendIndex, declare: Declare | None) -> str:
    """The message for a kernel is_met found missing."""
    if meta.structured:
        return (f"no TORCH_IMPL_FUNC({meta.kernel}) in {_where(index)}: the structured {key} kernel of "
                f"'{f.func.name}' is not implemented")
    declared = _defined(index, meta.kernel, meta.cpp_namespace)[1]
    state = "is declared but never defined" if declared else "is not defined"
    unusable = _uncallable_definition(index, meta.kernel, meta.cpp_namespace)
    if unusable is not None:
        why = _WHY_UNCALLABLE[unusable.symbol.namespace.rsplit("::", 1)[-1]]
        state += f" (the one in {unusable.path}:{unusable.symbol.line + 1} is {why})"
    expected = declare(f, backend) if declare is not None else ""
    hint = f"; it must be declared as:\n{expected}" if expected else ""
    return f"{key} kernel {meta.cpp_namespace}::{meta.kernel} of '{f.func.name}' {state} in {_where(index)}{hint}"
