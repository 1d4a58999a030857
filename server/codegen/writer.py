"""The only code of `opgen generate` that touches the disk.

Each file is written atomically (a temporary file in the same folder, then renamed
over the target), and only when its bytes differ from what
is there, so that build systems see no change when nothing changed.

Confinement, the same for every writer (generate, generate-backend, generate-lazy, the server): the real
path of the output root is resolved once, and so is each file's; a file whose real path leaves the root
(`..`, an absolute path, a symlinked folder or file leading elsewhere) is refused. `refusals` checks every
file of a run before the first is written, so that a refused run writes nothing at all.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..input_file import UnreadableFile, read_bytes


@dataclass(frozen=True, slots=True)
class WriteResult:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


Folders = dict[tuple[str, str], "str | None"]


def resolve_inside(root: str, relative: str, folders: Folders | None = None) -> str | None:
    """The absolute target of root/relative, or None if it leaves root (.., absolute paths, symlinks).

    folders: resolved folders to reuse, filled as it goes (one write of many files in few folders); the
    file's own name is still checked each time (a symlink there is resolved in full)."""
    if os.path.isabs(relative) or "\0" in relative or "\0" in root:
        return None
    folder, name = os.path.split(relative)
    if folders is not None and name not in ("", ".", ".."):
        key = (root, folder)
        if key not in folders:
            folders[key] = _real_folder_inside(root, folder)
        real = folders[key]
        if real is not None and not os.path.islink(os.path.join(real, name)):
            return os.path.join(real, name)
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base or target == base:
        return None
    return target


def refusals(places: Iterable[tuple[str, str]], folders: Folders | None = None) -> tuple[str, ...]:
    """One error for each (root, relative path) that leaves its root (see resolve_inside); () when none does."""
    folders = {} if folders is None else folders
    return tuple(f"{_refused(root, relative)}; nothing was written" for root, relative in places
                 if resolve_inside(root, relative, folders) is None)


def _refused(root: str, relative: str) -> str:
    """Why resolve_inside refused root/relative."""
    path = os.path.join(root, relative)
    if "\0" in path:
        return f"{path!r}: refusing a path with a NUL byte"
    if os.path.isabs(relative):
        return f"{path}: refusing to write an absolute path"
    return f"{path}: refusing to write outside {root} (its real path is {os.path.realpath(path)})"


def _real_folder_inside(root: str, folder: str) -> str | None:
    """The real path of root/folder if it is root or inside it, else None."""
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, folder))
    return real if os.path.commonpath([base, real]) == base else None


def _same_bytes(path: str, data: bytes) -> bool:
    """Whether path holds exactly data; read only when it is a regular file of that size (no FIFO is waited on)."""
    try:
        return os.path.getsize(path) == len(data) and read_bytes(path, limit=len(data)) == data
    except (OSError, UnreadableFile):
        return False


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_temp_numbers = itertools.count()


def _create_temp(path: str) -> tuple[int, str]:
    """A new hidden file beside path, `.<name>.<pid>-<n>.tmp`, open for writing; its folder is made if missing.
    (Mode 0666 less the umask, as torchgen's files get; a name left by a killed run is skipped.)"""
    folder, name = os.path.split(path)
    while True:
        tmp = os.path.join(folder, f".{name}.{os.getpid()}-{next(_temp_numbers)}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            os.makedirs(folder or ".", exist_ok=True)  # only the first file of a new folder gets here
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp


def write_atomic(path: str, data: bytes) -> None:
    """Replace path's content with data; a crash leaves either the old file or the new one, never a mix."""
    fd, tmp = _create_temp(path)
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


def write_files(files: Iterable[tuple[str, str, bytes]], *, write: Callable[[str, bytes], None] = write_atomic,
                folders: Folders | None = None) -> WriteResult:
    """Write (root, relative path, bytes) triples; errors are collected, not raised. Each file is confined
    again as it is written (a symlink made since `refusals` ran is refused too).
    folders: the resolved folders of earlier calls of the same run, to reuse (see resolve_inside)."""
    written: list[str] = []
    unchanged: list[str] = []
    errors: list[str] = []
    folders = {} if folders is None else folders
    for root, relative, data in files:
        target = resolve_inside(root, relative, folders)
        if target is None:
            errors.append(_refused(root, relative))
            continue
        try:
            (written if write_if_changed(target, data, write=write) else unchanged).append(target)
        except (OSError, ValueError) as exc:  # ValueError: a path the OS cannot take (a NUL byte)
            errors.append(f"{target}: {getattr(exc, 'strerror', None) or exc}")
    return WriteResult(tuple(written), tuple(unchanged), tuple(errors))


def write_all(files: Sequence[tuple[str, str, bytes]]) -> WriteResult:
    """write_files, or nothing at all when any file would leave its root."""
    refused = refusals((root, relative) for root, relative, _ in files)
    return WriteResult((), (), refused) if refused else write_files(files)
