"""`opgen check`: output formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opgen_lsp.cli import main
from opgen_lsp.diagnostics import Diagnostic, Severity
from opgen_lsp.report import FileDiagnostic, summary_line
from opgen_lsp.text import Span

TAGS = "- tag: core\n  desc: core aten op\n"
GOOD = "- func: foo(Tensor self) -> Tensor\n"
BAD = "# a comment\n- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPUU: foo_cpu\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tags.yaml").write_text(TAGS)
    return tmp_path


CLEAN = "no problems in 1 file, checked as torch 2.13 (default)\n"  # the summary line of a clean run


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_file_exits_0(workspace: Path, capsys) -> None:
    (workspace / "native_functions.yaml").write_text(GOOD)
    assert run(capsys, "check", str(workspace / "native_functions.yaml")) == (0, CLEAN, "")


def test_text_format_is_one_based(workspace: Path, capsys) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    assert out == (f"{path}:4:5: error: unknown dispatch key 'CPUU'; did you mean 'CPU'? [OPG104]\n"
                   "1 error, 0 warnings in 1 file, checked as torch 2.13 (default)\n")


def test_quiet_drops_the_summary_line_only(workspace: Path, capsys) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    code, out, _ = run(capsys, "check", "-q", str(path))
    assert code == 1 and out.splitlines() == [f"{path}:4:5: error: unknown dispatch key 'CPUU'; did you mean 'CPU'? [OPG104]"]
    path.write_text(GOOD)
    assert run(capsys, "check", "--quiet", str(path)) == (0, "", "")


def test_summary_counts_each_severity_and_file() -> None:
    def item(path: str, severity: Severity) -> FileDiagnostic:
        return FileDiagnostic(path, Diagnostic(Span.point(0, 0), severity, "OPG104", "m"))

    items = [item("a", Severity.ERROR), item("a", Severity.ERROR), item("b", Severity.WARNING)]
    assert summary_line(items, 3) == "2 errors, 1 warning in 3 files\n"
    assert summary_line(items[:1], 1) == "1 error, 0 warnings in 1 file\n"
    assert summary_line([item("a", Severity.HINT), item("a", Severity.INFORMATION)], 1) == "0 errors, 0 warnings, 2 notes in 1 file\n"
    assert summary_line([], 0) == "no problems in 0 files\n"


def test_json_format_is_zero_based_lsp(workspace: Path, capsys) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    code, out, _ = run(capsys, "check", "--format", "json", str(path))
    assert code == 1
    assert json.loads(out) == [{
        "path": str(path), "range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 8}},
        "severity": "error", "code": "OPG104", "message": "unknown dispatch key 'CPUU'; did you mean 'CPU'?",
    }]


def test_github_format(workspace: Path, capsys) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    _, out, _ = run(capsys, "check", "--format", "github", str(path))
    assert out == (f"::error file={path},line=4,col=5,endLine=4,endColumn=9,title=OPG104::"
                   "unknown dispatch key 'CPUU'; did you mean 'CPU'?\n")


def test_sarif_format(workspace: Path, capsys) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    _, out, _ = run(capsys, "check", "--format", "sarif", str(path))
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["OPG104"]
    result = run_["results"][0]
    assert result["ruleId"] == "OPG104" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 9}


def test_explicit_tags_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "my_tags.yaml").write_text(TAGS)
    path = tmp_path / "ops.yaml"
    path.write_text(GOOD + "  tags: core\n")
    assert run(capsys, "check", "--tags", str(tmp_path / "my_tags.yaml"), str(path))[0] == 0


def test_missing_tags_file_is_reported(tmp_path: Path, capsys) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(GOOD)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1 and "[OPG900]" in out and "pass --tags" in out


def test_directory_is_walked(workspace: Path, capsys) -> None:
    sub = workspace / "aten" / "native"
    sub.mkdir(parents=True)
    (sub / "native_functions.yaml").write_text(BAD)
    (sub / "tags.yaml").write_text(TAGS)
    code, out, _ = run(capsys, "check", str(workspace))
    assert code == 1 and out.count("[OPG104]") == 1


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "check", str(tmp_path / "nope.yaml"))
    assert code == 2 and "no such file" in err and "Traceback" not in err
    assert out == ""  # no "no problems in 0 files" for an input that could not be read


def test_a_folder_with_nothing_to_check_is_a_usage_error(tmp_path: Path, capsys) -> None:
    """A mistyped folder must not pass CI: one line on stderr says what was searched for, nothing on stdout."""
    (tmp_path / "README.md").write_text("no yaml here\n")
    (tmp_path / "other_functions.yaml").write_text("- func: foo(Tensor self) -> Tensor\n")  # no backend: key
    code, out, err = run(capsys, "check", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (f"opgen: {tmp_path}: no operator yaml in this folder (searched it for native_functions.yaml, "
                   "tags.yaml, derivatives.yaml, autograd/deprecated.yaml and *_functions.yaml backend yamls (with a "
                   "top-level backend: key))\n")


def test_a_folder_with_nothing_beside_one_with_something_is_still_a_usage_error(workspace: Path, capsys) -> None:
    (workspace / "native_functions.yaml").write_text(BAD)
    empty = workspace / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "check", str(workspace / "native_functions.yaml"), str(empty))
    assert code == 2 and out.count("[OPG104]") == 1 and "no operator yaml in this folder" in err
    assert out.splitlines()[-1].startswith("1 error, 0 warnings in 1 file,")  # the file read is summed up, the empty folder is not


def test_an_empty_backend_yaml_is_a_usage_error_without_a_summary(tmp_path: Path, capsys) -> None:
    (tmp_path / "empty_functions.yaml").write_text("")
    code, out, err = run(capsys, "check", str(tmp_path / "empty_functions.yaml"))
    assert (code, out) == (2, "") and "not an operator yaml file" in err and err.count("\n") == 1


def test_check_help_names_every_kind_of_file_it_checks(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind in ("native_functions.yaml", "tags.yaml", "backend yamls", "lazy", "derivatives.yaml",
                 "autograd/deprecated.yaml", "operator selection yamls"):
        assert kind in text, kind


def test_bad_format_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "opgen_lsp.cli", "check", "--format", "xml", "x.yaml"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_console_script_runs(workspace: Path) -> None:
    path = workspace / "native_functions.yaml"
    path.write_text(BAD)
    proc = subprocess.run(["opgen", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1 and "[OPG104]" in proc.stdout
