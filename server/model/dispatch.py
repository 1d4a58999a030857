"""Dispatch keys, as torchgen 2.13 knows them."""

from __future__ import annotations

from enum import Enum

from .schema import identity_hash

BACKEND_COMPONENTS = (
    "CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "Meta",
    "PrivateUse1", "PrivateUse2", "PrivateUse3",
)
FUNCTIONALITY_KEYS = ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd")

_FIXED_KEYS = (
    "Undefined", "FPGA", "MAIA", "Vulkan", "Metal", "MKLDNN", "OpenGL", "OpenCL", "IDEEP", "CustomRNGKeyId",
    "MkldnnCPU", "Sparse", "SparseCsr", "NestedTensor", "Dense", "PythonTLSSnapshot", "PreDispatch",
    "PythonDispatcher", "Python", "FuncTorchDynamicLayerBackMode", "ZeroTensor", "Conjugate", "Negative",
    "BackendSelect", "Named", "AutogradOther", "AutogradFunctionality", "AutogradNestedTensor", "Tracer",
    "Autocast", "AutocastCPU", "AutocastCUDA", "AutocastXPU", "Batched", "VmapMode", "FuncTorchGradWrapper",
    "FuncTorchBatched", "BatchedNestedTensor", "FuncTorchVmapMode", "FuncTorchDynamicLayerFrontMode",
    "Functionalize", "TESTING_ONLY_GenericWrapper", "TESTING_ONLY_GenericMode", "ADInplaceOrView", "Autograd",
    "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "FuncTorchBatchedDecomposition",
)
_PER_BACKEND_KEYS = tuple(f + b for f in FUNCTIONALITY_KEYS for b in BACKEND_COMPONENTS)

# Declaration order matters: generated files list keys in this order.
DispatchKey = Enum("DispatchKey", _FIXED_KEYS + _PER_BACKEND_KEYS)  # type: ignore[misc]
DispatchKey.__str__ = lambda self: self.name  # type: ignore[method-assign]
identity_hash(DispatchKey)

ALL_KEY_NAMES: tuple[str, ...] = tuple(DispatchKey.__members__)

K = DispatchKey.__members__

STRUCTURED_DISPATCH_KEYS = frozenset(K[n] for n in ("MPS", "CUDA", "CPU", "XPU", "MTIA"))
UFUNC_DISPATCH_KEYS = (K["CUDA"], K["CPU"])

# The keys native_functions.yaml may name in a dispatch table.
SUPPORTED_DISPATCH_KEYS: tuple[DispatchKey, ...] = tuple(K[n] for n in (
    "CPU", "SparseCPU", "SparseCsrCPU", "MkldnnCPU", "CUDA", "MPS", "XPU", "SparseXPU", "SparseCsrXPU",
    "SparseCUDA", "SparseCsrCUDA", "SparseMPS", "SparseCsrMPS", "QuantizedCPU", "QuantizedCUDA",
    "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "NestedTensorCPU", "NestedTensorCUDA", "NestedTensorXPU",
    "NestedTensorHPU", "Meta", "SparseMeta", "SparseCsrMeta", "QuantizedMeta", "NestedTensorMeta",
    "ZeroTensor", "MTIA",
))
SUPPORTED_KEY_NAMES = tuple(k.name for k in SUPPORTED_DISPATCH_KEYS)

CIA = K["CompositeImplicitAutograd"]
CIA_NESTED = K["CompositeImplicitAutogradNestedTensor"]
CEA = K["CompositeExplicitAutograd"]
CEA_NON_FUNCTIONAL = K["CompositeExplicitAutogradNonFunctional"]
COMPOSITE_KEYS = frozenset((CIA, CIA_NESTED, CEA, CEA_NON_FUNCTIONAL))

_CUDA_KEYS = frozenset(K[n] for n in ("CUDA", "QuantizedCUDA", "SparseCUDA", "SparseCsrCUDA", "NestedTensorCUDA", "AutogradCUDA"))
_XPU_KEYS = frozenset(K[n] for n in ("XPU", "QuantizedXPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU", "AutogradXPU"))


def parse_dispatch_key(name: str) -> DispatchKey | None:
    return K.get(name)


def is_generic_dispatch_key(key: DispatchKey) -> bool:
    return key in COMPOSITE_KEYS


def is_cuda_dispatch_key(key: DispatchKey) -> bool:
    return key in _CUDA_KEYS


def is_xpu_dispatch_key(key: DispatchKey) -> bool:
    return key in _XPU_KEYS


def is_structured_dispatch_key(key: DispatchKey) -> bool:
    return key in STRUCTURED_DISPATCH_KEYS


def is_ufunc_dispatch_key(key: DispatchKey) -> bool:
    return key in UFUNC_DISPATCH_KEYS
