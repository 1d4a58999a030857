"""`opgen generate-backend` against torchgen 2.13's gen_backend_stubs, over the whole corpus.

For every backend yaml torch 2.13 accepts, both tools run with the same `-o`
spelling in separate temporary folders, and every file must be byte-identical
(same names, same bytes), with opgen parsing only the part of
native_functions.yaml the yaml needs, as its command line does (and giving the
same diagnostics as against the whole file). For every yaml it rejects, opgen exits 1, writes
nothing, and prints an error on the line that causes the rejection.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import reference
from conftest import CORPUS
from file_trees import files_under, first_difference

from opgen_lsp.cli import main
from opgen_lsp.codegen.backend.run import BackendOptions, generate_backend, load_native_snapshot
from opgen_lsp.index.backend import check_backend
from opgen_lsp.releases import DEFAULT

from .test_backend_corpus import ACCEPTED, REJECTED

pytestmark = [pytest.mark.conformance, pytest.mark.slow, pytest.mark.corpus]

CORPUS_FILES = sorted(CORPUS.rglob("*.yaml"))
ACCEPTED_FILES = [p for p in CORPUS_FILES if p.name in ACCEPTED]
REJECTED_FILES = [p for p in CORPUS_FILES if p.name not in ACCEPTED]


@pytest.fixture(scope="module")
def native(aten):
    return load_native_snapshot(str(aten / "native" / "native_functions.yaml"), DEFAULT)


def _torchgen(source: Path, cwd: Path, out: str) -> subprocess.CompletedProcess:
    return reference.run(["-m", "torchgen.gen_backend_stubs", "-s", str(source), "-o", out], cwd=cwd,
                         outputs=[Path(out)])


def test_every_corpus_file_is_classified():
    assert {p.name for p in ACCEPTED_FILES} == ACCEPTED
    assert all(p.name in REJECTED for p in REJECTED_FILES)


@pytest.mark.parametrize("out", ["out", "out/", "gen/backend"])
def test_output_spelling(aten, native, tmp_path, monkeypatch, out):
    """The -o string is copied verbatim into the #include of Register<Key>.cpp (a trailing slash too)."""
    source = CORPUS / "torch_nupu__nupu_functions.yaml"
    theirs, ours = tmp_path / "torchgen", tmp_path / "opgen"
    theirs.mkdir(), ours.mkdir()
    assert _torchgen(source, theirs, out).returncode == 0
    monkeypatch.chdir(ours)
    result = generate_backend(BackendOptions(str(source), out, release=DEFAULT, experimental=False), native)
    assert not result.has_errors
    assert files_under(ours) == files_under(theirs)


@pytest.mark.parametrize("source", ACCEPTED_FILES, ids=[p.name for p in ACCEPTED_FILES])
def test_accepted_file_is_byte_identical(aten, native, source, tmp_path, monkeypatch):
    theirs, ours = tmp_path / "torchgen", tmp_path / "opgen"
    theirs.mkdir(), ours.mkdir()
    done = _torchgen(source, theirs, "out")
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.chdir(ours)
    # The way the CLI runs: only the entries of native_functions.yaml that the yaml needs are parsed.
    result = generate_backend(BackendOptions(str(source), "out", release=DEFAULT, experimental=False))
    assert not result.has_errors, [d.diagnostic.message for d in result.diagnostics if d.diagnostic.is_error]
    # The same diagnostics as against the whole file.
    full = check_backend(source.read_text(), native)
    assert [d.diagnostic for d in result.diagnostics] == list(full.diagnostics)
    expected, got = files_under(theirs), files_under(ours)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], f"{name} differs at {first_difference(expected[name], got[name])}"
    # A second run writes nothing: every file is unchanged.
    again = generate_backend(BackendOptions(str(source), "out", release=DEFAULT, experimental=False), native)
    assert again.written is not None and not again.written.written and len(again.written.unchanged) == len(got)


@pytest.mark.parametrize("source", REJECTED_FILES, ids=[str(p.relative_to(CORPUS)) for p in REJECTED_FILES])
def test_rejected_file_exits_1_with_the_line(aten, source, tmp_path, monkeypatch, capsys):
    done = _torchgen(source, tmp_path, "theirs")
    assert done.returncode != 0
    code, line_start, fact = REJECTED[source.name]
    assert fact in done.stderr
    monkeypatch.chdir(tmp_path)
    status = main(["generate-backend", "-s", str(source), "-o", "ours", "--format", "json"])
    assert status == 1
    assert not (tmp_path / "ours").exists()
    import json

    reported = json.loads(capsys.readouterr().out)
    lines = source.read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if text.strip().startswith(line_start))
    assert any(d["severity"] == "error" and d["code"] == code and d["range"]["start"]["line"] == line
               and fact in d["message"] for d in reported), reported[:5]


def test_cli_writes_atomically_and_only_changes(aten, tmp_path, monkeypatch, capsys):
    source = CORPUS / "ipex__xpu_functions.adjusted.yaml"
    monkeypatch.chdir(tmp_path)
    assert main(["generate-backend", "-s", str(source), "-o", "out"]) == 0
    names = sorted(os.listdir(tmp_path / "out"))
    assert names == ["PrivateUse1NativeFunctions.h", "RegisterAutogradPrivateUse1.cpp", "RegisterPrivateUse1.cpp"]
    stamps = {n: (tmp_path / "out" / n).stat().st_mtime_ns for n in names}
    capsys.readouterr()
    assert main(["generate-backend", "-s", str(source), "-o", "out"]) == 0
    assert "0 file(s) written, 3 unchanged" in capsys.readouterr().err
    assert {n: (tmp_path / "out" / n).stat().st_mtime_ns for n in names} == stamps
    # --dry-run (a plain flag, unlike torchgen's) writes nothing and says what would change.
    (tmp_path / "out" / "RegisterPrivateUse1.cpp").write_text("stale")
    assert main(["generate-backend", "-s", str(source), "-o", "out", "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "out/RegisterPrivateUse1.cpp: would be written" in shown
    assert "out/PrivateUse1NativeFunctions.h: unchanged" in shown
    assert (tmp_path / "out" / "RegisterPrivateUse1.cpp").read_text() == "stale"
    assert main(["generate-backend", "-s", str(source), "-o", "dry", "--dry-run"]) == 0
    assert not (tmp_path / "dry").exists()
