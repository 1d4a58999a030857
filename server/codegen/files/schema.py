"""RegisterSchema.cpp (m.def of every schema), core/ATenOpList.cpp, RegistrationDeclarations.h."""

from __future__ import annotations

from collections.abc import Iterable

from ...model.native_function import NativeFunction
from ...pieces.dest.dispatcher_calls import compute_aten_op, compute_registration_declaration
from ...pieces.dest.functions import cpp_string, tags_initializer
from ...releases import Release
from ..plan import Env
from .context import GenContext, Part


def schema_of(f: NativeFunction) -> tuple[str, str]:
    """An op's tags initializer and its schema as a C++ string."""
    return tags_initializer(f), cpp_string(str(f.func))


def schema_definitions(schemas: Iterable[tuple[str, str]], release: Release) -> list[str]:
    """m.def lines of (tags, schema) pairs (schema_of's); each distinct tag list is declared (tags_<n>) before its
    first use (before 2.2, spelled in each line)."""
    known: dict[str, int] = {}
    out = []
    for tags, schema in schemas:
        if tags == "{}" or not release.schema_tags_shared:
            out.append(f"m.def({schema}, {tags});\n")
            continue
        declare = ""
        if tags not in known:
            known[tags] = len(known)
            declare = f"const std::vector<at::Tag> tags_{known[tags]} = {tags};\n"
        out.append(f"{declare}m.def({schema}, tags_{known[tags]});\n")
    return out


def register_schema_part(ctx: GenContext) -> Part:
    """Each op's (namespace, whether it is registered, tags, schema): all RegisterSchema.cpp reads of it."""
    force = ctx.options.force_schema_registration
    selection = ctx.selection
    return "schema-registration", ctx.native_functions, lambda f: (
        f.namespace, force or selection.is_selected(f), *schema_of(f))


def register_schema_cpp(ctx: GenContext) -> Env:
    by_namespace: dict[str, list[tuple[str, str]]] = {}
    for namespace, registered, tags, schema in ctx.per_items(*register_schema_part(ctx)):
        if registered:
            by_namespace.setdefault(namespace, []).append((tags, schema))
    aten: list[str] = []
    others = ""
    for namespace, functions in by_namespace.items():
        body = schema_definitions(functions, ctx.options.release)
        if namespace == "aten":
            aten = body
            continue
        macro = "TORCH_LIBRARY_FRAGMENT" if namespace in ctx.options.release.schema_fragment_namespaces \
            else "TORCH_LIBRARY"
        joined = "\t".join(body)
        others += f"\n{macro}({namespace}, m) {{\n  {joined}\n}};"
    skip = ctx.options.skip_dispatcher_op_registration
    return {"aten_schema_registrations": [] if skip else aten, "schema_registrations": [] if skip else others}


def aten_op_list_cpp(ctx: GenContext) -> Env:
    return {"aten_ops": ctx.per_items(*aten_op_part(ctx))}


def aten_op_part(ctx: GenContext) -> Part:
    return "aten-op", ctx.native_functions, compute_aten_op


def registration_declarations_part(ctx: GenContext) -> Part:
    # (f's line reads of the indices only whether each has a kernel for f: f's own entry says)
    indices = ctx.model.backend_indices
    return "registration-declaration", ctx.native_functions, lambda f: compute_registration_declaration(
        f, indices, ctx.options.release)


def registration_declarations_h(ctx: GenContext) -> Env:
    return {"registration_declarations": ctx.per_items(*registration_declarations_part(ctx))}
