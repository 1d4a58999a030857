"""Functions.h (at::op), Functions.cpp, RedispatchFunctions.h (at::redispatch::op)."""

from __future__ import annotations

from ...pieces.dest.dispatcher_calls import compute_redispatch_function
from ...pieces.dest.functions import compute_function, in_functions_h, symint_template_form
from ...pieces.dest.static_dispatch import static_dispatch_extra_headers
from ..plan import Env
from .context import GenContext, Part


def functions_h_part(ctx: GenContext) -> Part:
    """Functions.h's contributions (the rest of it is the run's constants)."""
    release = ctx.options.release
    form = symint_template_form(release)
    return "functions-h", tuple(f for f in ctx.native_functions if in_functions_h(f, release)), \
        lambda f: compute_function(f, form, release.cpp_default_qualifies_memory_format, release.cpp_spelling)


def functions_h(ctx: GenContext) -> Env:
    return {"static_dispatch_extra_headers": static_dispatch_extra_headers(ctx.static_dispatch_backends),
            "Functions_includes": ["#include <ATen/Operators.h>"],
            "Functions_declarations": ctx.per_items(*functions_h_part(ctx))}


def functions_cpp(ctx: GenContext) -> Env:
    return {}


def redispatch_part(ctx: GenContext) -> Part:
    release = ctx.options.release
    return "redispatch-h", ctx.native_functions, lambda f: compute_redispatch_function(
        f, release.cpp_default_qualifies_memory_format, release.cpp_spelling)


def redispatch_functions_h(ctx: GenContext) -> Env:
    return {"function_redispatch_definitions": ctx.per_items(*redispatch_part(ctx))}
