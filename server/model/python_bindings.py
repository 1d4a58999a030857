"""Which native functions get a Python binding, as the release's Python binding generator decides
(gen_python_functions.should_generate_py_binding). deprecated.yaml can only call those.

The skip lists are data: names (regular expressions on the C++ API name, which ends in _out for
out= variants) that need hand-written bindings or are not exposed, and exact schemas. The names every
release 2.6-2.15 skips are here; those a release added are its profile's (server/releases/).
"""

from __future__ import annotations

import re

from ..releases import Release
from .native_function import NativeFunction
from .schema import FunctionSchema

_SKIPPED_NAMES = (
    "alias", "contiguous", "is_cuda", "is_sparse", "is_sparse_csr", "size", "stride", "sym_size", "sym_stride",
    "sym_storage_offset", "sym_numel",
    ".*_backward", ".*_backward_(out|input|weight|bias)", ".*_forward", ".*_forward_out", ".*_jvp",
    "_unsafe_view", "tensor", "_?sparse_(coo|compressed|csr|csc|bsr|bsc)_tensor.*", "_range.*",
    "_sparse_add_out", "_sparse_div.*", "_sparse_mul.*", "_sparse_sub.*", "_sparse_dense_add_out",
    "index", "index_out", "unique_dim_consecutive",
    "_cumsum.*", "_cumprod.*", "_sum.*", "_prod.*", "_th_.*", "_thnn_.*", "range.*",
    "_solve.*", "_inverse.*", "_cholesky.*", "_triangular_solve.*", "_qr.*", "_svd.*",
    "slice", "item", "_local_scalar_dense", "to", "_to_copy", "_to_copy_out", "_reshape_copy", "_reshape_copy_out",
    "copy_sparse_to_sparse_", "copy_", "_foreach_copy",
    # attributes in Python, not functions
    "numpy_T", "matrix_H", "mT", "mH",
    "nonzero(_(out|numpy))?", "set_data", ".*_overrideable", "data", "is_leaf", "output_nr", "_version",
    "requires_grad_", "retains_grad", "set_", "_fw_primal",
    "fake_quantize_per_tensor_affine_cachemask", "fake_quantize_per_channel_affine_cachemask",
    "_new_zeros_with_same_feature_meta", "_has_same_storage_numel", "_reshape_alias",
    # used only by the functionalization pass
    "replace_", "copy", "fill.Tensor", "fill.Scalar", "lift.*", "normal_functional",
    "nbytes", "itemsize",
    "_batch_norm_with_update", "_batch_norm_with_update_out", "_batch_norm_no_update",
)
# One expression of all the patterns: a name is skipped when it matches any of them whole.
SKIPPED_NAME = re.compile("|".join(f"(?:{p})" for p in _SKIPPED_NAMES))

SKIPPED_SCHEMAS = frozenset({
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "mul.Scalar(Tensor self, Scalar other) -> Tensor",
    "mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "div.Scalar(Tensor self, Scalar other) -> Tensor",
    "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
})


def binding_name(func: FunctionSchema) -> str:
    """The C++ API name the skip list is matched against (pieces.api.cpp.name, which this layer cannot import)."""
    return str(func.name.name) + ("_out" if func.is_out_fn() else "")


def skip_reason(f: NativeFunction, release: Release) -> str | None:
    """Why f gets no Python binding in the release, or None when it gets one."""
    if "generated" in f.tags and "view_copy" not in f.tags:
        return "it is generated (tag 'generated')"
    # re.match anchors at the start only; torchgen's patterns end in '$', so the whole name must match.
    name = binding_name(f.func)
    if SKIPPED_NAME.fullmatch(name):
        return "torch's Python binding generator skips it by name (SKIP_PYTHON_BINDINGS)"
    if name in release.python_bindings_skip_hand_bound:
        return f"{release}'s Python binding generator skips it by name (SKIP_PYTHON_BINDINGS: it is bound by hand)"
    if str(f.func) in SKIPPED_SCHEMAS:
        return "torch's Python binding generator skips this schema (SKIP_PYTHON_BINDINGS_SIGNATURES)"
    return None
