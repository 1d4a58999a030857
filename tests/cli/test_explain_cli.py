"""`opgen explain` on a small workspace of our own (no torch needed)."""

from __future__ import annotations

import json
from pathlib import Path

from opgen_lsp.cli import main

TAGS = "- tag: pt2_compliant_tag\n  desc: compliant\n"
OPS = """\
- func: abs(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: abs
- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: abs_out
"""


def write(tmp_path: Path, ops: str = OPS) -> Path:
    (tmp_path / "tags.yaml").write_text(TAGS)
    path = tmp_path / "native_functions.yaml"
    path.write_text(ops)
    return path


def test_json_output(tmp_path: Path, capsys) -> None:
    path = write(tmp_path)
    assert main(["explain", "abs.out", "--json", "--native-functions", str(path)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["op"] == "abs.out"
    by_title = {s["title"]: s for s in payload["snippets"]}
    assert by_title["CPU kernel declaration"] == {
        "title": "CPU kernel declaration", "file": "NativeFunctions.h",
        "code": "TORCH_API at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out);"}
    assert set(by_title) == {"Operator struct (at::_ops)", "C++ API (at::)", "CPU kernel declaration",
                             "CPU registration wrapper", "CPU registration", "Schema registration"}
    assert by_title["CPU registration"]["file"] == "RegisterCPUEverything.cpp"


def test_text_output_and_default_overload(tmp_path: Path, capsys) -> None:
    path = write(tmp_path)
    assert main(["explain", "abs", "--native-functions", str(path)]) == 0
    out = capsys.readouterr().out
    assert "// ===== Tensor method declaration (core/TensorBody.h)\n  at::Tensor abs() const;\n" in out


def test_backend_filter(tmp_path: Path, capsys) -> None:
    path = write(tmp_path)
    assert main(["explain", "abs", "--backend", "PrivateUse1", "--json", "--native-functions", str(path)]) == 0
    snippets = json.loads(capsys.readouterr().out)["snippets"]
    assert snippets == [{"title": "PrivateUse1 kernel declaration", "file": "PrivateUse1NativeFunctions.h",
                         "code": "static at::Tensor abs(const at::Tensor & self);"}]


def test_unknown_op_names_the_closest(tmp_path: Path, capsys) -> None:
    path = write(tmp_path)
    assert main(["explain", "ab.out", "--native-functions", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown operator 'ab.out'" in err and "abs.out" in err


def test_a_file_with_errors_is_refused(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, OPS + "- func: broken(Tensr self) -> Tensor\n")
    assert main(["explain", "abs", "--native-functions", str(path)]) == 1
    assert "run 'opgen check'" in capsys.readouterr().err


def test_missing_input_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["explain", "abs", "--native-functions", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err
