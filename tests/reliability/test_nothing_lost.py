"""Nothing lost: generation is atomic under SIGKILL and never writes outside its folder; YAML is
read with safe loaders only; a huge or binary file gets one clear diagnostic at once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp.analysis.check import check_paths
from opgen_lsp.codegen import writer
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import DEFAULT

from . import fuzz

SEED = fuzz.env_seed()
OPGEN = [sys.executable, "-m", "opgen_lsp.cli"]


# ---------------------------------------------------------------- SIGKILL during generation

def _generate_command(source: Path, out: Path) -> list[str]:
    return [*OPGEN, "generate", "-s", str(source), "-d", str(out / "aten"), "--headeronly-install-dir",
            str(out / "headeronly"), "--aoti-install-dir", str(out / "aoti"), "--implemented-only"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, inputs) -> tuple[Path, dict[str, bytes]]:
    """A complete generation of the real file (the 'new' content)."""
    source = fuzz.aten_native().parent  # type: ignore[union-attr]
    out = tmp_path_factory.mktemp("reference")
    subprocess.run(_generate_command(source, out), check=True, capture_output=True, timeout=300)
    return source, files_under(out)


def _is_temp(name: str) -> bool:
    base = os.path.basename(name)
    return base.startswith(".") and base.endswith(".tmp")


def _previous_output(out: Path, new: dict[str, bytes]) -> dict[str, bytes]:
    """A complete previous output: every file present, each with other bytes than the new ones."""
    old = {}
    for name, data in new.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        old[name] = data + b"// from the previous generation\n"
        path.write_bytes(old[name])
    return old


def _kill_during_writes(command: list[str], out: Path, old: dict[str, bytes], rng: random.Random) -> float:
    """Start the generator, wait until it starts replacing files (or a random moment), SIGKILL it."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    at_random = rng.random() < 0.2
    deadline = started + (rng.uniform(0.5, 12) if at_random else 120)
    names = sorted(old)
    try:
        while process.poll() is None and time.perf_counter() < deadline:
            if not at_random and any((out / n).stat().st_size != len(old[n]) for n in names):
                time.sleep(rng.uniform(0, 0.1))  # writing has begun: kill somewhere in the write phase
                break
            time.sleep(0.002)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait()
    return time.perf_counter() - started


@pytest.mark.slow
def test_sigkill_leaves_every_file_old_or_new(tmp_path: Path, reference):
    source, new = reference
    rng = random.Random(SEED)
    out = tmp_path / "out"
    old = _previous_output(out, new)
    command = _generate_command(source, out)
    mixed = 0
    for round_ in range(2):
        _kill_during_writes(command, out, old, rng)
        found = files_under(out)
        for name in new:
            assert found[name] in (old[name], new[name]), f"round {round_}: {name} is neither old nor new"
        extra = [n for n in found if n not in new]
        assert all(_is_temp(n) for n in extra), extra  # only the killed writer's temporary files
        replaced = sum(found[n] == new[n] for n in new)
        mixed += 0 < replaced < len(new)
        print(f"round {round_}: {replaced}/{len(new)} files replaced, {len(extra)} temporary files left")
        for name in new:  # back to the previous output for the next round
            (out / name).write_bytes(old[name])
    assert mixed >= 1  # at least one kill landed in the middle of the writes
    # A run to the end replaces everything.
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    found = files_under(out)
    assert all(found[n] == new[n] for n in new)


# ---------------------------------------------------------------- writes stay inside the output folder

def test_writer_refuses_paths_that_leave_the_folder(tmp_path: Path):
    root = tmp_path / "out"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    (outside / "victim.h").write_bytes(b"precious")
    (root / "file_link.h").symlink_to(outside / "victim.h")
    bad = ["../escape.h", "a/../../escape.h", str(outside / "abs.h"), "link/through_symlink.h", "file_link.h", ".",
           "", "a/.."]
    result = writer.write_files([(str(root), path, b"x") for path in bad])
    assert len(result.errors) == len(bad) and not result.written
    assert sorted(p.name for p in outside.iterdir()) == ["victim.h"]
    assert (outside / "victim.h").read_bytes() == b"precious"
    assert not (tmp_path / "escape.h").exists()
    ok = writer.write_files([(str(root), "sub/fine.h", b"x"), (str(root), "sub/../also_fine.h", b"y")])
    assert ok.ok and (root / "sub" / "fine.h").read_bytes() == b"x" and (root / "also_fine.h").read_bytes() == b"y"


def test_writer_refuses_each_bad_path_alone(tmp_path: Path):
    root = tmp_path / "out"
    root.mkdir()
    for path in ["..", "../x", "/etc/passwd", "//x", "x/../../y"]:
        assert writer.resolve_inside(str(root), path) is None, path


def test_a_file_replaced_atomically_is_never_partial_when_the_write_fails(tmp_path: Path):
    target = tmp_path / "f.h"
    target.write_bytes(b"old")

    def failing(folder: int, name: str, data: bytes) -> None:
        fd = os.open(name + ".partial", os.O_WRONLY | os.O_CREAT, 0o666, dir_fd=folder)
        os.write(fd, data[:1])
        os.close(fd)
        raise OSError(28, "No space left on device")

    result = writer.write_files([(str(tmp_path), "f.h", b"new content")], write=failing)
    assert result.errors and target.read_bytes() == b"old"


# ---------------------------------------------------------------- safe loaders only

def _payloads(marker: Path) -> list[str]:
    command = f"touch {marker}"
    return [f"!!python/object/apply:os.system ['{command}']", f"!!python/object/apply:subprocess.call [['touch', '{marker}']]",
            "!!python/name:os.system", "!!python/object:os.stat_result {}",
            f"!!python/object/new:subprocess.Popen [['touch', '{marker}']]"]


def test_unsafe_tags_are_diagnostics_and_never_run(tmp_path: Path, inputs):
    marker = tmp_path / "EXECUTED"
    for payload in _payloads(marker):
        native = f"- func: f(Tensor self) -> Tensor\n  python_module: {payload}\n"
        codes = [d.code for d in NativeParser(release=DEFAULT).parse(native, inputs.tags.names).diagnostics]
        assert "OPG005" in codes, (payload, codes)
        assert "OPG005" in [d.code for d in TagsParser().parse(f"- tag: {payload}\n  desc: x\n").diagnostics]
        backend = f"backend: XLA\ncpp_namespace: {payload}\nsupported:\n- abs\n"
        assert "OPG005" in [d.code for d in check_backend(backend, inputs.native).diagnostics]
        whole = f"- func: f(Tensor self) -> Tensor\n  dispatch: {payload}\n"
        assert "OPG005" in [d.code for d in NativeParser(release=DEFAULT).parse(whole, inputs.tags.names).diagnostics]
    assert not marker.exists()


def test_opgen_check_and_generate_never_run_yaml_tags(tmp_path: Path, inputs):
    marker = tmp_path / "EXECUTED"
    source = tmp_path / "ATen"
    (source / "native").mkdir(parents=True)
    (source / "templates").symlink_to(fuzz.aten_native().parent / "templates")  # type: ignore[union-attr]
    (source / "native" / "tags.yaml").write_text(
        (fuzz.aten_native() / "tags.yaml").read_text(encoding="utf-8"), encoding="utf-8")  # type: ignore[operator]
    native = source / "native" / "native_functions.yaml"
    native.write_text(f"- func: f(Tensor self) -> Tensor\n  variants: {_payloads(marker)[0]}\n", encoding="utf-8")
    check = subprocess.run([*OPGEN, "check", str(native)], capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and "OPG005" in check.stdout
    generate = subprocess.run(_generate_command(source, tmp_path / "out"), capture_output=True, text=True, timeout=120)
    assert generate.returncode != 0
    assert not marker.exists()


# ---------------------------------------------------------------- huge and binary files

HUGE_CHARS = 100 * 1024 * 1024


@pytest.mark.slow
def test_a_huge_file_gets_one_diagnostic_quickly(tmp_path: Path, inputs):
    entry = "- func: f(Tensor self) -> Tensor\n"
    text = entry * (HUGE_CHARS // len(entry) + 1)
    for name in ("native_functions.yaml", "tags.yaml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        started = time.perf_counter()
        result = subprocess.run([*OPGEN, "check", str(path)], capture_output=True, text=True, timeout=120)
        assert time.perf_counter() - started < 30
        assert result.returncode == 1 and result.stdout.count("OPG006") == 1, result.stdout[-500:]
        path.unlink()
    started = time.perf_counter()
    [d] = check_backend("backend: XLA\nsupported:\n" + "- abs\n" * (HUGE_CHARS // 6), inputs.native).diagnostics
    assert d.code == "OPG006" and time.perf_counter() - started < 5
    workspace = Workspace()
    workspace.open("file:///w/native_functions.yaml", "/w/native_functions.yaml", text, 1)
    started = time.perf_counter()
    analysis = workspace.analyse("file:///w/native_functions.yaml")
    assert [d.code for d in analysis.diagnostics if d.code != "OPG900"] == ["OPG006"]  # type: ignore[union-attr]
    assert time.perf_counter() - started < 5


def test_a_binary_file_gets_one_diagnostic(tmp_path: Path, inputs):
    rng = random.Random(SEED)
    binary = bytes(rng.randrange(256) for _ in range(200_000))
    path = tmp_path / "native_functions.yaml"
    path.write_bytes(binary)
    result = check_paths([str(path)])
    assert [i.diagnostic.code for i in result.items] == ["OPG006"]
    # Text that decodes but is binary (NUL bytes): one diagnostic, on the line of the first NUL.
    text = "- func: f(Tensor self) -> Tensor\n" + "\x00\x01\x02" * 1000
    for parse in (lambda t: NativeParser(release=DEFAULT).parse(t, inputs.tags.names).diagnostics,
                  lambda t: TagsParser().parse(t).diagnostics,
                  lambda t: check_backend(t, inputs.native).diagnostics):
        [d] = parse(text)
        assert d.code == "OPG006" and d.span.start_line == 1
