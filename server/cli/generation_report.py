"""What generate-backend and generate-lazy print of a generation's result, and their exit status (and the
summary of the files written, which generate prints too)."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, TextIO

from .. import status
from ..report import RENDERERS

if TYPE_CHECKING:
    from ..codegen.backend.run import BackendResult  # a lazy run's result too
    from ..codegen.progress import Progress
    from ..codegen.writer import WriteResult


def _same(path: str, data: bytes) -> bool:
    """Whether path holds exactly data (read with the bounded reader: a FIFO there is not waited on)."""
    from ..input_file import UnreadableFile, read_bytes

    try:
        return read_bytes(path, limit=len(data)) == data
    except UnreadableFile:
        return False


def report_generation(result: BackendResult, *, output_dir: str, dry_run: bool, verbose: bool, fmt: str,
                      nothing_to_generate: str | None = None, release_label: str = "") -> int:
    """Print a backend/lazy generation result (diagnostics, errors, files) and return the exit status."""
    if result.diagnostics:
        sys.stdout.write(RENDERERS[fmt](list(result.diagnostics)))
    for error in result.errors:
        print(f"opgen: {error}", file=sys.stderr)
    if release_label and result.written is None:  # (else the summary of the files written says it)
        print(f"opgen: {'checked' if result.has_errors else 'read'} as {release_label}", file=sys.stderr)
    if not result.read:
        return status.USAGE
    if result.has_errors:
        return status.INPUT_ERRORS
    if nothing_to_generate is not None and not result.files:
        print(f"opgen: {nothing_to_generate}", file=sys.stderr)
        return status.CLEAN
    if dry_run:
        for f in result.files:
            target = os.path.join(output_dir, f.path)
            print(f"{target}: {'unchanged' if _same(target, f.data) else 'would be written'}")
        return status.CLEAN
    if result.written is not None:
        report_written(result.written, verbose=verbose, as_what=release_label)
    return status.CLEAN


def report_written(written: WriteResult, *, verbose: bool, as_what: str = "", why: str = "") -> None:
    """Each file written (with -v, on stdout) and how many were written and unchanged, as what, and why (on
    stderr)."""
    if verbose:
        for path in written.written:
            print(f"wrote {path}")
    as_release = f", as {as_what}" if as_what else ""
    print(f"opgen: {len(written.written)} file(s) written, {len(written.unchanged)} unchanged{as_release}"
          f"{f' ({why})' if why else ''}", file=sys.stderr)


class TerminalProgress:
    """generate's progress line (files done of those planned, how many written), redrawn in place on a terminal
    at most every INTERVAL seconds, and cleared before the summary is printed."""

    INTERVAL = 0.1

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown_at: float | None = None

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        last = progress.done == progress.planned
        if self._shown_at is not None and now - self._shown_at < self.INTERVAL and not last:
            return
        self._shown_at = now
        self._stream.write(f"\r\x1b[Kopgen: {progress.text()}")
        self._stream.flush()

    def finish(self) -> None:
        if self._shown_at is not None:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def terminal_progress(stream: TextIO) -> TerminalProgress | None:
    """A progress line on `stream` when it is a terminal; None (silent) when it is a file or a pipe."""
    try:
        return TerminalProgress(stream) if stream.isatty() else None
    except (OSError, ValueError):  # a closed stream
        return None
