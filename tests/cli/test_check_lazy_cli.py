"""`opgen check` on lazy backend yamls: what gen_lazy_tensor rejects (OPG535-537), and where the shape-inference
header comes from (--shape-inference-hdr; for a `backend: Lazy` yaml the checkout's, else the wheel's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS

from .test_check_backend_cli import CLEAN, run

TAGS = "- tag: core\n  desc: core aten op\n"
NATIVE = ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n\n"
          "- func: bar(Tensor self, int dim) -> Tensor\n  dispatch:\n    CPU: bar\n")
LAZY = "backend: XLA\ncpp_namespace: my_lazy\nfull_codegen:\n- foo\n- bar\n"
FOO = "TORCH_API std::vector<torch::lazy::Shape> compute_shape_foo(const at::Tensor & self);"
BAR = "TORCH_API std::vector<torch::lazy::Shape> compute_shape_bar(const at::Tensor & self, int64_t dim);"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "lazy.yaml").write_text(LAZY)
    return tmp_path


def check(capsys, workspace: Path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"),
               str(workspace / "lazy.yaml"), *extra)


def test_without_a_header_other_backends_are_not_shape_checked(workspace, capsys, monkeypatch):
    monkeypatch.chdir(workspace)
    assert check(capsys, workspace) == (0, CLEAN, "")


def test_missing_declaration_is_an_error_on_the_ops_line(workspace, capsys):
    header = workspace / "shape_inference.h"
    header.write_text(f"{FOO}\n")
    code, out, _ = check(capsys, workspace, "--shape-inference-hdr", str(header))
    assert code == 1
    assert out.startswith(f"{workspace / 'lazy.yaml'}:5:3: error: bar needs a shape-inference function: {header} "
                          "does not declare compute_shape_bar")
    assert BAR in out and "[OPG535]" in out and "compute_shape_foo" not in out


def test_a_declaration_with_another_signature_is_named_as_such(workspace, capsys):
    header = workspace / "shape_inference.h"
    header.write_text(f"{FOO}\n{BAR.replace('int64_t dim', 'int dim')}\n")
    code, out, _ = check(capsys, workspace, "--shape-inference-hdr", str(header))
    assert code == 1 and "declares compute_shape_bar, but not with the signature" in out


def test_header_with_every_declaration_passes(workspace, capsys):
    header = workspace / "shape_inference.h"
    header.write_text(f"{FOO}\n{BAR}\n")
    assert check(capsys, workspace, "--shape-inference-hdr", str(header)) == (0, CLEAN, "")


def test_unreadable_header_is_a_usage_error(workspace, capsys):
    code, out, err = check(capsys, workspace, "--shape-inference-hdr", str(workspace / "nope.h"))
    assert code == 2 and out == "" and "cannot read the shape-inference header" in err


def _torchscript_yaml_in_checkout(workspace, header_bytes: bytes) -> None:
    """A `backend: Lazy` yaml in a PyTorch checkout whose shape-inference header holds header_bytes."""
    (workspace / "lazy.yaml").write_text(LAZY.replace("XLA", "Lazy").replace("my_lazy", "torch::lazy"))
    header = workspace / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    header.parent.mkdir(parents=True)
    header.write_bytes(header_bytes)


def test_torchscript_yaml_uses_the_checkouts_header(workspace, capsys, monkeypatch):
    _torchscript_yaml_in_checkout(workspace, f"{FOO}\n".encode())
    monkeypatch.chdir(workspace)
    code, out, _ = check(capsys, workspace)
    assert code == 1 and "torch/csrc/lazy/core/shape_inference.h does not declare compute_shape_bar" in out


def test_torchscript_yaml_inside_a_checkout_uses_its_header_from_anywhere(workspace, capsys, monkeypatch, tmp_path):
    """The checkout is found from the yaml's folder upward too (aten/src/ATen/native/ts_native_functions.yaml)."""
    native_dir = workspace / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    (native_dir / "ts_native_functions.yaml").write_text(LAZY.replace("XLA", "Lazy").replace("my_lazy", "torch::lazy"))
    header = workspace / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    header.parent.mkdir(parents=True)
    header.write_text(f"{FOO}\n{BAR}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"),
               str(native_dir / "ts_native_functions.yaml")) == (0, CLEAN, "")


def test_bad_non_native_entry(workspace, capsys, monkeypatch):
    (workspace / "lazy.yaml").write_text(LAZY + "non_native:\n- func: not a schema\n")
    monkeypatch.chdir(workspace)
    code, out, _ = check(capsys, workspace)
    assert code == 1 and ":7:" in out and "[OPG536]" in out


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
@pytest.mark.corpus
def test_corpus_lazy_yamls(capsys, monkeypatch, tmp_path):
    """torch_xla's yaml passes with and without the wheel's header (torchgen accepts it with both settings);
    the TorchScript yamls fail on the declaration the 2.13 wheel's header lacks (torchgen rejects them)."""
    pytest.importorskip("torch")
    from opgen_lsp.analysis.lazy.check import wheel_shape_header

    monkeypatch.chdir(tmp_path)
    xla = str(CORPUS / "pytorch-xla__xla_native_functions.yaml")
    for extra in ([], ["--shape-inference-hdr", str(wheel_shape_header())]):
        code, out, _ = run(capsys, "check", xla, *extra)
        assert code == 0 and ": error: " not in out and "\n0 errors, " in out
    for name, line, function in (("pytorch__ts_native_functions.yaml", 169, "as_strided_scatter"),
                                 ("cyyever-pytorch__ts_native_functions.yaml", 146, "as_strided_symint")):
        code, out, _ = run(capsys, "check", str(CORPUS / name))
        errors = [x for x in out.splitlines() if ": error: " in x]
        assert code == 1 and len(errors) == 1
        assert errors[0].startswith(f"{CORPUS / name}:{line}:5: error:") and f"compute_shape_{function}" in errors[0]


def test_a_header_that_is_not_utf8_is_a_usage_error_not_a_traceback(workspace, capsys):
    header = workspace / "shape_inference.h"
    header.write_bytes(b"\xff\xfe not text\n")
    code, out, err = check(capsys, workspace, "--shape-inference-hdr", str(header))
    assert code == 2 and out == "" and "cannot read the shape-inference header" in err


def test_a_checkout_header_that_cannot_be_read_is_reported_on_the_yaml(workspace, capsys, monkeypatch):
    _torchscript_yaml_in_checkout(workspace, b"\xff\xfe not text\n")
    monkeypatch.chdir(workspace)
    code, out, _ = check(capsys, workspace)
    assert code == 1 and "cannot read the shape-inference header" in out and "[OPG900]" in out
