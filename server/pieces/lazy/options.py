"""gen_lazy_tensor's settings, and the presets the check, the hover and `opgen generate-lazy` choose from."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.backend_resolve import ResolvedBackend
from ...releases import DEFAULT, Release
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
    release: Release = DEFAULT  # the torch release whose gen_lazy_tensor is matched

    @property
    def ir(self) -> IrOptions:
        return IrOptions(self.node_base, self.use_lazy_shape, self.gen_ts_lowerings, self.release)


# PyTorch's own TorchScript lazy backend registers to this key (aten/src/ATen/native/ts_native_functions.yaml).
TORCHSCRIPT_BACKEND = "Lazy"

# --gen-ts-lowerings --node-base TsNode --node-base-hdr torch/csrc/lazy/ts_backend/ts_node.h
TORCHSCRIPT = LazyOptions(node_base="TsNode", node_base_hdr="torch/csrc/lazy/ts_backend/ts_node.h",
                          gen_ts_lowerings=True)
DEFAULT_LAZY = LazyOptions()


def is_torchscript_yaml(resolved: ResolvedBackend) -> bool:
    return resolved.yaml.backend.value == TORCHSCRIPT_BACKEND


def preset_options(preset: str, resolved: ResolvedBackend) -> LazyOptions:
    """"torchscript", "default", or "auto" (TorchScript settings for PyTorch's own Lazy backend)."""
    if preset == "torchscript" or preset == "auto" and is_torchscript_yaml(resolved):
        return TORCHSCRIPT
    return DEFAULT_LAZY
