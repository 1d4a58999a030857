"""Register<Key>.cpp pieces of one operator: the wrapper kernel and its m.impl line.

Covers the unstructured path of torchgen's RegisterDispatchKey (plain
kernels, the Meta in-place check, device checks and guards, the class of an
external backend's kernels); structured kernels are in register_structured.py
and external backends' generated out=/in-place wrappers in register_backend.py.
"""

from __future__ import annotations

from ...model import dispatch as dk
from ...model.native_function import BackendIndex, DeviceCheckType, NativeFunction, NativeFunctionsGroup
from ...model.schema import Argument, SchemaKind
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api import dispatcher
from ..api.signatures import DispatcherSignature
from ..api.translate import translate
from ..api.types import ApiOptions
from .native_declarations import kernel_signature


def wrapper_prefix(index: BackendIndex, release: Release) -> str:
    """How a Register<Key>.cpp wrapper's name starts: `wrapper_<Key>_` (before 2.0, `wrapper_`)."""
    return f"wrapper_{index.dispatch_key}_" if release.dispatch_wrappers_named_by_key else "wrapper_"


def wrapper_signature(f: NativeFunction, index: BackendIndex, *, release: Release,
                      symint: bool = True) -> DispatcherSignature:
    return DispatcherSignature(f.func, ApiOptions.of(f, release.cpp_spelling),
                               f"{wrapper_prefix(index, release)}{f.func.name.overload_name}_", symint)


def wrapper_name(f: NativeFunction, index: BackendIndex, release: Release) -> str:
    """The wrapper's name (wrapper_signature's), which no type enters."""
    return f"{wrapper_prefix(index, release)}{f.func.name.overload_name}_{dispatcher.name(f.func)}"


def _is_inplace_meta(f: NativeFunction, index: BackendIndex) -> bool:
    """Meta gets a generated check for in-place ops without a kernel of their own."""
    return (index.dispatch_key is dk.K["Meta"] and f.func.kind() is SchemaKind.inplace
            and not f.has_composite_kernel and len(f.func.returns) == 1)


def registers_unstructured(f: NativeFunction, index: BackendIndex) -> bool:
    """Whether the unstructured path emits a wrapper for f under this key (in-tree backends)."""
    if f.manual_kernel_registration:
        return False
    return index.has_kernel(f) or _is_inplace_meta(f, index)


def device_check(kind: DeviceCheckType, args: list[Argument], method_name: str, spelling: CppSpelling) -> str:
    if kind is DeviceCheckType.NoCheck:
        return "  // No device check\n"
    text = f"{spelling.optional('Device', rooted=False)} common_device = {spelling.in_scope_nullopt};\n"
    text += "(void)common_device; // Suppress unused variable warning\n"
    for arg in args:
        if arg.type.is_tensor_like():
            text += f"""
  c10::impl::check_and_update_common_device(common_device, {arg.name}, "{method_name}", "{arg.name}");"""
    return text


def _device_guard(f: NativeFunction, index: BackendIndex, release: Release, guarded: bool) -> str:
    if not (f.device_guard and guarded):
        return "// DeviceGuard omitted"
    args = f.func.arguments
    if args.tensor_options is not None:
        guard = "\n  const DeviceGuard device_guard(device_or_default(device));"
        if dk.is_cuda_dispatch_key(index.dispatch_key):
            init = ("lazyInitDevice(c10::DeviceType::CUDA)" if release.lazy_init_names_the_device
                    else "lazyInitCUDA()")
            guard = f"globalContext().{init};\n{guard}"
        return guard
    self_arg = [args.self_arg.argument] if args.self_arg is not None else []
    device_of = next((a.name for a in [*self_arg, *args.out, *args.flat_positional] if a.type.is_tensor_like()), None)
    return "// DeviceGuard omitted" if device_of is None else \
        f"const OptionalDeviceGuard device_guard(device_of({device_of}));"


def compute_wrapper(f: NativeFunction, index: BackendIndex, *, release: Release,
                    class_method_name: str | None = None) -> str | None:
    """The anonymous-namespace wrapper that forwards the dispatcher call to the kernel.

    class_method_name: the class holding an external backend's kernels (<namespace>::<class>::<kernel>).
    """
    if not registers_unstructured(f, index):
        return None
    spelling = release.cpp_spelling
    sig = wrapper_signature(f, index, release=release)
    name = sig.name()
    returns_type = sig.returns_type().cpp_type(spelling)
    args = ", ".join(a.defn() for a in sig.arguments())
    meta = index.get_kernel(f)
    if meta is None:  # the in-place Meta check
        # union-attr: self_arg is never None here, a schema rule gives every in-place op a mutable self.
        self_name = f.func.arguments.self_arg.argument.name  # type: ignore[union-attr]
        return f"""
{returns_type} {name}({args}) {{
  TORCH_CHECK_NOT_IMPLEMENTED({self_name}.is_meta(),
    "Cannot inplace into non-meta tensor with meta tensor argument");
  return {self_name};
}}
"""
    owner = meta.cpp_namespace if class_method_name is None else f"{meta.cpp_namespace}::{class_method_name}"
    impl = f"{owner}::{meta.kernel}"
    exprs = ", ".join(e.expr for e in translate(sig.arguments(), kernel_signature(f, index, spelling).arguments(),
                                              spelling=spelling))
    check = "  // No device check\n"
    guarded = index.device_guard and meta.device_guard  # (an op's own device_guard: false, with --experimental)
    if guarded:
        check = device_check(f.device_check, [*f.func.arguments.out, *f.func.arguments.flat_positional], name,
                             spelling)
    return f"""\
namespace {{

{returns_type} {name}({args}) {{
  {check}

  {_device_guard(f, index, release, guarded)}
  return {impl}({exprs});
}}

}} // anonymous namespace
"""


def compute_registration(f: NativeFunction, index: BackendIndex, release: Release) -> str | None:
    """The m.impl line inside TORCH_LIBRARY_IMPL(aten, <Key>, m)."""
    if not registers_unstructured(f, index):
        return None
    return f'm.impl("{f.func.name}",\nTORCH_FN({wrapper_name(f, index, release)}));\n'


def is_structured_for(group: NativeFunctionsGroup | None, index: BackendIndex) -> bool:
    """Whether torchgen takes its structured path for this group under this key."""
    if group is None or not group.structured:
        return False
    if index.dispatch_key in (dk.K["Meta"], dk.CEA_NON_FUNCTIONAL):
        return True
    meta = index.get_kernel(group)
    return meta is not None and meta.structured
