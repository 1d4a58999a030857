"""The persistent cache's store under hostile conditions: every damaged, foreign or planted entry is a miss (never
trusted), a folder it cannot write is read-only (one note), two processes write at once, and `clear` and eviction
touch only opgen's own names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from opgen_lsp.cache import store
from opgen_lsp.cache.store import SUBFOLDER, Cache

KEY = store.namespaced("test", "an entry")


def entries(folder: Path) -> Path:
    return folder / SUBFOLDER


def test_round_trip_and_a_miss(tmp_path: Path) -> None:
    with Cache(str(tmp_path)) as cache:
        assert cache.get(KEY) is None
        assert cache.put(KEY, b"payload")
        assert cache.get(KEY) == b"payload"
        assert cache.notes == []
    with Cache(str(tmp_path)) as again:  # another process's handle sees it
        assert again.get(KEY) == b"payload"


def test_a_truncated_entry_is_a_miss_and_is_rebuilt(tmp_path: Path) -> None:
    with Cache(str(tmp_path)) as cache:
        cache.put(KEY, b"x" * 1000)
        path = entries(tmp_path) / KEY
        whole = path.read_bytes()
        for cut in (0, 10, len(whole) - 1):
            path.write_bytes(whole[:cut])
            assert cache.get(KEY) is None
        assert cache.put(KEY, b"x" * 1000)
        assert cache.get(KEY) == b"x" * 1000


def test_a_corrupt_byte_is_a_miss(tmp_path: Path) -> None:
    with Cache(str(tmp_path)) as cache:
        cache.put(KEY, b"payload of some length")
        path = entries(tmp_path) / KEY
        data = bytearray(path.read_bytes())
        data[-3] ^= 1
        path.write_bytes(bytes(data))
        assert cache.get(KEY) is None


def test_an_entry_of_another_opgen_version_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another opgen (another source digest) writes the entry for the same inputs under its own key ...
    ours = store.namespaced("test", "an entry")
    monkeypatch.setattr(store, "opgen_digest", lambda: "another opgen's source digest")
    theirs = store.namespaced("test", "an entry")
    monkeypatch.undo()
    assert theirs != ours
    with Cache(str(tmp_path)) as cache:
        cache.put(theirs, b"their bytes")
        assert cache.get(ours) is None
        # ... and its file copied (or renamed) under our key does not check: the checksum covers the key.
        os.replace(entries(tmp_path) / theirs, entries(tmp_path) / ours)
        assert cache.get(ours) is None


def test_the_source_digest_follows_the_source(tmp_path: Path) -> None:
    """opgen's digest is of its source: a copy of the package with one byte changed has another."""
    package = Path(store.__file__).resolve().parent.parent
    code = "import opgen_lsp.cache.store as s; print(s.opgen_digest())"

    def digest_of(root: Path) -> str:
        env = {**os.environ, "PYTHONPATH": str(root)}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                              timeout=60).stdout.strip()

    copy = tmp_path / "copy" / "opgen_lsp"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = digest_of(copy.parent)
    assert before == store.opgen_digest()
    with open(copy / "frozen.py", "a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    assert digest_of(copy.parent) != before


def test_the_source_digest_is_kept_by_the_files_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest kept beside the bytecode is read while every file keeps its stats; an edit that puts the old size
    and modification time back still changes the change time, so the digest is computed again; files written in the
    last moments are not kept for."""
    package = tmp_path / "opgen_lsp"
    shutil.copytree(Path(store.__file__).resolve().parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "__pycache__").mkdir()
    computed: list[str] = []
    content_digest = store._content_digest

    def counted(*args: object) -> str:
        computed.append("digest")
        return content_digest(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_content_digest", counted)
    monkeypatch.setattr(store, "_SETTLED_NS", 10**18)  # every file just written: nothing is kept
    first = store.package_digest(str(package), "1")
    assert store.package_digest(str(package), "1") == first and len(computed) == 2
    assert not list((package / "__pycache__").iterdir())
    monkeypatch.setattr(store, "_SETTLED_NS", 0)
    assert store.package_digest(str(package), "1") == first and len(computed) == 3  # computed, then kept
    assert store.package_digest(str(package), "1") == first and len(computed) == 3  # read where it was kept
    assert store.package_digest(str(package), "2") != first  # (the version is part of it)
    edited = package / "frozen.py"
    before = edited.stat()
    data = edited.read_bytes()
    edited.write_bytes(data[:-1] + (b"#" if data[-1:] != b"#" else b" "))  # one byte, same size
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = store.package_digest(str(package), "1")
    assert again != first and again == content_digest(store._sources(str(package)), "1")
    assert len([p for p in (package / "__pycache__").iterdir() if p.name.startswith("opgen-source-digest.")]) == 1


def test_garbage_in_the_folder_is_ignored_and_kept(tmp_path: Path) -> None:
    with Cache(str(tmp_path)) as cache:
        folder = entries(tmp_path)
        (folder / "notes.txt").write_text("the user's")
        (folder / KEY).write_bytes(b"not an entry at all")
        (folder / ("0" * 64)).mkdir()  # a folder with an entry's name
        assert cache.get(KEY) is None
        assert cache.get("0" * 64) is None
        assert cache.get("../notes.txt") is None  # not a key: never opened
        assert cache.put(KEY, b"good")
        assert cache.get(KEY) == b"good"
        info = cache.info()
        assert (info.entries, info.other) == (1, 2)
        assert cache.clear() == 1
        assert (folder / "notes.txt").read_text() == "the user's"


def test_a_planted_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(store.encode(KEY, b"a valid entry, outside the cache"))
    with Cache(str(tmp_path / "cache")) as cache:
        link = entries(tmp_path / "cache") / KEY
        link.symlink_to(secret)
        assert cache.get(KEY) is None  # a valid entry, but reached through a link: not read
        assert cache.put(KEY, b"ours")  # replaces the link itself
        assert not link.is_symlink()
        assert secret.read_bytes() == store.encode(KEY, b"a valid entry, outside the cache")
        link.unlink()
        link.symlink_to(secret)
        cache.clear()  # removes the link, never its target
        assert not link.exists() and secret.exists()


def test_a_symbolic_link_as_the_entries_folder_turns_the_cache_off(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / SUBFOLDER).symlink_to(elsewhere)
    with Cache(str(tmp_path / "cache")) as cache:
        assert not cache.enabled
        assert not cache.put(KEY, b"x")
        assert len(cache.notes) == 1 and "running without the cache" in cache.notes[0]
    assert list(elsewhere.iterdir()) == []


def test_a_planted_huge_entry_is_a_miss_and_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file under a key larger than any entry opgen writes (8 GB, sparse) is a miss from its size: not a byte of
    it is read (os.read(fd, size + 1) asked for all of it at once)."""
    with Cache(str(tmp_path)) as cache:
        assert cache.put(KEY, b"real")
        with open(entries(tmp_path) / KEY, "r+b") as f:
            f.truncate(8 * 1024**3)
        monkeypatch.setattr(store.os, "read", lambda *a: pytest.fail("read a planted huge entry"))
        assert cache.get(KEY) is None
        monkeypatch.undo()
        assert not cache.put(KEY, b"x" * (cache.entry_limit + 1))  # what is not read is not written either
        assert cache.writable and not cache.notes


def test_an_entry_is_read_a_chunk_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    real = os.read

    def read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)
    with Cache(str(tmp_path)) as cache:
        payload = os.urandom(3 * 1024 * 1024)
        assert cache.put(KEY, payload)
        monkeypatch.setattr(store.os, "read", read)
        assert cache.get(KEY) == payload
    assert max(asked) <= 1 << 20 and len(asked) >= 4


def test_a_temporary_name_taken_by_another_process_is_tried_again(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two containers sharing the cache's volume can both have pid N at the same count: the name another made
    (pid-count, and the random part too) is left alone, and the entry is written under a new name."""
    import itertools

    with Cache(str(tmp_path)) as cache:
        monkeypatch.setattr(store, "_temp_count", itertools.repeat(5))
        tokens = iter(["a" * 16, "b" * 16])
        monkeypatch.setattr(store, "_random_part", lambda: next(tokens))
        theirs = [entries(tmp_path) / f".{KEY}.{os.getpid()}-5.tmp", entries(tmp_path) / f".{KEY}.{os.getpid()}-5-{'a' * 16}.tmp"]
        for path in theirs:
            path.write_bytes(b"another process's")
        assert cache.put(KEY, b"payload") and cache.writable and not cache.notes
        assert cache.get(KEY) == b"payload"
        assert all(path.read_bytes() == b"another process's" for path in theirs)


def read_only_run(folder: str) -> list[str]:
    """In a forked child (as user nobody when this is root, whom modes do not stop): whether the entry cached before
    is read, whether two puts store, and the notes."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            with Cache(folder) as cache:
                lines = [f"{cache.get(KEY) == b'cached before'} {cache.put('1' * 64, b'new')} "
                         f"{cache.put('2' * 64, b'new')}", *cache.notes]
            os.write(write, "\n".join(lines).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        out = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return out.splitlines()


def test_a_read_only_folder_is_read_not_written() -> None:
    """One note, the entries still read, nothing written, no error."""
    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        with Cache(str(base)) as cache:
            cache.put(KEY, b"cached before")
        (base / SUBFOLDER / KEY).chmod(0o444)
        (base / SUBFOLDER).chmod(0o555)
        if os.geteuid() == 0:  # the child runs as nobody: the folder is its own (another user's is not trusted)
            os.chown(base / SUBFOLDER, 65534, 65534)
        lines = read_only_run(str(base))
        assert lines[0] == "True False False"
        assert len(lines) == 2 and "cannot be written" in lines[1]
        assert sorted(p.name for p in (base / SUBFOLDER).iterdir()) == [KEY]
    finally:
        (base / SUBFOLDER).chmod(0o755)
        shutil.rmtree(base)


@pytest.mark.parametrize("how", ["mode 777", "another owner"])
def test_a_folder_others_may_write_is_not_used(tmp_path: Path, how: str) -> None:
    """An entry's checksum finds damage, not forgery: an entries' folder that another user owns or may write could
    hold planted entries, so it is not read (one note, the run goes on without the cache)."""
    with Cache(str(tmp_path)) as cache:
        assert cache.put(KEY, b"cached before")
    if how == "mode 777":
        (tmp_path / SUBFOLDER).chmod(0o777)
    elif os.geteuid() == 0:
        os.chown(tmp_path / SUBFOLDER, 65534, 65534)
    else:
        pytest.skip("only root can give a folder to another user")
    with Cache(str(tmp_path)) as cache:
        assert not cache.enabled and cache.get(KEY) is None and not cache.put(KEY, b"planted")
        assert len(cache.notes) == 1 and "running without the cache" in cache.notes[0]
        assert ("may be written by others (mode 777)" if how == "mode 777" else "belongs to another user (uid 65534)") \
            in cache.notes[0]


def test_a_folder_that_cannot_be_made_runs_without_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    with Cache(str(blocker / "cache")) as cache:
        assert not cache.enabled
        assert cache.get(KEY) is None and not cache.put(KEY, b"x")
        assert len(cache.notes) == 1


WRITER = textwrap.dedent("""
    import sys
    from opgen_lsp.cache.store import Cache, namespaced
    folder, who = sys.argv[1], sys.argv[2]
    with Cache(folder) as cache:
        for round in range(200):
            for i in range(5):
                key = namespaced("shared", str(i))
                payload = (str(i) * 5000).encode()  # the same bytes from either writer, as the same inputs give
                got = cache.get(key)
                assert got is None or got == payload, (who, i, len(got))
                assert cache.put(key, payload)
    print("ok")
""")


@pytest.mark.slow  # (over a second: the quick loop keeps inside its 2 minutes)
def test_two_processes_write_the_same_entries_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), who], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for who in "ab"]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    with Cache(str(tmp_path)) as cache:
        for i in range(5):
            assert cache.get(store.namespaced("shared", str(i))) == (str(i) * 5000).encode()
        assert cache.info().entries == 5 and cache.info().other == 0  # no temporary file left


def test_eviction_keeps_the_size_bound_least_recent_first(tmp_path: Path) -> None:
    with Cache(str(tmp_path), max_bytes=3500) as cache:
        keys = [store.digest(str(i)) for i in range(5)]
        for age, key in enumerate(keys):
            cache.put(key, b"x" * 1000)
            os.utime(entries(tmp_path) / key, (1000 + age, 1000 + age))
        stale = entries(tmp_path) / f".{keys[0]}.1-1.tmp"
        stale.write_bytes(b"left by a killed run")
        os.utime(stale, (0, 0))
        assert cache.evict() == 3  # the two oldest entries and the stale temporary file
        assert [cache.get(k) is not None for k in keys] == [False, False, True, True, True]
        assert not stale.exists()


def test_the_folder_named_by_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path))
    assert store.default_folder() == str(tmp_path)
    monkeypatch.setenv("OPGEN_CACHE_DIR", "off")
    assert store.default_folder() is None
    monkeypatch.delenv("OPGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert store.default_folder() == str(tmp_path / "opgen")  # one root for all of opgen's caches
