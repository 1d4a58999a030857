"""A key's BackendIndex narrowed to one group: what the group's pieces read of it, and a small cache key."""

from __future__ import annotations

import functools

from ...model import dispatch as dk
from ...model.native_function import BackendIndex, NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup


def index_flags(index: BackendIndex) -> str:
    """What a group's pieces read of a key's index besides the group's own kernels (part of a family's name: a key
    with no kernel at all has the Undefined index)."""
    return f"{index.dispatch_key}:{index.use_out_as_primary}:{index.device_guard}:{index.external}"


def narrow_index(index: BackendIndex, g: NativeFunction | NativeFunctionsGroup | NativeFunctionsViewGroup
                 ) -> BackendIndex:
    """The index restricted to g's ops: what a group's pieces depend on, and a cheap, stable cache key
    (the whole index compares every kernel, and a regeneration builds a new one)."""
    if not index.index:  # a key without a kernel at all (each family walks every group under every key)
        return _without_kernels(index.dispatch_key, index.use_out_as_primary, index.device_guard, index.external)
    fs = (g,) if isinstance(g, NativeFunction) else g.functions()
    kernels = {f.func.name: m for f in fs if (m := index.index.get(f.func.name)) is not None}
    if not kernels:  # most groups under most keys: one shared key for the caches instead of one each
        return _without_kernels(index.dispatch_key, index.use_out_as_primary, index.device_guard, index.external)
    return BackendIndex(index.dispatch_key, index.use_out_as_primary, index.device_guard, index.external, kernels)


@functools.lru_cache(maxsize=256)  # per key and three flags: about 40 keys
def _without_kernels(key: dk.DispatchKey, use_out_as_primary: bool, device_guard: bool, external: bool
                     ) -> BackendIndex:
    return BackendIndex(key, use_out_as_primary, device_guard, external, {})
