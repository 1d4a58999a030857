"""Bounded input: only regular files are read, never past the size cap, never waiting on a FIFO; one reader
for the CLI and the server."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from opgen_lsp import input_file
from opgen_lsp.analysis.check import check_paths
from opgen_lsp.input_file import UnreadableFile, read_text
from opgen_lsp.lsp.workspace import Workspace

OPGEN = [sys.executable, "-m", "opgen_lsp.cli"]
ENTRY = "- func: f(Tensor self) -> Tensor\n"


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _native_beside(folder: Path) -> Path:
    native = folder / "native_functions.yaml"
    native.write_text(ENTRY, encoding="utf-8")
    return native


@pytest.mark.parametrize("make, why", [
    (lambda p: _fifo(p), "is a FIFO, not a regular file"),
    (lambda p: p.symlink_to("/dev/zero") or p, "is a device, not a regular file"),
    (lambda p: p.mkdir() or p, "is a directory"),
])
def test_the_reader_refuses_what_is_not_a_regular_file_without_reading(tmp_path: Path, make, why):
    path = make(tmp_path / "tags.yaml")
    with pytest.raises(UnreadableFile) as caught:
        read_text(str(path))
    assert caught.value.why == why and str(caught.value) == f"{path}: {why}"


def test_the_reader_refuses_an_oversized_file_from_its_size(tmp_path: Path, monkeypatch):
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(b"#" * 1001)
    with pytest.raises(UnreadableFile) as caught:
        read_text(str(path), limit=1000)
    assert caught.value.kind == input_file.TOO_LARGE and "1,001 bytes" in caught.value.why
    assert read_text(str(path), limit=1001) == "#" * 1001
    # Refused from the stat: not a byte is read.
    monkeypatch.setattr(input_file.os, "fdopen", lambda *a, **k: pytest.fail("read an oversized file"))
    with pytest.raises(UnreadableFile):
        read_text(str(path), limit=1000)


def test_the_reader_keeps_universal_newlines_and_places_a_bad_byte(tmp_path: Path):
    path = tmp_path / "x.yaml"
    path.write_bytes(b"a\r\nb\rc\n")
    assert read_text(str(path)) == "a\nb\nc\n"
    path.write_bytes(b"- func: \xc3\xa9\n  variants: fu\xffnction\n")
    with pytest.raises(UnreadableFile) as caught:
        read_text(str(path))
    assert caught.value.kind == input_file.NOT_UTF8 and caught.value.position == (1, 14)
    assert read_text(str(path), errors="replace").count("\ufffd") == 1


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*OPGEN, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_opgen_check_with_tags_yaml_a_fifo_or_dev_zero_answers_at_once(tmp_path: Path, kind):
    native = _native_beside(tmp_path)
    if kind == "fifo":
        _fifo(tmp_path / "tags.yaml")
    else:
        (tmp_path / "tags.yaml").symlink_to("/dev/zero")
    result = _run(["check", str(native)], tmp_path)  # the timeout would stop a hang or a read of /dev/zero
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "tags.yaml:1:1: error: this file is a" in result.stdout and "[OPG006]" in result.stdout


@pytest.mark.parametrize("marker", ["version.txt", "torch/version.py"])
def test_a_fifo_where_the_release_is_read_is_no_release_not_a_hang(tmp_path: Path, marker: str):
    tree = tmp_path / ("aten/src/ATen" if marker == "version.txt" else "torchgen/packaged/ATen")
    (tree / "native").mkdir(parents=True)
    native = _native_beside(tree / "native")
    (tree / "native" / "tags.yaml").write_text("- tag: core\n  desc: core\n", encoding="utf-8")
    (tmp_path / marker).parent.mkdir(parents=True, exist_ok=True)
    _fifo(tmp_path / marker)
    result = _run(["check", str(native)], tmp_path)  # the timeout would stop a hang
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


def test_opgen_check_of_an_oversized_file_is_one_diagnostic(tmp_path: Path, monkeypatch):
    path = tmp_path / "native_functions.yaml"
    path.write_text(ENTRY * 100, encoding="utf-8")
    monkeypatch.setattr(input_file.read_text, "__defaults__", (1000,))  # the cap, made small
    [item] = check_paths([str(path)]).items
    assert item.diagnostic.code == "OPG006" and "3,300 bytes; opgen reads files of up to 1,000 bytes" in \
        item.diagnostic.message


def test_opgen_check_places_a_non_utf8_byte_where_it_is(tmp_path: Path):
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(ENTRY.encode() + b"  variants: fu\xffnction\n")
    (tmp_path / "tags.yaml").write_text("- tag: core\n  desc: x\n", encoding="utf-8")
    result = _run(["check", str(path)], tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith(f"{path}:2:15: error: not UTF-8 text (invalid start byte at byte 47)")


@pytest.mark.parametrize("command", [
    ["generate", "-s", "SRC", "-d", "OUT"],
    ["generate-backend", "-s", "SRC/backend.yaml", "-o", "OUT"],
])
def test_generate_with_an_input_that_is_a_fifo_fails_at_once(tmp_path: Path, command):
    native = tmp_path / "native"
    native.mkdir()
    _native_beside(native)
    _fifo(native / "tags.yaml")
    _fifo(tmp_path / "backend.yaml")
    args = [a.replace("SRC", str(tmp_path)).replace("OUT", str(tmp_path / "out")) for a in command]
    if command[0] == "generate-backend":
        args += ["--native-functions", str(native / "native_functions.yaml")]
    result = _run(args, tmp_path)
    assert result.returncode != 0 and "is a FIFO, not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_server_reads_a_fifo_tags_yaml_without_blocking(tmp_path: Path):
    native = _native_beside(tmp_path)
    _fifo(tmp_path / "tags.yaml")
    workspace = Workspace(str(tmp_path))
    uri = native.as_uri()
    workspace.open(uri, str(native), native.read_text(), 1)
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(workspace.analyse(uri)), daemon=True)
    worker.start()
    worker.join(30)
    assert done, "the analysis blocked on the FIFO"
    messages = [d.message for d in done[0].diagnostics]  # type: ignore[attr-defined]
    assert any("is a FIFO, not a regular file" in m for m in messages), messages


def test_the_kernel_index_skips_a_fifo_and_reads_the_rest(tmp_path: Path):
    from opgen_lsp.index.kernels import KernelIndex

    (tmp_path / "ok.cpp").write_text("Tensor relu(const Tensor& self) { return self; }\n")
    _fifo(tmp_path / "blocked.cpp")
    (tmp_path / "zero.cpp").symlink_to("/dev/zero")
    done: list[KernelIndex] = []
    worker = threading.Thread(target=lambda: done.append(KernelIndex.build([str(tmp_path)], workers=1)), daemon=True)
    worker.start()
    worker.join(60)
    assert done, "the kernel index blocked on the FIFO or read /dev/zero"
    assert [os.path.basename(p) for p in done[0].files] == ["ok.cpp"]


def test_generate_with_a_huge_sparse_template_fails_at_once_with_the_cache(tmp_path: Path, monkeypatch):
    """An input over the reader's cap is refused from its size by the generator; the cache's digest of the inputs,
    taken before the run, must not read it either (6 GB hashed took 27 s before the run said why)."""
    from opgen_lsp.codegen import runs

    src = tmp_path / "src"
    (src / "native").mkdir(parents=True)
    _native_beside(src / "native")
    (src / "native" / "tags.yaml").write_text("- tag: core\n  desc: core\n", encoding="utf-8")
    (src / "templates").mkdir()
    huge = src / "templates" / "Functions.h"
    with open(huge, "wb") as f:
        f.truncate(6 * 1024**3)  # sparse: no disk used
    with monkeypatch.context() as m:  # the digest says "too large" from the stat, reading nothing
        m.setattr(runs.hashlib, "file_digest", lambda *a, **k: pytest.fail("hashed an oversized input"))
        assert runs.file_digest(str(huge)).startswith("too large")
    result = _run(["generate", "-s", str(src), "-d", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")],
                  tmp_path)  # the timeout (60 s) would stop a hang; the answer takes well under a second of work
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "bytes; opgen reads files of up to" in result.stderr, result.stderr
