"""The one reader of input files from disk (yaml, templates, headers, C++ sources), for the CLI and the server.

Bounded: only regular files are read (a FIFO or a device such as /dev/zero is refused without waiting or
reading), and a file over the size cap is refused from its stat, before any byte is read; a file that
grows while it is read is cut at cap + 1 bytes and refused too.
"""

from __future__ import annotations

import os
import stat

# Larger than any real operator yaml or C++ source by far (the 64M-character document limit, in bytes:
# a file within it holds at most that many characters).
MAX_INPUT_BYTES = 64 * 1024 * 1024

READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


# Why a file could not be read (UnreadableFile.kind), for callers that answer them differently.
MISSING, DIRECTORY, SPECIAL, TOO_LARGE, NOT_UTF8, OS_ERROR = (
    "missing", "directory", "special", "too-large", "not-utf8", "os-error")


class UnreadableFile(Exception):
    """An input file that cannot be read as text: str() is `path: why`.

    position: the (line, column), 0-based, of the first byte that is not UTF-8 (kind NOT_UTF8)."""

    def __init__(self, path: str, why: str, kind: str, position: tuple[int, int] | None = None) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why
        self.kind = kind
        self.position = position

    @property
    def missing(self) -> bool:
        return self.kind == MISSING


def _not_regular(mode: int) -> tuple[str, str] | None:
    """(why, kind) of a file that is not a regular one; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory", DIRECTORY
    if stat.S_ISFIFO(mode):
        return "is a FIFO, not a regular file", SPECIAL
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file", SPECIAL
    return "is not a regular file", SPECIAL


_CHUNK = 1 << 20


def read_at_most(fd: int, limit: int) -> bytes:
    """At most `limit` bytes of an open file, read a chunk at a time (os.read(fd, n) allocates n bytes at once, so
    a large limit is never asked for in one call). A caller that must know the file holds no more asks for one
    byte more than it expects."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _size_text(size: int) -> str:
    return f"{size:,} bytes"


def read_bytes(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (raises UnreadableFile)."""
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused below, unread).
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise UnreadableFile(path, "no such file", MISSING) from None
    except IsADirectoryError:
        raise UnreadableFile(path, "is a directory", DIRECTORY) from None
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc), OS_ERROR) from None
    try:
        info = os.fstat(fd)
        refused = _not_regular(info.st_mode)
        if refused is not None:
            raise UnreadableFile(path, *refused)
        if info.st_size > limit:
            raise UnreadableFile(path, f"has {_size_text(info.st_size)}; opgen reads files of up to "
                                       f"{_size_text(limit)}", TOO_LARGE)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            # Read what fstat says first: read(limit + 1) would allocate the whole cap for every file.
            data = f.read(min(info.st_size, limit) + 1)
            if len(data) > info.st_size:  # it grew, or its size is not known (files in /proc say 0)
                data += f.read(limit + 1 - len(data))
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc), OS_ERROR) from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise UnreadableFile(path, f"grew past {_size_text(limit)} while read; opgen reads files of up to "
                                   f"{_size_text(limit)}", TOO_LARGE)
    return data


def undecodable_position(data: bytes, start: int) -> tuple[int, int]:
    """The (line, column) of byte `start`, 0-based, columns in characters of the valid text before it."""
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", errors="replace"))
    return data.count(b"\n", 0, start), column


def read_text(path: str, limit: int = MAX_INPUT_BYTES, *, errors: str = "strict") -> str:
    """A regular file's UTF-8 text with universal newlines (as open(path, encoding="utf-8") reads it):
    raises UnreadableFile when it is missing, not a regular file, over `limit` bytes, or not UTF-8
    (errors="replace" takes any bytes)."""
    data = read_bytes(path, limit)
    try:
        text = data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, f"not UTF-8 text ({exc.reason} at byte {exc.start:,})", NOT_UTF8,
                             undecodable_position(data, exc.start)) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
