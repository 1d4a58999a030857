"""gen_lazy_tensor's settings, and the presets the check, the hover and `opgen generate-lazy` choose from."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.backend_resolve import ResolvedBackend
from ...releases import Release
from .ir import IrOptions
from .kernels import KernelOptions


@dataclass(frozen=True)
class LazyOptions:
    """gen_lazy_tensor's settings (command-line flags and run_gen_lazy_tensor's parameters)."""

    node_base: str = "Node"
    node_base_hdr: str | None = None
    shape_inference_hdr: str = "torch/csrc/lazy/core/shape_inference.h"
    tensor_class: str = "torch::lazy::LazyTensor"
    tensor_class_hdr: str = "torch/csrc/lazy/core/tensor.h"
    backend_name: str = "TorchScript"
    gen_ts_lowerings: bool = False
    build_in_tree: bool = False
    per_operator_headers: bool = False
    use_lazy_shape: bool = True
    kernel: KernelOptions = field(default_factory=KernelOptions)
    # The torch release whose gen_lazy_tensor is matched: no default, each caller says which (the tree's).
    release: Release = field(kw_only=True)

    @property
    def ir(self) -> IrOptions:
        return IrOptions(self.release, self.node_base, self.use_lazy_shape, self.gen_ts_lowerings)


# PyTorch's own TorchScript lazy backend registers to this key (aten/src/ATen/native/ts_native_functions.yaml).
TORCHSCRIPT_BACKEND = "Lazy"

def torchscript(release: Release) -> LazyOptions:
    """--gen-ts-lowerings --node-base TsNode --node-base-hdr torch/csrc/lazy/ts_backend/ts_node.h"""
    return LazyOptions(node_base="TsNode", node_base_hdr="torch/csrc/lazy/ts_backend/ts_node.h", gen_ts_lowerings=True,
                       release=release)


def default_lazy(release: Release) -> LazyOptions:
    """gen_lazy_tensor's own defaults."""
    return LazyOptions(release=release)


def is_torchscript_yaml(resolved: ResolvedBackend) -> bool:
    return resolved.yaml.backend.value == TORCHSCRIPT_BACKEND


def preset_options(preset: str, resolved: ResolvedBackend, release: Release) -> LazyOptions:
    """"torchscript", "default", or "auto" (TorchScript settings for PyTorch's own Lazy backend)."""
    if preset == "torchscript" or preset == "auto" and is_torchscript_yaml(resolved):
        return torchscript(release)
    return default_lazy(release)
