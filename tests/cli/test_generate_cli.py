"""`opgen generate` on bad input answers with a message and a status, never a traceback."""

from __future__ import annotations

from pathlib import Path

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
    assert main(["generate", "-s", str(tmp_path), "-d", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "opgen check" in err and "Traceback" not in err
