"""core/TensorBody.h (the Tensor class's methods) and core/TensorMethods.cpp."""

from __future__ import annotations

from ...pieces.dest.functions import compute_tensor_method_declaration, compute_tensor_method_definition
from ..plan import Env
from .context import GenContext


def tensor_body_h(ctx: GenContext) -> Env:
    fs = ctx.native_functions
    qualified, spelling = ctx.options.release.cpp_default_qualifies_memory_format, ctx.options.release.cpp_spelling
    return {
        "tensor_method_declarations": [d for d in ctx.per_items(
            "tensor-method-declaration", fs, lambda f: compute_tensor_method_declaration(f, qualified, spelling))
            if d is not None],
        "tensor_method_definitions": [d for d in ctx.per_items(
            "tensor-method-definition", fs, lambda f: compute_tensor_method_definition(f, spelling)) if d is not None],
    }


def tensor_methods_cpp(ctx: GenContext) -> Env:
    return {}
