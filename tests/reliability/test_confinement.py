"""Write confinement, the same for every writer: a file whose real path leaves its output folder (through a
symlinked core/, ops/, aoti/ or output file) is refused with a clear error, and then nothing at all is
written; an output folder that cannot be made or written is a one-line error, never a traceback."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp.cli import main
from opgen_lsp.codegen import job as generate_job

pytestmark = pytest.mark.slow  # (generate runs racing folder swaps: CI runs them; the not-slow loop does not)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES_ATEN = ROOT / "samples" / "aten"
MY_BACKEND = ROOT / "samples" / "my_backend" / "backend.yaml"
LAZY = "backend: XLA\ncpp_namespace: my_lazy\nfull_codegen:\n- relu\n"
SHAPES = ("#pragma once\nnamespace torch {\nnamespace lazy {\nTORCH_API std::vector<torch::lazy::Shape> "
          "compute_shape_relu(const at::Tensor & self);\n}\n}\n")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the output that must stay as it is: one precious file."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.h").write_bytes(b"precious")
    return folder


def _nothing_written(out: Path, outside: Path, before: dict[str, bytes]) -> None:
    assert files_under(outside) == {"precious.h": b"precious"}
    assert files_under(out) == before


def _generate(source: Path, out: Path, *extra: str) -> list[str]:
    return ["generate", "-s", str(source), "-d", str(out), "--aoti-install-dir", str(out / "aoti"),
            "--implemented-only", *extra]


@pytest.mark.parametrize("folder", ["core", "aoti"])
def test_generate_refuses_a_symlinked_output_subfolder(tmp_path: Path, outside: Path, folder: str, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / folder).symlink_to(outside, target_is_directory=True)
    assert main(_generate(SAMPLES_ATEN, out, "--update-aoti-c-shim")) == 1
    err = capsys.readouterr().err
    assert f"{out / folder}: refusing to write outside {out} (its real path is {outside}); nothing was written" \
        in err and "Traceback" not in err
    _nothing_written(out, outside, {})
    assert sorted(p.name for p in out.iterdir()) == [folder]  # not even gen.py's folders were made


def test_generate_refuses_a_symlinked_ops_folder_of_the_per_operator_layout(tmp_path: Path, outside: Path, aten,
                                                                            capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "ops").symlink_to(outside, target_is_directory=True)
    assert main(_generate(aten, out, "--per-operator-headers")) == 1
    err = capsys.readouterr().err
    assert f"{out / 'ops'}: refusing to write outside {out}" in err and err.count("refusing") == 1
    _nothing_written(out, outside, {})


def test_generate_refuses_a_symlinked_output_file_and_writes_nothing(tmp_path: Path, outside: Path, capsys):
    out = tmp_path / "out"
    (out / "core").mkdir(parents=True)
    (out / "core" / "TensorBody.h").symlink_to(outside / "precious.h")
    assert main(_generate(SAMPLES_ATEN, out)) == 1
    err = capsys.readouterr().err
    assert f"{out / 'core' / 'TensorBody.h'}: refusing to write outside {out}" in err
    assert files_under(outside) == {"precious.h": b"precious"}
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["core", "core/TensorBody.h"]


def test_a_symlinked_root_is_the_folder_the_user_chose(tmp_path: Path, outside: Path):
    """The output root itself may be a symlink: its real path is resolved once and written into."""
    (tmp_path / "out").symlink_to(outside, target_is_directory=True)
    assert main(_generate(SAMPLES_ATEN, tmp_path / "out", "--update-aoti-c-shim")) == 0
    assert (outside / "core" / "TensorBody.h").is_file()


def test_generate_backend_refuses_a_symlinked_output_file(tmp_path: Path, outside: Path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "PrivateUse1NativeFunctions.h").symlink_to(outside / "precious.h")
    assert main(["generate-backend", "-s", str(MY_BACKEND), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "PrivateUse1NativeFunctions.h: refusing to write outside" in err and "Traceback" not in err
    assert files_under(outside) == {"precious.h": b"precious"}
    assert [p.name for p in out.iterdir()] == ["PrivateUse1NativeFunctions.h"]  # RegisterPrivateUse1.cpp is not


def test_generate_lazy_refuses_a_symlinked_output_file(tmp_path: Path, outside: Path, aten, capsys):
    (tmp_path / "lazy.yaml").write_text(LAZY)
    (tmp_path / "shape_inference.h").write_text(SHAPES)
    out = tmp_path / "out"
    out.mkdir()
    (out / "LazyIr.h").symlink_to(outside / "precious.h")
    assert main(["generate-lazy", "-s", str(tmp_path / "lazy.yaml"), "-o", str(out), "--shape-inference-hdr",
                 str(tmp_path / "shape_inference.h")]) == 1
    err = capsys.readouterr().err
    assert "LazyIr.h: refusing to write outside" in err and "Traceback" not in err
    assert files_under(outside) == {"precious.h": b"precious"}
    assert [p.name for p in out.iterdir()] == ["LazyIr.h"]


def test_the_servers_generate_refuses_a_symlinked_core_folder(tmp_path: Path, outside: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "core").symlink_to(outside, target_is_directory=True)
    job = generate_job.NativeJob(str(SAMPLES_ATEN / "native" / "native_functions.yaml"), str(out))
    result = generate_job.run(job)
    assert result.errors == [f"{out / 'core'}: refusing to write outside {out} (its real path is {outside}); "
                             "nothing was written"] and not result.written
    _nothing_written(out, outside, {})


# ---------------------------------------------------------------- output folders that cannot be written

def test_an_output_folder_that_is_a_regular_file_is_one_line_each(tmp_path: Path, capsys):
    (tmp_path / "out").write_text("a file")
    assert main(_generate(SAMPLES_ATEN, tmp_path / "out")) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [*(f"opgen: {tmp_path / 'out' / sub}: cannot make the output folder: Not a directory"
                     for sub in ("core", "ops", "aoti")), "opgen: checked as torch 2.13 (default)"]
    assert main(["generate-backend", "-s", str(MY_BACKEND), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "RegisterPrivateUse1.cpp: Not a directory" in err and "Traceback" not in err


def _read_only(monkeypatch, folder: Path) -> None:
    """Make creating anything under folder fail as on a read-only file system (also when tests run as root)."""
    real_mkdir, real_open = os.mkdir, os.open

    def refuse(path) -> None:
        if str(path).startswith(str(folder)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    def full(path, kwargs) -> str:  # the writer names a file relative to its folder's handle
        folder_fd = kwargs.get("dir_fd")
        return os.path.join(os.readlink(f"/proc/self/fd/{folder_fd}"), path) if folder_fd is not None else str(path)

    def mkdir(path, *args, **kwargs):
        refuse(full(path, kwargs))
        return real_mkdir(path, *args, **kwargs)

    def open_(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            refuse(full(path, kwargs))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)


def test_a_read_only_output_folder_is_a_one_line_error(tmp_path: Path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    _read_only(monkeypatch, out)
    assert main(_generate(SAMPLES_ATEN, out / "aten")) == 1
    err = capsys.readouterr().err
    assert f"opgen: {out / 'aten' / 'core'}: cannot make the output folder: Read-only file system" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    for sub in ("core", "ops", "aoti"):  # the folders exist: the files cannot be created
        (out / "aten" / sub).mkdir(parents=True)
    _read_only(monkeypatch, out)
    assert main(_generate(SAMPLES_ATEN, out / "aten", "--update-aoti-c-shim")) == 1
    err = capsys.readouterr().err
    assert f"{out / 'aten' / 'core' / 'TensorBody.h'}: Read-only file system" in err and "Traceback" not in err
    assert main(["generate-backend", "-s", str(MY_BACKEND), "-o", str(out)]) == 1
    assert "RegisterPrivateUse1.cpp: Read-only file system" in capsys.readouterr().err


def test_a_fifo_where_an_output_file_goes_is_replaced_not_waited_on(tmp_path: Path, capsys):
    """Comparing with what is there (write only when changed) never blocks on a FIFO; it is replaced."""
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "RegisterPrivateUse1.cpp")
    assert main(["generate-backend", "-s", str(MY_BACKEND), "-o", str(out), "--dry-run"]) == 0
    assert f"{out / 'RegisterPrivateUse1.cpp'}: would be written" in capsys.readouterr().out
    assert main(["generate-backend", "-s", str(MY_BACKEND), "-o", str(out)]) == 0
    assert (out / "RegisterPrivateUse1.cpp").is_file()


# ---------------------------------------------------------------- a folder swapped for a symlink mid-run

def _swap_during_writes(monkeypatch, out: Path, folder: str, outside: Path) -> list[str]:
    """When the writer is about to put its first file in out/<folder> (its place already checked: the file made
    there, or renamed there from the writer's staging folder), another thread swaps that folder for a symlink to
    `outside` while the writer waits (issue 27: a writer that resolved the folder, then wrote through its path)."""
    real_open, real_replace = os.open, os.replace
    swapped: list[str] = []

    def swap() -> None:
        (out / folder).rename(out / f"{folder}.moved")
        (out / folder).symlink_to(outside, target_is_directory=True)
        swapped.append(folder)

    def swap_before(where: int | None, path) -> None:
        into = os.readlink(f"/proc/self/fd/{where}") if where is not None else os.path.dirname(os.fspath(path))
        if not swapped and into == str(out / folder):
            thread = threading.Thread(target=swap)
            thread.start()
            thread.join()

    def open_(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            swap_before(kwargs.get("dir_fd"), path)
        return real_open(path, flags, *args, **kwargs)

    def replace(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        swap_before(dst_dir_fd, dst)
        return real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setenv("OPGEN_PROCESSES", "1")
    return swapped


def test_a_folder_swapped_for_a_symlink_while_generate_writes_gets_nothing(tmp_path: Path, outside: Path, aten,
                                                                          monkeypatch, capsys):
    out = tmp_path / "out"
    swapped = _swap_during_writes(monkeypatch, out, "ops", outside)
    code = main(_generate(aten, out, "--per-operator-headers"))
    assert swapped == ["ops"]
    assert files_under(outside) == {"precious.h": b"precious"}
    err = capsys.readouterr().err
    assert code == 1 and "refusing to write through the symbolic link 'ops'" in err and "Traceback" not in err


def test_a_folder_swapped_for_a_symlink_while_the_server_generates_gets_nothing(tmp_path: Path, outside: Path,
                                                                               monkeypatch):
    out = tmp_path / "out"
    swapped = _swap_during_writes(monkeypatch, out, "core", outside)
    job = generate_job.NativeJob(str(SAMPLES_ATEN / "native" / "native_functions.yaml"), str(out))
    result = generate_job.run(job)
    assert swapped == ["core"]
    assert files_under(outside) == {"precious.h": b"precious"}
    assert result.errors and all("refusing to write through the symbolic link 'core'" in e for e in result.errors)
