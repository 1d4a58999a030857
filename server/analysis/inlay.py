"""Inlay hints of native_functions.yaml: after each dispatch kernel, where the kernel index has it defined (or
that it is missing); after a structured_delegate, the delegate's kernels.

Kernels are only placed when there is a kernel index (else every one would read "missing").
"""

from __future__ import annotations

import os

from ..frozen import record
from ..index.kernels import KernelIndex
from ..index.native import NativeSnapshot
from ..model.native_yaml import Op
from ..syntax.nodes import YMap, YScalar
from . import kernel_nav

MISSING = "missing"


@record
class InlayHint:
    line: int
    col: int  # the hint goes here (after the value)
    label: str
    tooltip: str


def _shown(path: str, root: str | None) -> str:
    if root:
        relative = os.path.relpath(path, root)
        if not relative.startswith(".."):
            return relative
    return path


def _kernel_hint(snapshot: NativeSnapshot, index: KernelIndex, line: int, col: int, end: tuple[int, int],
                 root: str | None) -> InlayHint | None:
    ref = kernel_nav.kernel_at(snapshot, line, col)
    if ref is None:
        return None
    definitions, _declarations = kernel_nav.places(index, ref, kernel_nav.kernel_parameters(snapshot, ref))
    if not definitions:
        return InlayHint(*end, MISSING, f"{ref.qualified} is not defined in {', '.join(index.roots)}")
    first = definitions[0]
    more = f" +{len(definitions) - 1}" if len(definitions) > 1 else ""
    label = f"{os.path.basename(first.path)}:{first.symbol.line + 1}{more}"
    tooltip = "\n".join(f"{ref.qualified}: {_shown(h.path, root)}:{h.symbol.line + 1}" for h in definitions)
    return InlayHint(*end, label, tooltip)


def _ops_by_name(snapshot: NativeSnapshot) -> dict[str, Op]:
    """Each op by its name (one written in the file over a generated one, as find_op prefers)."""
    out: dict[str, Op] = {}
    for op in snapshot.functions.ops:
        name = str(op.function.func.name)
        if name not in out or (out[name].generated and not op.generated):
            out[name] = op
    return out


def _delegate_hint(ops: dict[str, Op], node: YScalar, entry_line: int) -> InlayHint | None:
    if not isinstance(node.value, str):
        return None
    op = ops.get(node.value.strip())
    if op is None or not op.metadata:
        return None
    by_kernel: dict[str, list[str]] = {}
    for key, meta in op.metadata:
        by_kernel.setdefault(meta.kernel, []).append(str(key))
    label = "; ".join(f"{', '.join(keys)}: {kernel}" for kernel, keys in by_kernel.items())
    end = node.span.shifted(entry_line)
    return InlayHint(end.end_line, end.end_col, f"→ {label}", f"the kernels of {op.function.func.name}")


def inlay_hints(snapshot: NativeSnapshot, index: KernelIndex | None, first_line: int, last_line: int,
                root: str | None = None) -> list[InlayHint]:
    """The hints of the entries that have lines in [first_line, last_line], in file order."""
    out: list[InlayHint] = []
    ops: dict[str, Op] | None = None
    for entry in snapshot.document.entries:
        if entry.line > last_line:
            break
        mapping = entry.result.mapping
        if mapping is None or entry.line + entry.result.text.count("\n") < first_line:
            continue
        delegate = mapping.value("structured_delegate")
        if isinstance(delegate, YScalar):
            ops = ops if ops is not None else _ops_by_name(snapshot)
            hint = _delegate_hint(ops, delegate, entry.line)
            if hint is not None:
                out.append(hint)
        table = mapping.value("dispatch")
        if index is None or not isinstance(table, YMap):
            continue
        for _key, value in table.pairs:
            if not isinstance(value, YScalar):
                continue
            span = value.span.shifted(entry.line)
            hint = _kernel_hint(snapshot, index, span.start_line, span.start_col, (span.end_line, span.end_col), root)
            if hint is not None:
                out.append(hint)
    return sorted((h for h in out if first_line <= h.line <= last_line), key=lambda h: (h.line, h.col))
