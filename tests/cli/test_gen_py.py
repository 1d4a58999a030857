"""`python -m opgen_lsp.gen`, the drop-in for gen.py: its command line (each release's flags), its translation to
`opgen generate` and its exit statuses. (Against each release's own gen.py: tests/conformance/test_gen_py_drop_in.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp import status
from opgen_lsp.analysis import shims
from opgen_lsp.cli import gen_py, main
from opgen_lsp.releases import RELEASES

SAMPLES_ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"


def options_of(version: str) -> set[str]:
    release = next(r for r in RELEASES if r.version == version)
    return {s for action in gen_py.gen_py_parser(release)._actions for s in action.option_strings}


def test_each_release_takes_its_own_flags() -> None:
    assert "--mtia" not in options_of("2.7.1") and "--mtia" in options_of("2.8.0")
    assert "--headeronly_install_dir" not in options_of("2.11.0") and "--headeronly_install_dir" in options_of("2.12.1")
    assert "--native-aot-ops-dir" not in options_of("2.14.1") and "--native_aot_ops_dir" in options_of("2.15.0")
    # Both spellings where gen.py has both; only the dash one where it has one.
    assert {"--install_dir", "--install-dir", "--aoti_install_dir", "--op_selection_yaml_path"} <= options_of("2.6.0")
    assert "--per_operator_headers" not in options_of("2.6.0") and "--dry_run" not in options_of("2.15.0")
    # 1.13: the underscore spelling alone (the dashed ones arrived in 2.0).
    assert {"--install_dir", "--backend_whitelist", "--static_dispatch_backend"} <= options_of("1.13.1")
    assert not {"--install-dir", "--backend-whitelist", "--op-selection-yaml-path"} & options_of("1.13.1")
    assert {"--install-dir", "--install_dir", "--backend-whitelist"} <= options_of("2.0.1")


def test_an_unknown_flag_is_argparse_s_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        gen_py.main(["-s", str(SAMPLES_ATEN), "--torch-version", "2.6"])  # opgen's own flag: not gen.py's
    assert exit_.value.code == 2
    assert "unrecognized arguments: --torch-version 2.6" in capsys.readouterr().err


def test_a_missing_input_exits_1_as_gen_py_s_exception_would(tmp_path: Path, capsys) -> None:
    assert gen_py.main(["-s", str(tmp_path / "nope"), "-d", str(tmp_path / "out")]) == 1
    assert "native_functions.yaml" in capsys.readouterr().err


def test_codegen_cmake_s_command_line_is_opgen_generate_s(tmp_path: Path, monkeypatch) -> None:
    """Codegen.cmake's line (underscore spellings, gen.py's AOTI default under the folder it runs in) writes what
    `opgen generate` writes with the same flags spelled out."""
    monkeypatch.setenv("OPGEN_PROCESSES", "1")
    line = ["--source-path", str(SAMPLES_ATEN), "--install_dir", "build/aten/src/ATen",
            "--generate", "headers", "sources", "--output-dependencies", "build/aten/src/ATen/generated_sources.cmake"]
    written = {}
    for tool in ("drop-in", "generate"):
        (tmp_path / tool).mkdir()
        monkeypatch.chdir(tmp_path / tool)
        if tool == "drop-in":
            assert gen_py.main(line) == 0
        else:
            assert main(["generate", *line, "--aoti-install-dir", "torch/csrc/inductor/aoti_torch/generated"]) == 0
        written[tool] = files_under(tmp_path / tool)
    assert "torch/csrc/inductor/aoti_torch/generated/c_shim_cpu.cpp" in written["drop-in"]
    assert "build/aten/src/ATen/core_generated_sources.cmake" in written["drop-in"]
    assert written["drop-in"] == written["generate"]


def test_python_m_opgen_lsp_gen_runs_it() -> None:
    done = subprocess.run([sys.executable, "-m", "opgen_lsp.gen", "--no-such-flag"], capture_output=True, text=True)
    assert done.returncode == 2 and "unrecognized arguments: --no-such-flag" in done.stderr


def test_a_file_opgen_cannot_generate_is_named_and_the_exit_status_is_not_0(tmp_path: Path, monkeypatch,
                                                                              capsys) -> None:
    """Never written differently: the shims opgen cannot make (no fallback_ops.py here) are named, not written."""
    monkeypatch.setattr(shims, "fallback_ops_candidates", lambda source_path: [])
    monkeypatch.chdir(tmp_path)
    assert gen_py.main(["--source-path", str(SAMPLES_ATEN), "--install_dir", "out"]) == status.PARTIAL
    err = capsys.readouterr().err
    assert "cannot generate" in err and "c_shim_cpu.cpp" in err
    assert not (tmp_path / "torch" / "csrc" / "inductor" / "aoti_torch" / "generated" / "c_shim_cpu.cpp").exists()


def test_the_dry_run_at_configure_time_writes_the_same_lists_and_no_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPGEN_PROCESSES", "1")
    line = ["--source-path", str(SAMPLES_ATEN), "--install_dir", "build", "--generate", "sources",
            "--output-dependencies", "build/generated_sources.cmake"]
    lists = {}
    for run, extra in (("dry", ["--dry-run"]), ("real", [])):
        (tmp_path / run).mkdir()
        monkeypatch.chdir(tmp_path / run)
        assert gen_py.main([*line, *extra]) == 0
        lists[run] = {name: data for name, data in files_under(tmp_path / run).items() if name.endswith(".cmake")}
    assert len(lists["dry"]) == 5 and lists["dry"] == lists["real"]
    assert set(files_under(tmp_path / "dry")) == set(lists["dry"])
