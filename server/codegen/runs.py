"""The record of an `opgen generate` run, kept in the persistent cache: when nothing changed since, the next run
with the same command line writes nothing and returns at once.

A record is stored under a key of the command line (every flag that shapes the output), the release, the current
folder and opgen's own source digest. It holds every input the run read, each with the sha256 of its bytes (or of a
folder's listing, or "missing"), and every file the run left in place with its stat (device, inode, size, mtime and
ctime, to the nanosecond: any write or rename changes the ctime). A later run trusts it only when each input still
has the same digest and each output the same stat; anything else (an edited input, an output touched, deleted or
replaced) is a miss, and the run is done in full, which rewrites exactly the files whose bytes differ.

The generator reads the inputs itself, after they were digested: an input edited and put back during the run
(A, then B, then A) would leave B's outputs under A's digest. So the stat of each input (each file's, a listed
folder's) is taken before its digest, and the run is recorded only if every stat is the same when the record is
made: a write changes the ctime even when it puts the same bytes back (on a filesystem whose ctime has whole
seconds only, two writes within one second may not: see the racy rule below). Not covered: a file that is missing
before and after the run but made and removed during it (its folder's stat would tell, but the folders of the
fallback ops candidates can be busy ones, such as /tmp, and no run would ever be recorded).

A run is recorded only if each output, read back after the run wrote it, holds the bytes the run left (the
writer's sha256 of them) and did not change while it was read: a file someone changed during the run is never
taken for the run's. Each output is recorded with the stat it had when so read (or, kept as it was, when its file
record found it unchanged: codegen/file_record.py), so one changed after that has another stat, and the record
misses. ctime has the kernel's clock tick as its grain: an output whose ctime lies within RACY_NS of
its stat could be changed again within the same tick, so its digest is kept too and its bytes are checked instead
(git's "racily clean" index entries). On a filesystem whose timestamps have whole seconds only (FAT's 2 s, some
network and overlay filesystems), an edit of the same size within the second keeps every stat field: an output
whose mtime or ctime has no sub-second part is taken as from such a filesystem, and its digest is kept too (a real
file lands on a whole second once in 10^9). This module imports no generator: a hit costs reading the inputs and a stat
of each output.
"""

from __future__ import annotations

import fnmatch
import hashlib
import marshal
import os
import stat
import time
from collections.abc import Iterable, Mapping, Sequence

from ..cache.stable_text import stable_text
from ..cache.store import Cache, namespaced
from ..frozen import record
from ..input_file import MAX_INPUT_BYTES, READ_FLAGS, read_at_most

# Well over the kernel's clock tick (1-10 ms): a file changed this close to its stat gets its bytes checked.
RACY_NS = 50_000_000
_MISSING = "missing"
_FORMAT = 2  # (2: marshal, faster to write and read than 1's JSON)


Stamp = tuple[int, ...]


def _stamp(info: os.stat_result) -> Stamp:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_state(path: str) -> tuple[str, Stamp]:
    """file_digest(path), and the file's stat taken before its bytes were read (empty when it has none)."""
    try:
        # The readers' flags (O_NONBLOCK among them): a FIFO planted as an input opens at once and is "other".
        with open(os.open(path, READ_FLAGS), "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return "other", _stamp(info)
            if info.st_size > MAX_INPUT_BYTES:  # never equal to another file's, nor to this one's once touched
                return f"too large {_stamp(info)}", _stamp(info)
            return hashlib.file_digest(f, "sha256").hexdigest(), _stamp(info)
    except FileNotFoundError:
        return _MISSING, ()
    except OSError as exc:
        return f"unreadable {exc.errno}", ()


def file_digest(path: str) -> str:
    """sha256 of a regular file's bytes (followed through links, as the generator reads it); "missing" when it is
    not there, "other" when it is not a regular file, "too large" (with its stat) when it is over the reader's cap
    (input_file.MAX_INPUT_BYTES: the generator refuses it unread, so its bytes are not hashed either)."""
    return file_state(path)[0]


def folder_state(path: str) -> tuple[str, Stamp]:
    """sha256 of a folder's sorted listing (each name and whether it is a regular file), "missing" when there is
    none; and the folder's stat taken before it was listed (a name added or removed changes its ctime)."""
    try:
        info = os.stat(path)
        with os.scandir(path) as it:
            names = sorted(f"{e.name}\0{int(e.is_file())}" for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return _MISSING, ()
    except OSError as exc:
        return f"unreadable {exc.errno}", ()
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest(), _stamp(info)


def folder_digest(path: str) -> str:
    return folder_state(path)[0]


def matching_state(folder: str, pattern: str) -> tuple[str, Stamp]:
    """sha256 of the names in folder that match pattern (fnmatch) and of each one's bytes (the AOTI headers gen.py
    compares with: their folder holds outputs too, which are no input), and the stats of those files. No folder
    counts as an empty one: the run that makes the folder leaves a record of its inputs as they were."""
    try:
        names = sorted(n for n in os.listdir(folder) if fnmatch.fnmatchcase(n, pattern))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    except OSError as exc:
        return f"unreadable {exc.errno}", ()
    states = [file_state(os.path.join(folder, n)) for n in names]
    text = "\n".join(f"{n}\0{d}" for n, (d, _) in zip(names, states, strict=True))
    return (hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest(),
            tuple(field for _, stamp in states for field in (len(stamp), *stamp)))


def matching_digest(folder: str, pattern: str) -> str:
    return matching_state(folder, pattern)[0]


@record
class Input:
    kind: str  # "file", "folder" (its listing) or "matching:<pattern>" (the matching files of a folder)
    path: str
    digest: str
    # Its stat (each file's, the folder's) taken before the digest, when read before a run; not kept in a record.
    stamp: Stamp = ()

    def current(self) -> str:
        return digest_of(self.kind, self.path)


def state_of(kind: str, path: str) -> tuple[str, Stamp]:
    if kind == "file":
        return file_state(path)
    if kind == "folder":
        return folder_state(path)
    if kind.startswith("matching:"):
        return matching_state(path, kind.partition(":")[2])
    return "unknown kind", ()  # (never equal to a recorded digest: a miss)


def digest_of(kind: str, path: str) -> str:
    return state_of(kind, path)[0]


def read_inputs(inputs: Iterable[tuple[str, str]]) -> tuple[Input, ...]:
    """The inputs, (kind, path) each, as they are now (read before the run), each with its stat: the run is
    recorded only if every stat is the same after it (see store)."""
    return tuple(Input(kind, path, *state_of(kind, path)) for kind, path in inputs)


@record
class Output:
    path: str
    stat: tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns
    digest: str  # sha256 of the bytes when racy (see RACY_NS), else ""


def _stat_of(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return regular_stat(info)


def regular_stat(info: os.stat_result | None) -> tuple[int, int, int, int, int] | None:
    """A file's lstat as a record keeps it (None: not a regular file, or none)."""
    if info is None or not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def output_stat(path: str) -> tuple[int, int, int, int, int] | None:
    """A generated file's stat as a record keeps it (None: not a regular file, or none)."""
    return _stat_of(path)


def _coarse(time_ns: int) -> bool:
    """A time with no sub-second part: likely from a filesystem of whole-second (or 2 s) timestamps."""
    return time_ns % 1_000_000_000 == 0


def verified(path: str, expected: str) -> Output | None:
    """The output as it is now, when it holds the bytes the run left (sha256 `expected`) and did not change while
    they were read; None otherwise. Its digest is kept when it is racy (see RACY_NS).
    The stats are of the file read (a link in its place is not the run's file): one put there after it was opened
    has another inode, so the record misses on it."""
    try:
        fd = os.open(path, READ_FLAGS | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        before = regular_stat(os.fstat(fd))
        data = read_at_most(fd, before[2] + 1) if before is not None else b""  # (one byte more: grown, it differs)
        after = regular_stat(os.fstat(fd))
    except OSError:
        return None
    finally:
        os.close(fd)
    if before is None or after != before or hashlib.sha256(data).hexdigest() != expected:
        return None
    racy = before[4] >= time.time_ns() - RACY_NS or _coarse(before[3]) or _coarse(before[4])
    return Output(path, before, expected if racy else "")


def _unchanged(output: Output) -> bool:
    if _stat_of(output.path) != output.stat:
        return False
    return not output.digest or file_digest(output.path) == output.digest


@record
class Recorded:
    """What a run printed and left: the generated files (in the writer's order), the -o lists, gen.py's notes, and
    the files opgen could not generate (path, why)."""

    files: tuple[str, ...]
    lists: tuple[str, ...]
    notes: tuple[str, ...]
    missing: tuple[tuple[str, str], ...]



def run_key(command: Mapping[str, object], release: object, environment: str) -> str | None:
    """The key of a run: its command line (every flag that shapes the output), the release, what else of the
    environment the caller names, and the current folder (relative paths are read from it); None when there is no
    current folder (deleted since the shell entered it): no key, no cache."""
    try:
        here = os.getcwd()
    except OSError:
        return None
    return namespaced("generate-run", str(_FORMAT), stable_text(dict(command)), stable_text(release), environment,
                      here)


def _inputs_key(key: str) -> str:
    """The key of a record's inputs alone (a small entry: a run after an edit reads no more than it)."""
    return namespaced("generate-run-inputs", key)


def lookup(cache: Cache, key: str) -> Recorded | None:
    """The record under key, when every input and output is still as recorded; else None."""
    head = cache.get(_inputs_key(key))
    try:
        if head is not None and any(Input(*i).current() != i[2] for i in marshal.loads(head)):
            return None  # (an input changed: the record, with every output, is not read)
    except (ValueError, EOFError, TypeError, IndexError):
        pass  # (an entry this code did not write: the record itself decides)
    payload = cache.get(key)
    if payload is None:
        return None
    try:
        data = marshal.loads(payload)
        inputs = [Input(*i) for i in data["inputs"]]
        outputs = [Output(o[0], tuple(o[1]), o[2]) for o in data["outputs"]]
        recorded = Recorded(tuple(data["files"]), tuple(data["lists"]), tuple(data["notes"]),
                            tuple((m[0], m[1]) for m in data["missing"]))
    except (ValueError, EOFError, KeyError, TypeError, IndexError):  # a record this code did not write: a miss
        return None
    if any(i.current() != i.digest for i in inputs) or not all(map(_unchanged, outputs)):
        return None
    return recorded


def store(cache: Cache, key: str, inputs: Sequence[Input], done: Recorded, expected: Mapping[str, str],
          trusted: Mapping[str, Stamp] | None = None) -> bool:
    """Record a run that wrote every file (no error): its inputs as read before it began, and its outputs as they
    are now, each checked against the sha256 of the bytes the run left (expected, by path): a file changed by
    anyone since is not recorded as the run's, and the run is not recorded at all.
    trusted: stats with which files are known to hold their expected bytes (a file record's, not racy, taken in
    this run): such a file is recorded with that stat, neither stat'ed nor read again (changed since, its stat is
    another: any write changes the ctime, and the next lookup misses)."""
    if not cache.writable:
        return False
    rows: list[list[object]] = []  # [path, stat, digest] of each output, as a record holds it
    trusted = trusted or {}
    for path in (*done.files, *done.lists):
        stamp = trusted.get(path)
        if stamp is not None and len(stamp) == 5:
            rows.append([path, stamp, ""])
            continue
        found = verified(path, expected[path]) if path in expected else None
        if found is None:
            return False
        rows.append([found.path, found.stat, found.digest])
    # Changed while the run read them: the same bytes now are not enough (an edit undone during the run may have
    # been read by the generator), so each input's stat must be the one taken before the run (any write, even one
    # that puts the bytes back, changes the ctime).
    if any(state_of(i.kind, i.path) != (i.digest, i.stamp) for i in inputs):
        return False
    cache.put(_inputs_key(key), marshal.dumps([[i.kind, i.path, i.digest] for i in inputs]))
    data = {"inputs": [[i.kind, i.path, i.digest] for i in inputs],
            "outputs": rows,
            "files": list(done.files), "lists": list(done.lists), "notes": list(done.notes),
            "missing": [list(m) for m in done.missing]}
    return cache.put(key, marshal.dumps(data))
