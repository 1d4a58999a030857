"""`opgen generate` with the persistent cache: a run with nothing changed is answered from the last run's record
(nothing rebuilt, nothing written), and whatever changed (an input, an output, the record itself) makes a full run
whose files are byte-identical with a run without the cache."""

from __future__ import annotations

import fnmatch
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp.cache.store import SUBFOLDER
from opgen_lsp.cli import main
from opgen_lsp.cli.generate import RECORDED
from opgen_lsp.codegen import generate as generate_module

SAMPLES_ATEN = Path(__file__).resolve().parents[2] / "samples" / "aten"
SELECTION = Path(__file__).resolve().parents[1] / "conformance" / "data" / "selection.yaml"


def source_tree(root: Path) -> Path:
    """A copy of samples/aten to edit."""
    aten = root / "src"
    shutil.copytree(SAMPLES_ATEN, aten)
    return aten


def argv(aten: Path, out: Path, cache: Path | None, *extra: str) -> list[str]:
    tail = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    return ["generate", "-s", str(aten), "-d", str(out / "aten"), "--aoti-install-dir", str(out / "aoti"),
            "-o", str(out / "deps.cmake"), "-j", "1", *extra, *tail]


def stamps(out: Path) -> dict[str, tuple[int, int, int]]:
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_ctime_ns)
            for p in out.rglob("*") if p.is_file()}


def test_nothing_changed_is_answered_from_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    assert main(argv(aten, out, cache)) == 0
    before, files = stamps(out), files_under(out)
    capsys.readouterr()
    monkeypatch.setattr(generate_module, "generate", lambda *a, **k: pytest.fail("the generator ran"))
    assert main(argv(aten, out, cache)) == 0
    assert stamps(out) == before and files_under(out) == files  # not one file touched
    err = capsys.readouterr().err
    assert f"0 file(s) written, {sum(1 for f in files if not f.endswith('.cmake'))} unchanged" in err
    assert RECORDED in err


def test_the_record_is_found_by_another_process(tmp_path: Path) -> None:
    """The key is the same in every process (a set's order follows the per-process string hash: not in the key)."""
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    errs = []
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-m", "opgen_lsp.cli", *argv(aten, out, cache)], capture_output=True,
                             text=True, env={**env, "PYTHONHASHSEED": seed}, timeout=120)
        assert run.returncode == 0, run.stderr
        errs.append(run.stderr)
    assert RECORDED not in errs[0] and RECORDED in errs[1]


def test_an_output_changed_or_deleted_is_written_again(tmp_path: Path) -> None:
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    assert main(argv(aten, out, cache)) == 0
    files = files_under(out)
    edited = out / "aten" / "Functions.h"
    data = bytearray(edited.read_bytes())
    data[10] ^= 1  # the same size, and the same mtime put back: only the ctime says it changed
    info = edited.stat()
    edited.write_bytes(bytes(data))
    os.utime(edited, ns=(info.st_atime_ns, info.st_mtime_ns))
    (out / "aten" / "core" / "TensorBody.h").unlink()
    (out / "cuda_deps.cmake").write_text("garbage")
    assert main(argv(aten, out, cache)) == 0
    assert files_under(out) == files


def test_an_output_changed_during_the_run_is_not_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed after the run wrote it and before its record was made is not taken for the run's: the next
    run is a full one, and puts the file's bytes back."""
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    real = generate_module.generate
    victim = out / "aten" / "Functions.h"

    def then_edited(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        victim.write_bytes(victim.read_bytes().replace(b"#pragma once", b"#pragma twice", 1))
        return result
    monkeypatch.setattr(generate_module, "generate", then_edited)
    assert main(argv(aten, out, cache)) == 0
    assert b"#pragma twice" in victim.read_bytes()
    monkeypatch.setattr(generate_module, "generate", real)
    assert main(argv(aten, out, cache)) == 0
    assert b"#pragma twice" not in victim.read_bytes()
    assert _same_but_paths(out, _plain_run(aten, tmp_path / "plain"))


def test_an_input_edited_and_put_back_during_the_run_is_not_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """native_functions.yaml is A before the run and after it, but B while the generator reads it: the outputs are
    B's, so the run must not be recorded as A's (the next run is a full one, and writes A's files)."""
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    native = aten / "native" / "native_functions.yaml"
    original = native.read_bytes()
    real = generate_module.generate

    def edited_meanwhile(*args: object, **kwargs: object) -> object:
        native.write_bytes(original + b"\n- func: added_meanwhile(Tensor self) -> Tensor\n  variants: function\n")
        try:
            return real(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            native.write_bytes(original)
    monkeypatch.setattr(generate_module, "generate", edited_meanwhile)
    assert main(argv(aten, out, cache)) == 0
    assert b"added_meanwhile" in (out / "aten" / "Functions.h").read_bytes()
    monkeypatch.setattr(generate_module, "generate", real)
    capsys.readouterr()
    assert main(argv(aten, out, cache)) == 0
    assert RECORDED not in capsys.readouterr().err
    assert _same_but_paths(out, _plain_run(aten, tmp_path / "plain"))


def _plain_run(aten: Path, out: Path) -> Path:
    assert main(argv(aten, out, None)) == 0
    return out


@pytest.mark.parametrize("change", ["native", "tags", "template edited", "template added", "aoti header"])
def test_an_input_changed_is_a_full_run(tmp_path: Path, change: str, capsys: pytest.CaptureFixture[str]) -> None:
    aten, out, cache, plain = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache", tmp_path / "plain"
    assert main(argv(aten, out, cache)) == 0
    native = aten / "native" / "native_functions.yaml"
    if change == "native":
        native.write_text(native.read_text().replace("variants: method\n", "variants: function, method\n", 1))
    elif change == "tags":
        with open(aten / "native" / "tags.yaml", "a", encoding="utf-8") as f:
            f.write("- tag: a_new_tag\n  desc: added\n")
    elif change == "template edited":
        with open(aten / "templates" / "Functions.h", "a", encoding="utf-8") as f:
            f.write("// edited\n")
    elif change == "template added":
        (aten / "templates" / "Unused.h").write_text("// a template no file uses\n")
    else:  # a checked-in AOTI header where there was none: gen.py's ABI check now compares with it
        for folder in (out, plain):
            (folder / "aoti").mkdir(parents=True, exist_ok=True)
            (folder / "aoti" / "c_shim_cpu.h").write_text("// not what gen.py would write\n")
    code = main(argv(aten, out, cache))
    assert code == main(argv(aten, plain, None))
    if change == "aoti header":
        assert code == 1
        return
    assert code == 0
    assert _same_but_paths(out, plain)


def _same_but_paths(a: Path, b: Path) -> bool:
    """The two trees hold the same files, the -o lists naming their own folder."""
    fa, fb = files_under(a), files_under(b)
    return fa.keys() == fb.keys() and all(fa[k].replace(str(a).encode(), b"@") == fb[k].replace(str(b).encode(), b"@")
                                          for k in fa)


@pytest.mark.parametrize("change", ["selection yaml", "fallback_ops.py", "flag", "memory budget"])
def test_what_else_shapes_the_output_is_a_miss(tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Each of these is a full run, whose files are those of a run without the cache: the selection yaml edited,
    the fallback ops file edited (where the ATen folder's aoti/ holds it, as a release's tree does), a flag that
    shapes the output given where the record is of a run without it, OPGEN_MEMORY_BUDGET_MB set."""
    aten, out, cache, plain = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache", tmp_path / "plain"
    selection = tmp_path / "selection.yaml"
    selection.write_text(SELECTION.read_text())
    extra = ["--op-selection-yaml-path", str(selection)] if change == "selection yaml" else []
    assert main(argv(aten, out, cache, *extra)) == 0
    assert main(argv(aten, out, cache, *extra)) == 0
    assert RECORDED in capsys.readouterr().err  # the record is there, and used when nothing changed
    if change == "selection yaml":
        selection.write_text(selection.read_text().replace("  aten::mul:\n", "  aten::mul.Tensor:\n", 1))
    elif change == "fallback_ops.py":
        fallback = aten / "aoti" / "fallback_ops.py"
        fallback.write_text(fallback.read_text() + "# edited\n")
    elif change == "flag":
        extra = ["--skip-dispatcher-op-registration"]
    else:
        monkeypatch.setenv("OPGEN_MEMORY_BUDGET_MB", "4096")
    assert main(argv(aten, out, cache, *extra)) == 0
    assert RECORDED not in capsys.readouterr().err
    assert main(argv(aten, plain, None, *extra)) == 0
    assert _same_but_paths(out, plain)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "symlink"])
def test_a_damaged_record_is_a_full_run(tmp_path: Path, damage: str) -> None:
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    """Every entry damaged: the run record, the file record and the contributions (codegen/contributions.py)."""
    assert main(argv(aten, out, cache)) == 0
    files = files_under(out)
    for i, record in enumerate(sorted((cache / SUBFOLDER).iterdir())):
        if damage == "truncated":
            record.write_bytes(record.read_bytes()[:100])
        elif damage == "garbage":
            record.write_bytes(os.urandom(record.stat().st_size))
        else:
            elsewhere = tmp_path / f"elsewhere{i}"
            shutil.copy(record, elsewhere)
            record.unlink()
            record.symlink_to(elsewhere)
    (out / "aten" / "Functions.h").unlink()  # a full run puts it back; the record, if trusted, would not
    assert main(argv(aten, out, cache)) == 0
    assert files_under(out) == files


def test_a_read_only_cache_is_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aten, out = source_tree(tmp_path), tmp_path / "out"
    blocker = tmp_path / "a file"
    blocker.write_text("")
    assert main(argv(aten, out, blocker / "cache")) == 0
    err = capsys.readouterr().err
    assert err.count("opgen: note: cache folder") == 1 and "running without the cache" in err


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_with_and_without_the_cache_over_random_edits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A seeded sequence of edits (an entry's variants, a tag, a template, an output touched or deleted, no change
    at all): after each, the run with the cache leaves exactly the files of the run without it, and is answered
    from the record exactly when nothing changed (a cache that never hits, or always does, fails)."""
    aten, cached, plain, cache = source_tree(tmp_path), tmp_path / "cached", tmp_path / "plain", tmp_path / "cache"
    native = aten / "native" / "native_functions.yaml"
    rng = random.Random(32)
    hits = 0
    for step in range(10):  # every third step changes nothing: it must be answered from the record
        what = "nothing" if step % 3 == 2 else rng.choice(["entry", "template", "output", "delete", "nothing"])
        if what == "entry":
            lines = native.read_text().splitlines(keepends=True)
            spots = [i for i, line in enumerate(lines) if line.startswith("  variants: ")]
            i = rng.choice(spots)
            lines[i] = "  variants: function\n" if "method" in lines[i] else "  variants: function, method\n"
            native.write_text("".join(lines))
        elif what == "template":
            with open(aten / "templates" / "Functions.h", "a", encoding="utf-8") as f:
                f.write(f"// step {step}\n")
        elif what in ("output", "delete") and (cached / "aten").exists():
            victim = rng.choice(sorted(p for p in (cached / "aten").rglob("*") if p.is_file()))
            if what == "delete":
                victim.unlink()
            else:
                victim.write_bytes(victim.read_bytes() + b" ")
        capsys.readouterr()
        assert main(argv(aten, cached, cache)) == 0, what
        hit = RECORDED in capsys.readouterr().err
        assert hit == (what == "nothing" and step > 0), (step, what)
        hits += hit
        assert main(argv(aten, plain, None)) == 0, what
        assert _same_but_paths(cached, plain), (step, what)
    assert hits >= 3


def test_cache_info_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    assert main(argv(aten, out, cache)) == 0
    entries = list((cache / SUBFOLDER).iterdir())  # the run record, the files' keys, the per-item contributions
    size = sum(p.stat().st_size for p in entries)
    (cache / SUBFOLDER / "the user's file").write_text("kept")
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0
    assert capsys.readouterr().out == f"{cache / SUBFOLDER}: {len(entries)} entries, {size / 1e6:.1f} MB (at most " \
                                      "500 MB); 1 other name(s) left alone\n"
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    assert f"removed {len(entries)} cache entries" in capsys.readouterr().out
    assert [p.name for p in (cache / SUBFOLDER).iterdir()] == ["the user's file"]


@pytest.mark.slow
def test_with_and_without_the_cache_over_random_edits_of_the_real_file(tmp_path: Path, aten: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The same on torchgen's native_functions.yaml: a kernel renamed in a random entry's dispatch table, an output
    touched, nothing changed (answered from the record), the edit undone."""
    src = tmp_path / "src"
    shutil.copytree(aten, src)
    native = src / "native" / "native_functions.yaml"
    original = native.read_text(encoding="utf-8")
    cached, plain, cache = tmp_path / "cached", tmp_path / "plain", tmp_path / "cache"
    rng = random.Random(3214)
    for step, what in enumerate(["entry", "nothing", "output", "entry", "undo"]):
        if what == "entry":
            lines = native.read_text(encoding="utf-8").splitlines(keepends=True)
            spots = [i for i, line in enumerate(lines) if line.startswith("    CPU: ") and "," not in line]
            i = rng.choice(spots)
            lines[i] = lines[i].rstrip("\n") + f"_edited{step}\n"
            native.write_text("".join(lines), encoding="utf-8")
        elif what == "output":
            victim = rng.choice(sorted(p for p in (cached / "aten").rglob("*") if p.is_file()))
            victim.write_bytes(victim.read_bytes() + b" ")
        elif what == "undo":
            native.write_text(original, encoding="utf-8")
        capsys.readouterr()
        assert main(argv(src, cached, cache, "--implemented-only", "-j", "2")) == 0, what
        assert (RECORDED in capsys.readouterr().err) == (what == "nothing"), (step, what)
        assert main(argv(src, plain, None, "--implemented-only", "-j", "2")) == 0, what
        assert _same_but_paths(cached, plain), (step, what)


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_two_runs_at_once_share_the_cache(tmp_path: Path) -> None:
    """Two `opgen generate` processes at once, into one output folder and one cache: both succeed, and the next run is
    answered from a record that holds what a run without the cache writes."""
    aten, out, cache = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    command = [sys.executable, "-m", "opgen_lsp.cli", *argv(aten, out, cache)]
    both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(2)]
    for p in both:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and RECORDED in again.stderr, again.stderr
    assert _same_but_paths(out, _plain_run(aten, tmp_path / "plain"))


def test_a_deleted_current_folder_runs_without_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The run key holds the current folder (relative paths are read from it): when it was deleted, the run is done
    without the cache, with a note, not a traceback."""
    aten, out, cache, gone = source_tree(tmp_path), tmp_path / "out", tmp_path / "cache", tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert main(argv(aten, out, cache)) == 0
    assert "the current folder no longer exists: running without the cache" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert _same_but_paths(out, _plain_run(aten, tmp_path / "plain"))


@pytest.mark.parametrize("action", ["info", "clear"])
def test_cache_info_and_clear_of_a_folder_not_there_make_nothing(tmp_path: Path, action: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped --cache-dir is reported, not made."""
    typo = tmp_path / "cahce"
    assert main(["cache", action, "--cache-dir", str(typo)]) == 0
    assert not typo.exists()
    assert f"opgen: no cache at {typo / SUBFOLDER}" in capsys.readouterr().err


# Run in a child (an audit hook cannot be removed): `opgen generate ARGS` with every "open" during generate()
# noted, then what inputs_read says of the same options and what the run wrote, as JSON in $AUDIT_OUT.
AUDIT = """
import json, os, sys
from opgen_lsp.cli import main
from opgen_lsp.codegen import generate as g
import opgen_lsp.syntax.libyaml, yaml.dumper  # (code generate loads on first use: loading code reads no input)
opened, active, seen = [], [], {}
def hook(event, args):
    if active and event == "open":
        opened.append([args[0] if isinstance(args[0], (str, int)) else os.fsdecode(args[0]), args[2]])
sys.addaudithook(hook)
real = g.generate
def audited(options, **kwargs):
    active.append(1)
    try:
        seen["result"] = real(options, **kwargs)
    finally:
        active.clear()
    seen["options"] = options
    return seen["result"]
g.generate = audited
code = main(sys.argv[1:])
r = seen["result"]
with open(os.environ["AUDIT_OUT"], "w") as f:
    json.dump({"code": code, "opened": opened, "inputs": g.inputs_read(seen["options"]),
               "outputs": [*r.written.written, *r.written.unchanged, *(p for p, _ in r.lists)]}, f)
"""


def _opened_outside_the_inputs(tmp_path: Path, args: list[str]) -> tuple[int, list[object], int]:
    """(exit status, what generate() opened that is no output and no input inputs_read names, number of opens)."""
    report = tmp_path / f"audit{len(list(tmp_path.glob('audit*')))}.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), "AUDIT_OUT": str(report)}
    run = subprocess.run([sys.executable, "-c", AUDIT, *args], capture_output=True, text=True, env=env, timeout=600,
                         cwd=tmp_path)
    assert run.returncode == 0 and report.exists(), run.stderr[-3000:]
    found = json.loads(report.read_text())
    outputs = {os.path.abspath(os.path.join(tmp_path, p)) for p in found["outputs"]}
    folders = {f for p in outputs for f in _ancestors(p)}
    inputs = {os.path.normpath(os.path.join(tmp_path, path)) for kind, path in found["inputs"] if kind == "file"}
    input_folders = {os.path.normpath(os.path.join(tmp_path, path)) for kind, path in found["inputs"]
                     if kind != "file"}
    names = {os.path.basename(p) for p in outputs | folders}  # opened relative to a folder's handle (dir_fd)
    outside = []
    for path, flags in found["opened"]:
        if isinstance(path, int) or flags & (os.O_WRONLY | os.O_RDWR | os.O_DIRECTORY):
            continue  # os.fdopen of a handle noted before; a file written (a temporary one); a folder's handle
        if "/" not in path and path in names:
            continue
        full = os.path.normpath(os.path.join(tmp_path, path))
        if full in outputs or full in inputs or (os.path.dirname(full) in input_folders
                                                 and fnmatch.fnmatchcase(os.path.basename(full), "c_shim_*.h")):
            continue
        outside.append(path)
    return found["code"], outside, len(found["opened"])


def _ancestors(path: str) -> list[str]:
    out = []
    while os.path.dirname(path) != path:
        path = os.path.dirname(path)
        out.append(path)
    return out


def test_inputs_read_names_every_file_generate_opens(tmp_path: Path) -> None:
    """A run record is only as good as its list of inputs: every file generate() opens over samples/aten (plain and
    with a selection yaml) is an output, a template or an input inputs_read names."""
    for extra in ([], ["--op-selection-yaml-path", str(SELECTION)]):
        out = tmp_path / f"out{len(extra)}"
        code, outside, opens = _opened_outside_the_inputs(tmp_path, argv(SAMPLES_ATEN, out, None, *extra))
        assert code == 0 and opens > 100 and outside == [], (extra, outside)


@pytest.mark.slow
def test_inputs_read_names_every_file_generate_opens_on_2_15(tmp_path: Path) -> None:
    """The same on torch 2.15's release tree, where gen.py reads the native-AOT declarations (torch/_native/ops/
    <op>/aot.py) and torchgen's fallback_ops.py, with a selection yaml, plain and per-operator."""
    from release_files import torchgen_release_tool

    folder = torchgen_release_tool().cached("2.15.0")
    if folder is None or not (folder / "torch" / "_native" / "ops").is_dir():
        pytest.skip("torch 2.15.0's release tree with torch/_native: python3 tools/torchgen_release.py 2.15.0")
    aten = folder / "torchgen" / "packaged" / "ATen"
    for layout in ([], ["--per-operator-headers"]):
        code, outside, opens = _opened_outside_the_inputs(
            tmp_path, argv(aten, tmp_path / f"out{len(layout)}", None, "--implemented-only", *layout,
                           "--op-selection-yaml-path", str(SELECTION)))
        assert code == 0 and opens > 100 and outside == [], (layout, outside)


def test_one_cache_root_and_what_clear_clears(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """generate's records, the kernel index and the torch releases share $XDG_CACHE_HOME/opgen; `opgen cache clear`
    removes the records and the kernel index's files there, says so, and keeps the releases and any other name."""
    from opgen_lsp.cache.store import default_folder
    from opgen_lsp.index.base_text import torchgen_cache_root
    from opgen_lsp.index.kernels import default_cache_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("OPGEN_CACHE_DIR")
    root = tmp_path / "xdg" / "opgen"
    assert default_folder() == str(root)
    assert default_cache_path([str(tmp_path)]).parent == root and Path(torchgen_cache_root()) == root / "torchgen"
    aten, out = source_tree(tmp_path), tmp_path / "out"
    assert main(argv(aten, out, None)[:-1]) == 0  # (without --no-cache: the default folder)
    kernels = default_cache_path([str(tmp_path)])
    kernels.write_text("{}")
    kept = [root / "kernels-mine.json", root / "torchgen" / "2.15.0" / ".complete"]
    for path in kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    elsewhere = tmp_path / "elsewhere"
    capsys.readouterr()
    assert main(["cache", "clear", "--cache-dir", str(elsewhere)]) == 0
    said = capsys.readouterr()
    assert "kernel index's files in" in said.out and "are kept" in said.out and kernels.exists()
    assert main(["cache", "clear"]) == 0
    said = capsys.readouterr()
    assert "cache entries (generate's run records and per-item pieces, check's verdicts)" in said.out
    assert f"removed 1 kernel index file(s) (kernels-*.json) from {root}" in said.out
    assert not kernels.exists() and all(path.exists() for path in kept)
    assert [p.name for p in (root / SUBFOLDER).iterdir()] == []
