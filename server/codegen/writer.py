"""The only code of `opgen generate` that touches the disk.

Each file is written atomically (a temporary file, then renamed over the target), and only when its bytes
differ from what is there, so that build systems see no change when nothing changed.

Confinement, the same for every writer (generate, generate-backend, generate-lazy, the server), by
construction: each output root (the folder the user named) is opened once per run, and every file is made
relative to that handle one component at a time with O_NOFOLLOW (folders made with mkdirat, the temporary file
with O_CREAT|O_EXCL in the process's staging folder under the root, the rename between handles), so no symbolic
link below the root is ever followed: one there (or swapped in while the run writes) refuses the file. `..` and
absolute paths are refused from their text. Before anything is written, `refusals` checks every file of a run
against the real paths on disk, so that a run whose files would leave their root writes nothing at all.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
from collections.abc import Callable, Iterable, Sequence

from ..frozen import record
from ..input_file import read_at_most


@record
class WriteResult:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    errors: tuple[str, ...]
    # (path, sha256 of its bytes) of each file written or found unchanged: what a run record checks the files
    # against (codegen/runs.py)
    digests: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


Folders = dict[tuple[str, str], "str | None"]
_UNKNOWN = ""  # (a real folder is never empty: a folder not yet resolved)
# (root, relative) -> the lstat of the file there when its confinement was checked (None: no file there)
Seen = dict[tuple[str, str], "os.stat_result | None"]


def resolve_inside(root: str, relative: str, folders: Folders | None = None, seen: Seen | None = None) -> str | None:
    """The absolute target of root/relative, or None if it leaves root (.., absolute paths, symlinks).

    folders: resolved folders to reuse, filled as it goes (one write of many files in few folders); the
    file's own name is still checked each time (a symlink there is resolved in full).
    seen: told the lstat taken of each file so confined, in a folder of `folders` (a file record judges from it
    whether the file is as it left it, with no second stat)."""
    if os.path.isabs(relative) or "\0" in relative or "\0" in root:
        return None
    folder, _, name = relative.rpartition("/")  # (os.path.split's, but for trailing slashes of the folder)
    if folders is not None and name not in ("", ".", ".."):
        key = (root, folder)
        real = folders.get(key, _UNKNOWN)
        if real is _UNKNOWN:
            real = folders[key] = _real_folder_inside(root, folder)
        if real is not None:
            target = f"{real}/{name}" if os.sep == "/" and real != "/" else os.path.join(real, name)
            try:
                info: os.stat_result | None = os.lstat(target)
            except OSError:  # (none there: no link either)
                info = None
            if info is None or not stat.S_ISLNK(info.st_mode):
                if seen is not None:
                    seen[(root, relative)] = info
                return target
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base or target == base:
        return None
    return target


def refusals(places: Iterable[tuple[str, str]], folders: Folders | None = None, seen: Seen | None = None
             ) -> tuple[str, ...]:
    """One error for each (root, relative path) that leaves its root (see resolve_inside); () when none does."""
    folders = {} if folders is None else folders
    return tuple(f"{_refused(root, relative)}; nothing was written" for root, relative in places
                 if resolve_inside(root, relative, folders, seen) is None)


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


class Refused(Exception):
    """A file that would be written through a symbolic link, or outside its root."""


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_temp_numbers = itertools.count()


def _parts(relative: str) -> list[str] | None:
    """The components of a relative path inside its root (`a/../b` is `b`); None when it leaves it or names it."""
    if os.path.isabs(relative) or "\0" in relative:
        return None
    normal = os.path.normpath(relative)
    if normal in (".", os.curdir) or normal == os.pardir or normal.startswith(os.pardir + os.sep):
        return None
    return normal.split(os.sep)


class OutputRoots:
    """The output folders of one run, each opened once (the folder the user named, symlinks and all); every file
    is then made relative to its root's handle, one component at a time, never following a symbolic link, so a
    folder swapped for a symlink mid-run cannot redirect a write (issue 27)."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[int, str]] = {}
        self._staging: dict[str, tuple[int, str] | None] = {}

    def root(self, root: str) -> tuple[int, str]:
        """(handle, real path) of an output root, made if missing."""
        found = self._open.get(root)
        if found is None:
            found = self._open[root] = (_open_made(root), os.path.realpath(root))
        return found

    def staging(self, root: str) -> int | None:
        """The handle of this process's staging folder under root, where its temporary files are made (made on
        first use, removed by close); None when none can be made (they are then made beside their targets).

        Why: two writer processes making thousands of files in one folder (ATen/ops) queue on that folder's lock,
        and on a disk that deleted many files lately each creation is slow (ext4 skips the recently freed inodes
        one by one): 7,151 files took twice the wall time of one process per folder, and a cold per-operator run
        1.25 times. Made in a folder of its own, each process's files are created beside the other's; only the
        renames share the target folder."""
        if root not in self._staging:
            self._staging[root] = _made_staging(self.root(root)[0])
        found = self._staging[root]
        return None if found is None else found[0]

    def atomic_write(self, root: str) -> Write:
        """write_atomic for the files of root, through its staging folder; once a target lies on another file
        system than it (a mount below the root: EXDEV), that file and the root's later ones are made beside their
        targets."""
        def write(folder: int, name: str, data: bytes) -> None:
            staging = self.staging(root)
            try:
                write_atomic(folder, name, data, staging)
            except OSError as exc:
                if staging is None or exc.errno != errno.EXDEV:
                    raise
                self._remove_staging(root)
                write_atomic(folder, name, data)
        return write

    def _remove_staging(self, root: str) -> None:
        """Close and remove root's staging folder; the root's files are then made beside their targets."""
        staging = self._staging.get(root)
        self._staging[root] = None
        if staging is not None:
            os.close(staging[0])
            try:
                os.rmdir(staging[1], dir_fd=self._open[root][0])
            except OSError:  # (a temporary file left in it by a failed unlink: kept, as beside a target)
                pass

    def close(self) -> None:
        for root in list(self._staging):
            self._remove_staging(root)
        self._staging.clear()
        for fd, _ in self._open.values():
            os.close(fd)
        self._open.clear()

    def __enter__(self) -> OutputRoots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def folder(self, root: str, parts: Sequence[str], display: str) -> int:
        """A new handle of root/parts (made where missing); Refused when a component is a symbolic link."""
        fd = os.dup(self.root(root)[0])
        try:
            for part in parts:
                child = _open_folder(fd, part, display)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd


def _open_made(path: str) -> int:
    """A handle of the folder the user named (symlinks followed: the user's choice), made if missing."""
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
        return os.open(path, flags)


def _made_staging(root: int) -> tuple[int, str] | None:
    """(handle, name) of a new staging folder `.opgen-<pid>-<n>.tmp` in root (one left by a killed run is
    skipped); None when root takes none."""
    for _ in range(100):
        name = f".opgen-{os.getpid()}-{next(_temp_numbers)}.tmp"
        try:
            os.mkdir(name, 0o700, dir_fd=root)
        except FileExistsError:
            continue
        except OSError:
            return None
        try:
            return os.open(name, _FOLDER_FLAGS, dir_fd=root), name
        except OSError:  # (swapped for a link since: left alone)
            return None
    return None


def _open_folder(parent: int, name: str, display: str) -> int:
    """A handle of the folder `name` in `parent`, made if missing; never through a symbolic link."""
    try:
        return _open_no_link(parent, name, display)
    except FileNotFoundError:
        try:
            os.mkdir(name, 0o777, dir_fd=parent)
        except FileExistsError:  # made meanwhile (another writer): opened below, as anything else would be
            pass
        return _open_no_link(parent, name, display)


def _open_no_link(parent: int, name: str, display: str) -> int:
    try:
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        raise
    except OSError as exc:
        _refuse_link(parent, name, display, exc)
        raise


def _refuse_link(parent: int, name: str, display: str, exc: OSError) -> None:
    """Raise Refused when `name` in `parent` is a symbolic link (what O_NOFOLLOW refused); else nothing."""
    try:
        link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return
    if link:
        raise Refused(f"{display}: refusing to write through the symbolic link {name!r} "
                      "(it was made during the run or lies below the output folder)") from exc


def _same_bytes_at(folder: int, name: str, data: bytes, display: str) -> bool:
    """Whether folder/name holds exactly data; read only when it is a regular file of that size (no FIFO is
    waited on, no symlink followed: one is Refused)."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:  # (O_NOFOLLOW on a link, even a dangling one, fails otherwise: nothing to look at)
        return False
    except OSError as exc:
        _refuse_link(folder, name, display, exc)
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        return read_at_most(fd, len(data) + 1) == data  # one byte more: a file that grew since fstat differs
    except OSError:
        return False
    finally:
        os.close(fd)


def write_atomic(folder: int, name: str, data: bytes, staging: int | None = None) -> None:
    """Replace folder/name with data; a crash leaves either the old file or the new one, never a mix. The
    temporary file, `.<name>.<pid>-<n>.tmp` in the staging folder (see OutputRoots.staging) or else beside the
    target, is made without following a link (a name left by a killed run is skipped), mode 0666 less the umask
    as torchgen's files get."""
    where = folder if staging is None else staging
    while True:
        tmp = f".{name}.{os.getpid()}-{next(_temp_numbers)}.tmp"
        try:
            fd = os.open(tmp, _TEMP_FLAGS, 0o666, dir_fd=where)
            break
        except FileExistsError:
            continue
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        # The rename is atomic: an interrupted run leaves the old file or the new one. (No fsync: like
        # torchgen, the output is rebuilt, not kept safe across power loss, and 7,151 fsyncs cost seconds.)
        os.replace(tmp, name, src_dir_fd=where, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=where)
        except OSError:
            pass
        raise


def _write_all(fd: int, data: bytes) -> None:
    """data to fd in os.write calls (a file object would cost an fstat, an ioctl and an lseek per file: thousands
    of system calls in a per-operator run)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


Write = Callable[[int, str, bytes], None]


def _write_at(folder: int, name: str, data: bytes, display: str, write: Write) -> bool:
    if _same_bytes_at(folder, name, data, display):
        return False
    write(folder, name, data)
    return True


def write_if_changed(path: str, data: bytes, *, write: Write | None = None) -> bool:
    """Write data to path (a file the user named, e.g. a depfile's list; its folder is made) unless it
    already holds exactly these bytes; True if written."""
    folder = _open_made(os.path.dirname(path) or ".")
    try:
        return _write_at(folder, os.path.basename(path), data, path, write or write_atomic)
    finally:
        os.close(folder)


def write_files(files: Iterable[tuple[str, str, bytes]], *, write: Write | None = None,
                roots: OutputRoots | None = None, on_file: Callable[[bool], None] | None = None) -> WriteResult:
    """Write (root, relative path, bytes) triples; errors are collected, not raised. Each file is made
    relative to its root's handle without following a symbolic link (see OutputRoots), so it stays inside
    its root whatever changes on disk meanwhile.
    roots: the roots opened by earlier calls of the same run (default: opened here, closed at the end).
    on_file: told of each file written (True) or found unchanged (False), as it goes (a run's progress)."""
    if roots is None:
        with OutputRoots() as own:
            return write_files(files, write=write, roots=own, on_file=on_file)
    written: list[str] = []
    unchanged: list[str] = []
    errors: list[str] = []
    digests: list[tuple[str, str]] = []
    for root, relative, data in files:
        parts = _parts(relative)
        if parts is None:
            errors.append(_refused(root, relative))
            continue
        display = os.path.join(root, *parts)
        try:
            target = os.path.join(roots.root(root)[1], *parts)
            folder = roots.folder(root, parts[:-1], display)
            try:
                changed = _write_at(folder, parts[-1], data, display, write or roots.atomic_write(root))
            finally:
                os.close(folder)
            (written if changed else unchanged).append(target)
            digests.append((target, hashlib.sha256(data).hexdigest()))
            if on_file is not None:
                on_file(changed)
        except Refused as exc:
            errors.append(str(exc))
        except (OSError, ValueError) as exc:  # ValueError: a path the OS cannot take
            errors.append(f"{display}: {getattr(exc, 'strerror', None) or exc}")
    return WriteResult(tuple(written), tuple(unchanged), tuple(errors), tuple(digests))


def make_folder(root: str, relative: str) -> None:
    """Make root/relative (and what it needs) the way files are made: no symbolic link below root followed."""
    parts = _parts(relative) if relative else []
    if parts is None:
        raise Refused(_refused(root, relative))
    with OutputRoots() as roots:
        os.close(roots.folder(root, parts, os.path.join(root, relative)))


def write_all(files: Sequence[tuple[str, str, bytes]]) -> WriteResult:
    """write_files, or nothing at all when any file would leave its root."""
    refused = refusals((root, relative) for root, relative, _ in files)
    return WriteResult((), (), refused) if refused else write_files(files)
