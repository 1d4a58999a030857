"""`opgen check` on backend yamls: where the native_functions.yaml comes from, directories, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.analysis import check
from opgen_lsp.cli import main
from opgen_lsp.index.native import NativeParser

TAGS = "- tag: core\n  desc: core aten op\n"
NATIVE = ("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n\n"
          "- func: bar(Tensor self) -> Tensor\n  dispatch:\n    CPU: bar\n")
GOOD = "backend: PrivateUse1\ncpp_namespace: my_backend\nsupported:\n- foo\n"
BAD = "backend: PrivateUse1\ncpp_namespace: my_backend\nsupported:\n- fooo\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    return tmp_path


CLEAN = "no problems in 1 file, checked as torch 2.13 (default)\n"  # the summary line of a clean run


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_backend_exits_0(workspace: Path, capsys) -> None:
    (workspace / "my_backend.yaml").write_text(GOOD)
    assert run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"),
               str(workspace / "my_backend.yaml")) == (0, CLEAN, "")


def test_unknown_op_is_placed(workspace: Path, capsys) -> None:
    path = workspace / "my_backend.yaml"
    path.write_text(BAD)
    code, out, _ = run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"), str(path))
    assert code == 1
    assert out.startswith(f"{path}:4:3: error: unknown operator 'fooo'")
    assert out.splitlines()[0].endswith("[OPG509]")
    assert out.splitlines()[1:] == ["1 error, 0 warnings in 1 file, checked as torch 2.13 (default)"]


def test_a_file_starting_with_another_backend_key_is_a_backend_yaml(workspace: Path, capsys) -> None:
    path = workspace / "b.yaml"
    path.write_text("supported:\n- foo\ncpp_namespace: x\nbackend: PrivateUse1\n")
    assert run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"), str(path))[0] == 0
    path.write_text("# comment\nclass_name: X\nbackend: PrivateUse1\n")
    code, out, _ = run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"), str(path))
    assert code == 1 and "[OPG503]" in out


def test_directories_include_backend_yamls(workspace: Path, capsys) -> None:
    (workspace / "my_functions.yaml").write_text(BAD)
    (workspace / "other_functions.yaml").write_text("aten:\n- func: foo\n")  # no backend: key, so not included
    (workspace / "my_backend.yaml").write_text(BAD)  # not *_functions.yaml, so not included
    code, out, err = run(capsys, "check", "--native-functions", str(workspace / "native_functions.yaml"),
                         str(workspace))
    assert code == 1 and err == ""
    # native_functions.yaml and tags.yaml of the folder are checked too (and clean).
    assert [line.split(":")[0] for line in out.splitlines()] == [str(workspace / "my_functions.yaml"),
                                                                 "1 error, 0 warnings in 3 files, checked as torch 2.13 (default)"]


def test_default_is_the_installed_torchgen(tmp_path: Path, capsys, aten) -> None:
    path = tmp_path / "xla_functions.yaml"
    path.write_text("backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n- add.Tensor\n")
    code, out, err = run(capsys, "check", str(path))
    assert (code, err) == (0, "") and out.startswith("no problems in 1 file, checked as torch 2.13")
    assert out.endswith(f"({aten.parents[2] / 'torch' / 'version.py'})\n"), out  # the installed torch's
    path.write_text("backend: XPU\ncpp_namespace: at\nsupported:\n- abs\n")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1 and "Duplicate backend key: XPU" in out and out.startswith(f"{path}:1:10:")


def test_no_native_functions_is_a_clear_error(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(check, "installed_native_functions", lambda: None)
    path = tmp_path / "b.yaml"
    path.write_text(GOOD)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    assert out == (f"{path}:1:1: error: no native_functions.yaml to resolve the op names against: pass "
                   "--native-functions F (or install torch 2.13, whose torchgen ships one) [OPG900]\n"
                   "1 error, 0 warnings in 1 file\n")


def test_unreadable_native_functions(tmp_path: Path, capsys) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(GOOD)
    code, out, err = run(capsys, "check", "--native-functions", str(tmp_path / "missing.yaml"), str(path))
    assert code == 2
    assert "no such file" in err and "[OPG900]" in out


def test_native_functions_are_parsed_once(workspace: Path, capsys, monkeypatch) -> None:
    calls = []
    parse = NativeParser.parse  # (the class analysis.check loads on use)

    def counting(self, text, tags):
        calls.append(1)
        return parse(self, text, tags)

    monkeypatch.setattr(NativeParser, "parse", counting)
    for name in ("a_functions.yaml", "b_functions.yaml"):
        (workspace / name).write_text(GOOD)
    (workspace / "native_functions.yaml").unlink()
    native = workspace / "elsewhere.yaml"
    native.write_text(NATIVE)
    assert run(capsys, "check", "--native-functions", str(native), str(workspace))[0] == 0
    assert len(calls) == 1
