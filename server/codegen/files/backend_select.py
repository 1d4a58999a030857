"""RegisterBackendSelect.cpp: the BackendSelect kernels of factory functions and their registrations."""

from __future__ import annotations

from ...pieces.dest.backend_select import (
    BackendSelectError,
    compute_backend_select_definition,
    compute_backend_select_registration,
    needs_backend_select,
)
from ..plan import Env, PlanError
from .context import GenContext


def register_backend_select_cpp(ctx: GenContext) -> Env:
    fs = [f for f in ctx.native_functions if needs_backend_select(f) and ctx.selection.is_selected(f)]
    try:
        definitions = [compute_backend_select_definition(f, ctx.options.release.cpp_spelling) for f in fs]
    except BackendSelectError as exc:
        raise PlanError(str(exc)) from exc
    return {"ops_headers": [f"#include <ATen/ops/{f.root_name}_ops.h>" for f in fs],
            "backend_select_method_definitions": definitions,
            "backend_select_function_registrations": [compute_backend_select_registration(f) for f in fs]}
