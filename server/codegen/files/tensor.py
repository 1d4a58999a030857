"""core/TensorBody.h (the Tensor class's methods) and core/TensorMethods.cpp."""

from __future__ import annotations

from ...pieces.dest.functions import compute_tensor_method_declaration, compute_tensor_method_definition
from ..plan import Env
from .context import GenContext


def tensor_body_h(ctx: GenContext) -> Env:
    fs = ctx.native_functions
    return {
        "tensor_method_declarations": [d for f in fs if (d := compute_tensor_method_declaration(
            f, ctx.options.release.cpp_default_qualifies_memory_format, ctx.options.release.cpp_spelling)) is not None],
        "tensor_method_definitions": [d for f in fs if (d := compute_tensor_method_definition(
            f, ctx.options.release.cpp_spelling)) is not None],
    }


def tensor_methods_cpp(ctx: GenContext) -> Env:
    return {}
