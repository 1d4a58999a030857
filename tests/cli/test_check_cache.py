"""`opgen check` with its persistent memo (analysis/check_memo.py): the output (diagnostics, their order, the summary
line, stderr, the exit status, every --format) is the same with and without the cache, over seeded random edits of
the real native_functions.yaml and its tags.yaml, and under hostile conditions: damaged entries, entries of another
opgen, a read-only cache folder, two checks at once. Each test also shows that the cache is used (a file unchanged
is not parsed again), so that a cache that never hits cannot pass."""

from __future__ import annotations

import contextlib
import io
import marshal
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from native_edits import edit

from opgen_lsp.analysis import check as check_module
from opgen_lsp.analysis import check_edit, check_memo, shims
from opgen_lsp.cache import store
from opgen_lsp.cache.store import SUBFOLDER, Cache
from opgen_lsp.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "aten" / "native"
FORMATS = ("text", "json", "github", "sarif")

Outcome = tuple[int, str, str]  # exit status, stdout, stderr


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The native_functions.yaml files parsed since (a verdict not found in the memo), by path."""
    seen: list[str] = []
    computed = check_module._Run._native_verdict

    def counted(self: object, path: str, *args: object) -> object:
        seen.append(path)
        return computed(self, path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(check_module._Run, "_native_verdict", counted)
    return seen


@pytest.fixture
def edits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The native_functions.yaml files whose verdict the edit path gave (check_edit.py: no full parse), by path."""
    seen: list[str] = []
    computed = check_edit.edit_verdict

    def counted(path: str, *args: object) -> object:
        found = computed(path, *args)  # type: ignore[arg-type]
        if found is not None:
            seen.append(path)
        return found

    monkeypatch.setattr(check_edit, "edit_verdict", counted)
    return seen


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Outcome:
    capsys.readouterr()
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def tree(folder: Path, source: Path) -> Path:
    """A copy of source's native_functions.yaml and tags.yaml in folder; the copy's native_functions.yaml."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copyfile(source / name, folder / name)
    return folder / "native_functions.yaml"


def same_outputs(capsys: pytest.CaptureFixture[str], parses: list[str], edits: list[str], native: Path, cache: Path,
                 fmt: str, new: bool) -> tuple[Outcome, bool]:
    """Check native with the cache (twice) and without it: the three outcomes equal; the first cached run computes
    a verdict (a full parse, or the edit path) exactly when the pair of files is new (never checked before: an edit
    undone is found), the second never. Also whether the edit path gave the first run's verdict."""
    del parses[:], edits[:]
    cached = run(capsys, "--format", fmt, "--cache-dir", str(cache), str(native))
    assert len(parses) + len(edits) == int(new), fmt
    by_edit = bool(edits)
    again = run(capsys, "--format", fmt, "--cache-dir", str(cache), str(native))
    assert len(parses) + len(edits) == int(new)  # the second: answered from the memo
    plain = run(capsys, "--format", fmt, "--no-cache", str(native))
    assert cached == plain and again == plain
    return plain, by_edit


def random_edits(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str], parses: list[str],
                 edits: list[str], seed: int, steps: int) -> set[str]:
    """Seeded random edits, each compared with --no-cache (stdout, stderr, exit status). Every new text of
    native_functions.yaml beside an unchanged tags.yaml is answered by the edit path, not the full check (a full
    check writes the record the next edit reads); what it answered is in the result as "edit path: <kind>"."""
    native = tree(tmp_path / "native", source)
    tags_path = native.parent / "tags.yaml"
    cache = tmp_path / "cache"
    rng = random.Random(seed)
    history: list[tuple[str, str]] = []
    statuses, kinds = set(), set()
    checked: set[tuple[str, str]] = set()
    for step in range(steps):
        old_tags = tags_path.read_text(encoding="utf-8")
        text, tags = native.read_text(encoding="utf-8"), old_tags
        history.append((text, tags))
        what, text, tags = edit(rng, text, tags, history) if step else ("first", text, tags)
        native.write_text(text, encoding="utf-8")
        tags_path.write_text(tags, encoding="utf-8")
        fmt = FORMATS[step % len(FORMATS)] if step % 3 else "text"
        new = (text, tags) not in checked
        (code, _, _), by_edit = same_outputs(capsys, parses, edits, native, cache, fmt, new=new)
        if new and step and tags == old_tags:
            assert by_edit, f"step {step} ({what}): a full check, not the edit path"
        if by_edit:
            kinds.add(f"edit path: {what}")
        checked.add((text, tags))
        statuses.add(code)
        kinds.add(what)
    return {f"status {s}" for s in statuses} | kinds


def test_with_and_without_the_cache_over_random_edits_of_the_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    parses: list[str], edits: list[str]) -> None:
    seen = random_edits(tmp_path, SAMPLES, capsys, parses, edits, seed=4, steps=60)
    assert {"status 0", "status 1"} <= seen  # errors introduced, and fixed again
    assert {"bad tag", "bad schema", "remove", "duplicate", "swap", "tags.yaml", "undo"} <= seen
    # The edit path answered (exactly) edits that change groups, overloads, out= variants, view/view_copy pairs,
    # structured delegates, autogen, duplicate names, and errors introduced and fixed.
    assert {f"edit path: {kind}" for kind in ("schema", "bad schema", "duplicate", "remove", "swap", "overload",
                                              "drop out=", "delegate", "unstructure", "autogen", "view copy",
                                              "move")} <= seen, seen


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 5])
def test_the_edit_path_over_more_random_edits_of_the_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            parses: list[str], edits: list[str], seed: int) -> None:
    seen = random_edits(tmp_path, SAMPLES, capsys, parses, edits, seed=seed, steps=60)
    assert len([k for k in seen if k.startswith("edit path: ")]) >= 10, seen


@pytest.mark.slow
@pytest.mark.parametrize("seed", [32, 3232])
def test_with_and_without_the_cache_over_random_edits_of_the_real_file(tmp_path: Path, aten: Path, seed: int,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       parses: list[str], edits: list[str]) -> None:
    """torchgen's own native_functions.yaml and tags.yaml (2,600 entries), 20 random edits each."""
    seen = random_edits(tmp_path, aten / "native", capsys, parses, edits, seed=seed, steps=20)
    assert "status 1" in seen and len(seen) >= 6
    assert len([k for k in seen if k.startswith("edit path: ")]) >= 5, seen


def test_the_release_and_the_memory_budget_are_part_of_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               parses: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    native, cache = tree(tmp_path / "native", SAMPLES), str(tmp_path / "cache")
    for version in ("2.6", "2.13", "2.6"):
        assert run(capsys, "--torch-version", version, "--cache-dir", cache, str(native)) == \
            run(capsys, "--torch-version", version, "--no-cache", str(native))
    assert len(parses) == 2  # 2.6, 2.13; then 2.6 again from the memo
    tags_parsed: list[str] = []
    parse_tags = check_module._tags_verdict
    monkeypatch.setattr(check_module, "_tags_verdict", lambda text: tags_parsed.append(text) or parse_tags(text))
    monkeypatch.setenv("OPGEN_MEMORY_BUDGET_MB", "1")  # (a file over the budget is read in part: another verdict)
    del parses[:]
    assert run(capsys, "--torch-version", "2.6", "--cache-dir", cache, str(native))[0] == 0
    assert len(parses) == 1 and len(tags_parsed) == 1
    assert run(capsys, "--torch-version", "2.6", "--cache-dir", cache, str(native))[0] == 0
    assert len(parses) == 1 and len(tags_parsed) == 1


def test_kernels_and_a_backends_own_file_bypass_the_memo(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         parses: list[str]) -> None:
    native, cache = tree(tmp_path / "native", SAMPLES), str(tmp_path / "cache")
    (tmp_path / "cpp").mkdir()
    with_kernels = ("--kernels", str(tmp_path / "cpp"), str(native))
    assert run(capsys, "--cache-dir", cache, *with_kernels) == run(capsys, "--no-cache", *with_kernels)
    assert parses == [] and not list((tmp_path / "cache" / SUBFOLDER).glob("*"))


# ------------------------------------------------------------------------------------------------ hostile caches

def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / SUBFOLDER).iterdir() if len(p.name) == 64)


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    key = path.name
    if how == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif how == "emptied":
        path.write_bytes(b"")
    else:  # a payload that checks (magic, length, checksum) but is not a verdict this opgen writes
        payload = {"not marshal": b"\x00garbage", "wrong shape": marshal.dumps({"diagnostics": [["x"]], "extra": 3}),
                   "wrong severity": marshal.dumps({"diagnostics": [[[0, 0, 0, 1], 7, "OPG1", "m", []]], "extra": [],
                                                    "names": ["a"]}),
                   "not a dict": marshal.dumps([1, 2])}[how]
        path.write_bytes(store.encode(key, payload))


@pytest.mark.parametrize("how", ["truncated", "emptied", "not marshal", "wrong shape", "wrong severity", "not a dict"])
def test_a_damaged_entry_is_a_miss_and_rebuilt(tmp_path: Path, how: str, capsys: pytest.CaptureFixture[str],
                                               parses: list[str]) -> None:
    native, cache = tree(tmp_path / "native", SAMPLES), tmp_path / "cache"
    native.write_text(native.read_text() + "- func: broken(Tensr self) -> Tensor\n")  # an error to keep
    plain = run(capsys, "--no-cache", str(native))
    assert plain[0] == 1
    assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
    assert len(_entries(cache)) == 3  # the tags.yaml's verdict, the native_functions.yaml's and its edit record
    for path in _entries(cache):
        _damage(path, how)
    del parses[:]
    assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
    assert parses == [str(native)]
    assert run(capsys, "--cache-dir", str(cache), str(native)) == plain  # rebuilt: found again
    assert parses == [str(native)]


def test_an_entry_of_another_opgen_is_never_used(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries written by another opgen (another source digest), then made to say something else: that opgen reads
    what was planted, this one never does."""
    native, cache = tree(tmp_path / "native", SAMPLES), tmp_path / "cache"
    plain = run(capsys, "--no-cache", str(native))
    with monkeypatch.context() as m:
        m.setattr(store, "opgen_digest", lambda: "another opgen")
        assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
        planted = [[[0, 0, 0, 1], 1, "OPG999", "planted by another opgen", []]]
        for path in _entries(cache):
            found = marshal.loads(store.decode(path.name, path.read_bytes()) or b"")
            found = {**found, "diagnostics": planted}
            path.write_bytes(store.encode(path.name, marshal.dumps(found)))
        assert "planted by another opgen" in run(capsys, "--cache-dir", str(cache), str(native))[1]
    del parses[:]
    assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
    assert parses == [str(native)]


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _as_another_user(args: list[str], parses: list[str]) -> tuple[int, str, str, int]:
    """main(["check", *args]) in a forked child, as user nobody when this is root (whom modes do not stop):
    (status, stdout, stderr, files parsed)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            del parses[:]
            with _captured() as (out, err):
                code = main(["check", *args])
            os.write(write, marshal.dumps((code, out.getvalue(), err.getvalue(), len(parses))))
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    code, out, err, parsed = marshal.loads(data)
    return code, out, err, parsed


@pytest.mark.parametrize("warm", [True, False])
def test_a_read_only_cache_folder_is_read_and_not_written(warm: bool, capsys: pytest.CaptureFixture[str],
                                                          parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The child, user nobody, may not see the installed torchgen's fallback_ops.py (under root's home), which is
    # part of the key: neither run looks for one.
    for module in (check_memo, shims):
        monkeypatch.setattr(module, "fallback_ops_candidates", lambda source_path: [])
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        native = tree(base / "native", SAMPLES)
        native.write_text(native.read_text() + "- func: broken(Tensr self) -> Tensor\n")
        for path in (native.parent, native, native.parent / "tags.yaml"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        cache = base / "cache"
        plain = run(capsys, "--no-cache", str(native))
        Cache(str(cache)).close()  # the folder, empty
        if warm:
            assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
        before = _entries(cache)
        for path in before:
            path.chmod(0o444)
        (cache / SUBFOLDER).chmod(0o555)
        if os.geteuid() == 0:  # the child runs as nobody: the folder is its own (another user's is not trusted)
            os.chown(cache / SUBFOLDER, 65534, 65534)
        code, out, err, parsed = _as_another_user(["--cache-dir", str(cache), str(native)], parses)
        assert (code, out) == plain[:2]
        assert parsed == (0 if warm else 1)
        if warm:  # every verdict found: nothing to write, nothing to say
            assert err == plain[2]
        else:
            assert err.startswith(plain[2]) and err.count("opgen: note: cache folder") == 1
            assert "cannot be written" in err
        assert _entries(cache) == before
    finally:
        if (base / "cache" / SUBFOLDER).exists():
            (base / "cache" / SUBFOLDER).chmod(0o755)
        shutil.rmtree(base)


def test_two_checks_at_once_share_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            parses: list[str]) -> None:
    native, cache = tree(tmp_path / "native", SAMPLES), tmp_path / "cache"
    native.write_text(native.read_text() + "- func: broken(Tensr self) -> Tensor\n")
    plain = run(capsys, "--no-cache", str(native))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    command = [sys.executable, "-m", "opgen_lsp.cli", "check", "--cache-dir", str(cache), str(native)]
    both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(4)]
    for p in both:
        out, err = p.communicate(timeout=120)
        assert (p.returncode, out, err) == plain
    del parses[:]
    assert run(capsys, "--cache-dir", str(cache), str(native)) == plain
    assert parses == []
    assert len(_entries(cache)) == 3 and not [p for p in (cache / SUBFOLDER).iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------------------------------------ the edit path

def test_the_edit_path_declines_where_it_cannot_be_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         parses: list[str], edits: list[str]) -> None:
    """Ops of two namespaces under a release whose Register<Key>.cpp drops registrations at a change of namespace
    (before 2.7; a pass over the whole file): the full check answers. The same edits under 2.13: the edit path."""
    for version, by_edit in (("2.6", False), ("2.13", True)):
        native, cache = tree(tmp_path / version / "native", SAMPLES), str(tmp_path / version / "cache")
        text = native.read_text()
        native.write_text(text + "- func: custom::opgen_other(Tensor self) -> Tensor\n  variants: function\n")
        for n in range(2):
            native.write_text(native.read_text() + f"- func: opgen_more{n}(Tensor self) -> Tensor\n")
            del parses[:], edits[:]
            cached = run(capsys, "--torch-version", version, "--cache-dir", cache, str(native))
            assert cached == run(capsys, "--torch-version", version, "--no-cache", str(native))
            assert (len(edits), len(parses)) == ((1, 0) if by_edit and n else (0, 1)), (version, n)


def test_an_edit_past_the_memory_budget_is_checked_in_full(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          parses: list[str], edits: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The edit path counts the entries as the parser's quick count does (the record keeps each entry's cost): a file
    within the budget is answered by it, one the budget may stop reading (OPG007) by the full check."""
    from opgen_lsp.index import documents
    from opgen_lsp.syntax.entries import split_chunks

    native, cache = tree(tmp_path / "native", SAMPLES), str(tmp_path / "cache")
    text = native.read_text()
    entries = [c.text for c in split_chunks(text) if c.text.startswith("- ")]
    counted = sum(map(documents.entry_cost, entries)) + documents.PLACED_COST * len(entries)
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", counted + 20_000)  # (the env variable's value is keyed)
    run(capsys, "--cache-dir", cache, str(native))
    for n, more in enumerate((1, 40)):
        native.write_text(text + "".join(f"- func: opgen_grown{n}_{k}(Tensor self) -> Tensor\n" for k in range(more)))
        del parses[:], edits[:]
        cached = run(capsys, "--cache-dir", cache, str(native))
        assert cached == run(capsys, "--no-cache", str(native))
        assert (len(edits), len(parses)) == ((1, 0) if more == 1 else (0, 1)), more
    assert "OPG007" in cached[1]


def test_the_fallback_op_names_are_the_shim_checks() -> None:
    from opgen_lsp.index.native import NativeParser
    from opgen_lsp.releases import resolve

    resolved = resolve("2.13", "test")
    assert resolved is not None
    release = resolved.release
    native = NativeParser(release=release).parse((SAMPLES / "native_functions.yaml").read_text(), frozenset())
    functions = native.functions.native_functions
    assert functions and [check_edit._fallback_name(f) for f in functions] == list(map(shims.fallback_op_name,
                                                                                       functions))


# ------------------------------------------------------------------------------ edits found by an adversarial review

def _edited(tmp_path: Path, capsys: pytest.CaptureFixture[str], edits: list[str], before: str, after: str,
            *args: str) -> bool:
    """Check before with the cache, then after with it: after's output equals --no-cache's. Whether the edit path
    gave after's verdict."""
    native, cache = tree(tmp_path / "native", SAMPLES), str(tmp_path / "cache")
    native.write_text(before, encoding="utf-8", newline="")
    run(capsys, *args, "--cache-dir", cache, str(native))
    native.write_text(after, encoding="utf-8", newline="")
    del edits[:]
    cached = run(capsys, *args, "--cache-dir", cache, str(native))
    assert cached == run(capsys, *args, "--no-cache", str(native))
    return bool(edits)


def test_stray_text_after_an_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str], edits: list[str]) -> None:
    """Text that is no entry, put in by the edit: reported as the full check does (the edit path once crashed on it)."""
    text = (SAMPLES / "native_functions.yaml").read_text()
    assert _edited(tmp_path, capsys, edits, text, text + "oops: not an entry\n")


def test_a_fault_of_the_edit_path_is_said_and_the_full_check_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug of the edit path (not a damaged record) is no traceback: one note, and the full check's verdict."""
    def broken(*args: object) -> None:
        raise AttributeError("a bug")

    monkeypatch.setattr(check_edit, "edit_verdict", broken)
    text = (SAMPLES / "native_functions.yaml").read_text()
    native, cache = tree(tmp_path / "native", SAMPLES), str(tmp_path / "cache")
    native.write_text(text, encoding="utf-8", newline="")
    run(capsys, "--cache-dir", cache, str(native))
    native.write_text(text + "oops: not an entry\n", encoding="utf-8", newline="")
    code, out, err = run(capsys, "--cache-dir", cache, str(native))
    full = run(capsys, "--no-cache", str(native))
    assert (code, out) == full[:2] and code == 1
    assert err == full[2] + f"opgen: note: {native}: the cached re-check failed (AttributeError: a bug); checked in full\n"
