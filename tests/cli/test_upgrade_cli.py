"""`opgen upgrade` and `opgen coverage` on the releases' own native_functions.yaml: formats and exit statuses."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from conftest import CORPUS
from release_files import release_native

from opgen_lsp.analysis.coverage import coverage
from opgen_lsp.analysis.upgrade import upgrade_report
from opgen_lsp.cli import coverage as coverage_cli
from opgen_lsp.cli import main
from opgen_lsp.cli import upgrade as upgrade_cli
from opgen_lsp.index import inputs

# cholesky is gone in 2.14; tril's diagonal is a SymInt from 2.8; add.Tensor stays.
BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\n- cholesky\nfull_codegen:\n- tril\n"


# Each release's file is read once for the module (the commands read them on every run).
load_release = functools.cache(inputs.load_release)


@pytest.fixture(autouse=True)
def _releases_read_once(monkeypatch) -> None:
    monkeypatch.setattr(inputs, "load_release", load_release)


@pytest.fixture
def backend(tmp_path: Path) -> Path:
    path = tmp_path / "xla_native_functions.yaml"
    path.write_text(BACKEND)
    return path


def test_changes_exit_1_and_are_listed_with_both_declarations(backend: Path, capsys) -> None:
    release_native("2.13.0"), release_native("2.15.0")
    assert main(["upgrade", str(backend), "--from", "2.13", "--to", "2.15.0"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{backend}:5:3: cholesky (supported): removed",
        "    schema torch 2.13.0  cholesky(Tensor self, bool upper=False) -> Tensor",
        "    schema torch 2.15.0  (none)",
        "    kernel torch 2.13.0  static at::Tensor cholesky(const at::Tensor & self, bool upper);",
        "    kernel torch 2.15.0  (none)"]
    assert err == "1 of 3 listed op(s) change from torch 2.13.0 to 2.15.0\n"


def test_nothing_changed_exits_0(backend: Path, capsys) -> None:
    release_native("2.6.0"), release_native("2.7.1")
    assert main(["upgrade", str(backend), "--from", "2.6.0", "--to", "2.7.1"]) == 0
    assert capsys.readouterr().out == ""


def test_the_json_and_markdown_reports(backend: Path) -> None:
    release_native("2.6.0"), release_native("2.15.0")
    report = upgrade_report(BACKEND, load_release("2.6.0"), load_release("2.15.0"))
    data = json.loads(upgrade_cli.render_json(str(backend), report))
    assert [(c["op"], c["change"], c["line"]) for c in data["changes"]] == [("cholesky", "removed", 5),
                                                                             ("tril", "schema", 7)]
    assert data["changes"][1]["new_declaration"] == "static at::Tensor tril(const at::Tensor & self, int64_t diagonal);"
    markdown = upgrade_cli.render_markdown(str(backend), report).splitlines()
    assert markdown[2:4] == ["| line | op | change | torch 2.6.0 | torch 2.15.0 |", "|---|---|---|---|---|"]
    assert markdown[5] == ("| 7 | `tril` | schema changed | `tril(Tensor self, int diagonal=0) -> Tensor`<br>`static "
                           "at::Tensor tril(const at::Tensor & self, int64_t diagonal);` | `tril(Tensor self, SymInt "
                           "diagonal=0) -> Tensor`<br>`static at::Tensor tril(const at::Tensor & self, int64_t "
                           "diagonal);` |")


def test_a_release_whose_file_is_not_at_hand_is_a_usage_error(backend: Path, tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    assert main(["upgrade", str(backend), "--from", "2.8", "--to", "2.9"]) == 2
    assert "torch 2.8's native_functions.yaml is not at hand: fetch its torchgen with `python3 " \
           "tools/torchgen_release.py 2.8.0`" in capsys.readouterr().err
    assert main(["coverage", str(backend), "--release", "1.12"]) == 2
    assert "torch 1.12 is not a release opgen knows" in capsys.readouterr().err


def test_the_help_gives_the_exit_statuses(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["upgrade", "--help"])
    assert "Exit status: 0 nothing changes, 1 changes found, 2" in " ".join(capsys.readouterr().out.split())


def test_coverage_prints_one_table_per_category_with_counts(backend: Path, capsys) -> None:
    release_native("2.13.0")
    assert main(["coverage", str(backend), "--release", "2.13"]) == 0
    out = capsys.readouterr().out
    found = coverage(BACKEND, load_release("2.13"))
    counts = found.counts()
    assert out.splitlines()[0] == (f"{backend} (backend XLA) in torch 2.13.0: {sum(counts.values())} ATen ops, "
                                   f"3 implemented, {counts['free']} free, {counts['to implement']} to implement")
    assert "\nimplemented by the backend (listed in its yaml) (3)\nop          how\n" in out
    assert any(line.startswith("add_.Tensor ") and line.endswith("  generated around add.Tensor's kernel")
               for line in out.splitlines())
    data = json.loads(coverage_cli.render_json(str(backend), found))
    assert data["counts"] == counts and len(data["free"]) == counts["free"]
    assert {"op": "add.out", "how": "generated around add.Tensor's kernel"} in data["free"]
    markdown = coverage_cli.render_markdown(str(backend), found)
    assert "\n### implemented by the backend (listed in its yaml) (3)\n\n| op | how |\n|---|---|\n" in markdown


NPU = CORPUS / "torch_npu__npu_native_functions.yaml"


@pytest.mark.corpus
@pytest.mark.parametrize("old,new", [("2.6.0", "2.7.1"), ("2.13.0", "2.15.0")])
def test_torch_npu_real_file_compares_its_47_upstream_ops(old: str, new: str, capsys) -> None:
    release_native(old), release_native(new)
    assert main(["upgrade", str(NPU), "--from", old, "--to", new]) == 0
    out, err = capsys.readouterr()
    assert err == (f"0 of 47 listed op(s) change from torch {old} to {new}; 14 op(s) of the file left out: 14 new "
                   "op(s) of its own (custom:)\n")
    assert out.splitlines()[0] == "left out: npu_change_data_ptr: new op(s) of its own (custom:)"


def test_a_torch_npu_file_lists_each_changed_op_with_both_declarations(tmp_path: Path, capsys) -> None:
    release_native("2.13.0"), release_native("2.15.0")
    path = tmp_path / "npu_native_functions.yaml"
    path.write_text("backend: NPU\ncpp_namespace: at_npu::native\nsupported:\n  - add.Tensor\n  - func: cholesky\n"
                    "    op_api: True\ncustom:\n  - func: npu_thing(Tensor self) -> Tensor\n")
    assert main(["upgrade", str(path), "--from", "2.13", "--to", "2.15", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(c["op"], c["change"], c["line"], c["column"]) for c in data["changes"]] == [("cholesky", "removed", 5, 11)]
    assert data["changes"][0]["old_declaration"] == "static at::Tensor cholesky(const at::Tensor & self, bool upper);"
    assert (data["compared"], data["left_out"]) == (2, [{"op": "npu_thing", "why": "new op(s) of its own (custom:)"}])
    report = upgrade_report(path.read_text(), load_release("2.13"), load_release("2.15"), str(path))
    markdown = upgrade_cli.render_markdown(str(path), report)
    assert markdown.endswith("|\n\n- left out: `npu_thing`: new op(s) of its own (custom:)\n")
    assert "| 5 | `cholesky` | removed |" in markdown


@pytest.mark.corpus
def test_a_file_it_cannot_compare_is_a_usage_error_never_0_of_0(tmp_path: Path, capsys) -> None:
    release_native("2.13.0"), release_native("2.15.0")
    mlu = CORPUS / "torch_mlu__mlu_functions.yaml"
    assert main(["upgrade", str(mlu), "--from", "2.13", "--to", "2.15"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"opgen: {mlu}: cannot compare: torch_mlu's format is not compared yet")
    native = tmp_path / "native_functions.yaml"
    native.write_text("- func: my_op(Tensor self) -> Tensor\n")
    assert main(["upgrade", str(native), "--from", "2.13", "--to", "2.15"]) == 2
    assert "cannot compare: not a backend yaml" in capsys.readouterr().err
    # opgen coverage likewise: a vendor file or another yaml is said, never "0 implemented"
    assert main(["coverage", str(NPU), "--release", "2.13"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "cannot report coverage: torch_npu's format is not read by opgen coverage yet" in err
    assert main(["coverage", str(native), "--release", "2.13"]) == 2
    assert "cannot report coverage: not a backend yaml" in capsys.readouterr().err
