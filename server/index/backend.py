"""A backend yaml checked against a native_functions.yaml snapshot, with every diagnostic placed."""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Diagnostic, diag, first_diagnostics
from ..model.backend import BackendYaml, lower_backend_yaml
from ..model.backend_resolve import ResolvedBackend, resolve_backend
from ..model.vendor_formats import lower_vendor_yaml, vendor_format
from ..syntax.libyaml import compose
from ..syntax.nodes import YNode
from ..text import Span
from .documents import _not_text, estimated_nodes, memory_budget
from .native import NativeSnapshot
from .vendor import NativeFor, VendorResolution, resolve_vendor


@dataclass(frozen=True)
class BackendSnapshot:
    # None when the text is not a mapping at all (empty, a list, broken yaml).
    yaml: BackendYaml | None
    resolved: ResolvedBackend | None
    diagnostics: tuple[Diagnostic, ...]
    # A vendor's dialect (torch_npu, op-plugin, torch_mlu, torch_musa): read by its own reader instead.
    vendor: VendorResolution | None = None

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.diagnostics)


def _order(d: Diagnostic) -> tuple[int, int, str]:
    return (d.span.start_line, d.span.start_col, d.code)


# A backend yaml is composed whole (not entry by entry); the largest real one has 100k characters.
MAX_BACKEND_CHARS = 8 * 1024 * 1024
# Bytes per YAML value of a backend yaml, an upper bound (tests/reliability/test_bounded_memory.py): an op
# listed under supported: costs about 930 of them by estimated_nodes' count, its resolution and a diagnostic.
BACKEND_VALUE_COST = 1_000


def check_backend(text: str, native: NativeSnapshot, path: str = "", natives: NativeFor | None = None,
                  vendors: bool = True, experimental: bool = False) -> BackendSnapshot:
    """Compose, lower and resolve one backend yaml; never raises on bad input. A vendor file (by its name at `path`
    or its keys) is read as its vendor's codegen reads it; natives(line): another release's native_functions.yaml,
    for op-plugin's version ranges; experimental: as pytorch#172539's proposed gen_backend_stubs reads it."""
    problem = _not_text(text, MAX_BACKEND_CHARS) or _too_many_nodes(text)
    if problem is not None:  # a huge or binary file opened by mistake: one diagnostic, at once
        return BackendSnapshot(None, None, (problem,))
    try:
        root, diagnostics = compose(text)
    except RecursionError:
        # An alias inside its own anchor (&a [*a]) or absurd nesting: compose cannot build a finite tree.
        return BackendSnapshot(None, None, (diag("OPG001", Span.point(0, 0), "this yaml nests too deeply or refers "
                                                 "to itself through an alias (&a ... *a); a backend yaml cannot "
                                                 "be read from it"),))
    found = list(diagnostics)
    fmt = vendor_format(path, text) if vendors else None  # vendors=False: as gen_backend_stubs reads any yaml
    if fmt is not None:
        return _check_vendor(fmt, root, found, native, natives)
    yaml, lowering = lower_backend_yaml(root, experimental=experimental)
    # A yaml syntax error leaves no tree: report that alone, not that the file is empty.
    if root is None and found:
        return BackendSnapshot(None, None, tuple(sorted(found, key=_order)))
    found.extend(lowering)
    resolved = None
    if yaml is not None:
        resolved, resolving = resolve_backend(yaml, native.functions, native.release)
        found.extend(resolving)
    return BackendSnapshot(yaml, resolved, first_diagnostics(found, len(found), _order))


def _check_vendor(fmt: str, root: YNode | None, found: list[Diagnostic], native: NativeSnapshot,
                  natives: NativeFor | None) -> BackendSnapshot:
    if root is None and found:
        return BackendSnapshot(None, None, tuple(sorted(found, key=_order)))
    vendor, lowering = lower_vendor_yaml(fmt, root)
    found.extend(lowering)
    resolution = None
    if vendor is not None:
        resolution, resolving = resolve_vendor(vendor, native, natives)
        found.extend(resolving)
    return BackendSnapshot(None, None, first_diagnostics(found, len(found), _order), resolution)


def _too_many_nodes(text: str) -> Diagnostic | None:
    """An OPG007 for a backend yaml of more values than opgen composes (its whole tree is built at once): as many as
    the memory budget of its size pays for (no text of fewer characters than that number holds more)."""
    most = memory_budget(len(text)) // BACKEND_VALUE_COST
    if len(text) < most or (count := estimated_nodes(text)) <= most:
        return None
    return diag("OPG007", Span.point(0, 0), f"this file holds about {count:,} YAML values (keys, values, list "
                                            f"items), more than the {most:,} opgen reads in a file of this size "
                                            "(the largest real backend yaml has about 6,000); it is not checked")
