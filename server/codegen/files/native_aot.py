"""NativeAotStubs.h / NativeAotStubs.cpp (gen.py from torch 2.15): the DispatchStubs of native-AOT kernels.

gen.py reads the kernels' declarations from torch/_native/ops/<op>/aot.py under the checkout (or
--native-aot-ops-dir); opgen reads them without running them (model/native_aot.py). Each declared op
gets a stub whose signature is its structured impl's, and its structured wrapper under the declared key consults
the stub between op.meta() and op.impl() (dest/register_structured.py). Declarations opgen cannot read leave
these files, and every Register<Key>.cpp (any key may be declared), named and not written."""

from __future__ import annotations

import os

from ...diagnostics import Diagnostic, diag
from ...model.native_aot import NativeAotDeclaration
from ...model.native_function import NativeFunctionsGroup
from ...pieces.dest.native_aot import stub_declaration, stub_definition
from ...text import Span
from ..plan import Manager, PlannedFile, missing, single
from .context import GenContext, GenerateOptions


def native_aot_ops_dir(options: GenerateOptions) -> str:
    """Where gen.py looks for native-AOT declarations: --native-aot-ops-dir, else the checkout's (from
    aten/src/ATen, three folders up: torch/_native/ops)."""
    if options.native_aot_ops_dir is not None:
        return options.native_aot_ops_dir
    return os.path.join(options.source_path, "..", "..", "..", "torch", "_native", "ops")


def declared_group(ctx: GenContext, d: NativeAotDeclaration) -> NativeFunctionsGroup | None:
    """The structured group a declaration targets: its functional name.overload, or its base name."""
    found = None
    for g in ctx.structured_groups:
        name = g.functional.func.name
        if g.structured and (d.op == str(name) if "." in d.op else d.op == name.name.base):
            found = g
    return found


def declaration_errors(ctx: GenContext) -> list[tuple[str, Diagnostic]]:
    """What gen.py refuses in the declarations read, each at the top of its aot.py: an op that is not exactly one
    structured group (its stub is consulted between meta() and impl()), and declarations of several dispatch
    keys (gen.py fails sorting them as it writes NativeAotStubs.h)."""
    if not ctx.options.release.writes_native_aot_stubs:
        return []
    structured_by_base: dict[str, list[str]] = {}
    for g in ctx.structured_groups:
        if g.structured:
            structured_by_base.setdefault(g.functional.func.name.name.base, []).append(str(g.functional.func.name))
    out = []
    for d in ctx.native_aot.declarations:
        base = d.op.split(".")[0]
        names = structured_by_base.get(base, [])
        where = f"native-aot declaration for {d.op}@{d.dispatch_key}"
        if "." in d.op and d.op not in names:
            message = (f"{where}: no structured group named {d.op!r} in native_functions.yaml (structured overloads "
                       f"of {base!r}: {names or 'none'})")
        elif "." not in d.op and not names:
            message = (f"{where}: {d.op} is not a structured op in native_functions.yaml: the stub is consulted "
                       "between meta() and impl(), so unstructured ops are served by the JIT layer only")
        elif "." not in d.op and len(names) > 1:
            message = (f"{where}: base name {d.op!r} is ambiguous across structured groups {names}; qualify ATEN_OP "
                       f"with the overload (e.g. {names[0]!r})")
        else:
            continue
        out.append((d.path, diag("OPG967", Span.point(0, 0), message)))
    keys = sorted({d.dispatch_key for d in ctx.native_aot.declarations})
    if not out and len(keys) > 1:
        d = ctx.native_aot.declarations[-1]
        out.append((d.path, diag("OPG967", Span.point(0, 0), f"declarations for several dispatch keys ({', '.join(keys)}): "
                                 "gen.py fails ordering them (it sorts DispatchKey values, which have no order)")))
    return out


def unread_reason(ctx: GenContext) -> str:
    """Why the files that depend on the declarations are not generated ("" when they are read)."""
    unread = ctx.native_aot.unread
    if not unread or not ctx.options.release.writes_native_aot_stubs:
        return ""
    return f"needs native-AOT declarations opgen cannot read: {unread}; --native-aot-ops-dir= leaves them out"


def _in_order(ctx: GenContext) -> list[NativeAotDeclaration]:
    # gen.py sorts by (dispatch key, op); the declarations of one key (load_context refuses several, on which
    # gen.py's sort fails) are sorted by op.
    return sorted(ctx.native_aot.declarations, key=lambda d: d.op)


def _header(ctx: GenContext) -> dict[str, list[str]]:
    declarations = []
    for d in _in_order(ctx):
        g = declared_group(ctx, d)
        if g is None:  # load_context refuses it first
            raise ValueError(f"native-AOT declaration for {d.op}@{d.dispatch_key}: no structured group")
        declarations.append(stub_declaration(d, g, ctx.options.release.cpp_spelling))
    return {"native_aot_stub_declarations": declarations}


def _source(ctx: GenContext) -> dict[str, list[str]]:
    return {"native_aot_stub_definitions": [stub_definition(d) for d in _in_order(ctx)]}


def plan_native_aot_header(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    if not ctx.options.release.writes_native_aot_stubs:
        return []
    reason = blocked or unread_reason(ctx)
    if reason:
        return [missing(Manager.cpu, "NativeAotStubs.h", reason)]
    return [single(Manager.cpu, "NativeAotStubs.h", lambda: _header(ctx))]


def plan_native_aot_source(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    if not ctx.options.release.writes_native_aot_stubs:
        return []
    reason = blocked or unread_reason(ctx)
    if reason:
        return [missing(Manager.cpu, "NativeAotStubs.cpp", reason)]
    return [single(Manager.cpu, "NativeAotStubs.cpp", lambda: _source(ctx))]
