"""opgen's persistent cache: content-addressed entries in one folder, shared by every opgen process.

An entry is a file named by its key (64 hex digits, a sha256 the caller computes from what the entry was built from,
opgen's own source digest included: see `namespaced`), holding a header (magic, payload length, sha256 of key and
payload) and the payload. An entry is trusted only when all of it checks: a truncated, corrupt or renamed file, or
one written by another opgen (another key), is a miss, and the caller builds the value again.

Writes are atomic (a temporary file made with O_EXCL beside the entry, then renamed over it), so two processes may
write the same entry at once: the last rename wins, and both wrote the same bytes. Nothing in the folder is
followed through a symbolic link (entries are opened relative to the folder's handle with O_NOFOLLOW), and names
that are not opgen's own (garbage, a file the user put there) are neither read nor removed, not even by `clear`.
A folder that cannot be made or written makes the cache read-only or off, with one note, never an error.

The checksum finds damage, not forgery: whoever may write the entries' folder decides what a hit returns. So the
folder is used only when it belongs to the user running opgen and no one else may write it (checked on the opened
handle); a folder shared with other users is not used (one note).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import struct
import time
from collections.abc import Callable, Iterator

from ..frozen import record
from ..input_file import read_at_most
from .root import user_cache_root

# OPGEN_CACHE_DIR names another folder; "off" (or an empty value) turns the cache off.
ENV_VAR = "OPGEN_CACHE_DIR"
OFF = "off"
# The entries live in a subfolder of their own, so that `clear` never touches anything else of the folder named.
SUBFOLDER = "opgen-cache-v1"
DEFAULT_MAX_BYTES = 500_000_000
# One entry's payload at most (a run record of the 7,151 per-operator files is about 1 MB): a larger file under a
# key was not written by opgen, and is not read.
MAX_ENTRY_BYTES = 64 * 1024 * 1024

_MAGIC = b"opgen-cache\x01"
_HEADER = struct.Struct(f"<{len(_MAGIC)}sQ32s")  # magic, payload length, sha256(key + payload)
_KEY = re.compile(r"[0-9a-f]{64}")
# .<key>.<pid>-<count>-<random>.tmp (opgen before the random part: without it)
_TEMP = re.compile(r"\.[0-9a-f]{64}\.\d+-\d+(?:-[0-9a-f]{16})?\.tmp")
# Two containers that share the cache's volume may each have a process with the same pid: a name taken is tried
# again with new random bytes, this many times, before writing is turned off.
_TEMP_TRIES = 8
# A temporary file older than this was left by a killed process: eviction removes it.
_STALE_TEMP_SECONDS = 3600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def default_folder() -> str | None:
    """The cache folder: $OPGEN_CACHE_DIR, else opgen's user cache root ($XDG_CACHE_HOME/opgen, else
    ~/.cache/opgen: cache/root.py); None when OPGEN_CACHE_DIR turns it off."""
    named = os.environ.get(ENV_VAR)
    if named is not None:
        return None if named.strip() in ("", OFF) else named
    return user_cache_root()


def _random_part() -> str:
    """16 random hex digits for a temporary file's name (secrets.token_hex(8), without loading its module)."""
    return os.urandom(8).hex()


def digest(*parts: bytes | str) -> str:
    """A key: sha256 of the parts, each length-prefixed (so that no two lists of parts run together)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


# The source's digest is kept beside its bytecode (the package's __pycache__), under the stats of its files (path,
# device, inode, size, modification and change times): Python trusts its bytecode by the source's stats too, and a
# file written since has another change time (which no one can set), so its stats differ. It is kept only once every
# file is older than _SETTLED_NS: a file written again within the tick its change time was read in could keep it.
_SETTLED_NS = 2_000_000_000
_KEPT_DIGEST = "opgen-source-digest."
_HEX_DIGEST = re.compile(rb"[0-9a-f]{64}")


def _sources(package: str) -> list[tuple[str, str]]:
    """The package's .py files, each as (path relative to package, path), in a stable order (folders sorted, bytecode
    folders left out)."""
    out: list[tuple[str, str]] = []
    cut = len(os.path.join(package, ""))
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        out.extend((path[cut:], path) for path in (os.path.join(folder, name) for name in sorted(names)
                                                   if name.endswith(".py")))
    return out


def _content_digest(paths: list[tuple[str, str]], version: str) -> str:
    h = hashlib.sha256(version.encode())
    for relative, path in paths:
        h.update(relative.encode("utf-8", "surrogateescape") + b"\0")
        with open(path, "rb") as f:
            data = f.read()
        h.update(struct.pack("<Q", len(data)) + data)
    return h.hexdigest()


def package_digest(package: str, version: str) -> str:
    """sha256 of the source under package (every .py, by path and content) and the version: an entry written by any
    other opgen has another key. Read from where it was kept for the same stats of the files, else computed (and
    kept, where the bytecode folder can be written: never an error)."""
    paths = _sources(package)
    stats = [os.stat(path) for _, path in paths]
    signature = hashlib.sha256(repr((version, [(relative, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                                st.st_ctime_ns) for (relative, _), st in zip(paths, stats)])
                                    ).encode("utf-8", "surrogateescape")).hexdigest()
    folder = os.path.join(package, "__pycache__")
    kept = os.path.join(folder, _KEPT_DIGEST + signature[:40])
    try:
        with open(kept, "rb") as f:
            data = f.read(65)
        if _HEX_DIGEST.fullmatch(data):
            return data.decode()
    except OSError:
        pass
    found = _content_digest(paths, version)
    if all(st.st_ctime_ns < time.time_ns() - _SETTLED_NS for st in stats):
        _keep_digest(folder, kept, found)
    return found


def _keep_digest(folder: str, kept: str, found: str) -> None:
    """Write the digest at kept, atomically, and remove the ones kept for other stats; nothing when it cannot."""
    temp = f"{kept}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(found.encode())
        os.replace(temp, kept)
        for name in os.listdir(folder):
            if name.startswith(_KEPT_DIGEST) and os.path.join(folder, name) != kept and not name.endswith(".tmp"):
                os.unlink(os.path.join(folder, name))
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


@functools.lru_cache(maxsize=1)  # one value: the source of the running opgen
def opgen_digest() -> str:
    """package_digest of the running opgen's package, once a process (about 1 ms where kept, 4 ms where not)."""
    from .. import __version__  # noqa: PLC0415

    return package_digest(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), __version__)


def namespaced(kind: str, *parts: bytes | str) -> str:
    """The key of an entry of `kind` built from parts, by this opgen (its source digest is part of the key)."""
    return digest(opgen_digest(), kind, *parts)


def encode(key: str, payload: bytes) -> bytes:
    check = hashlib.sha256(key.encode("ascii") + payload).digest()
    return _HEADER.pack(_MAGIC, len(payload), check) + payload


def decode(key: str, data: bytes) -> bytes | None:
    """The payload of an entry's bytes, None unless every part of it checks (magic, length, checksum)."""
    if len(data) < _HEADER.size:
        return None
    magic, length, check = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or length != len(payload):
        return None
    if hashlib.sha256(key.encode("ascii") + payload).digest() != check:
        return None
    return payload


@record
class CacheInfo:
    folder: str
    entries: int
    size: int  # bytes
    other: int  # names in the cache's folder that are not opgen's entries (left alone)


_temp_count = iter(range(1 << 62))


class Cache:
    """One process's handle of the cache folder. Every method is safe to call on a cache that is off or broken:
    it then misses (get) or does nothing (put). `notes` says, once each, why it is off or read-only."""

    def __init__(self, folder: str | None, max_bytes: int = DEFAULT_MAX_BYTES, *, create: bool = True) -> None:
        """create=False (`opgen cache info|clear`): a folder that is not there is not made; `absent` says so."""
        self.folder = folder
        self.max_bytes = max_bytes
        self.entry_limit = min(MAX_ENTRY_BYTES, max_bytes)  # a payload's bytes: larger is neither written nor read
        self.notes: list[str] = []
        self.writable = False
        self.absent = False
        self._fd: int | None = None
        self._added = 0
        if folder is not None:
            self._open(folder, create)

    def _open(self, folder: str, create: bool) -> None:
        entries = os.path.join(folder, SUBFOLDER)
        if create:
            try:
                os.makedirs(folder, exist_ok=True)
                try:
                    os.mkdir(entries, 0o700)
                except FileExistsError:
                    pass
            except OSError as exc:
                if not os.path.isdir(entries):
                    self._note(f"cache folder {folder} cannot be made ({exc.strerror or exc}): running without the "
                               "cache")
                    return
        try:
            # The folder the user named may be a symbolic link (their choice); the entries' folder inside it not.
            fd = os.open(entries, _DIR_FLAGS)
        except OSError as exc:
            if not create and isinstance(exc, FileNotFoundError):  # (nothing to note: `info` says there is none)
                self.absent = True
                return
            self._note(f"cache folder {entries} cannot be opened ({exc.strerror or exc}; a symbolic link is "
                       "refused): running without the cache")
            return
        refused = _not_private(fd)
        if refused:
            os.close(fd)
            self._note(f"cache folder {entries} {refused}: running without the cache (its entries are trusted as "
                       "your own, so the folder must be yours and writable by no one else)")
            return
        self._fd = fd
        # Whether it can be written is found by writing (root may write a folder whose mode says read-only):
        # the first write that fails turns writing off, with one note.
        self.writable = True

    @property
    def enabled(self) -> bool:
        return self._fd is not None

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> bytes | None:
        """The payload stored under key, None when there is none that checks."""
        if self._fd is None or not _KEY.fullmatch(key):
            return None
        try:
            fd = os.open(key, _READ_FLAGS, dir_fd=self._fd)
        except OSError:  # missing, a symbolic link, unreadable: a miss
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or not _HEADER.size <= info.st_size <= _HEADER.size + self.entry_limit:
                return None  # (larger than any entry put writes: planted, not read)
            data = read_at_most(fd, info.st_size + 1)  # one byte more: a file that grew since fstat does not check
        except OSError:
            return None
        finally:
            os.close(fd)
        return decode(key, data)

    def put(self, key: str, payload: bytes) -> bool:
        """Store payload under key, atomically; True if stored. A failure turns writing off for the rest of the
        run (one note), it is never an error."""
        if self._fd is None or not self.writable or not _KEY.fullmatch(key) or len(payload) > self.entry_limit:
            return False
        for _ in range(_TEMP_TRIES):
            temp = f".{key}.{os.getpid()}-{next(_temp_count)}-{_random_part()}.tmp"
            try:
                fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=self._fd)
                break
            except FileExistsError as exc:  # another process's name: another one
                taken = exc
            except OSError as exc:
                self._stop_writing(exc)
                return False
        else:
            self._stop_writing(taken)
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(encode(key, payload))
            # rename replaces whatever has the name, a planted symbolic link included (the link, not its target)
            os.replace(temp, key, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as exc:
            try:
                os.unlink(temp, dir_fd=self._fd)
            except OSError:
                pass
            self._stop_writing(exc)
            return False
        self._added += len(payload) + _HEADER.size
        return True

    def _stop_writing(self, exc: OSError) -> None:
        self.writable = False
        self._note(f"cache folder {self.folder} cannot be written ({exc.strerror or exc}): the results of this run "
                   "are not cached")

    def _entries(self) -> Iterator[os.DirEntry[str]]:
        if self._fd is None:
            return
        try:
            with os.scandir(self._fd) as it:
                yield from it
        except OSError:
            return

    def info(self) -> CacheInfo:
        entries = size = other = 0
        for e in self._entries():
            if _KEY.fullmatch(e.name) and e.is_file(follow_symlinks=False):
                entries += 1
                size += _size(e)
            elif not _TEMP.fullmatch(e.name):
                other += 1
        return CacheInfo(os.path.join(self.folder or "", SUBFOLDER), entries, size, other)

    def clear(self) -> int:
        """Remove every entry (and temporary file) of opgen's; other names are left. The number removed."""
        return self._remove(lambda e: True)

    def evict(self, now: float | None = None) -> int:
        """Bring the entries under max_bytes, the least recently used first (by access, else modification time);
        temporary files a killed process left are removed too. The number removed."""
        now = time.time() if now is None else now
        found: list[tuple[float, int, str]] = []
        stale: list[str] = []
        for e in self._entries():
            try:
                info = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if _TEMP.fullmatch(e.name) and now - info.st_mtime > _STALE_TEMP_SECONDS:
                stale.append(e.name)
            elif _KEY.fullmatch(e.name) and stat.S_ISREG(info.st_mode):
                found.append((max(info.st_atime, info.st_mtime), info.st_size, e.name))
        total = sum(size for _, size, _ in found)
        drop = set(stale)
        for _, size, name in sorted(found):
            if total <= self.max_bytes:
                break
            drop.add(name)
            total -= size
        return self._remove(lambda e: e.name in drop)

    def evict_if_grown(self) -> int:
        """evict(), when this process has added entries (a run that only read costs no scan of the folder)."""
        return self.evict() if self._added and self.writable else 0

    def _remove(self, which: Callable[[os.DirEntry[str]], bool]) -> int:
        if self._fd is None:
            return 0
        removed = 0
        for e in list(self._entries()):
            if (_KEY.fullmatch(e.name) or _TEMP.fullmatch(e.name)) and which(e):
                try:
                    os.unlink(e.name, dir_fd=self._fd)  # a symbolic link is removed itself, never its target
                    removed += 1
                except FileNotFoundError:  # removed meanwhile by another process
                    pass
                except OSError as exc:
                    self._note(f"cache folder {self.folder}: cannot remove {e.name} ({exc.strerror or exc})")
        return removed


def _not_private(fd: int) -> str | None:
    """Why the opened entries' folder is not trusted (checked on the handle: what was opened is what is checked),
    None when it is the user's own and no one else may write in it. An entry's checksum finds damage, not
    forgery: whoever may write the folder decides what a hit returns."""
    try:
        info = os.fstat(fd)
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if info.st_uid != os.geteuid():
        return f"belongs to another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"may be written by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _size(e: os.DirEntry[str]) -> int:
    try:
        return e.stat(follow_symlinks=False).st_size
    except OSError:
        return 0
