"""`python -m opgen_lsp.gen` against each release's own gen.py: the same flags (its --help's options, spellings and
arities), and, for Codegen.cmake's command line (run where Codegen.cmake runs it, with gen.py's AOTI default under
that folder), the same files and the same --output-dependencies lists, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import reference
from file_trees import assert_same_files, files_under

from opgen_lsp.cli import gen_py
from opgen_lsp.releases import RELEASES

from .test_release_matrix import _aten, release_folder

pytestmark = pytest.mark.versions

# An option's line in argparse's help: two spaces, then its spellings (each with its metavar), then the help.
_OPTION_LINE = re.compile(r"^  (-\S.*?)(?:\s{2,}|$)")


def option_lines(help_text: str) -> list[str]:
    return sorted(m.group(1) for line in help_text.splitlines() if (m := _OPTION_LINE.match(line)))


@pytest.mark.parametrize("version", [r.version for r in RELEASES])
def test_the_drop_in_takes_exactly_gen_py_s_flags(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    theirs = reference.run(["-m", "torchgen.gen", "--help"], cwd=tmp_path, pythonpath=[folder], check=True).stdout
    release = next(r for r in RELEASES if r.version == version)
    ours = gen_py.gen_py_parser(release).format_help()
    assert len(option_lines(theirs)) >= 15  # (2.3's gen.py has 15)
    assert option_lines(ours) == option_lines(theirs)


def test_a_dashed_spelling_is_refused_as_gen_py_1_13_refuses_it(tmp_path: Path, capsys) -> None:
    """gen.py 1.13 has the underscore spellings of its multi-word flags alone: argparse's usage error (status 2),
    the same message but for the program's name."""
    folder = release_folder("1.13.1")
    line = ["-s", str(_aten(folder)), "--install-dir", "out", "--backend-whitelist", "CPU", "--dry-run"]
    theirs = reference.run(["-m", "torchgen.gen", *line], cwd=tmp_path, pythonpath=[folder])
    with pytest.raises(SystemExit) as exit_:
        gen_py.main(line)
    ours = capsys.readouterr().err
    assert (exit_.value.code, theirs.returncode) == (2, 2)
    said = "error: unrecognized arguments: --install-dir out --backend-whitelist CPU\n"
    assert theirs.stderr.endswith(f"gen.py: {said}") and ours.endswith(f"{gen_py.PROG}: {said}")
    assert not (tmp_path / "out").exists()


# (1.13.1: Codegen.cmake of its time spelled --install_dir, the one spelling its gen.py has)
CASES = [(v, kind) for v in ("2.6.0", "2.13.0", "2.15.0") for kind in ("headers", "sources")] + [("1.13.1", "headers")]


@pytest.mark.slow
@pytest.mark.parametrize("version,kind", CASES)
def test_codegen_cmake_s_command_line_writes_what_gen_py_writes(version: str, kind: str, tmp_path: Path,
                                                                monkeypatch) -> None:
    folder = release_folder(version)
    line = ["--source-path", str(_aten(folder)), "--install_dir", "build/aten/src/ATen", "--per-operator-headers",
            "--generate", kind, "--output-dependencies", f"build/aten/src/ATen/generated_{kind}.cmake"]
    # torchgen's files as the reference cache's digests (not written out and read back); opgen's as written.
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    theirs = reference.run_digests(["-m", "torchgen.gen", *line], cwd=ref, outputs=[Path("build"), Path("torch")],
                                   pythonpath=[folder])
    assert theirs.done.returncode == 0, theirs.done.stderr[-2000:]
    monkeypatch.chdir(ours)
    assert gen_py.main(line) == 0
    got = files_under(ours)
    lists = sorted(name for name in theirs.files if name.endswith(".cmake"))
    assert len(lists) == 5, "gen.py writes five outputs lists"
    assert_same_files({n: theirs.files[n] for n in lists}, {n: got[n] for n in lists if n in got})
    assert_same_files(theirs.files, got)
