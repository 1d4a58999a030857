"""One backend yaml through a torch release's gen_lazy_tensor and opgen's generate-lazy, with TorchScript lowerings
(the tests of a gen_lazy_tensor behaviour that changed in some release): both succeed and write the same files."""

from __future__ import annotations

from pathlib import Path

import pytest
from file_trees import files_under, first_difference

from opgen_lsp.cli import main

from .test_release_matrix import _aten, _pytorch_shaped, _torchgen, release_folder


def full_codegen_yaml(*ops: str) -> str:
    """An XLA backend yaml whose full_codegen lists ops."""
    return "backend: XLA\ncpp_namespace: torch_xla\nfull_codegen:\n" + "".join(f"  - {op}\n" for op in ops)


def lazy_ts_files(version: str, yaml: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  shape_functions: str = "") -> dict[str, bytes]:
    """The files the release's gen_lazy_tensor writes for `yaml` (as xla_native_functions.yaml), by path, having
    asserted that opgen's generate-lazy writes them byte for byte. shape_functions: declarations added to a copy of
    the release's shape-inference header (gen_lazy_tensor only reads the declarations); none: the header as it is."""
    folder = release_folder(version)
    source = tmp_path / "xla_native_functions.yaml"
    source.write_text(yaml)
    header = folder / "torch" / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    if shape_functions:
        extended = tmp_path / "shape_inference.h"
        extended.write_text(header.read_text() + shape_functions)
        header = extended
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
    return expected


def text_of(files: dict[str, bytes], ending: str) -> str:
    """The text of the (first) file whose path ends with `ending` (LazyIr.h, RegisterXLA.cpp, ...)."""
    return next(v for k, v in files.items() if k.endswith(ending)).decode()
