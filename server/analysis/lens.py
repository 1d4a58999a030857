"""Code lenses on each operator of native_functions.yaml: who implements it, and "show generated code".

"Who implements it" is the op's dispatch keys (its kernels in native_functions.yaml)
and the out-of-tree backends whose yaml lists it (given by the caller).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..frozen import record
from ..index.native import NativeSnapshot
from ..text import Span
from .cursor import entry_at, op_name_span

SHOW_GENERATED = "opgen.showGenerated"
# A lens title fits a narrow editor beside the entry's text; the long form is the lens's tooltip.
TITLE_CHARS = 36


@record
class Lens:
    span: Span
    title: str
    command: str | None = None  # a command to run on click (None: the lens only informs)
    argument: Mapping[str, str] | None = None
    tooltip: str | None = None  # the long form of a shortened title


def short_list(names: Sequence[str], limit: int) -> str:
    """The first names that fit in limit characters (at least one), then how many more: "CPU, CUDA +3"."""
    shown = [names[0]]
    for name in names[1:]:
        rest = len(names) - len(shown) - 1
        if len(", ".join([*shown, name]) + (f" +{rest}" if rest else "")) > limit:
            break
        shown.append(name)
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" +{more}" if more else "")


def implementers(snapshot: NativeSnapshot, external: Mapping[str, Sequence[str]] | None = None
                 ) -> dict[str, list[str]]:
    """Operator name -> the dispatch keys with a kernel for it, then the external backends listing it."""
    out: dict[str, list[str]] = {}
    for key, index in snapshot.functions.backend_indices.items():
        for name in index.index:
            out.setdefault(str(name), []).append(str(key))
    for op, backends in (external or {}).items():
        have = out.setdefault(op, [])
        have.extend([b for b in dict.fromkeys(backends) if b not in have])
    return out


def op_lenses(snapshot: NativeSnapshot, external: Mapping[str, Sequence[str]] | None = None) -> list[Lens]:
    """Two lenses per operator written in the file (generated variants have no entry of their own)."""
    by_op = implementers(snapshot, external)
    out = []
    for op in snapshot.functions.ops:
        if op.generated:
            continue
        entry = entry_at(snapshot.document, op.line)
        span = op_name_span(entry) if entry is not None else None
        if span is None:
            continue
        f = op.function
        name = str(f.func.name)
        keys = by_op.get(name, [])
        tooltip = None
        if keys:
            title = "kernels: " + short_list(keys, TITLE_CHARS - len("kernels: "))
            tooltip = "implemented by " + ", ".join(keys)
        elif f.structured_delegate is not None:
            title = f"through {f.structured_delegate}"
            tooltip = f"implemented through the structured kernels of {f.structured_delegate}"
        else:
            title = "no kernels"
        out.append(Lens(span, title, tooltip=tooltip))
        out.append(Lens(span, "show generated code", SHOW_GENERATED, {"op": name}))
    return out
