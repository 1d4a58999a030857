"""`opgen generate` on bad input answers with a message and a status, never a traceback."""

from __future__ import annotations

from pathlib import Path

from file_trees import files_under

from opgen_lsp.cli import main


def test_missing_source_path_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["generate", "-s", str(tmp_path / "nope"), "-d", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "native_functions.yaml" in err and "Traceback" not in err


def test_unknown_static_dispatch_key(tmp_path: Path, capsys) -> None:
    assert main(["generate", "-s", str(tmp_path), "--static-dispatch-backend", "NotAKey"]) == 2
    assert "unknown dispatch key NotAKey" in capsys.readouterr().err


def test_bad_yaml_names_the_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "native_functions.yaml").write_text("- func: abs(Tensor self) -> Tensor\n  variants: nope\n")
    (tmp_path / "native" / "tags.yaml").write_text("- tag: core\n  desc: x\n")
    assert main(["generate", "-s", str(tmp_path), "-d", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert ":2:13: error: " in err and "opgen check" in err and "Traceback" not in err


SAMPLES_ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"


def test_jobs_change_nothing_but_the_processes(tmp_path: Path) -> None:
    trees = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(out / "aten"), "--aoti-install-dir",
                     str(out / "aoti"), "--update-aoti-c-shim", "-j", jobs]) == 0
        trees.append(files_under(out))
    assert len(trees[0]) > 100 and trees[0] == trees[1]


def test_jobs_must_be_positive(tmp_path: Path, capsys) -> None:
    try:
        main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(tmp_path), "-j", "0"])
    except SystemExit as exit_:
        assert exit_.code == 2
    assert "'0' is not a positive number" in capsys.readouterr().err


def test_an_input_that_is_not_utf8_is_a_clear_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "native_functions.yaml").write_text("- func: abs(Tensor self) -> Tensor\n")
    (tmp_path / "native" / "tags.yaml").write_bytes(b"- tag: core\n  desc: \xff\xfe\n")
    assert main(["generate", "-s", str(tmp_path), "-d", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "tags.yaml: not UTF-8 text (invalid start byte at byte 20)" in err and "Traceback" not in err
