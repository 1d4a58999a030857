"""The only code of `opgen generate` that touches the disk.

Each file is written atomically (a temporary file in the same folder, then renamed
over the target), and only when its bytes differ from what
is there, so that build systems see no change when nothing changed. A path that
would land outside its output folder is refused.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WriteResult:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def resolve_inside(root: str, relative: str) -> str | None:
    """The absolute target of root/relative, or None if it leaves root (.., absolute paths, symlinks)."""
    if os.path.isabs(relative):
        return None
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base or target == base:
        return None
    return target


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


def write_atomic(path: str, data: bytes) -> None:
    """Replace path's content with data; a crash leaves either the old file or the new one, never a mix."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # The rename is atomic: an interrupted run leaves the old file or the new one. (No fsync: like
        # torchgen, the output is rebuilt, not kept safe across power loss, and 7,151 fsyncs cost seconds.)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_if_changed(path: str, data: bytes, *, write: Callable[[str, bytes], None] = write_atomic) -> bool:
    """Write data to path unless it already holds exactly these bytes; True if written."""
    if _same_bytes(path, data):
        return False
    write(path, data)
    return True


def write_files(files: Iterable[tuple[str, str, bytes]], *,
                write: Callable[[str, bytes], None] = write_atomic) -> WriteResult:
    """Write (root, relative path, bytes) triples; errors are collected, not raised."""
    written, unchanged, errors = [], [], []
    for root, relative, data in files:
        target = resolve_inside(root, relative)
        if target is None:
            errors.append(f"{os.path.join(root, relative)}: refusing to write outside {root}")
            continue
        try:
            (written if write_if_changed(target, data, write=write) else unchanged).append(target)
        except OSError as exc:
            errors.append(f"{target}: {exc.strerror or exc}")
    return WriteResult(tuple(written), tuple(unchanged), tuple(errors))
