"""RegisterBackendSelect.cpp: the BackendSelect kernels of factory functions and their registrations."""

from __future__ import annotations

from ...model.native_function import NativeFunction
from ...model.selection import Selection
from ...pieces.dest.backend_select import (
    BackendSelectError,
    compute_backend_select_definition,
    compute_backend_select_registration,
    needs_backend_select,
)
from ...releases.profile import CppSpelling
from ..plan import Env
from .context import GenContext, Part
from .deferred import Deferred, computed, failed, values


def _backend_select_of(f: NativeFunction, selection: Selection, spelling: CppSpelling
                       ) -> Deferred[tuple[str, str, str] | None]:
    """An op's include, kernel and registration; None when it has no BackendSelect kernel; deferred (deferred.py):
    gen.py's error is raised when the file is built, never while keying it."""
    if not (needs_backend_select(f) and selection.is_selected(f)):
        return computed(None)
    try:
        definition = compute_backend_select_definition(f, spelling)
    except BackendSelectError as exc:
        return failed(exc)
    return computed((f"#include <ATen/ops/{f.root_name}_ops.h>", definition, compute_backend_select_registration(f)))


def backend_select_part(ctx: GenContext) -> Part:
    """Each op's BackendSelect pieces: all RegisterBackendSelect.cpp reads of it."""
    selection, spelling = ctx.selection, ctx.options.release.cpp_spelling
    return "backend-select", ctx.native_functions, lambda f: _backend_select_of(f, selection, spelling)


def register_backend_select_cpp(ctx: GenContext) -> Env:
    pieces = [p for p in values(ctx.per_items(*backend_select_part(ctx))) if p is not None]
    return {"ops_headers": [p[0] for p in pieces],
            "backend_select_method_definitions": [p[1] for p in pieces],
            "backend_select_function_registrations": [p[2] for p in pieces]}
