"""What the code of an external backend (gen_backend_stubs', gen_lazy_tensor's) needs of its resolved yaml."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import dispatch as dk
from ..model.backend_resolve import ResolvedBackend
from ..model.native_function import BackendIndex


@dataclass(frozen=True)
class BackendTarget:
    """What the plan needs of a resolved backend yaml that generates code."""

    backend_key: dk.DispatchKey
    autograd_key: dk.DispatchKey | None
    class_name: str
    cpp_namespace: str
    backend_index: BackendIndex
    autograd_index: BackendIndex | None
    # pytorch#172539's proposed gen_backend_stubs instead of the release's (`generate-backend --experimental`).
    experimental: bool = field(kw_only=True)

    @property
    def indices(self) -> tuple[BackendIndex, ...]:
        return (self.backend_index,) + ((self.autograd_index,) if self.autograd_index is not None else ())


def target_of(resolved: ResolvedBackend) -> BackendTarget | None:
    """None when torchgen generates nothing (no ops under supported or full_codegen)."""
    if resolved.backend_key is None or resolved.backend_index is None or resolved.class_name is None:
        return None
    ns = resolved.yaml.cpp_namespace.value
    return BackendTarget(resolved.backend_key, resolved.autograd_key if resolved.autograd_index else None,
                         resolved.class_name, ns if isinstance(ns, str) else str(ns), resolved.backend_index,
                         resolved.autograd_index, experimental=resolved.yaml.experimental)
