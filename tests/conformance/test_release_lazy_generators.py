"""Generator arguments in gen_lazy_tensor's IR (Release.lazy_ir_keeps_generators): from 2.2 a node keeps its
Generator? argument (a scalar of the node, shown as "torch.Generator()"); before, it is left out of the node (and
of its constructor, its hash and ToString). A backend yaml whose full_codegen ops take one (bernoulli, random.to:
torch's own TorchScript backend lists them), through each release's gen_lazy_tensor and opgen's generate-lazy."""

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
  - bernoulli
  - random.to
"""


@pytest.mark.parametrize("version", ["2.1.2", "2.2.2"])
def test_generator_arguments_as_the_release_has_them(version: str, tmp_path: Path, monkeypatch) -> None:
    folder = release_folder(version)
    source = tmp_path / "xla_native_functions.yaml"
    source.write_text(YAML)
    header = folder / "torch" / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
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
    # What tells the releases apart, so that the comparison cannot pass on nothing: the node's generator.
    ir = next(v for k, v in expected.items() if k.endswith("LazyIr.h")).decode()
    kept = "torch.Generator()" in ir
    assert kept == release(version).lazy_ir_keeps_generators
