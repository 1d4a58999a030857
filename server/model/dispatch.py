"""Dispatch keys, as torchgen 2.13 knows them."""

from __future__ import annotations

from enum import auto

from ..frozen import IdentityHashEnum

BACKEND_COMPONENTS = (
    "CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "Meta",
    "PrivateUse1", "PrivateUse2", "PrivateUse3",
)
FUNCTIONALITY_KEYS = ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd")


class DispatchKey(IdentityHashEnum):
    """A dispatch key; declaration order matters: generated files list keys in this order."""

    Undefined = auto()
    FPGA = auto()
    MAIA = auto()
    Vulkan = auto()
    Metal = auto()
    MKLDNN = auto()
    OpenGL = auto()
    OpenCL = auto()
    IDEEP = auto()
    CustomRNGKeyId = auto()
    MkldnnCPU = auto()
    Sparse = auto()
    SparseCsr = auto()
    NestedTensor = auto()
    Dense = auto()
    PythonTLSSnapshot = auto()
    PreDispatch = auto()
    PythonDispatcher = auto()
    Python = auto()
    FuncTorchDynamicLayerBackMode = auto()
    ZeroTensor = auto()
    Conjugate = auto()
    Negative = auto()
    BackendSelect = auto()
    Named = auto()
    AutogradOther = auto()
    AutogradFunctionality = auto()
    AutogradNestedTensor = auto()
    Tracer = auto()
    Autocast = auto()
    AutocastCPU = auto()
    AutocastCUDA = auto()
    AutocastXPU = auto()
    Batched = auto()
    VmapMode = auto()
    FuncTorchGradWrapper = auto()
    FuncTorchBatched = auto()
    BatchedNestedTensor = auto()
    FuncTorchVmapMode = auto()
    FuncTorchDynamicLayerFrontMode = auto()
    Functionalize = auto()
    TESTING_ONLY_GenericWrapper = auto()
    TESTING_ONLY_GenericMode = auto()
    ADInplaceOrView = auto()
    Autograd = auto()
    CompositeImplicitAutograd = auto()
    CompositeImplicitAutogradNestedTensor = auto()
    CompositeExplicitAutograd = auto()
    CompositeExplicitAutogradNonFunctional = auto()
    FuncTorchBatchedDecomposition = auto()

    # Dense x BACKEND_COMPONENTS
    CPU = auto()
    CUDA = auto()
    HIP = auto()
    XLA = auto()
    MTIA = auto()
    MPS = auto()
    IPU = auto()
    XPU = auto()
    HPU = auto()
    VE = auto()
    Lazy = auto()
    Meta = auto()
    PrivateUse1 = auto()
    PrivateUse2 = auto()
    PrivateUse3 = auto()

    # Quantized x BACKEND_COMPONENTS
    QuantizedCPU = auto()
    QuantizedCUDA = auto()
    QuantizedHIP = auto()
    QuantizedXLA = auto()
    QuantizedMTIA = auto()
    QuantizedMPS = auto()
    QuantizedIPU = auto()
    QuantizedXPU = auto()
    QuantizedHPU = auto()
    QuantizedVE = auto()
    QuantizedLazy = auto()
    QuantizedMeta = auto()
    QuantizedPrivateUse1 = auto()
    QuantizedPrivateUse2 = auto()
    QuantizedPrivateUse3 = auto()

    # Sparse x BACKEND_COMPONENTS
    SparseCPU = auto()
    SparseCUDA = auto()
    SparseHIP = auto()
    SparseXLA = auto()
    SparseMTIA = auto()
    SparseMPS = auto()
    SparseIPU = auto()
    SparseXPU = auto()
    SparseHPU = auto()
    SparseVE = auto()
    SparseLazy = auto()
    SparseMeta = auto()
    SparsePrivateUse1 = auto()
    SparsePrivateUse2 = auto()
    SparsePrivateUse3 = auto()

    # SparseCsr x BACKEND_COMPONENTS
    SparseCsrCPU = auto()
    SparseCsrCUDA = auto()
    SparseCsrHIP = auto()
    SparseCsrXLA = auto()
    SparseCsrMTIA = auto()
    SparseCsrMPS = auto()
    SparseCsrIPU = auto()
    SparseCsrXPU = auto()
    SparseCsrHPU = auto()
    SparseCsrVE = auto()
    SparseCsrLazy = auto()
    SparseCsrMeta = auto()
    SparseCsrPrivateUse1 = auto()
    SparseCsrPrivateUse2 = auto()
    SparseCsrPrivateUse3 = auto()

    # NestedTensor x BACKEND_COMPONENTS
    NestedTensorCPU = auto()
    NestedTensorCUDA = auto()
    NestedTensorHIP = auto()
    NestedTensorXLA = auto()
    NestedTensorMTIA = auto()
    NestedTensorMPS = auto()
    NestedTensorIPU = auto()
    NestedTensorXPU = auto()
    NestedTensorHPU = auto()
    NestedTensorVE = auto()
    NestedTensorLazy = auto()
    NestedTensorMeta = auto()
    NestedTensorPrivateUse1 = auto()
    NestedTensorPrivateUse2 = auto()
    NestedTensorPrivateUse3 = auto()

    # Autograd x BACKEND_COMPONENTS
    AutogradCPU = auto()
    AutogradCUDA = auto()
    AutogradHIP = auto()
    AutogradXLA = auto()
    AutogradMTIA = auto()
    AutogradMPS = auto()
    AutogradIPU = auto()
    AutogradXPU = auto()
    AutogradHPU = auto()
    AutogradVE = auto()
    AutogradLazy = auto()
    AutogradMeta = auto()
    AutogradPrivateUse1 = auto()
    AutogradPrivateUse2 = auto()
    AutogradPrivateUse3 = auto()

    def __str__(self) -> str:
        return self.name


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

CUDA_KEYS = frozenset(K[n] for n in ("CUDA", "QuantizedCUDA", "SparseCUDA", "SparseCsrCUDA", "NestedTensorCUDA", "AutogradCUDA"))
_XPU_KEYS = frozenset(K[n] for n in ("XPU", "QuantizedXPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU", "AutogradXPU"))


def parse_dispatch_key(name: str) -> DispatchKey | None:
    return K.get(name)


def is_generic_dispatch_key(key: DispatchKey) -> bool:
    return key in COMPOSITE_KEYS


def is_cuda_dispatch_key(key: DispatchKey) -> bool:
    return key in CUDA_KEYS


def is_xpu_dispatch_key(key: DispatchKey) -> bool:
    return key in _XPU_KEYS


def is_structured_dispatch_key(key: DispatchKey) -> bool:
    return key in STRUCTURED_DISPATCH_KEYS


def is_ufunc_dispatch_key(key: DispatchKey) -> bool:
    return key in UFUNC_DISPATCH_KEYS
