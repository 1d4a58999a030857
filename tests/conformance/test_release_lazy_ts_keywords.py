"""gen_lazy_tensor's TorchScript lowering of optional keyword tensors (Release.lazy_ts_optional_keyword_values: from
2.1 `has_x ? ... : nullptr`, before always the operand) and its deferred registration's declaration
(Release.deferred_registration_declared, from 2.1): full_codegen ops with a `Tensor?` after the `*`, through each
release's gen_lazy_tensor and opgen's generate-lazy. Their shape functions are declared in a copy of the release's
shape-inference header (gen_lazy_tensor only reads the declarations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lazy_ts import full_codegen_yaml, lazy_ts_files, text_of
from .test_release_matrix import release

pytestmark = [pytest.mark.versions, pytest.mark.slow]

YAML = full_codegen_yaml("abs", "searchsorted.Tensor", "linalg_pinv.atol_rtol_tensor")

# The shape functions gen_lazy_tensor asks for (in 2.0 and 2.1 the optional is c10's).
SHAPE_FUNCTIONS = """
TORCH_API std::vector<torch::lazy::Shape> compute_shape_linalg_pinv(const at::Tensor & self, \
const c10::optional<at::Tensor> & atol, const c10::optional<at::Tensor> & rtol, bool hermitian);
TORCH_API std::vector<torch::lazy::Shape> compute_shape_searchsorted(const at::Tensor & sorted_sequence, \
const at::Tensor & self, bool out_int32, bool right, c10::optional<c10::string_view> side, \
const c10::optional<at::Tensor> & sorter);
"""


@pytest.mark.parametrize("version", ["2.0.1", "2.1.2"])
def test_optional_keyword_tensors_lower_as_the_release_has_them(version: str, tmp_path: Path, monkeypatch) -> None:
    expected = lazy_ts_files(version, YAML, tmp_path, monkeypatch, SHAPE_FUNCTIONS)
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    ir = text_of(expected, "LazyIr.h")
    assert ("has_sorter ? loctx->GetOutputOp" in ir) == release(version).lazy_ts_optional_keyword_values
    registration = text_of(expected, "RegisterXLA.cpp")
    declared = "TORCH_API void RegisterTorchScriptXLANativeFunctions();" in registration
    assert declared == release(version).deferred_registration_declared
