"""NativeAotStubs.h / NativeAotStubs.cpp (gen.py from torch 2.15): the DispatchStubs of native-AOT kernels.

gen.py reads the kernels from Python modules, torch/_native/ops/<op>/aot.py under the checkout (or
--native-aot-ops-dir); opgen does not run Python, so with none present it writes the empty stubs gen.py
writes, and with some it names the files it cannot generate."""

from __future__ import annotations

import os

from ..plan import Manager, PlannedFile, missing, single
from .context import GenContext


def native_aot_ops_dir(ctx: GenContext) -> str:
    """Where gen.py looks for native-AOT declarations: --native-aot-ops-dir, else the checkout's."""
    given = ctx.options.native_aot_ops_dir
    if given is not None:
        return given
    return os.path.join(ctx.options.source_path, "..", "..", "..", "torch", "_native", "ops")


def declared_ops(folder: str) -> list[str]:
    """The ops with an aot.py declaration under folder ("" disables native-AOT codegen)."""
    if not folder or not os.path.isdir(folder):
        return []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [n for n in names if os.path.isfile(os.path.join(folder, n, "aot.py"))]


def _plan(ctx: GenContext, path: str, key: str, blocked: str | None) -> PlannedFile:
    if blocked:
        return missing(Manager.cpu, path, blocked)
    declared = declared_ops(native_aot_ops_dir(ctx))
    if declared:
        return missing(Manager.cpu, path, f"needs the native-AOT declarations of {', '.join(declared[:3])}"
                                          f"{', ...' if len(declared) > 3 else ''} (Python modules opgen does "
                                          "not run); pass --native-aot-ops-dir= to leave them out as gen.py does")
    return single(Manager.cpu, path, lambda: {key: []})


def plan_native_aot_header(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    if not ctx.options.release.writes_native_aot_stubs:
        return []
    return [_plan(ctx, "NativeAotStubs.h", "native_aot_stub_declarations", blocked)]


def plan_native_aot_source(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    if not ctx.options.release.writes_native_aot_stubs:
        return []
    return [_plan(ctx, "NativeAotStubs.cpp", "native_aot_stub_definitions", blocked)]
