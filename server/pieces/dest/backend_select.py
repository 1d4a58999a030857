"""RegisterBackendSelect.cpp pieces: factory ops (TensorOptions, no _like / new_) pick their backend key
from dtype, layout and device (and their tensor arguments) before redispatching."""

from __future__ import annotations

import functools

from ...frozen import PER_OP_MEMO
from ...model.native_function import NativeFunction
from ...model.schema import Argument
from ...releases.profile import CppSpelling
from ..api import native
from ..api.signatures import NativeSignature, dispatcher_signature
from ..api.types import ApiOptions

_DISPATCH_KEY = "c10::computeDispatchKey(dtype, layout, device)"


def needs_backend_select(f: NativeFunction) -> bool:
    name = str(f.func.name.name)
    if name.endswith("_like") or name.startswith("new_"):
        return False
    return f.func.arguments.tensor_options is not None


class BackendSelectError(ValueError):
    """The tensor arguments of the native and the schema views disagree (cannot happen for valid schemas)."""


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op: frozen.PER_OP_MEMO says why the bound fits
def compute_backend_select_definition(f: NativeFunction, spelling: CppSpelling) -> str:
    name = native.name(f.func)
    tensor_args = [a.name for a in NativeSignature(f.func, True, ApiOptions.of(f, spelling)).arguments()
                   if isinstance(a.argument, Argument) and a.argument.type.is_tensor_like()]
    sig = dispatcher_signature(f, spelling=spelling)
    if tensor_args:
        if not f.func.arguments.has_tensor_arg():
            raise BackendSelectError(f"Expected function to have tensor args: {f.func}")
        compute = f"""\
DispatchKeySet _dk_set = c10::DispatchKeySet({_DISPATCH_KEY}) | c10::detail::multi_dispatch_key_set({", ".join(tensor_args)});
DispatchKeySet _dk_mask = c10::DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::BackendSelect);
DispatchKeySet _dk = c10::impl::computeDispatchKeySet(_dk_set, _dk_mask);"""
    else:
        if f.func.arguments.has_tensor_arg():
            raise BackendSelectError(f"Expected function to not have tensor args: {f.func}")
        compute = f"DispatchKeySet _dk = c10::DispatchKeySet({_DISPATCH_KEY});"
    exprs = ", ".join(e.expr for e in sig.exprs())
    return f"""\
// aten::{f.func}
C10_ALWAYS_INLINE
{sig.defn(name)} {{
  {compute}
  return at::_ops::{f.func.name.unambiguous_name()}::redispatch(
      _dk, {exprs});
}}
"""


def compute_backend_select_registration(f: NativeFunction) -> str:
    return f'm.impl("aten::{f.func.name}", TORCH_FN({native.name(f.func)}));'
