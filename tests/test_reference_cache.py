"""The reference cache (tests/reference.py), on a stand-in torchgen package: a changed byte of an input or of a
torchgen file makes it miss, and a hit writes what a real run writes, byte for byte, in another folder."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import reference
from file_trees import assert_same_files

# The stand-in: reads -s's native.yaml, writes -d (a header holding its own absolute path and a nested file) and
# -o (an outputs list of absolute paths, as --output-dependencies writes), prints paths, fails on "bad".
STAND_IN = '''\
import os, sys
from pathlib import Path

args = sys.argv[1:]
source, out, deps = (Path(args[args.index(flag) + 1]) for flag in ("-s", "-d", "-o"))
with open(Path(__file__).resolve().parent.parent / "runs.log", "a") as log:
    log.write("ran\\n")
text = (source / "native.yaml").read_text()
(out / "sub").mkdir(parents=True, exist_ok=True)
(out / "Ops.h").write_text(f"// generated into {os.path.abspath(out)}\\n{text}")
(out / "sub" / "ops.cpp").write_text("int x;\\n")
deps.write_text("".join(f"{os.path.abspath(p)}\\n" for p in (out / "Ops.h", out / "sub" / "ops.cpp")))
print("wrote", os.path.abspath(out / "Ops.h"))
print("read", os.path.abspath(source / "native.yaml"), file=sys.stderr)
sys.exit(1 if "bad" in text else 0)
'''


def stand_in(folder: Path, tweak: str = "") -> Path:
    """A release-like folder holding torchgen/ (the stand-in gen.py); returns the folder for PYTHONPATH."""
    (folder / "torchgen").mkdir(parents=True)
    (folder / "torchgen" / "__init__.py").write_text("")
    (folder / "torchgen" / "gen.py").write_text(STAND_IN + tweak)
    return folder


def runs(torchgen_root: Path) -> int:
    log = torchgen_root / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def job(folder: Path, torchgen_root: Path, native: str = "- func: abs(Tensor self) -> Tensor\n"):
    """One run in `folder` (its own input, outputs and cwd): the result, the output folder's files, the list."""
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "native.yaml").write_text(native)
    done = reference.run(["-m", "torchgen.gen", "-s", folder / "src", "-d", "out/aten", "-o", folder / "deps.txt"],
                         cwd=folder, outputs=[Path("out"), folder / "deps.txt"], pythonpath=[torchgen_root])
    out = folder / "out"
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return done, files, (folder / "deps.txt").read_bytes()


@pytest.fixture(autouse=True)
def entries(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "entries"
    monkeypatch.setenv("OPGEN_REFERENCE_CACHE", str(folder))
    return folder


def _in(folder: Path, text: bytes | str) -> bool:
    return (str(folder).encode() if isinstance(text, bytes) else str(folder)) in text


def test_a_hit_writes_what_a_real_run_writes_in_another_folder(tmp_path: Path, monkeypatch) -> None:
    torchgen = stand_in(tmp_path / "release")
    first = job(tmp_path / "a", torchgen)
    assert runs(torchgen) == 1 and first[0].returncode == 0
    hit = job(tmp_path / "b", torchgen)
    assert runs(torchgen) == 1, "the same torchgen on the same bytes ran again"
    monkeypatch.setenv("OPGEN_REFERENCE_CACHE", "off")
    real = job(tmp_path / "c", torchgen)
    assert runs(torchgen) == 2
    # The hit in b is what a real run in b writes: c's bytes with c's paths written as b's.
    def as_in_b(data: bytes) -> bytes:
        return data.replace(str(tmp_path / "c").encode(), str(tmp_path / "b").encode())
    _, hit_files, hit_deps = hit
    assert hit_files == {name: as_in_b(data) for name, data in real[1].items()}
    assert hit_deps == as_in_b(real[2]) and _in(tmp_path / "b", hit_deps) and not _in(tmp_path / "a", hit_deps)
    assert _in(tmp_path / "b", hit_files["aten/Ops.h"]) and hit_files["aten/sub/ops.cpp"] == b"int x;\n"
    assert (hit[0].returncode, hit[0].stdout, hit[0].stderr) == (
        real[0].returncode, as_in_b(real[0].stdout.encode()).decode(), as_in_b(real[0].stderr.encode()).decode())
    assert _in(tmp_path / "b", hit[0].stdout) and _in(tmp_path / "b", hit[0].stderr)


def test_a_changed_byte_of_an_input_misses(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    job(tmp_path / "a", torchgen, "- func: abs(Tensor self) -> Tensor\n")
    _, files, _ = job(tmp_path / "b", torchgen, "- func: abs(Tensor self) -> Tensor \n")
    assert runs(torchgen) == 2 and files["aten/Ops.h"].endswith(b"Tensor \n")
    done, _, _ = job(tmp_path / "c", torchgen, "- func: bad(Tensor self) -> Tensor\n")
    assert runs(torchgen) == 3 and done.returncode == 1
    done, _, _ = job(tmp_path / "d", torchgen, "- func: bad(Tensor self) -> Tensor\n")
    assert runs(torchgen) == 3 and done.returncode == 1, "a failure is a result too"


def test_a_changed_byte_of_a_torchgen_file_misses(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    job(tmp_path / "a", torchgen)
    copy = tmp_path / "copy"
    shutil.copytree(torchgen / "torchgen", copy / "torchgen")
    job(tmp_path / "b", copy)
    assert runs(copy) == 0, "the same bytes in another folder are the same torchgen"
    changed = stand_in(tmp_path / "changed", tweak="#")
    job(tmp_path / "c", changed)
    assert runs(changed) == 1
    another = tmp_path / "another"
    shutil.copytree(torchgen / "torchgen", another / "torchgen")
    (another / "torchgen" / "util.py").write_text("")  # a file more
    job(tmp_path / "d", another)
    assert runs(another) == 1


def test_a_flag_or_an_environment_variable_misses(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    folder = tmp_path / "a"
    job(folder, torchgen)
    argv = ["-m", "torchgen.gen", "-s", folder / "src", "-d", "out/aten", "-o", folder / "deps.txt"]
    reference.run([*argv, "--per-operator-headers"], cwd=folder, outputs=[Path("out")], pythonpath=[torchgen])
    assert runs(torchgen) == 2
    reference.run(argv, cwd=folder, outputs=[Path("out")], pythonpath=[torchgen], env={"PYTHONHASHSEED": "3"})
    assert runs(torchgen) == 3


def test_a_damaged_entry_runs_again(tmp_path: Path, entries: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    _, files, _ = job(tmp_path / "a", torchgen)
    stored = next(p for p in entries.rglob("Ops.h"))
    stored.write_bytes(stored.read_bytes()[:-3])  # a run killed while writing, or a bad disk
    again = job(tmp_path / "b", torchgen)
    assert runs(torchgen) == 2 and again[1]["aten/Ops.h"] == files["aten/Ops.h"].replace(b"/a/", b"/b/")
    job(tmp_path / "c", torchgen)
    assert runs(torchgen) == 2, "the damaged entry was replaced by the new run's"
    assert not list(entries.rglob(".staging-*")), "a staging folder was left behind"


def test_opgen_is_never_cached(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="never cached"):
        reference.run(["-m", "opgen_lsp.cli", "check", "x.yaml"], cwd=tmp_path)


def test_a_test_that_writes_into_a_replayed_file_does_not_change_the_entry(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    job(tmp_path / "a", torchgen)
    job(tmp_path / "b", torchgen)
    replayed = tmp_path / "b" / "out" / "aten" / "sub" / "ops.cpp"
    with open(replayed, "a") as f:  # in place, as a careless test might
        f.write("int y;\n")
    _, files, _ = job(tmp_path / "c", torchgen)
    assert files["aten/sub/ops.cpp"] == b"int x;\n" and runs(torchgen) == 1  # a small entry is copied into place


def test_a_write_into_a_linked_file_drops_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "LINKED_FROM", 1)  # every entry linked, as a per-operator tree is
    torchgen = stand_in(tmp_path / "release")
    job(tmp_path / "a", torchgen)
    job(tmp_path / "b", torchgen)
    replayed = tmp_path / "b" / "out" / "aten" / "sub" / "ops.cpp"
    with open(replayed, "a") as f:
        f.write("int y;\n")
    _, files, _ = job(tmp_path / "c", torchgen)
    assert files["aten/sub/ops.cpp"] == b"int x;\n" and runs(torchgen) == 2


def digests_job(folder: Path, torchgen_root: Path) -> reference.Outputs:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "native.yaml").write_text("- func: abs(Tensor self) -> Tensor\n")
    return reference.run_digests(["-m", "torchgen.gen", "-s", folder / "src", "-d", "out/aten", "-o",
                                  folder / "deps.txt"], cwd=folder, outputs=[Path("out"), Path("deps.txt")],
                                 pythonpath=[torchgen_root])


def test_digests_on_a_hit_are_those_of_the_files_a_real_run_writes(tmp_path: Path, monkeypatch) -> None:
    torchgen = stand_in(tmp_path / "release")
    first = digests_job(tmp_path / "a", torchgen)  # a miss: run, stored, digested on disk
    hit = digests_job(tmp_path / "b", torchgen)
    assert runs(torchgen) == 1
    assert not (tmp_path / "b" / "out").exists(), "a hit writes no file"
    monkeypatch.setenv("OPGEN_REFERENCE_CACHE", "off")
    real = digests_job(tmp_path / "b2", torchgen)
    assert runs(torchgen) == 2
    assert sorted(hit.files) == sorted(first.files) == ["deps.txt", "out/aten/Ops.h", "out/aten/sub/ops.cpp"]
    for name, output in hit.files.items():
        data = output.read()
        assert hashlib.sha256(data).hexdigest() == output.digest
        # The paths inside (Ops.h's folder, the outputs list's) are b's, as a real run in b writes them.
        assert data == real.files[name].read().replace(str(tmp_path / "b2").encode(), str(tmp_path / "b").encode())
    assert hit.done.returncode == 0 and str(tmp_path / "b") in hit.done.stdout


def test_digests_of_a_stored_file_written_into_are_not_trusted(tmp_path: Path, entries: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    digests_job(tmp_path / "a", torchgen)
    stored = next(p for p in entries.rglob("ops.cpp"))
    stored.write_bytes(b"int y;\n")  # as a test writing into a hard-linked replayed file would
    again = digests_job(tmp_path / "b", torchgen)
    assert runs(torchgen) == 2, "the entry was trusted"
    assert again.files["out/aten/sub/ops.cpp"].read() == b"int x;\n"


def test_a_changed_byte_against_the_digests_fails_with_the_first_difference(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    digests_job(tmp_path / "a", torchgen)
    hit = digests_job(tmp_path / "b", torchgen)
    same = {name: output.read() for name, output in hit.files.items()}
    assert_same_files(hit.files, same)
    with pytest.raises(AssertionError, match=r"1 differ; out/aten/sub/ops.cpp: line 1"):
        assert_same_files(hit.files, {**same, "out/aten/sub/ops.cpp": b"int z;\n"})
    with pytest.raises(AssertionError, match="files opgen does not write"):
        assert_same_files(hit.files, {n: d for n, d in same.items() if n != "deps.txt"})
    with pytest.raises(AssertionError, match="files gen.py does not write"):
        assert_same_files(hit.files, {**same, "extra.h": b""})


# A batch driver (reference.run_json): reads every file of its job's folder through the stand-in torchgen's folder
# (where it logs its runs) and prints one verdict per file.
BATCH = '''\
import json, sys
from pathlib import Path
import torchgen

job_file = Path(sys.argv[1])
job = json.loads(job_file.read_text())
with open(Path(torchgen.__file__).resolve().parent.parent / "runs.log", "a") as log:
    log.write("ran\\n")
print(json.dumps({name: "bad" in (job_file.parent / name).read_text() for name in job["files"]}))
'''


def batch(folder: Path, torchgen_root: Path, script: Path, texts: dict[str, str]) -> dict[str, bool]:
    folder.mkdir(parents=True)
    for name, text in texts.items():
        (folder / name).write_text(text)
    return reference.run_json(script, {"files": sorted(texts)}, folder, pythonpath=[torchgen_root])


def test_a_changed_byte_of_a_batch_file_or_of_its_script_misses(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    script = tmp_path / "batch.py"
    script.write_text(BATCH)
    texts = {"a.yaml": "good\n", "b.yaml": "bad\n"}
    assert batch(tmp_path / "1", torchgen, script, texts) == {"a.yaml": False, "b.yaml": True}
    assert batch(tmp_path / "2", torchgen, script, texts) == {"a.yaml": False, "b.yaml": True}
    assert runs(torchgen) == 1, "the same batch in another folder ran again"
    assert batch(tmp_path / "3", torchgen, script, {**texts, "a.yaml": "good \n"}) == {"a.yaml": False, "b.yaml": True}
    assert runs(torchgen) == 2, "a changed byte of one file of the batch did not miss"
    assert batch(tmp_path / "4", torchgen, script, {**texts, "a.yaml": "bad\n"}) == {"a.yaml": True, "b.yaml": True}
    assert runs(torchgen) == 3
    script.write_text(BATCH + "#\n")
    batch(tmp_path / "5", torchgen, script, texts)
    assert runs(torchgen) == 4, "a changed byte of the batch's script did not miss"


def test_a_failed_batch_raises_with_its_stderr(tmp_path: Path) -> None:
    torchgen = stand_in(tmp_path / "release")
    script = tmp_path / "batch.py"
    script.write_text("import sys\nsys.exit('no job for me')\n")
    with pytest.raises(RuntimeError, match="no job for me"):
        reference.run_json(script, {}, tmp_path / "job", pythonpath=[torchgen])
