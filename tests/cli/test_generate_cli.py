"""`opgen generate` on bad input answers with a message and a status, never a traceback."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp.cli import main

SAMPLES_ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"

def test_missing_source_path_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["generate", "-s", str(tmp_path / "nope"), "-d", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "native_functions.yaml" in err and "Traceback" not in err


def test_without_torch_and_without_s_says_what_s_is_and_how_to_get_a_release(tmp_path: Path, monkeypatch,
                                                                               capsys) -> None:
    monkeypatch.chdir(tmp_path)  # no aten/src/ATen here: gen.py's default -s is a PyTorch checkout's
    monkeypatch.setattr("opgen_lsp.analysis.check.installed_package_dir", lambda name: None)  # no torch
    assert main(["generate", "-d", "out"]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == "opgen: aten/src/ATen/native/native_functions.yaml: no such file"
    assert lines[1].startswith("opgen: -s/--source-path is the ATen folder gen.py reads (native/native_functions.yaml")
    assert "opgen generate -s samples/aten" in lines[1]
    assert lines[2].startswith("opgen: torch is not installed; a release's ATen folder is its torchgen's packaged/ATen")
    assert "python3 tools/torchgen_release.py X.Y.Z" in lines[2] and "pip download --no-deps torch==X.Y.Z" in lines[2]
    assert len(lines) == 3


def test_with_torch_and_without_s_names_the_installed_aten_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("opgen_lsp.analysis.check.installed_package_dir", lambda name: "/site/torchgen")
    assert main(["generate", "-d", "out"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "opgen: the installed torch's ATen folder: -s " \
        "/site/torchgen/packaged/ATen"


def test_gen_py_s_abi_check_notes_are_labelled(tmp_path: Path, capsys) -> None:
    """The '... not found' lines gen.py prints (no AOTI header to compare with) stay on stdout as gen.py prints
    them, and one line on stderr says what they are: they are not the user's errors."""
    assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(tmp_path / "aten"), "--aoti-install-dir",
                 str(tmp_path / "aoti"), "--generate", "sources", "-j", "1"]) == 0
    out, err = capsys.readouterr()
    assert sorted(out.splitlines()) == [f"{tmp_path}/aoti/c_shim_{d}.h not found" for d in ("aten", "cpu", "cuda")]
    assert err.splitlines()[0] == ("opgen: note: the 3 line(s) '... not found' below are gen.py's AOTI ABI check "
                                   "(printed as gen.py prints them): no C shim header there to compare with, not an "
                                   "error; --update-aoti-c-shim writes them")


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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


_PROGRESS = re.compile(r"\r\x1b\[Kopgen: (\d+)/(\d+) files, (\d+) written")


def test_a_terminal_shows_the_files_planned_done_and_written(tmp_path: Path, monkeypatch) -> None:
    """Counted over both processes (-j 2), cleared before the summary; a second run writes nothing (a full one: with
    the cache, a run with nothing changed builds nothing, and has no progress to show)."""
    for run in ("first", "again"):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(tmp_path / "aten"), "--aoti-install-dir",
                     str(tmp_path / "aoti"), "--update-aoti-c-shim", "-j", "2", "--no-cache"]) == 0
        shown = [tuple(map(int, m)) for m in _PROGRESS.findall(terminal.getvalue())]
        planned = shown[0][1]
        written = planned if run == "first" else 0
        assert planned > 50 and shown[0] == (0, planned, 0) and shown[-1] == (planned, planned, written)
        summary = terminal.getvalue().split("\r\x1b[K")[-1]
        assert summary.startswith(f"opgen: {written} file(s) written, {planned - written} unchanged")


def test_no_progress_line_when_stderr_is_not_a_terminal(tmp_path: Path, capsys) -> None:
    assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(tmp_path / "aten"), "--aoti-install-dir",
                 str(tmp_path / "aoti"), "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "files, " not in err and "file(s) written" in err


def test_only_the_files_whose_bytes_change_are_rewritten(tmp_path: Path) -> None:
    """A second run with nothing changed touches no file; after a one-entry edit exactly the files whose bytes
    changed get a new mtime (the C++ build recompiles what includes them, nothing else)."""
    aten = tmp_path / "src"
    (aten / "native").mkdir(parents=True)
    (aten / "templates").symlink_to(SAMPLES_ATEN / "templates")
    (aten / "aoti").symlink_to(SAMPLES_ATEN / "aoti")
    (aten / "native" / "tags.yaml").write_bytes((SAMPLES_ATEN / "native" / "tags.yaml").read_bytes())
    native = aten / "native" / "native_functions.yaml"
    text = (SAMPLES_ATEN / "native" / "native_functions.yaml").read_text()
    native.write_text(text)
    out = tmp_path / "out"
    argv = ["generate", "-s", str(aten), "-d", str(out / "aten"), "--aoti-install-dir", str(out / "aoti"),
            "--update-aoti-c-shim", "-j", "1"]

    def stamps() -> dict[str, int]:
        return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}

    assert main(argv) == 0
    for p in out.rglob("*"):
        if p.is_file():
            os.utime(p, ns=(1, 1))  # far in the past: any rewrite shows, whatever the clock's resolution
    before = files_under(out)
    assert main(argv) == 0
    assert set(stamps().values()) == {1}, "a run with nothing changed rewrote files"
    edited = text.replace("- func: scale_item(Tensor self) -> Scalar\n  variants: method\n",
                          "- func: scale_item(Tensor self) -> Scalar\n  variants: function, method\n", 1)
    assert edited != text
    native.write_text(edited)
    assert main(argv) == 0
    after = files_under(out)
    changed = {name for name in after if after[name] != before.get(name)}
    rewritten = {name for name, stamp in stamps().items() if stamp != 1}
    assert changed and len(changed) < len(after) / 4
    assert rewritten == changed


@pytest.mark.parametrize("version, flag", [("2.5", "--xpu"), ("2.5", "--extend-aoti-c-shim"), ("2.6", "--mtia"),
                                           ("2.3", "--update-aoti-c-shim"), ("2.3", "--aoti-install-dir={tmp}/aoti")])
def test_a_flag_the_releases_gen_py_lacks_is_a_usage_error(tmp_path: Path, capsys, version: str, flag: str) -> None:
    out, flag = tmp_path / "out", flag.format(tmp=tmp_path)
    assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(out), "--torch-version", version, flag]) == 2
    name = flag.split("=")[0]
    assert f"has no {name}" in capsys.readouterr().err and not out.exists()  # (that gen.py writes nothing either)
    assert main(["generate", "-s", str(SAMPLES_ATEN), "-d", str(out), "--torch-version", "2.13", flag]) == 0
