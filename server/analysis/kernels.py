"""Kernels named in native_functions.yaml that no C++ source defines: caught before the link.

Every kernel of a dispatch table (and the implicit CompositeImplicitAutograd
one) must be defined in its namespace; a structured out= kernel needs its
TORCH_IMPL_FUNC, and its group's TORCH_META_FUNC. Generated kernels (ufunc,
autogen) are left out: the codegen writes them.
"""

from __future__ import annotations

from typing import Callable

from ..diagnostics import Diagnostic, Severity, diag
from ..index.kernels import KernelIndex
from ..index.native import NativeSnapshot, problem_span
from ..model import dispatch as dk
from ..model.native_function import BackendIndex, BackendMetadata, NativeFunction, NativeFunctionsGroup
from ..model.native_yaml import Op
from ..syntax.cpp_scan import DECLARATION, DEFINITION, IMPL, META
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


def _where(index: KernelIndex) -> str:
    return ", ".join(index.roots)


def _meta_name(group: NativeFunctionsGroup) -> str:
    return str(group.functional.func.name).replace(".", "_")


def missing_kernels(snapshot: NativeSnapshot, index: KernelIndex, *, declare: Declare | None = None,
                    severity: Severity = Severity.WARNING) -> list[Diagnostic]:
    model = snapshot.functions
    groups = {g.out.func.name: g for g in model.groups if isinstance(g, NativeFunctionsGroup)}
    out: list[Diagnostic] = []
    for op in model.ops:
        if op.generated:
            continue
        f = op.function
        ufunc_keys = set(dk.UFUNC_DISPATCH_KEYS) if f.ufunc_inner_loop else set()
        for key, meta in op.metadata:
            if key in ufunc_keys or "legacy::" in meta.kernel or key not in model.backend_indices:
                continue
            message = _missing(f, key, meta, index, model.backend_indices[key], declare)
            if message:
                out.append(diag("OPG600", _kernel_span(op, key), message, severity=severity))
        group = groups.get(f.func.name)
        if f.structured and group is not None and not index.find(_meta_name(group), (META,)):
            out.append(diag("OPG601", problem_span(op, "structured"),
                            f"no TORCH_META_FUNC({_meta_name(group)}) (or TORCH_META_FUNC2) in {_where(index)}: the "
                            "structured op needs its meta function", severity=severity))
    return out


def _missing(f: NativeFunction, key: dk.DispatchKey, meta: BackendMetadata, index: KernelIndex,
             backend: BackendIndex, declare: Declare | None) -> str | None:
    if meta.structured:
        if index.find(meta.kernel, (IMPL,)):
            return None
        return (f"no TORCH_IMPL_FUNC({meta.kernel}) in {_where(index)}: the structured {key} kernel of "
                f"'{f.func.name}' is not implemented")
    defined, declared = _defined(index, meta.kernel, meta.cpp_namespace)
    if defined:
        return None
    state = "is declared but never defined" if declared else "is not defined"
    expected = declare(f, backend) if declare is not None else ""
    hint = f"; it must be declared as:\n{expected}" if expected else ""
    return f"{key} kernel {meta.cpp_namespace}::{meta.kernel} of '{f.func.name}' {state} in {_where(index)}{hint}"
