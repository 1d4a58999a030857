"""The whole file set of gen.py (torchgen.gen), in gen.py's order: sources, headers, Declarations.yaml.

Each entry is a PlannedFile; files opgen cannot generate yet are planned too (with no builder)
so that the command can name them instead of silently leaving them out.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ...model import dispatch as dk
from ...pieces.dest.declarations_yaml import compute_declaration_yaml_text, declarations_yaml_text
from ...pieces.dest.vmap import compute_vmap_plumbing, vmap_generated_plumbing_h
from ..plan import SHARDED_FAMILY_COST, Build, Manager, PlannedFile, missing, sharded, sharded_missing, single
from . import (
    aoti,
    backend_select,
    dispatch_key,
    functionalization,
    functions,
    names,
    native,
    operators,
    per_operator,
    schema,
    tensor,
    ufunc,
)
from .context import GenContext, Part
from .native_aot import plan_native_aot_header, plan_native_aot_source, unread_reason


def declarations_yaml_part(ctx: GenContext) -> Part:
    qualified, spelling = ctx.options.release.cpp_default_qualifies_memory_format, ctx.options.release.cpp_spelling
    return "declarations-yaml", ctx.native_functions, lambda f: compute_declaration_yaml_text(f, qualified, spelling)


def declarations_yaml(ctx: GenContext) -> str:
    return declarations_yaml_text(ctx.per_items(*declarations_yaml_part(ctx)))


def vmap_part(ctx: GenContext) -> Part:
    return "vmap-plumbing", ctx.native_functions, lambda f: compute_vmap_plumbing(f, ctx.options.release)

NOT_YET = "not implemented yet"

# plan_headers' cpu(): a cpu/ file, or a missing one when generation is blocked.
_CpuFile = Callable[..., PlannedFile]


def _manager_of(ctx: GenContext, key: dk.DispatchKey) -> Manager:
    if dk.is_cuda_dispatch_key(key):
        return Manager.cuda
    if dk.is_xpu_dispatch_key(key) and ctx.options.xpu_flag:
        return Manager.xpu
    return Manager.cpu


def plan_aoti_files(ctx: GenContext) -> list[PlannedFile]:
    fallbacks = ctx.fallback_ops
    blocked = fallbacks is None and aoti.needs_fallback_ops(ctx.options.release)
    key_of = aoti.shim_keys(ctx, fallbacks)
    return [single(Manager.aoti, name,
                   None if blocked else partial(build, ctx, fallbacks, key),
                   missing_reason=ctx.fallback_ops_missing, key=key_of(key, name))
            for key in aoti.aoti_backends(ctx) for name, build in aoti.shim_files(ctx, key)]


def plan_ufunc_files(ctx: GenContext, key: dk.DispatchKey, fm: Manager, blocked: str | None) -> list[PlannedFile]:
    out: list[PlannedFile] = []
    for g in ufunc.ufunc_groups(ctx):
        name = g.functional.func.name.name
        if key is dk.K["CPU"]:
            out.append(single(fm, f"UfuncCPU_{name}.cpp", None if blocked else
                              partial(ufunc.ufunc_cpu_cpp, ctx, g), template="UfuncCPU.cpp",
                              missing_reason=blocked or ""))
            out.append(single(Manager.cpu_vec, f"UfuncCPUKernel_{name}.cpp", None if blocked else
                              partial(ufunc.ufunc_cpu_kernel_cpp, ctx, g), template="UfuncCPUKernel.cpp",
                              missing_reason=blocked or ""))
        else:
            out.append(single(fm, f"UfuncCUDA_{name}.cu", None if blocked else
                              partial(ufunc.ufunc_cuda_cu, ctx, g), template="UfuncCUDA.cu",
                              missing_reason=blocked or ""))
    return out


def plan_sources(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    out: list[PlannedFile] = []
    # Declarations opgen cannot read may name any key: no Register<Key>.cpp is written without them.
    register_blocked = blocked or unread_reason(ctx) or None
    for key in ctx.options.dispatch_keys:
        fm = _manager_of(ctx, key)
        n = dispatch_key.num_shards(key)
        path = f"Register{key}.cpp"
        if not ctx.options.release.register_dispatch_key_sharded:
            out.append(single(fm, path, None if register_blocked else
                              partial(dispatch_key.register_dispatch_key_cpp, ctx, key),
                              template="RegisterDispatchKey.cpp", missing_reason=register_blocked or "",
                              cost=SHARDED_FAMILY_COST))
        elif register_blocked:
            out += sharded_missing(fm, path, "RegisterDispatchKey.cpp", n, register_blocked)
        else:
            out += sharded(fm, path, "RegisterDispatchKey.cpp",
                           partial(dispatch_key.register_dispatch_key_shards, ctx, key), n,
                           dispatch_key.register_shard_keys(ctx, key))
        if dk.is_ufunc_dispatch_key(key):
            out += plan_ufunc_files(ctx, key, fm, blocked)
    out += plan_aoti_files(ctx)
    out.append(single(Manager.cpu, "RegisterBackendSelect.cpp",
                      None if blocked else lambda: backend_select.register_backend_select_cpp(ctx),
                      missing_reason=blocked or "",
                      key=ctx.values_key("RegisterBackendSelect.cpp", backend_select.backend_select_part(ctx))))
    out += plan_native_aot_source(ctx, blocked)
    out.append(single(Manager.cpu, "RegisterSchema.cpp", None if blocked else lambda: schema.register_schema_cpp(ctx),
                      missing_reason=blocked or "",
                      key=ctx.values_key("RegisterSchema.cpp", schema.register_schema_part(ctx))))
    if blocked:
        out += sharded_missing(Manager.cpu, "Operators.cpp", "Operators.cpp", operators.OPERATORS_CPP_SHARDS, blocked)
    else:
        out += sharded(Manager.cpu, "Operators.cpp", "Operators.cpp", lambda: operators.operators_cpp_shards(ctx),
                       operators.OPERATORS_CPP_SHARDS, operators.operators_cpp_keys(ctx))
    out.append(single(Manager.cpu, "Functions.cpp", lambda: functions.functions_cpp(ctx)))
    out.append(single(Manager.core, "TensorMethods.cpp", lambda: tensor.tensor_methods_cpp(ctx)))
    out.append(single(Manager.core, "ATenOpList.cpp", lambda: schema.aten_op_list_cpp(ctx),
                      key=ctx.values_key("ATenOpList.cpp", schema.aten_op_part(ctx))))
    n = functionalization.REGISTER_FUNCTIONALIZATION_SHARDS
    if blocked:
        out += sharded_missing(Manager.cpu, "RegisterFunctionalization.cpp", "RegisterFunctionalization.cpp", n,
                               blocked)
    else:
        out += sharded(Manager.cpu, "RegisterFunctionalization.cpp", "RegisterFunctionalization.cpp",
                       lambda: functionalization.register_functionalization_shards(ctx), n,
                       functionalization.register_functionalization_keys(ctx))
    view_meta_classes = (("ViewMetaClasses.h", functionalization.view_meta_classes_h,
                          ctx.values_key("ViewMetaClasses.h", functionalization.view_meta_declarations_part(ctx))),
                         ("ViewMetaClasses.cpp", functionalization.view_meta_classes_cpp,
                          ctx.values_key("ViewMetaClasses.cpp", functionalization.view_meta_implementations_part(ctx),
                                         functionalization.view_op_headers_part(ctx))))
    for name, build, key in (("FunctionalInverses.h", functionalization.functional_inverses_h,
                              ctx.values_key("FunctionalInverses.h", functionalization.functional_inverses_part(ctx))),
                             *(view_meta_classes if ctx.options.release.functionalization_view_meta_classes else ()),
                             ("CompositeViewCopyKernels.cpp", functionalization.composite_view_copy_kernels_cpp, None)):
        out.append(single(Manager.cpu, name, None if blocked else partial(build, ctx),
                          missing_reason=blocked or "", key=key))
    return out


def plan_headers(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    def cpu(path: str, build: Build, *, template: str | None = None, key: Callable[[], str] | None = None
            ) -> PlannedFile:
        return single(Manager.cpu, path, None if blocked else build, template=template, missing_reason=blocked or "",
                      key=key)

    out = plan_per_operator_headers(ctx, blocked) if ctx.options.per_operator_headers else \
        plan_aggregated_headers(ctx, blocked, cpu)
    out += [
        single(Manager.core, "TensorBody.h", None if blocked else lambda: tensor.tensor_body_h(ctx),
               missing_reason=blocked or "", key=ctx.values_key("TensorBody.h", *tensor.tensor_body_parts(ctx))),
        cpu("RedispatchFunctions.h", lambda: functions.redispatch_functions_h(ctx),
            key=ctx.values_key("RedispatchFunctions.h", functions.redispatch_part(ctx))),
        cpu("RegistrationDeclarations.h", lambda: schema.registration_declarations_h(ctx),
            key=ctx.values_key("RegistrationDeclarations.h", schema.registration_declarations_part(ctx))),
        single(Manager.cpu, "VmapGeneratedPlumbing.h", lambda: vmap_generated_plumbing_h(ctx.per_items(*vmap_part(ctx))),
               key=ctx.values_key("VmapGeneratedPlumbing.h", vmap_part(ctx))),
        *plan_native_aot_header(ctx, blocked),
        single(Manager.core, "aten_interned_strings.h", lambda: names.aten_interned_strings_h(ctx),
               key=ctx.values_key("aten_interned_strings.h", names.interned_names_part(ctx))),
        single(Manager.core if ctx.options.release.enum_tag_in_core else Manager.headeronly, "enum_tag.h",
               lambda: names.enum_tag_h(ctx)),
    ]
    return out


def plan_per_operator_headers(ctx: GenContext, blocked: str | None) -> list[PlannedFile]:
    """gen.py's per-operator layout: ops/ files, then the headers that include them."""
    if blocked:
        return [missing(Manager.cpu, "Functions.h", blocked)]
    roots = per_operator.RootNames.of(ctx)
    out = per_operator.plan_ops_files(ctx, roots)
    for category, suffix in (("Functions", ""), ("Operators", "_ops"), ("NativeMetaFunctions", "_meta"),
                             ("NativeFunctions", "_native")):
        out.append(single(Manager.cpu, f"{category}.h",
                          partial(per_operator.aggregate_header, roots, category, suffix)))
    for key in ctx.options.dispatch_keys:
        if key not in ctx.options.functions_keys:
            continue
        names = per_operator.dispatch_names(ctx, roots, key)
        out += per_operator.plan_dispatch_files(ctx, roots, key, names)
        fm = _manager_of(ctx, key)
        out.append(single(fm, f"{key}Functions.h", partial(dispatch_key.dispatch_key_functions_h, ctx, key),
                          template="DispatchKeyFunctions.h"))
        out.append(single(fm, f"{key}Functions_inl.h",
                          partial(per_operator.dispatch_key_functions_inl_h, key, names),
                          template="DispatchKeyFunctions_inl.h"))
    out.append(single(Manager.cpu, "MethodOperators.h", lambda: per_operator.method_operators_h(roots)))
    return out


def plan_aggregated_headers(ctx: GenContext, blocked: str | None, cpu: _CpuFile) -> list[PlannedFile]:
    out = [
        cpu("NativeMetaFunctions.h", lambda: native.native_meta_functions_h(ctx),
            key=ctx.values_key("NativeMetaFunctions.h", native.native_meta_part(ctx))),
        cpu("MethodOperators.h", lambda: operators.method_operators_h(ctx),
            key=ctx.values_key("MethodOperators.h", operators.operators_part(ctx, True))),
        cpu("Operators.h", lambda: operators.operators_h(ctx),
            key=ctx.values_key("Operators.h", operators.operators_part(ctx, False))),
        cpu("Functions.h", lambda: functions.functions_h(ctx),
            key=ctx.values_key("Functions.h", functions.functions_h_part(ctx))),
        cpu("NativeFunctions.h", lambda: native.native_functions_h(ctx),
            key=ctx.values_key("NativeFunctions.h", native.native_declarations_part(ctx))),
    ]
    for key in ctx.options.dispatch_keys:
        if key not in ctx.options.functions_keys:
            continue
        fm = _manager_of(ctx, key)
        out.append(single(fm, f"{key}Functions.h", None if blocked else
                          partial(dispatch_key.dispatch_key_functions_h, ctx, key),
                          template="DispatchKeyFunctions.h", missing_reason=blocked or ""))
        out.append(single(fm, f"{key}Functions_inl.h", None if blocked else
                          partial(dispatch_key.dispatch_key_functions_inl_h, ctx, key),
                          template="DispatchKeyFunctions_inl.h", missing_reason=blocked or "",
                          shares=f"Register{key}.cpp",  # the same group pieces as Register<Key>.cpp
                          key=ctx.values_key(f"{key}Functions_inl.h", dispatch_key.inline_declarations_part(ctx, key))))
    return out


def plan_aten(ctx: GenContext) -> list[PlannedFile]:
    """Every file gen.py would write for these options, in its order."""
    blocked = None  # a reason no file can be generated for these options; every option is implemented now
    out: list[PlannedFile] = []
    if "sources" in ctx.options.generate:
        out += plan_sources(ctx, blocked)
    if "headers" in ctx.options.generate:
        out += plan_headers(ctx, blocked)
    if "declarations_yaml" in ctx.options.generate:
        out.append(single(Manager.cpu, "Declarations.yaml", lambda: declarations_yaml(ctx),
                          cost=3 * SHARDED_FAMILY_COST,  # 3,101 entries, each a YAML mapping
                          key=ctx.values_key("Declarations.yaml", declarations_yaml_part(ctx))))
    return out
