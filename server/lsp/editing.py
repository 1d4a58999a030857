"""The checks of a change to native_functions.yaml that PyTorch's CI runs besides gen.py: the NATIVEFUNCTIONS
lint's round trip (OPG009, its quick fix and textDocument/formatting) and schema compatibility against the
file's git HEAD (OPG209/OPG210).

The round trip costs seconds on the real file (ruamel.yaml is pure Python), so these checks run when a
document is opened or saved, not on each keystroke, in a worker process of their own (no contention with
the analyses for the interpreter). Their diagnostics are shown while the text is the one they were computed
for; an edit hides them until the next save.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor

from lsprotocol import types

from ..analysis.compat import change_diagnostics, schema_changes
from ..analysis.pytorch_format import LoadFailure, format_diagnostic, normalize_newlines, round_trip, text_edits
from ..diagnostics import Diagnostic
from ..frozen import record
from ..index.base_text import git_show
from ..text import Span
from ..worker_process import start_worker
from .convert import Encoding, Lines, span_to_range
from .convert import diagnostics as lsp_diagnostics

log = logging.getLogger(__name__)
FORMAT_TITLE = "Format as PyTorch's NATIVEFUNCTIONS lint does (ruamel.yaml round trip)"


@record
class EditingResult:
    """What the checks found for one text."""

    text: str
    formatted: str | LoadFailure | None  # None: the format check is off
    diagnostics: tuple[Diagnostic, ...]


def run_checks(text: str, path: str | None, format_check: bool, base: str | None) -> EditingResult:
    """The checks of one text (in the worker process): the round trip, then the schemas against `base` of git."""
    found: list[Diagnostic] = []
    formatted: str | LoadFailure | None = None
    if format_check:
        formatted = round_trip(normalize_newlines(text))
        # A file ruamel cannot read is one PyYAML cannot read either: OPG001 says where, once.
        if not isinstance(formatted, LoadFailure) and (d := format_diagnostic(text, formatted)) is not None:
            found.append(d)
    if base is not None and path is not None:
        shown = git_show(path, base)
        if shown.text is not None:  # no git, not a repository, a new file: nothing to compare with, silently
            found.extend(change_diagnostics(schema_changes(shown.text, text), text, base))
    return EditingResult(text, formatted, tuple(found))


def format_only(text: str) -> str | LoadFailure:
    return round_trip(normalize_newlines(text))


def edits(lines: Lines, text: str, formatted: str, encoding: Encoding) -> list[types.TextEdit]:
    """The round trip as the fewest whole-line edits of the document. A document with carriage returns is
    replaced whole: `lintrunner -a` writes the replacement's "\n" line ends throughout."""
    if "\r" in text:
        end = span_to_range(lines, Span.point(len(lines) - 1, len(lines[-1])), encoding).end if len(lines) else None
        whole = types.Range(start=types.Position(line=0, character=0), end=end or types.Position(line=0, character=0))
        return [types.TextEdit(range=whole, new_text=formatted)]
    return [types.TextEdit(range=types.Range(start=types.Position(line=e.start_line, character=0),
                                             end=types.Position(line=e.end_line, character=0)), new_text=e.new_text)
            for e in text_edits(text, formatted)]


class EditingChecks:
    """The latest result of each document's checks; owned by the server, one worker process, started on first use."""

    def __init__(self) -> None:
        self._results: dict[str, EditingResult] = {}
        self._executor: Executor | None = None
        # The check submitted last for each document and not finished yet: a newer text or closing the document
        # cancels it while it waits for the worker (a queued check holds its text: 30 real files opened in a row
        # queue a minute of round trips, whose texts and work items outlived the documents).
        self._waiting: dict[str, Future] = {}

    def executor(self) -> Executor:
        if self._executor is None:
            # spawn: the server has threads, and a forked child would inherit their locks
            self._executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=start_worker)
        return self._executor

    def submit(self, uri: str, check: Callable[..., EditingResult], *args: object) -> Future:
        """Run `check(*args)` for the document in the worker, in place of the one it still waits for."""
        self._cancel(uri)
        work = self._waiting[uri] = self.executor().submit(check, *args)
        work.add_done_callback(lambda done: self._finished(uri, done))
        return work

    def _finished(self, uri: str, work: Future) -> None:
        if self._waiting.get(uri) is work:
            del self._waiting[uri]

    def _cancel(self, uri: str) -> None:
        work = self._waiting.pop(uri, None)
        if work is not None:
            work.cancel()  # only one still waiting for the worker is cancelled; a running one ends on its own

    def diagnostics_for(self, uri: str, text: str) -> tuple[Diagnostic, ...]:
        result = self._results.get(uri)
        return result.diagnostics if result is not None and result.text == text else ()

    def result(self, uri: str) -> EditingResult | None:
        return self._results.get(uri)

    def formatted_for(self, uri: str, text: str) -> str | LoadFailure | None:
        result = self._results.get(uri)
        return result.formatted if result is not None and result.text == text else None

    def store(self, uri: str, result: EditingResult) -> bool:
        """Keep a new result; whether the diagnostics shown change."""
        old = self._results.get(uri)
        self._results[uri] = result
        shown = old.diagnostics if old is not None else ()
        return shown != result.diagnostics or (bool(shown) and old is not None and old.text != result.text)

    def forget(self, uri: str) -> None:
        self._results.pop(uri, None)
        self._cancel(uri)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)


def code_actions(uri: str, lines: Lines, text: str, result: EditingResult | None, rng: types.Range,
                 encoding: Encoding) -> list[types.CodeAction]:
    """The quick fix of OPG009 on its line: the whole round trip, as one edit of the document."""
    if result is None or result.text != text or not isinstance(result.formatted, str):
        return []
    found = [d for d in result.diagnostics if d.code == "OPG009"
             and d.span.start_line <= rng.end.line and rng.start.line <= d.span.end_line]
    if not found:
        return []
    return [types.CodeAction(title=FORMAT_TITLE, kind=types.CodeActionKind.QuickFix, is_preferred=True,
                             diagnostics=lsp_diagnostics(lines, found, encoding),
                             edit=types.WorkspaceEdit(changes={uri: edits(lines, text, result.formatted, encoding)}))]
