"""The writer: atomic, write-if-changed, never outside its folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opgen_lsp.codegen import writer


def test_writes_new_files_and_creates_folders(tmp_path: Path) -> None:
    result = writer.write_files([(str(tmp_path), "a/b.h", b"x\n"), (str(tmp_path), "c.cpp", b"y")])
    assert result.ok and len(result.written) == 2
    assert (tmp_path / "a" / "b.h").read_bytes() == b"x\n"


def test_second_run_rewrites_nothing(tmp_path: Path) -> None:
    files = [(str(tmp_path), f"f{i}.h", f"content {i}".encode()) for i in range(5)]
    writer.write_files(files)
    past = 1_000_000_000
    for i in range(5):
        os.utime(tmp_path / f"f{i}.h", (past, past))
    result = writer.write_files(files)
    assert result.written == () and len(result.unchanged) == 5
    assert all((tmp_path / f"f{i}.h").stat().st_mtime == past for i in range(5))


def test_only_changed_files_are_rewritten(tmp_path: Path) -> None:
    writer.write_files([(str(tmp_path), "a.h", b"1"), (str(tmp_path), "b.h", b"2")])
    result = writer.write_files([(str(tmp_path), "a.h", b"1"), (str(tmp_path), "b.h", b"22")])
    assert [Path(p).name for p in result.written] == ["b.h"]
    assert (tmp_path / "b.h").read_bytes() == b"22"


def test_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "f.h"
    target.write_bytes(b"old")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        writer.write_files([(str(tmp_path), "f.h", b"new content")])
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.h"]


def test_failed_rename_is_an_error_value_and_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "f.h"
    target.write_bytes(b"old")

    def fail(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer.os, "replace", fail)
    result = writer.write_files([(str(tmp_path), "f.h", b"new")])
    assert not result.ok and "Input/output error" in result.errors[0]
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.h"]


@pytest.mark.parametrize("bad", ["../escape.h", "a/../../escape.h", "/etc/passwd", "."])
def test_refuses_paths_outside_the_output_folder(tmp_path: Path, bad: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = writer.write_files([(str(out), bad, b"x")])
    assert not result.ok and "refusing" in result.errors[0]
    assert not (tmp_path / "escape.h").exists()


def test_refuses_a_symlink_that_leads_outside(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)
    result = writer.write_files([(str(out), "link/escape.h", b"x")])
    assert not result.ok
    assert not (tmp_path / "escape.h").exists()


def test_temporary_files_are_made_in_a_staging_folder_removed_at_the_end(tmp_path: Path, monkeypatch) -> None:
    renames: list[tuple[object, object]] = []
    real_replace = os.replace

    def watched(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        renames.append((os.readlink(f"/proc/self/fd/{src_dir_fd}"), os.readlink(f"/proc/self/fd/{dst_dir_fd}")))
        real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(writer.os, "replace", watched)
    result = writer.write_files([(str(tmp_path), "ops/a.h", b"a"), (str(tmp_path), "b.h", b"b")])
    assert result.ok and (tmp_path / "ops" / "a.h").read_bytes() == b"a"
    assert [Path(src).parent for src, _ in renames] == [tmp_path, tmp_path]  # made under the root...
    assert all(Path(src).name.startswith(".opgen-") for src, _ in renames)  # ...in a folder of their own
    assert [dst for _, dst in renames] == [str(tmp_path / "ops"), str(tmp_path)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.h", "ops"]


def test_without_a_staging_folder_files_are_made_beside_their_targets(tmp_path: Path, monkeypatch) -> None:
    real_mkdir = os.mkdir

    def no_staging(name, mode=0o777, *, dir_fd=None):
        if str(name).startswith(".opgen-"):
            raise PermissionError(13, "Permission denied")
        real_mkdir(name, mode, dir_fd=dir_fd)

    monkeypatch.setattr(writer.os, "mkdir", no_staging)
    result = writer.write_files([(str(tmp_path), "ops/a.h", b"a")])
    assert result.ok and (tmp_path / "ops" / "a.h").read_bytes() == b"a"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.h", "ops"]


def test_a_target_on_another_file_system_is_made_beside_it(tmp_path: Path, monkeypatch) -> None:
    real_replace = os.replace
    refused: list[str] = []

    def across_mounts(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        if os.path.samestat(os.fstat(src_dir_fd), os.fstat(dst_dir_fd)):
            return real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        refused.append(dst)
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(writer.os, "replace", across_mounts)
    result = writer.write_files([(str(tmp_path), "ops/a.h", b"a"), (str(tmp_path), "ops/b.h", b"b")])
    assert result.ok and (tmp_path / "ops" / "a.h").read_bytes() == b"a"
    assert refused == ["a.h"]  # (the staging folder is given up at the first: b.h is made beside its target)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.h", "b.h", "ops"]


def test_a_staging_folder_left_by_a_killed_run_is_kept_and_skipped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(writer, "_temp_numbers", iter(range(1000)))
    left = tmp_path / f".opgen-{os.getpid()}-0.tmp"
    left.mkdir()
    (left / ".a.h.1-1.tmp").write_bytes(b"half")
    result = writer.write_files([(str(tmp_path), "a.h", b"a")])
    assert result.ok and (tmp_path / "a.h").read_bytes() == b"a"
    assert sorted(p.name for p in tmp_path.iterdir()) == [left.name, "a.h"]
    assert (left / ".a.h.1-1.tmp").read_bytes() == b"half"
