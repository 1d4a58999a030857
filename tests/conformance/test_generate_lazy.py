"""`opgen generate-lazy` against torch 2.13's gen_lazy_tensor, through both command lines.

gen_lazy_tensor's main() finds native_functions.yaml and the templates at
`<its file>.parents[2]/aten/src/ATen`, which an installed wheel does not have,
so the reference runs from a tree shaped like that: ROOT/lib/torchgen -> the
installed torchgen, ROOT/aten/src/ATen -> its packaged ATen. Each tool runs in
its own temporary folder with the same arguments (the same `-o` spelling and
the same relative paths), and every file must be byte-identical.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from conftest import CORPUS
from file_trees import files_under, first_difference

from opgen_lsp.cli import main

pytestmark = [pytest.mark.conformance, pytest.mark.slow, pytest.mark.corpus]

XLA = CORPUS / "pytorch-xla__xla_native_functions.yaml"
TS_YAMLS = [CORPUS / "pytorch__ts_native_functions.yaml", CORPUS / "cyyever-pytorch__ts_native_functions.yaml"]
# What the wheel's shape_inference.h lacks for each TorchScript yaml (torch 2.13 rejects them for it).
MISSING = {
    "pytorch__ts_native_functions.yaml": "TORCH_API std::vector<torch::lazy::Shape> compute_shape_as_strided_scatter("
                                         "const at::Tensor & self, const at::Tensor & src, at::IntArrayRef size, "
                                         "at::IntArrayRef stride, ::std::optional<int64_t> storage_offset);",
    "cyyever-pytorch__ts_native_functions.yaml": "TORCH_API std::vector<torch::lazy::Shape> "
                                                 "compute_shape_as_strided_symint(const at::Tensor & self, "
                                                 "c10::SymIntArrayRef size, c10::SymIntArrayRef stride, "
                                                 "::std::optional<c10::SymInt> storage_offset);",
}
MISSING_OP = {"pytorch__ts_native_functions.yaml": "as_strided_scatter",
              "cyyever-pytorch__ts_native_functions.yaml": "as_strided"}


def _wheel_include() -> Path:
    import torch

    return Path(torch.__file__).parent / "include"


@pytest.fixture(scope="module")
def oracle_root(aten, tmp_path_factory) -> Path:
    import torchgen

    root = tmp_path_factory.mktemp("lazy_oracle")
    (root / "lib").mkdir()
    (root / "lib" / "torchgen").symlink_to(Path(torchgen.__file__).parent)
    (root / "aten" / "src").mkdir(parents=True)
    (root / "aten" / "src" / "ATen").symlink_to(aten)
    return root


def ts_flags(header: str) -> list[str]:
    return ["--gen-ts-lowerings", "--node-base", "TsNode", "--node-base-hdr", "torch/csrc/lazy/ts_backend/ts_node.h",
            "--shape-inference-hdr", header]


DEFAULT_HEADER = "torch/csrc/lazy/core/shape_inference.h"


def _torchgen(root: Path, cwd: Path, args: list[str]) -> subprocess.CompletedProcess:
    # gen_lazy_tensor reads aten/src/ATen one folder above the torchgen it imports, and the shape-inference
    # header (by default relative to cwd, under the `torch` link _compare makes there).
    header = cwd / DEFAULT_HEADER
    return reference.run(["-m", "torchgen.gen_lazy_tensor", *args], cwd=cwd, outputs=[Path("out")],
                         pythonpath=[root / "lib"], inputs=[root / "aten", *([header] if header.exists() else [])])


def _opgen(cwd: Path, args: list[str], monkeypatch) -> int:
    monkeypatch.chdir(cwd)
    return main(["generate-lazy", *args])


def _compare(oracle_root: Path, tmp_path: Path, args: list[str], monkeypatch, *, link_torch: bool = False) -> None:
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    for d in (ref, ours):
        d.mkdir()
        if link_torch:  # the default --shape-inference-hdr is relative: torch/csrc/lazy/core/shape_inference.h
            (d / "torch").symlink_to(_wheel_include() / "torch")
    done = _torchgen(oracle_root, ref, args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _opgen(ours, args, monkeypatch) == 0
    expected, got = files_under(ref / "out"), files_under(ours / "out")
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], f"{name} differs at {first_difference(expected[name], got[name])}"


def test_xla_with_torchscript_settings(oracle_root, tmp_path, monkeypatch):
    header = str(_wheel_include() / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h")
    _compare(oracle_root, tmp_path, ["-s", str(XLA), "-o", "out", *ts_flags(header)], monkeypatch)


def test_xla_with_default_settings(oracle_root, tmp_path, monkeypatch):
    _compare(oracle_root, tmp_path, ["-s", str(XLA), "-o", "out"], monkeypatch, link_torch=True)


def test_empty_backend_name_gives_out_of_tree_includes(oracle_root, tmp_path, monkeypatch):
    _compare(oracle_root, tmp_path, ["-s", str(XLA), "-o", "out", "--backend-name", ""], monkeypatch, link_torch=True)


def test_default_header_missing_is_an_input_error(oracle_root, tmp_path, monkeypatch, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    done = _torchgen(oracle_root, tmp_path / "a", ["-s", str(XLA), "-o", "out"])
    assert done.returncode != 0 and "Unable to read from the specified shape_inference_hdr file" in done.stderr
    assert _opgen(tmp_path / "b", ["-s", str(XLA), "-o", "out"], monkeypatch) == 2
    assert "Unable to read from the specified shape_inference_hdr file" in capsys.readouterr().err
    assert not (tmp_path / "b" / "out").exists()


@pytest.mark.parametrize("source", TS_YAMLS, ids=lambda p: p.name)
def test_torchscript_yaml_rejected_for_the_missing_declaration(oracle_root, source, tmp_path, monkeypatch, capsys):
    header = str(_wheel_include() / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h")
    args = ["-s", str(source), "-o", "out", *ts_flags(header)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    done = _torchgen(oracle_root, tmp_path / "a", args)
    assert done.returncode != 0
    assert MISSING[source.name] in done.stderr
    assert _opgen(tmp_path / "b", args, monkeypatch) == 1
    assert not (tmp_path / "b" / "out").exists()
    errors = [line for line in capsys.readouterr().out.splitlines() if "error:" in line]
    assert errors, "opgen printed no error"
    where, _, message = errors[0].partition(": error: ")
    line = int(where.split(":")[-2])
    listed = source.read_text().splitlines()[line - 1].strip()
    assert listed == f"- {MISSING_OP[source.name]}"
    assert f"compute_shape_{MISSING[source.name].split('compute_shape_')[1].split('(')[0]}" in message


@pytest.mark.parametrize("source", TS_YAMLS, ids=lambda p: p.name)
def test_torchscript_yaml_with_the_declaration_added(oracle_root, source, tmp_path, monkeypatch):
    """With the missing line added to a copy of the header, both accept it (non_native nodes included)."""
    header = tmp_path / "shape_inference.h"
    wheel = _wheel_include() / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    header.write_text(wheel.read_text() + MISSING[source.name] + "\n")
    _compare(oracle_root, tmp_path, ["-s", str(source), "-o", "out", *ts_flags(str(header))], monkeypatch)
