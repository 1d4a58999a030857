"""gen_lazy_tensor's TorchScript lowering of optional keyword tensors (Release.lazy_ts_optional_keyword_values: from
2.1 `has_x ? ... : nullptr`, before always the operand) and its deferred registration's declaration
(Release.deferred_registration_declared, from 2.1): full_codegen ops with a `Tensor?` after the `*`, through each
release's gen_lazy_tensor and opgen's generate-lazy. Their shape functions are declared in a copy of the release's
shape-inference header (gen_lazy_tensor only reads the declarations)."""

from __future__ import annotations

from pathlib import Path

import pytest
from file_trees import files_under, first_difference

from opgen_lsp.cli import main

from .test_release_matrix import _aten, _pytorch_shaped, _torchgen, release, release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

YAML = """\
backend: XLA
cpp_namespace: torch_xla
full_codegen:
  - abs
  - searchsorted.Tensor
  - linalg_pinv.atol_rtol_tensor
"""

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
    folder = release_folder(version)
    source = tmp_path / "xla_native_functions.yaml"
    source.write_text(YAML)
    released = folder / "torch" / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    header = tmp_path / "shape_inference.h"
    header.write_text(released.read_text() + SHAPE_FUNCTIONS)
    oracle = _pytorch_shaped(folder, tmp_path / "oracle")
    args = ["-s", str(source), "-o", "out", "--gen-ts-lowerings", "--node-base", "TsNode",
            "--node-base-hdr", "torch/csrc/lazy/ts_backend/ts_node.h", "--shape-inference-hdr", str(header)]
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    done = _torchgen(oracle, "torchgen.gen_lazy_tensor", args, ref, ["out"])
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.chdir(ours)
    native = _aten(folder) / "native" / "native_functions.yaml"
    assert main(["generate-lazy", *args, "--native-functions", str(native),
                 "--templates", str(_aten(folder) / "templates")]) == 0
    expected, got = files_under(ref / "out"), files_under(ours / "out")
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], f"{name} differs at {first_difference(expected[name], got[name])}"
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    ir = next(v for k, v in expected.items() if k.endswith("LazyIr.h")).decode()
    assert ("has_sorter ? loctx->GetOutputOp" in ir) == release(version).lazy_ts_optional_keyword_values
    registration = next(v for k, v in expected.items() if k.endswith("RegisterXLA.cpp")).decode()
    declared = "TORCH_API void RegisterTorchScriptXLANativeFunctions();" in registration
    assert declared == release(version).deferred_registration_declared
