"""Register<Key>_N.cpp / Register<Key>Everything.cpp, <Key>Functions.h and <Key>Functions_inl.h."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...frozen import PER_OP_AND_KEY_MEMO
from ...model import dispatch as dk
from ...model.native_aot import NativeAotDeclaration
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup
from ...model.schema import OperatorName
from ...pieces.dest.native_declarations import key_export_macro
from ...pieces.dest.register_namespaced import (
    GroupPieces,
    KernelNamespaceError,
    certainly_no_pieces,
    group_pieces,
    kernel_namespace,
    with_export_macro,
)
from ...releases import Release
from ..file_record import env_key
from ..plan import Env, PlanError, render, shard_envs, shard_keys
from .context import GenContext, Part
from .narrow import index_flags, narrow_index
from .native import namespace_prologue, namespaced_blocks

K = dk.K
_EXTRA_CUDA_HEADERS = """\
#include <c10/cuda/CUDAGuard.h>
#include <ATen/cuda/ATenCUDAGeneral.h>
#include <ATen/cuda/CUDADevice.h>
#include <ATen/cuda/CUDAContext.h>"""
_EXTRA_HIP_HEADERS = """\
#include <c10/hip/HIPGuard.h>
#include <ATen/hip/ATenHIPGeneral.h>
#include <ATen/hip/HIPDevice.h>
#include <ATen/hip/HIPContext.h>"""


def extra_cuda_headers(rocm: bool, release: Release) -> str:
    """The CUDA headers of Register<Key>.cpp and the CUDA shims; with --rocm the HIP ones, whose guard header is
    the masquerading one until 2.10 (Release.rocm_guards_masquerade_as_cuda)."""
    if not rocm:
        return _EXTRA_CUDA_HEADERS
    if release.rocm_guards_masquerade_as_cuda:
        return _EXTRA_HIP_HEADERS.replace("#include <c10/hip/HIPGuard.h>",
                                          "#include <ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h>")
    return _EXTRA_HIP_HEADERS


def num_shards(key: dk.DispatchKey) -> int:
    return 4 if key is K["CPU"] else 1


# ------------------------------------------------------------------ helpers at the top of the file

def registration_headers(index: BackendIndex, rocm: bool, release: Release, per_operator_headers: bool = False,
                         native_aot: bool = False) -> list[str]:
    """native_aot: a native-AOT declaration names the key (only CUDA's file includes the stubs, as in gen.py)."""
    key = index.dispatch_key
    headers = ["#include <ATen/ops/as_strided_native.h>" if per_operator_headers else "#include <ATen/NativeFunctions.h>"]
    if key in (K["CPU"], K["Meta"]):
        headers.append("#include <ATen/EmptyTensor.h>")
    elif key is K["CUDA"]:
        headers.append("#include <ATen/hip/EmptyTensor.h>" if rocm else "#include <ATen/cuda/EmptyTensor.h>")
        if native_aot:
            headers.append("#include <ATen/NativeAotStubs.h>")
    elif key is K["MPS"]:
        headers.append("#include <ATen/mps/EmptyTensor.h>")
    elif key is K["XPU"] and "XPU" in release.device_keys_with_empty_functions:
        headers.append("#include <ATen/xpu/EmptyTensor.h>")
    elif key is K["MTIA"] and "MTIA" in release.device_keys_with_empty_functions:
        headers.append("#include <ATen/native/mtia/EmptyTensor.h>")
    elif per_operator_headers:
        headers += [f"#include <ATen/ops/{name}.h>" for name in ("empty", "empty_strided", "_copy_from_and_resize",
                                                               "_copy_from")]
    else:
        headers.append("#include <ATen/Functions.h>")
    if release.registration_helpers_silence_unused:
        headers.append("#include <c10/macros/Macros.h>")
    return headers


def _empty_impls(key: dk.DispatchKey, release: Release, proposal: bool = False) -> tuple[str, str] | None:
    """proposal: pytorch#172539's generator, which gives PrivateUse1 the dispatched at::empty (its structured
    classes make their outputs with it)."""
    if str(key) in release.device_keys_with_empty_functions:
        name = str(key).lower()
        return f"at::detail::empty_{name}", f"at::detail::empty_strided_{name}"
    if key in (dk.CEA_NON_FUNCTIONAL, K["QuantizedCPU"], K["QuantizedCUDA"]) or proposal and key is K["PrivateUse1"]:
        return "at::empty", "at::empty_strided"
    return None


def _create_out(key: dk.DispatchKey, release: Release, proposal: bool = False) -> list[str]:
    impls = _empty_impls(key, release, proposal)
    if impls is None:
        return []
    options = "options.device(at::kMeta)" if key is K["Meta"] else "options"
    return [f"""
Tensor create_out(IntArrayRef sizes, IntArrayRef strides, const TensorOptions &options) {{
  if (strides.empty()) {{
      return {impls[0]}(sizes, {options});
  }} else {{
      return {impls[1]}(sizes, strides, {options});
  }}
}}
"""]


_RESIZE_OUT = """
void resize_out(const Tensor &out, IntArrayRef sizes, IntArrayRef strides, const TensorOptions &options) {
  TORCH_CHECK(options.dtype() == out.dtype(),
      "Expected out tensor to have dtype ", options.dtype(), ", but got ", out.dtype(), " instead");
  TORCH_CHECK(options.device() == out.device(),
      "Expected out tensor to have device ", options.device(), ", but got ", out.device(), " instead");
  const bool resized = at::native::resize_output(out, sizes);
  // Only restride if a resize occurred; otherwise we ignore the (advisory)
  // strides from the meta function and directly use the output tensor's
  // preexisting strides
  if (resized) {
    if (!strides.empty()) {
      TORCH_INTERNAL_ASSERT(!options.memory_format_opt().has_value());
      // TODO: avoid the redispatch here
      out.as_strided_(sizes, strides);
    } else if (options.memory_format_opt().has_value()) {
      out.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
    }
  }
}
"""

_CHECK_INPLACE = """
void check_inplace(const Tensor &self, IntArrayRef sizes, const TensorOptions &options) {
  // These checks are needed on those operators that:
  //   1) don't use 'TensorIterator' (e.g. 'addmm' and 'baddbmm')
  //   2) have particular typing rules (e.g. 'cumsum' and 'cumprod')
  // For other operators (e.g. 'add'), 'TensorIterator' already checks
  // these things separately.
  TORCH_CHECK(options.dtype() == self.dtype(),
      "Bad in-place call: ",
      "input tensor dtype ", self.dtype(), " and output tensor dtype ", options.dtype(), " should match");
  TORCH_CHECK(options.device() == self.device(),
      "Bad in-place call: ",
      "input tensor device ", self.device(), " and output tensor device ", options.device(), " should match");
  TORCH_CHECK(sizes == self.sizes(),
      "Bad in-place call: ",
      "input tensor size ", self.sizes(), " and output tensor size ", sizes, " should match");
}
"""


def _maybe_create_proxy(key: dk.DispatchKey, release: Release, proposal: bool = False) -> list[str]:
    impls = _empty_impls(key, release, proposal)
    if impls is None:
        return []
    spelling = release.cpp_spelling
    proxy = spelling.optional("Tensor", rooted=False)
    return [f"""
{proxy} maybe_create_proxy(const Tensor &out, IntArrayRef sizes, IntArrayRef strides, const TensorOptions &options) {{
  if (out.strides() != strides) {{
    return {impls[1]}(sizes, strides, options);
  }}
  return {spelling.nullopt(rooted=False)};
}}
"""]


def registration_helpers(index: BackendIndex, release: Release, proposal: bool = False) -> list[str]:
    key = index.dispatch_key
    helpers = [*_create_out(key, release, proposal), *([] if key is dk.CEA_NON_FUNCTIONAL else [_RESIZE_OUT]),
               _CHECK_INPLACE, *_maybe_create_proxy(key, release, proposal)]
    if not release.registration_helpers_silence_unused:
        return helpers
    return ['C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED("-Wunused-function")', *helpers, "C10_DIAGNOSTIC_POP()"]


# ------------------------------------------------------------------ per group

def _namespace(g: NativeFunction | NativeFunctionsGroup) -> str:
    return g.namespace if isinstance(g, NativeFunction) else g.functional.namespace


_META = dk.K["Meta"]
_DEFINITIONS_TEMPLATE = "RegisterDispatchDefinitions.ini"


def _definitions_template(ctx: GenContext) -> str:
    template = ctx.templates.get(_DEFINITIONS_TEMPLATE)
    if template is None:
        raise PlanError(f"no template {_DEFINITIONS_TEMPLATE} in the templates folder")
    return template


def group_definitions(ctx: GenContext, g: NativeFunction | NativeFunctionsGroup, key: dk.DispatchKey,
                      index: BackendIndex) -> list[str]:
    """The RegisterDispatchDefinitions.ini block of one group (anonymous wrappers, m.impl, at::<key>::op): one
    item for a block placeholder, or none."""
    template = _definitions_template(ctx)
    narrowed = narrow_index(index, g)
    if certainly_no_pieces(narrowed):
        return []
    block = _group_definitions(g, key, narrowed, ctx.options.skip_dispatcher_op_registration, template,
                               unselected_of(ctx, g), release=ctx.options.release, aot=ctx.native_aot_for(key, g),
                               rocm=ctx.options.rocm)
    return [block] if block else []


def unselected_of(ctx: GenContext, g: NativeFunction | NativeFunctionsGroup) -> frozenset[OperatorName]:
    """The ops of g that operator selection leaves out (none without a selection)."""
    if ctx.selection.include_all_operators:
        return frozenset()
    fs = (g,) if isinstance(g, NativeFunction) else g.functions()
    return frozenset(f.func.name for f in fs if not ctx.selection.is_selected(f))


@functools.lru_cache(maxsize=PER_OP_AND_KEY_MEMO)  # per group, key and template text: an edit elsewhere leaves it cached
def _group_definitions(g: NativeFunction | NativeFunctionsGroup, key: dk.DispatchKey, index: BackendIndex,
                       skip: bool, template: str, unselected: frozenset[OperatorName] = frozenset(),
                       *, release: Release, aot: NativeAotDeclaration | None = None, rocm: bool) -> str:
    try:
        namespace = kernel_namespace(g, index).replace("::native", "")
    except KernelNamespaceError as exc:
        raise PlanError(str(exc)) from exc
    pieces = group_pieces(g, index, skip, unselected, release=release, aot=aot, rocm=rocm)
    if not pieces.namespaced_definitions:
        return ""
    prologue, epilogue = namespace_prologue(namespace, 2)
    body = registration_body(key, {_namespace(g): pieces.registrations}, release)
    env = {
        "ns_prologue": prologue,
        "ns_epilogue": epilogue,
        "dispatch_anonymous_definitions": list(pieces.anonymous_definitions),
        "static_init_dispatch_registrations": "" if skip else body,
        "deferred_dispatch_registrations": "",
        "dispatch_namespace": str(key).lower(),
        "dispatch_namespaced_definitions": list(pieces.namespaced_definitions),
    }
    # gen.py hands the block over as its lines, and a block placeholder drops empty items: so do the same
    # here, once, and keep one string (a tuple of lines costs several times the memory in the cache).
    text = render(_DEFINITIONS_TEMPLATE, {_DEFINITIONS_TEMPLATE: template}, env, release)
    return "\n".join(line for line in text.split("\n") if line)


def registration_body(key: dk.DispatchKey, by_namespace: Mapping[str, Sequence[str]], release: Release) -> str:
    """The TORCH_LIBRARY_IMPL blocks of a definitions block: one per op namespace that registers something (each
    closed by `};` until 2.5: Release.registration_blocks_end_in_semicolon)."""
    close = "\n};" if release.registration_blocks_end_in_semicolon else "\n}"
    return "".join(f"\nTORCH_LIBRARY_IMPL({namespace}, {key}, m) {{\n    " + "\n".join(registrations) + close
                   for namespace, registrations in by_namespace.items() if registrations)


def operator_headers(ctx: GenContext, key: dk.DispatchKey) -> list[str]:
    if ctx.options.per_operator_headers:
        return register_operator_headers(ctx, key)
    headers = ["#include <ATen/NativeFunctions.h>"]
    if key is dk.CEA_NON_FUNCTIONAL:
        headers.append("#include <ATen/Functions.h>")
    if key in ctx.options.functions_keys:
        headers.append(f"#include <ATen/{key}Functions.h>")
    return headers


def register_operator_headers(ctx: GenContext, key: dk.DispatchKey) -> list[str]:
    """The ops/ headers a Register<Key>.cpp includes: those of every group registered under the key."""
    found = ctx.per_items(*operator_headers_part(ctx, key))
    return sorted({header for headers in found for header in headers})


def operator_headers_part(ctx: GenContext, key: dk.DispatchKey) -> Part:
    """Each group's ops/ headers in Register<Key>.cpp (per-operator layout)."""
    index = ctx.backend_index(key)
    dispatch = key in ctx.options.functions_keys
    family = f"register-operator-headers:{key}:{index_flags(index)}:{dispatch}"
    return family, ctx.groups, lambda g: _group_operator_headers(g, key, narrow_index(index, g), dispatch)


def _group_operator_headers(g: NativeFunction | NativeFunctionsGroup, key: dk.DispatchKey, index: BackendIndex,
                            dispatch: bool) -> list[str]:
    """The ops/ headers Register<Key>.cpp includes for g: none unless g registers something under the key."""
    registered = (index.has_kernel(g)
                  or (isinstance(g, NativeFunctionsGroup) and any(index.has_kernel(f) for f in g.functions()))
                  or (g.structured and key in (_META, dk.CEA_NON_FUNCTIONAL)))
    if not registered:
        return []
    headers = [f"#include <ATen/ops/{g.root_name}_native.h>"]
    if key is dk.CEA_NON_FUNCTIONAL:
        headers.append(f"#include <ATen/ops/{g.root_name}.h>")
    if dispatch:
        headers.append(f"#include <ATen/ops/{g.root_name}_{str(key).lower()}_dispatch.h>")
    return headers


def _register_base_env(ctx: GenContext, key: dk.DispatchKey, index: BackendIndex) -> dict:
    """RegisterDispatchKey.cpp's environment but for its definitions."""
    return {**_register_constants(ctx, key, index), "ops_headers": operator_headers(ctx, key)}


def _register_constants(ctx: GenContext, key: dk.DispatchKey, index: BackendIndex) -> dict:
    """RegisterDispatchKey.cpp's environment but for its definitions and ops headers: the run's constants and the
    key's index flags."""
    per_block = ctx.options.release.dispatch_helpers_per_definitions_block
    return {
        "extra_cuda_headers": extra_cuda_headers(ctx.options.rocm, ctx.options.release) if dk.is_cuda_dispatch_key(key)
        else "",
        "external_backend_headers": "",
        "dispatch_headers": registration_headers(index, ctx.options.rocm, ctx.options.release,
                                                 ctx.options.per_operator_headers,
                                                 str(key) in ctx.native_aot_keys()),
        "dispatch_helpers": "" if per_block else _dispatch_helpers(key, index, ctx.options.release),
    }


def _dispatch_helpers(key: dk.DispatchKey, index: BackendIndex, release: Release) -> list[str]:
    # CompositeImplicitAutogradNestedTensor's file does not use them (-Werror=unused-function would fail).
    return registration_helpers(index, release) if key is not dk.CIA_NESTED else []


def register_dispatch_key_shards(ctx: GenContext, key: dk.DispatchKey) -> list[dict]:
    index = ctx.backend_index(key)
    family = f"register-definitions:{key}:{index_flags(index)}"
    groups = ctx.groups
    definitions = ctx.per_items(family, groups, lambda g: group_definitions(ctx, g, key, index))
    # (a group with no definitions adds nothing to any shard: most groups under most keys)
    present = [(g, d) for g, d in zip(groups, definitions, strict=True) if d]
    return shard_envs(present, key_fn=lambda pair: pair[0].root_name,
                      env_fn=lambda pair: {"dispatch_definitions": pair[1]},
                      num_shards=num_shards(key), base_env=_register_base_env(ctx, key, index),
                      sharded_keys=frozenset({"dispatch_definitions"}))


def register_shard_keys(ctx: GenContext, key: dk.DispatchKey) -> Callable[[int], Callable[[], str] | None] | None:
    """The keys of Register<Key>'s files (plan.sharded's keys): its base environment's digest and the digests of
    its groups' definitions (None without a memo)."""
    if ctx.contributions is None:
        return None
    index = ctx.backend_index(key)
    family = f"register-definitions:{key}:{index_flags(index)}"
    base: list[str] = []

    def key_of(i: int, groups: Sequence[NativeFunction | NativeFunctionsGroup]) -> str:
        if not base:  # (the ops headers of the per-operator layout by their digests, unbuilt)
            headers = ctx.parts_key("ops-headers", operator_headers_part(ctx, key)) \
                if ctx.options.per_operator_headers else repr(operator_headers(ctx, key))
            base.append(env_key("RegisterDispatchKey.cpp", None, _register_constants(ctx, key, index)) + headers)
        return ctx.parts_key(f"Register{key}:{i}:{base[0]}",
                             (family, groups, lambda g: group_definitions(ctx, g, key, index)))
    return shard_keys(num_shards(key), lambda: ctx.groups, lambda g: g.root_name, key_of)


def register_dispatch_key_cpp(ctx: GenContext, key: dk.DispatchKey) -> Env:
    """The one Register<Key>.cpp of a release that does not shard it (see register_dispatch_key_sharded)."""
    index = ctx.backend_index(key)
    return {**_register_base_env(ctx, key, index),
            "dispatch_definitions": kernel_namespace_definitions(ctx, key, index)}


@dataclass(slots=True)
class _NamespaceBlock:
    """What one kernel namespace collects over all groups (a block being built)."""

    anonymous: list[str] = field(default_factory=list)
    registrations: dict[str, list[str]] = field(default_factory=dict)  # by the ops' namespace
    namespaced: list[str] = field(default_factory=list)

    def add(self, namespace: str, pieces: GroupPieces) -> None:
        self.anonymous += pieces.anonymous_definitions
        if namespace not in self.registrations:
            # gen.py 2.6 starts the kernel namespace's registrations over at each new op namespace: the
            # registrations of the namespaces before it are lost (so they are here).
            self.registrations = {}
        self.registrations.setdefault(namespace, []).extend(pieces.registrations)
        self.namespaced += pieces.namespaced_definitions


_NO_PIECES = GroupPieces((), (), (), ())


def kernel_namespace_definitions(ctx: GenContext, key: dk.DispatchKey, index: BackendIndex) -> list[str]:
    """The RegisterDispatchDefinitions.ini blocks of an unsharded Register<Key>.cpp: one per kernel namespace
    (in the order the groups first name them) holding its groups' pieces, as lines."""
    template = _definitions_template(ctx)
    skip = ctx.options.skip_dispatcher_op_registration
    blocks: dict[str, _NamespaceBlock] = {}
    for g in ctx.groups:
        narrowed = narrow_index(index, g)
        try:
            namespace = kernel_namespace(g, narrowed).replace("::native", "")
        except KernelNamespaceError as exc:
            raise PlanError(str(exc)) from exc
        pieces = _NO_PIECES if certainly_no_pieces(narrowed) else \
            group_pieces(g, narrowed, skip, unselected_of(ctx, g), release=ctx.options.release,
                         aot=ctx.native_aot_for(key, g), rocm=ctx.options.rocm)
        blocks.setdefault(namespace, _NamespaceBlock()).add(_namespace(g), pieces)
    helpers = _dispatch_helpers(key, index, ctx.options.release) \
        if ctx.options.release.dispatch_helpers_per_definitions_block else []
    lines: list[str] = []
    for namespace, block in blocks.items():
        if block.namespaced:
            lines += _definitions_block(namespace, block, key, helpers, skip, template, ctx.options.release)
    return lines


def _definitions_block(namespace: str, block: _NamespaceBlock, key: dk.DispatchKey, helpers: list[str], skip: bool,
                       template: str, release: Release) -> list[str]:
    prologue, epilogue = namespace_prologue(namespace, 2)
    body = registration_body(key, block.registrations, release)
    env = {
        "ns_prologue": prologue,
        "ns_epilogue": epilogue,
        "dispatch_helpers": helpers,
        "dispatch_anonymous_definitions": block.anonymous,
        "static_init_dispatch_registrations": "" if skip else body,
        "deferred_dispatch_registrations": "",
        "dispatch_namespace": str(key).lower(),
        "dispatch_namespaced_definitions": block.namespaced,
    }
    return render(_DEFINITIONS_TEMPLATE, {_DEFINITIONS_TEMPLATE: template}, env, release).split("\n")


# ------------------------------------------------------------------ <Key>Functions.h, <Key>Functions_inl.h

def dispatch_key_functions_h(ctx: GenContext, key: dk.DispatchKey) -> Env:
    return {"dispatch_key": str(key), "inline_headers": f"#include <ATen/{key}Functions_inl.h>"}


def _inline_declarations(ctx: GenContext, g: NativeFunction | NativeFunctionsGroup, key: dk.DispatchKey,
                         index: BackendIndex, macro: str) -> tuple[str, list[str]]:
    """g's at::<key>:: declarations and their namespace."""
    narrowed = narrow_index(index, g)
    try:
        namespace = kernel_namespace(g, narrowed).replace("native", str(key).lower())
    except KernelNamespaceError as exc:
        raise PlanError(str(exc)) from exc
    return namespace, [with_export_macro(d, macro) for d in group_pieces(
        g, narrowed, release=ctx.options.release, rocm=ctx.options.rocm).namespaced_declarations]


def inline_declarations_part(ctx: GenContext, key: dk.DispatchKey) -> Part:
    """Each group's at::<key>:: declarations and their namespace (<Key>Functions_inl.h)."""
    index = ctx.backend_index(key)
    macro = key_export_macro(key, ctx.options.release)
    return (f"key-functions-inl:{key}:{index_flags(index)}", ctx.groups,
            lambda g: _inline_declarations(ctx, g, key, index, macro))


def dispatch_key_functions_inl_h(ctx: GenContext, key: dk.DispatchKey) -> Env:
    by_namespace: dict[str, list[str]] = {}
    for namespace, declarations in ctx.per_items(*inline_declarations_part(ctx, key)):
        by_namespace.setdefault(namespace, []).extend(declarations)
    return {"DispatchKeyFunctions_inl_includes": [], "dispatch_namespace": str(key).lower(),
            "dispatch_namespaced_declarations": namespaced_blocks(by_namespace, 3, skip_empty=True)}
