"""The per-item contributions kept across runs (codegen/contributions.py) never change what is written: over seeded
random edit sequences of native_functions.yaml (a tag added or removed, a kernel renamed, an entry added, deleted or
moved, a schema changed), generating with the memo of the runs before gives the same files, byte for byte, and the
same errors, as generating without it. Replay another sequence with OPGEN_FUZZ_SEED=<n>; a failure names the edits.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability.fuzz import env_seed

from opgen_lsp.cache.store import Cache
from opgen_lsp.codegen import runs
from opgen_lsp.codegen.contributions import Contributions, value_digest
from opgen_lsp.codegen.files.context import GenerateOptions
from opgen_lsp.codegen.generate import Memo, generate
from opgen_lsp.releases import DEFAULT

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "aten"
_ENTRY = re.compile(r"^- func:", re.M)
_KERNEL = re.compile(r"^    (\w+): (\w+)$", re.M)
_TAGS = ("pointwise", "core", "inplace_view", "view_copy", "nondeterministic_seeded")


def entries(text: str) -> tuple[str, list[str]]:
    """The text before the first entry, and each entry's text (to the next entry)."""
    starts = [m.start() for m in _ENTRY.finditer(text)]
    return text[:starts[0]], [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def _tag(rng: random.Random, entry: str) -> tuple[str, str]:
    found = re.search(r"\n  tags: ([^\n]*)", entry)
    tag = rng.choice(_TAGS)
    if found is None:
        body = entry.rstrip("\n")
        return body + f"\n  tags: {tag}\n" + entry[len(body) + 1:], f"tagged {tag}"
    if rng.random() < 0.5:
        return entry[:found.start()] + entry[found.end():], "removed its tags"
    listed = found[1].strip("[]")
    return entry[:found.start()] + f"\n  tags: [{listed}, {tag}]" + entry[found.end():], f"added tag {tag}"


def _kernel(rng: random.Random, entry: str) -> tuple[str, str]:
    found = list(_KERNEL.finditer(entry))
    if not found:
        return entry, "no kernel to rename"
    m = rng.choice(found)
    return entry[:m.start()] + f"    {m[1]}: {m[2]}_renamed" + entry[m.end():], f"renamed its {m[1]} kernel"


def _schema(rng: random.Random, entry: str) -> tuple[str, str]:
    if rng.random() < 0.5:
        return entry.replace(") -> ", ", int extra_arg=0) -> ", 1), "added an argument"
    return re.sub(r"\bTensor self\b", "Tensor input", entry, count=1), "renamed self"


def edit(rng: random.Random, text: str) -> tuple[str, str]:
    """One random edit of the file and what it was."""
    head, items = entries(text)
    i = rng.randrange(len(items))
    name = items[i].split("(", 1)[0][len("- func: "):]
    kind = rng.choice(("tag", "kernel", "schema", "delete", "move", "add"))
    if kind == "delete":
        del items[i]
        what = "deleted"
    elif kind == "move":
        j = rng.randrange(len(items))
        items.insert(j, items.pop(i))
        what = f"moved to {j}"
    elif kind == "add":
        items.insert(i + 1, items[i].replace(f"- func: {name}", f"- func: {name.split('.')[0]}_added{i}", 1))
        what = "copied under a new name"
    else:
        change: Callable[[random.Random, str], tuple[str, str]] = {"tag": _tag, "kernel": _kernel,
                                                                   "schema": _schema}[kind]
        items[i], what = change(rng, items[i])
    return head + "".join(items), f"{name}: {what}"


def outputs(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(source: Path, out: Path, per_operator: bool, memo: Memo | None, processes: int = 1) -> tuple[tuple, dict]:
    options = GenerateOptions(source_path=str(source), install_dir=str(out / "aten"),
                              aoti_install_dir=str(out / "aoti"), headeronly_install_dir=str(out / "headeronly"),
                              per_operator_headers=per_operator, release=DEFAULT)
    result = generate(options, implemented_only=True, processes=processes, memo=memo)
    errors = tuple(e.replace(str(out), "OUT") for e in result.errors)
    return errors, outputs(out)


def copy_source(aten: Path, into: Path) -> Path:
    (into / "native").mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copy(aten / "native" / name, into / "native" / name)
    (into / "templates").symlink_to(aten / "templates")
    return into


def compare_over_edits(source: Path, tmp: Path, per_operator: bool, steps: int, seed: int,
                       processes: int = 1) -> int:
    """Generate with the memo and without after each of `steps` random edits; the number of runs that wrote."""
    rng = random.Random(seed)
    native = source / "native" / "native_functions.yaml"
    cache = Cache(str(tmp / "cache"))
    memo = Memo(cache, "the constants of this test", lambda: True)
    done: list[str] = []
    generated = 0
    last_valid = native.read_text(encoding="utf-8")
    for step in range(steps + 1):
        if step:
            text, what = edit(rng, last_valid)
            native.write_text(text, encoding="utf-8")
            done.append(what)
        # a fresh output folder each time for the plain run; the memo's run writes over its last output
        with_memo = run(source, tmp / "with_memo", per_operator, memo, processes)
        shutil.rmtree(tmp / "without", ignore_errors=True)
        without = run(source, tmp / "without", per_operator, None)
        assert with_memo[0] == without[0], f"seed {seed}, edits {done}"
        if not without[0]:
            differ = [name for name in with_memo[1].keys() | without[1].keys()
                      if with_memo[1].get(name) != without[1].get(name)]
            assert not differ, f"seed {seed}, edits {done}: {sorted(differ)[:10]}"
            generated += 1
            last_valid = native.read_text(encoding="utf-8")
        else:  # an edit the generator refuses (both alike): the next edits start from the last valid file
            done[-1] += " (refused, undone)"
    return generated


@pytest.mark.slow  # (about 3 s)
def test_samples_with_and_without_the_memo_agree(tmp_path: Path) -> None:
    source = tmp_path / "source"  # (the samples' templates have no per-operator files)
    shutil.copytree(SAMPLES, source, ignore=shutil.ignore_patterns("aoti"))
    assert compare_over_edits(source, tmp_path, False, 16, env_seed()) > 3


@pytest.mark.slow
@pytest.mark.conformance
@pytest.mark.parametrize("per_operator", [False, True], ids=["plain", "per-operator"])
def test_real_file_with_and_without_the_memo_agree(aten: Path, tmp_path: Path, per_operator: bool) -> None:
    source = copy_source(aten, tmp_path / "source")
    # two processes in the per-operator layout: each keeps the families it built
    assert compare_over_edits(source, tmp_path, per_operator, 5, env_seed() + per_operator,
                              processes=2 if per_operator else 1) > 1


def _samples(tmp: Path) -> Path:
    source = tmp / "source"
    shutil.copytree(SAMPLES, source, ignore=shutil.ignore_patterns("aoti"))
    return source


def _rename_a_kernel(source: Path, n: int) -> None:
    native = source / "native" / "native_functions.yaml"
    text = native.read_text(encoding="utf-8")
    m = [m for m in _KERNEL.finditer(text) if m[1] != "MPS"][n]  # (MPS: not generated without --mps)
    native.write_text(text[:m.start()] + f"    {m[1]}: {m[2]}_renamed" + text[m.end():], encoding="utf-8")


@pytest.mark.parametrize("first_processes", [1, 2])
def test_after_an_edit_only_the_changed_files_are_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        first_processes: int) -> None:
    """The files the edit leaves as they were are kept by their recorded keys (neither rendered nor written), and
    the run computes the contributions of the edited entry's items alone. A first run in two processes records the
    files each process built and read back."""
    source = _samples(tmp_path)
    memo = Memo(Cache(str(tmp_path / "cache")), "constants", lambda: True)
    # (files written within runs.RACY_NS of their record are not recorded: this run's are all that young)
    monkeypatch.setattr(runs, "RACY_NS", 0)
    options = GenerateOptions(source_path=str(source), install_dir=str(tmp_path / "out"),
                              aoti_install_dir=str(tmp_path / "out" / "aoti"), release=DEFAULT)
    computed: list[int] = []
    real = Contributions.save
    monkeypatch.setattr(Contributions, "save", lambda self: (computed.append(self.computed), real(self))[1])
    first = generate(options, implemented_only=True, processes=first_processes, memo=memo)
    assert first.written is not None and not first.errors and not first.kept
    assert len(first.verified) == len(first.written.written)  # every file read back, by the process that built it
    _rename_a_kernel(source, 0)
    every_digest: list[str] = []  # (a family's digests read whole: its orders were not kept, or moved far)
    whole = Contributions.digests
    monkeypatch.setattr(Contributions, "digests", lambda self, family, *args: (every_digest.append(family),
                                                                               whole(self, family, *args))[1])
    second = generate(options, implemented_only=True, processes=1, memo=memo)
    assert every_digest == []  # every file's key from the orders the first run kept, in one process or two
    assert second.written is not None and not second.errors
    total = len(second.written.written) + len(second.written.unchanged)
    assert 0 < len(second.written.written) <= 3 and len(second.kept) >= total - 6
    if first_processes == 1:  # (with two, each process keeps what it computed: this one's count is half the work)
        assert 0 < computed[1] < 100 < 20 * computed[1] < computed[0]  # one entry's items, in each family


def test_a_cache_that_cannot_be_written_still_serves(tmp_path: Path) -> None:
    """A cache whose writes fail (a read-only folder) after an edit: what it holds is read, nothing is stored, and
    the files are those of a run without it."""
    source = _samples(tmp_path)
    memo = Memo(Cache(str(tmp_path / "cache")), "constants", lambda: True)
    run(source, tmp_path / "with_memo", False, memo)
    _rename_a_kernel(source, 1)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Cache, "put", lambda self, key, payload: False)
        with_memo = run(source, tmp_path / "with_memo", False, memo)
        assert with_memo == run(source, tmp_path / "without", False, None)
        assert with_memo == run(source, tmp_path / "with_memo", False, memo)  # (and again: nothing was stored)


def test_two_processes_after_an_edit_share_the_cache(tmp_path: Path) -> None:
    """Two generate processes at once after an edit, each into its own folder, one cache (the recent contributions
    and the file keys written by both): each writes what a run without the cache writes, and so does the next."""
    source = _samples(tmp_path)
    memo = Memo(Cache(str(tmp_path / "cache")), "constants", lambda: True)
    run(source, tmp_path / "a", False, memo)
    run(source, tmp_path / "b", False, memo)
    _rename_a_kernel(source, 2)
    pids = []
    for name in ("a", "b"):
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                errors, _ = run(source, tmp_path / name, False, Memo(Cache(str(tmp_path / "cache")), "constants",
                                                                   lambda: True))
                code = 1 if errors else 0
            finally:
                os._exit(code)
        pids.append(pid)
    assert all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in pids)
    plain = run(source, tmp_path / "plain", False, None)
    assert run(source, tmp_path / "a", False, memo) == plain
    assert outputs(tmp_path / "b") == plain[1]
    _rename_a_kernel(source, 3)
    assert run(source, tmp_path / "b", False, memo) == run(source, tmp_path / "plain", False, None)


class _ByName:
    """Fingerprints of plain strings (each its own bytes), for Contributions alone."""

    def all_of(self, items: list[str]) -> list[bytes]:
        return [item.encode() for item in items]

    def of(self, item: str) -> bytes:
        return item.encode()


def _upper_noting(computed: list[str]) -> Callable[[str], str]:
    """str.upper, noting in `computed` each item it is called with."""
    def compute(item: str) -> str:
        computed.append(item)
        return item.upper()
    return compute


def test_values_computed_for_digests_survive_a_whole_family_write(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A family whose values a run only digested (its files' keys) is written whole when the recent entry is full:
    the values computed in that run are kept with it, not recomputed by the next run."""
    monkeypatch.setattr(Contributions, "RECENT_LIMIT", 1)
    cache = Cache(str(tmp_path / "cache"))
    computed: list[str] = []
    compute = _upper_noting(computed)
    first = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
    digests = first.digests("family", ["a", "b"], compute)
    first.save()
    assert computed == ["a", "b"]
    again = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
    assert again.digests("family", ["a", "b"], compute) == digests
    assert computed == ["a", "b"]  # nothing computed again
    assert again.many("family", ["a", "b"], compute) == ["A", "B"] and computed == ["a", "b"]


def test_a_family_written_at_a_unit_end_is_let_go_and_kept_whole(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A family with RECENT_LIMIT values computed is written whole when its unit of work is done and let go; used
    again in the same run, it is loaded back with every value the run used, so that the next run computes none of
    them. With a cache that takes no writes, it stays in memory to the end."""
    monkeypatch.setattr(Contributions, "RECENT_LIMIT", 2)
    cache = Cache(str(tmp_path / "cache"))
    computed: list[str] = []
    compute = _upper_noting(computed)
    first = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
    assert first.many("big", ["a", "b", "c"], compute) == ["A", "B", "C"]
    assert first.many("small", ["x"], compute) == ["X"]
    first.unit_done()
    assert "big" not in first._stored and "big" not in first._new  # let go
    assert "small" in first._new  # (fewer than RECENT_LIMIT: left to save)
    assert first.digests("big", ["c", "b"], compute) == [value_digest("C"), value_digest("B")]  # (not computed)
    assert first.many("big", ["d", "e", "a"], compute) == ["D", "E", "A"]
    first.unit_done()  # (used again after it was let go: kept to the end)
    assert "big" in first._stored
    first.save()  # (over RECENT_LIMIT: each family written whole, with the values the run used)
    assert computed == ["a", "b", "c", "x", "d", "e"]
    again = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
    assert again.many("big", ["a", "b", "c", "d", "e"], compute) == ["A", "B", "C", "D", "E"]
    assert again.many("small", ["x"], compute) == ["X"]
    assert computed == ["a", "b", "c", "x", "d", "e"]  # nothing computed again
    read_only = Contributions(Cache(str(tmp_path / "other")), "constants", _ByName())  # type: ignore[arg-type]
    monkeypatch.setattr(Cache, "put", lambda self, key, payload: False)
    read_only.many("big", ["f", "g"], compute)
    read_only.unit_done()
    assert read_only.many("big", ["f", "g"], compute) == ["F", "G"]
    assert computed.count("f") == 1  # (held, not computed again)


def _fresh_blob(items: list[str]) -> bytes:
    return b"".join(value_digest(item.upper()) for item in items)


@pytest.mark.parametrize("seed", range(6))
def test_ordered_digests_over_random_edits_are_the_digests_of_every_item(tmp_path: Path, seed: int) -> None:
    """Run after run, the same family's items edited at a few places, added or removed: the digests taken from the
    orders (the last run's, but at the places that differ) are each item's own, and only the items at those places
    are computed."""
    rng = random.Random(seed)
    cache = Cache(str(tmp_path / "cache"))
    items = [f"item{i}" for i in range(300)]
    computed: list[str] = []
    compute = _upper_noting(computed)
    changed, kind = len(items), -1
    for step in range(12):
        del computed[:]
        memo = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
        blob = memo.digests_blob("family", items, compute, "file")
        assert blob == _fresh_blob(items), f"seed {seed}, step {step}"
        if kind == 0:  # items replaced in place: from the orders alone (no family's digests loaded)
            assert not memo._digests, f"seed {seed}, step {step}"
        assert memo.digests_blob("family", items[:50], compute, "other") == _fresh_blob(items[:50])  # (another use)
        memo.save()
        memo.orders.save()
        assert len(computed) <= changed + 50, f"seed {seed}, step {step}"
        kind = rng.randrange(3)
        changed = rng.randint(1, 4)
        for _ in range(changed):
            at = rng.randrange(len(items))
            if kind == 0:
                items[at] = f"edited{rng.randrange(10**6)}"
            elif kind == 1:
                items.insert(at, f"new{rng.randrange(10**6)}")
            else:
                del items[at]


def test_ordered_digests_from_an_entry_this_code_did_not_write(tmp_path: Path) -> None:
    """An orders entry that is not what Orders writes (another shape, digests of another length) is as none: every
    item is digested, as without it."""
    import marshal

    from opgen_lsp.codegen.orders import _differences

    cache = Cache(str(tmp_path / "cache"))
    items = [f"item{i}" for i in range(40)]
    first = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
    first.digests_blob("family", items, str.upper, "file")
    first.orders.save()
    key = first.orders._key
    for payload in (b"garbage", marshal.dumps(({}, {"family\0file": (b"x", b"y")})), marshal.dumps([1, 2]),
                    marshal.dumps(({b"x": [b"item0"]}, {"family\0file": (b"x", b"short")})),
                    marshal.dumps(({}, {"other\0use": ([1], b"")}))):  # (an unhashable list id: kept out)
        assert cache.put(key, payload)
        memo = Contributions(cache, "constants", _ByName())  # type: ignore[arg-type]
        assert memo.digests_blob("family", items, str.upper, "file") == _fresh_blob(items)
        memo.orders.save()  # (written again with this run's; the foreign uses are not kept)
    assert _differences([b"a", b"b", b"c"], [b"a", b"x", b"c"], 4) == [(1, 2, 2)]
    assert _differences([b"a", b"b", b"c"], [b"a", b"b", b"x", b"c"], 4) == [(2, 2, 3)]
    assert _differences([b"a", b"b", b"c"], [b"c"], 4) == [(0, 2, 0)]
    assert _differences([b"a"] * 10, [b"b"] * 10, 4) is None


# Edits of the real file that each change one of the files keyed by their items' contributions (files/aoti.py
# shim_keys, the parts of schema.py, backend_select.py, names.py and functionalization.py): the entry's text before
# and after, a file the edit must change, and the keyed files it may rebuild unchanged (a shim file's key is of its
# ops' entries and their delegates' entries, whatever of them changed).
_KEYED_EDITS = (
    # avg_pool2d delegates to avg_pool2d.out: its CPU shim follows the out= entry's CPU kernel (another item's)
    ("    CPU: avg_pool2d_out_cpu\n    CUDA: avg_pool2d_out_cuda\n", "    CUDA: avg_pool2d_out_cuda\n",
     "aoti/c_shim_cpu.cpp", {"aoti/c_shim_cuda.cpp"}),
    ("relu_sparse_csr\n  tags: [core, pointwise]\n", "relu_sparse_csr\n  tags: [core, pointwise, nondeterministic_seeded]\n",
     "aten/RegisterSchema.cpp", set()),
    ("- func: bartlett_window(int window_length, *,", "- func: bartlett_window(int window_length_edited, *,",
     "aten/RegisterBackendSelect.cpp", set()),
    ("  dispatch:\n    CompositeExplicitAutograd: diagonal\n  tags: core\n", "  tags: core\n",  # (now composite)
     "aten/ViewMetaClasses.cpp", set()),
)
_KEYED = frozenset({"aoti/c_shim_cpu.cpp", "aoti/c_shim_cuda.cpp", "aoti/c_shim_aten.cpp", "aten/RegisterSchema.cpp",
                    "aten/RegisterBackendSelect.cpp", "aten/core/aten_interned_strings.h", "aten/FunctionalInverses.h",
                    "aten/ViewMetaClasses.h", "aten/ViewMetaClasses.cpp"})


@pytest.mark.slow  # (about 15 s)
@pytest.mark.conformance
def test_files_keyed_by_their_items_follow_each_edit(aten: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each edit that changes a file keyed by its items' contributions rebuilds it (another item's entry included,
    for the AOTI shims), as a run without the memo writes it; the keyed files an edit leaves alone are kept by
    their keys, unbuilt."""
    monkeypatch.setattr(runs, "RACY_NS", 0)  # (else this run's young files are not recorded, and all are built)
    source = copy_source(aten, tmp_path / "source")
    native = source / "native" / "native_functions.yaml"
    memo = Memo(Cache(str(tmp_path / "cache")), "constants", lambda: True)
    out = tmp_path / "out"
    options = GenerateOptions(source_path=str(source), install_dir=str(out / "aten"),
                              aoti_install_dir=str(out / "aoti"), headeronly_install_dir=str(out / "headeronly"),
                              release=DEFAULT)
    first = generate(options, implemented_only=True, processes=1, memo=memo)
    assert first.written is not None and not first.errors
    assert _KEYED <= {os.path.relpath(p, out) for p in first.written.written}
    for before, after, changed, rebuilt in _KEYED_EDITS:
        text = native.read_text(encoding="utf-8")
        assert text.count(before) == 1, before
        native.write_text(text.replace(before, after), encoding="utf-8")
        result = generate(options, implemented_only=True, processes=1, memo=memo)
        assert result.written is not None and not result.errors
        written = {os.path.relpath(p, out) for p in result.written.written}
        kept = {os.path.relpath(p, out) for p in result.kept}
        assert changed in written, (changed, sorted(written))
        assert _KEYED - written - rebuilt <= kept, sorted(_KEYED - written - rebuilt - kept)  # (kept by their keys)
        assert outputs(out) == run(source, tmp_path / "without", False, None)[1], after
        shutil.rmtree(tmp_path / "without")
