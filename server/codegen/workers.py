"""Building and writing the planned files in forked processes (the machine's cores), with the writer's
guarantees unchanged: every file is still written by writer.write_files, atomically and only when changed.

The work comes in units (lists of jobs that share memoized pieces, e.g. a sharded family, so that no piece is
computed in two processes). After the model is built, the parent puts every unit's number in a pipe, freezes
its heap out of the garbage collector (so that collections in a child do not copy the shared pages) and forks;
then the parent and each child take unit numbers from the pipe (4-byte reads of a pipe are atomic) until it is
empty. A child sends back only a summary (the paths written and unchanged, the errors) and exits.

A failure becomes an error in the result, never a hang or a silent partial result: a PlanError or any other
exception in a process empties the pipe (so the others stop early) and is reported in one line; a child that dies
without a summary (killed, out of memory) is reported with how it ended. A child dies with its parent (PR_SET_PDEATHSIG),
so killing `opgen generate` stops every writer, as it did with one process.
"""

from __future__ import annotations

import gc
import mmap
import os
import pickle
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence

from ..frozen import record
from .plan import PlanError
from .progress import Progress, Report
from .writer import OutputRoots, WriteResult, write_files

_CLAIM = struct.Struct("<I")
# Every claim is written before anyone reads: they must fit in a pipe's smallest buffer (one page, when the
# user's pipe buffers are over the system's soft limit), or the write would block for ever.
_MAX_UNITS = 4096 // _CLAIM.size - 1


@record
class Job:
    """One file: its output folder, its path inside it, and how to make its bytes (may raise PlanError)."""

    root: str
    path: str
    data: Callable[[], bytes]


@record
class Summary:
    """What one process did: the writer's result, and the error that stopped it (PlanError text, or one line for an
    internal error)."""

    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    stopped_by: str | None = None
    digests: tuple[tuple[str, str], ...] = ()
    finished: tuple[object, ...] = ()  # what `finish` returned


# Called in each process once its units are written, with what it wrote; returns what the parent gets back.
Finish = Callable[[WriteResult], tuple[object, ...]]

_SLOT = struct.Struct("<QQ")  # one process's files done and written


class SharedTally:
    """The files each process has done and written, in memory the forked processes share: a slot each, written by
    its process alone (no lock), read by the parent to report the run's progress."""

    def __init__(self, processes: int) -> None:
        self._memory = mmap.mmap(-1, _SLOT.size * processes)  # anonymous and shared: forks see the same pages
        self._slots = processes
        self.slot = 0  # this process's (the parent's is 0; a child takes its own after the fork)
        self._done = self._written = 0

    def count(self, written: bool) -> None:
        self._done += 1
        self._written += written
        _SLOT.pack_into(self._memory, self.slot * _SLOT.size, self._done, self._written)

    def totals(self) -> tuple[int, int]:
        """(done, written) of every process so far."""
        counts = [_SLOT.unpack_from(self._memory, i * _SLOT.size) for i in range(self._slots)]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)

    def close(self) -> None:
        self._memory.close()


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def merge_units(units: Sequence[Sequence[int]], limit: int = _MAX_UNITS) -> list[list[int]]:
    """At most `limit` units, by joining neighbours (their order is kept)."""
    size = -(-len(units) // limit) if units else 1
    return [[j for unit in units[i:i + size] for j in unit] for i in range(0, len(units), size)]


def _claims(fd: int) -> Iterator[int]:
    while True:
        chunk = os.read(fd, _CLAIM.size)
        if len(chunk) < _CLAIM.size:
            return
        yield _CLAIM.unpack(chunk)[0]


def _drain(fd: int) -> None:
    """Take every remaining claim, so that the other processes stop."""
    for _ in _claims(fd):
        pass


def _work(fd: int, jobs: Sequence[Job], units: Sequence[Sequence[int]],
          on_file: Callable[[bool], None] | None = None,
          finish: Finish | None = None, unit_done: Callable[[], None] | None = None) -> Summary:
    written: list[str] = []
    unchanged: list[str] = []
    errors: list[str] = []
    digests: list[tuple[str, str]] = []
    roots = OutputRoots()  # each output folder opened once in this process
    try:
        for unit in _claims(fd):
            result = write_files(((jobs[i].root, jobs[i].path, jobs[i].data()) for i in units[unit]), roots=roots,
                                 on_file=on_file)
            written += result.written
            unchanged += result.unchanged
            errors += result.errors
            digests += result.digests
            if unit_done is not None:
                unit_done()
        done = WriteResult(tuple(written), tuple(unchanged), tuple(errors), tuple(digests))
        finished = finish(done) if finish is not None else ()
    except PlanError as exc:
        _drain(fd)
        return Summary(tuple(written), tuple(unchanged), tuple(errors), str(exc), tuple(digests))
    except Exception as exc:  # noqa: BLE001  (a bug must reach the user as an error, with where it happened)
        _drain(fd)
        return Summary(tuple(written), tuple(unchanged), tuple(errors), internal_error(exc), tuple(digests))
    finally:
        roots.close()
    return Summary(tuple(written), tuple(unchanged), tuple(errors), digests=tuple(digests), finished=finished)


# The folder holding the opgen_lsp package, as the interpreter names its files in tracebacks.
# The package folder, named opgen_lsp in messages whatever the folder is called (server/ in a checkout).
_PACKAGE = os.path.dirname(os.path.dirname(__file__))


def internal_error(exc: Exception) -> str:
    """One line for an exception that is a bug of opgen's, not a mistake in the inputs: what it is and the line of
    code that raised it (a traceback would bury the error the user can act on: report it)."""
    what = " ".join(f"{type(exc).__name__}: {exc}".split())
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return f"internal error: {what}"
    last = frames[-1]
    inside = last.filename.startswith(_PACKAGE + os.sep)
    path = "opgen_lsp/" + os.path.relpath(last.filename, _PACKAGE) if inside else last.filename
    return f"internal error: {what} (raised at {path}:{last.lineno} in {last.name}; a bug in opgen, please report it)"


def _die_with_parent(parent: int) -> None:
    try:
        import ctypes  # noqa: PLC0415  (only children need it)

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _child(claims: int, report: int, jobs: Sequence[Job], units: Sequence[Sequence[int]], parent: int,
           tally: SharedTally, finish: Finish | None, unit_done: Callable[[], None] | None) -> None:
    """Runs in the forked child; never returns."""
    status = 1
    try:
        _die_with_parent(parent)
        data = pickle.dumps(_work(claims, jobs, units, tally.count, finish, unit_done))
        view = memoryview(data)
        while view:
            view = view[os.write(report, view):]
        status = 0
    finally:
        os._exit(status)


def _collect(pid: int, report: int) -> Summary:
    """The child's summary, once it has exited (an error summary if it sent none)."""
    chunks = []
    while chunk := os.read(report, 1 << 16):
        chunks.append(chunk)
    os.close(report)
    _, status = os.waitpid(pid, 0)
    if chunks:
        try:
            return pickle.loads(b"".join(chunks))
        except (pickle.UnpicklingError, EOFError, ValueError):
            pass
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {os.WTERMSIG(status)}"
    else:
        how = f"exited with status {os.waitstatus_to_exitcode(status)}"
    return Summary(stopped_by=f"worker process {pid} {how} before reporting; the files it was writing may be "
                              "missing or old")


def write_in_processes(jobs: Sequence[Job], units: Sequence[Sequence[int]], processes: int,
                       progress: Report | None = None,
                       finish: Finish | None = None, unit_done: Callable[[], None] | None = None
                       ) -> tuple[WriteResult, tuple[object, ...], tuple[str, ...]]:
    """Write every job, units spread over `processes` processes (this one included).

    finish: called in each process once all the units it took are written, with what that process wrote (e.g. to keep
    what it computed, to read its files back while the other processes read theirs); what it returns (picklable)
    comes back, every process's joined.
    unit_done: called in a process after each unit it took is written (e.g. to let go of the pieces it shared).
    Returns the merged writer result, what `finish` returned, and the errors that stopped a process (empty when all
    went well).
    progress: told, in this process, of the files done by every process, as this one finishes each of its own.
    """
    units = merge_units(units)
    processes = min(processes, len(units))  # a process with nothing to take is not worth its fork
    planned = sum(len(unit) for unit in units)
    tally = SharedTally(max(processes, 1))

    def on_file(written: bool) -> None:
        tally.count(written)
        if progress is not None:
            progress(Progress(planned, *tally.totals()))

    claims_read, claims_write = os.pipe()
    os.write(claims_write, b"".join(_CLAIM.pack(i) for i in range(len(units))))
    os.close(claims_write)  # readers see the end once every claim is taken
    sys.stdout.flush()
    sys.stderr.flush()
    # The model is frozen out of the collector (no collection first: it costs more time than the little garbage
    # it would free), and the collector paused while files are built: their pieces are strings and lists that
    # form no cycles, and passes over the growing caches cost several per cent of the time.
    gc.freeze()
    collecting = gc.isenabled()
    gc.disable()
    children: list[tuple[int, int]] = []
    parent = os.getpid()
    try:
        for _ in range(max(processes, 1) - 1):
            try:
                report_read, report_write = os.pipe()
            except OSError:  # no more file descriptors: the processes running take the whole share
                break
            try:
                pid = os.fork()
            except OSError:  # no more processes to be had: the ones running take the whole share
                os.close(report_read)
                os.close(report_write)
                break
            if pid == 0:
                os.close(report_read)
                tally.slot = len(children) + 1
                _child(claims_read, report_write, jobs, units, parent, tally, finish, unit_done)
            os.close(report_write)
            children.append((pid, report_read))
        summaries = [_work(claims_read, jobs, units, on_file, finish, unit_done)]
    finally:
        summaries_of_children = [_collect(pid, fd) for pid, fd in children]
        os.close(claims_read)
        tally.close()
        if collecting:
            gc.enable()
        gc.unfreeze()
    summaries += summaries_of_children
    result = WriteResult(tuple(p for s in summaries for p in s.written),
                         tuple(p for s in summaries for p in s.unchanged),
                         tuple(e for s in summaries for e in s.errors),
                         tuple(d for s in summaries for d in s.digests))
    if progress is not None:  # the children's last files, done after this process's last
        progress(Progress(planned, len(result.written) + len(result.unchanged), len(result.written)))
    # Processes that met the same bug say so in the same words: once is enough.
    finished = tuple(item for s in summaries for item in s.finished)
    return result, finished, tuple(dict.fromkeys(s.stopped_by for s in summaries if s.stopped_by is not None))
