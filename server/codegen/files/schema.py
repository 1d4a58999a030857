"""RegisterSchema.cpp (m.def of every schema), core/ATenOpList.cpp, RegistrationDeclarations.h."""

from __future__ import annotations

from collections.abc import Iterable

from ...model.native_function import NativeFunction
from ...pieces.dest.dispatcher_calls import compute_aten_op, compute_registration_declaration
from ...pieces.dest.functions import cpp_string, tags_initializer
from ...releases import Release
from ..plan import Env
from .context import GenContext

# Namespaces other libraries also define: their schemas go in a TORCH_LIBRARY_FRAGMENT.
FRAGMENT_NAMESPACES = frozenset({"quantized", "quantized_decomposed"})


def schema_definitions(functions: Iterable[NativeFunction], release: Release) -> list[str]:
    """m.def lines; each distinct tag list is declared (tags_<n>) before its first use (before 2.2, spelled in each
    line)."""
    known: dict[str, int] = {}
    out = []
    for f in functions:
        tags = tags_initializer(f)
        schema = cpp_string(str(f.func))
        if tags == "{}" or not release.schema_tags_shared:
            out.append(f"m.def({schema}, {tags});\n")
            continue
        declare = ""
        if tags not in known:
            known[tags] = len(known)
            declare = f"const std::vector<at::Tag> tags_{known[tags]} = {tags};\n"
        out.append(f"{declare}m.def({schema}, tags_{known[tags]});\n")
    return out


def register_schema_cpp(ctx: GenContext) -> Env:
    by_namespace: dict[str, list] = {}
    force = ctx.options.force_schema_registration
    for f in ctx.native_functions:
        if not force and not ctx.selection.is_selected(f):
            continue
        by_namespace.setdefault(f.namespace, []).append(f)
    aten: list[str] = []
    others = ""
    for namespace, functions in by_namespace.items():
        body = schema_definitions(functions, ctx.options.release)
        if namespace == "aten":
            aten = body
            continue
        macro = "TORCH_LIBRARY_FRAGMENT" if namespace in FRAGMENT_NAMESPACES else "TORCH_LIBRARY"
        joined = "\t".join(body)
        others += f"\n{macro}({namespace}, m) {{\n  {joined}\n}};"
    skip = ctx.options.skip_dispatcher_op_registration
    return {"aten_schema_registrations": [] if skip else aten, "schema_registrations": [] if skip else others}


def aten_op_list_cpp(ctx: GenContext) -> Env:
    return {"aten_ops": [compute_aten_op(f) for f in ctx.native_functions]}


def registration_declarations_h(ctx: GenContext) -> Env:
    indices = ctx.model.backend_indices
    return {"registration_declarations": [compute_registration_declaration(f, indices, ctx.options.release)
                                         for f in ctx.native_functions]}
