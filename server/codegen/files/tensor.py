"""core/TensorBody.h (the Tensor class's methods) and core/TensorMethods.cpp."""

from __future__ import annotations

from ...pieces.dest.functions import compute_tensor_method_declaration, compute_tensor_method_definition
from ..plan import Env
from .context import GenContext, Part


def tensor_body_parts(ctx: GenContext) -> tuple[Part, Part]:
    fs = ctx.native_functions
    qualified, spelling = ctx.options.release.cpp_default_qualifies_memory_format, ctx.options.release.cpp_spelling
    return (("tensor-method-declaration", fs, lambda f: compute_tensor_method_declaration(f, qualified, spelling)),
            ("tensor-method-definition", fs, lambda f: compute_tensor_method_definition(f, spelling)))


def tensor_body_h(ctx: GenContext) -> Env:
    declarations, definitions = tensor_body_parts(ctx)
    return {
        "tensor_method_declarations": [d for d in ctx.per_items(*declarations) if d is not None],
        "tensor_method_definitions": [d for d in ctx.per_items(*definitions) if d is not None],
    }


def tensor_methods_cpp(ctx: GenContext) -> Env:
    return {}
