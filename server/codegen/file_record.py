"""The record of each generated file's inputs, kept across runs: a file whose key (a digest of everything it is
made from) equals the one recorded when it was last written, and which is on disk as it was then left, is neither
built nor rendered nor written again.

A file's key is either given before it is built (PlannedFile.key: a per-operator file, from its items' fingerprints)
or the digest of its template and its environment once built (cheap when its items' contributions are kept: see
contributions.py), which skips the rendering and the write. The output's stat (device, inode, size, mtime and ctime
to the nanosecond: any write or rename changes the ctime) is recorded with the sha256 of the bytes the run left,
read back once the process that built it has written all its files (codegen/runs.py's `verified`: a file someone
changed during the run is not recorded; with several processes, each reads back its own files), and never when it
is racy (changed within runs.RACY_NS of its stat, or on a filesystem of whole-second times: such a file is simply
built again next time).

One cache entry per run's constants (contributions.py's `constants`), marshal of {path: (key, stat, sha256)}.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..cache.store import Cache, namespaced
from . import runs
from .plan import Env, generated_comment

_FORMAT = "1"
Entry = tuple[str, tuple[int, ...], str]  # key, stat, sha256
Built = tuple[str, str, tuple[int, ...]]  # path, key, stat when read back as the run left it (else empty)


def env_key(template: str, template_text: str | None, env: Env | str) -> str:
    """The digest of what a file is rendered from: its template's name and text and its environment (a whole text:
    itself). Lists are taken item by item, so no item's boundary can move unseen."""
    h = hashlib.sha1()
    if isinstance(env, str):
        h.update(b"text\0" + env.encode("utf-8", "surrogatepass"))
        return h.hexdigest()
    h.update(f"{template}\0{len(template_text or '')}\0{template_text or ''}\0".encode("utf-8", "surrogatepass"))
    if "generated_comment" not in env:
        h.update(generated_comment(template).encode())
    for name in sorted(env):
        _update(h, name, env[name])
    return h.hexdigest()


def _update(h: Any, name: str, value: object) -> None:
    h.update(f"\1{name}\2".encode())
    if isinstance(value, str):
        h.update(b"s%d\3" % len(value) + value.encode("utf-8", "surrogatepass"))
        return
    if isinstance(value, list | tuple):
        try:  # (the items' lengths too: no item's boundary can move unseen)
            joined = "".join(value)
        except TypeError:  # not all strings
            h.update(b"r" + repr(value).encode("utf-8", "surrogatepass"))
            return
        h.update(b"l" + str(list(map(len, value))).encode() + b"\3" + joined.encode("utf-8", "surrogatepass"))
        return
    h.update(b"r" + repr(value).encode("utf-8", "surrogatepass"))  # (bools, numbers, None: said whole by repr)


_NONE: dict[str, Entry] = {}  # (no record: told apart from an empty one by identity)


class FileRecord:
    """The record of the last run under these constants, and what this run adds to it."""

    def __init__(self, cache: Cache, constants: str) -> None:
        self._cache = cache
        self._key = namespaced("file-record", _FORMAT, constants)
        self._old = self._load()
        self._kept: dict[str, Entry] = {}  # files this run left as they were (their entries carried over)
        self._keys: dict[str, str] = {}  # files this run built: their keys, for the record once verified
        self._verified: dict[str, tuple[int, ...]] = {}  # files built and recorded: their stats, once verified
        self._roots: dict[str, str] = {}

    def path(self, root: str, relative: str) -> str:
        """The path the writer reports for a file (writer.write_files' `target`)."""
        real = self._roots.get(root)
        if real is None:
            real = self._roots[root] = os.path.realpath(root)
        if os.sep == "/" and relative[:1] not in ("", "/") and "//" not in relative and real != "/":
            return f"{real}/{relative}"  # (the join below, for the thousands of plain paths of a run)
        return os.path.join(real, *relative.split("/"))

    def _load(self) -> dict[str, Entry]:
        payload = self._cache.get(self._key)
        if payload is None:
            return _NONE
        try:
            value = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return _NONE
        return value if isinstance(value, dict) else _NONE

    @property
    def empty(self) -> bool:
        """No record of an earlier run (a first run builds everything)."""
        return self._old is _NONE

    def fresh(self, path: str, key: str) -> bool:
        """Whether the file at path was made from `key` and is on disk as that run left it (then it is kept)."""
        return self.fresh_as(path, key, runs.output_stat(path))

    def fresh_as(self, path: str, key: str, now: tuple[int, ...] | None) -> bool:
        """fresh(path, key), the file's stat being `now` (runs.output_stat's, taken in this run)."""
        entry = self._old.get(path)
        try:
            if entry is None or entry[0] != key or now != tuple(entry[1]):
                return False
        except (TypeError, IndexError):  # an entry this code did not write
            return False
        self._kept[path] = entry
        return True

    def built(self, path: str, key: str) -> None:
        self._keys[path] = key

    def has_key(self, path: str) -> bool:
        return path in self._keys

    def read_back(self, digests: Iterable[tuple[str, str]]) -> tuple[Built, ...]:
        """Read back the files this process built and wrote or found unchanged (digests: its writer's); (path, key,
        stat) of each, the stat empty when it was not found as the run left it or is racy (see store). A process
        that built files tells them to the parent's record with this (see adopt)."""
        out: list[Built] = []
        for path, digest in digests:
            key = self._keys.get(path)
            if key is not None:  # (else a file this process wrote but did not build: no key of its own)
                out.append((path, key, self._verified_stat(path, digest) or ()))
        return tuple(out)

    def _verified_stat(self, path: str, digest: str) -> tuple[int, ...] | None:
        """The file's stat when it holds the run's bytes (sha256 `digest`) and is not racy, read back once and
        kept; None otherwise (a racy one is left out of the record: built again next time)."""
        stat = self._verified.get(path)
        if stat is None:
            out = runs.verified(path, digest)
            if out is None or out.digest:
                return None
            stat = self._verified[path] = out.stat
        return stat

    def adopt(self, built: Iterable[Built]) -> None:
        """Take the files another process built and read back (its read_back)."""
        for path, key, stat in built:
            self._keys[path] = key
            if stat:
                self._verified[path] = tuple(stat)

    def kept(self) -> list[tuple[str, str]]:
        """(path, sha256) of the files kept as they were."""
        return [(path, entry[2]) for path, entry in self._kept.items()]

    def kept_stats(self) -> dict[str, tuple[int, ...]]:
        """The stat of each file kept, with which it holds the bytes recorded (runs.store need not read them)."""
        return {path: tuple(entry[1]) for path, entry in self._kept.items()}

    def verified_stats(self) -> dict[str, tuple[int, ...]]:
        """The stat of each file built and recorded by store, taken when its bytes were read back and found to be
        the run's (not racy): runs.store need not read them again."""
        return dict(self._verified)

    def store(self, digests: Iterable[tuple[str, str]]) -> bool:
        """Record the files kept and those built whose bytes on disk are the run's (digests: the writer's); those
        not yet read back (read_back) are read now."""
        entries = dict(self._kept)
        found: Mapping[str, str] = dict(digests)
        for path, key in self._keys.items():
            digest = found.get(path)
            if digest is None:  # (not written: an error)
                continue
            stat = self._verified_stat(path, digest)
            if stat is not None:
                entries[path] = (key, stat, digest)
        if entries == self._old and self._old is not _NONE:
            return True
        return self._cache.put(self._key, marshal.dumps(entries))
