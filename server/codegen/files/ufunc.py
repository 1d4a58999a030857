"""UfuncCPU_<op>.cpp, UfuncCPUKernel_<op>.cpp and UfuncCUDA_<op>.cu: one family per ufunc op (gen.py writes
them after the Register<Key> files of CPU and CUDA)."""

from __future__ import annotations

from ...model import dispatch as dk
from ...model.native_function import NativeFunctionsGroup
from ...pieces.dest import ufunc
from ...pieces.dest.native_declarations import compute_meta_function_declaration, compute_native_function_declaration
from ..plan import Env
from .context import GenContext


def ufunc_groups(ctx: GenContext) -> tuple[NativeFunctionsGroup, ...]:
    return tuple(g for g in ctx.structured_groups if g.out.ufunc_inner_loop)


def _declarations(ctx: GenContext, g: NativeFunctionsGroup, key: dk.DispatchKey) -> Env:
    return {"meta_declaration": compute_meta_function_declaration(g, ctx.options.release.cpp_spelling),
            "native_declaration": compute_native_function_declaration(g, ctx.backend_index(key), ctx.options.release)}


def ufunc_cpu_cpp(ctx: GenContext, g: NativeFunctionsGroup) -> Env:
    return {**_declarations(ctx, g, dk.K["CPU"]),
            "native_definitions": ufunc.compute_ufunc_cpu(
                g, ctx.options.release.dispatch_stub_macros_end, ctx.options.release.cpp_spelling)}


def ufunc_cpu_kernel_cpp(ctx: GenContext, g: NativeFunctionsGroup) -> Env:
    return {"name": str(g.functional.func.name.name),
            "native_definitions": ufunc.compute_ufunc_cpu_kernel(
                g, ctx.options.release.dispatch_stub_macros_end, ctx.options.release.cpp_spelling)}


def ufunc_cuda_cu(ctx: GenContext, g: NativeFunctionsGroup) -> Env:
    loops = "hip" if ctx.options.rocm else "cuda"
    return {"name": str(g.functional.func.name.name), "cuda_headers": f"#include <ATen/native/{loops}/Loops.cuh>",
            **_declarations(ctx, g, dk.K["CUDA"]), "native_definitions": ufunc.compute_ufunc_cuda(
                g, ctx.options.release.dispatch_stub_macros_end, ctx.options.release.cpp_spelling)}
