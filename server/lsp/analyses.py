"""Scheduling the analyses: one at a time on the analysis thread, stale ones dropped, no busy wait.

A request wants the analysis of a document as it is now. An analysis under way of an older version
cannot be stopped midway (it runs on a thread): the request waits for it to end, then asks again,
so that a burst of edits costs one analysis at a time, never a queue of stale ones.

Why the shape (issue 15):
- whether a job has ended is read from its future, never from state that a done-callback clears:
  callbacks run on a later turn of the event loop, and a coroutine that loops on "still running?"
  before that turn spins for ever, because awaiting a future that is already done does not yield;
- every wait yields to the event loop, even for a future that is done already;
- a request gives up on an analysis that takes longer than `timeout` (a stuck one), so that it is
  answered (empty, with the failure logged) instead of waiting for ever; the loop itself is never
  blocked, as the work is on a thread.

Nothing here knows LSP.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
# After waiting for an older analysis, how many times a request looks again before it takes the
# newest analysis there is (edits keep coming: it is answered from one a few edits old).
ROUNDS = 3


class AnalysisTimeout(Exception):
    """An analysis took longer than the scheduler's timeout."""


@dataclass(frozen=True)
class Job:
    key: tuple
    future: asyncio.Future


async def settled(future: asyncio.Future, timeout: float) -> bool:
    """Wait until `future` is done or `timeout` passes, yielding to the event loop first in any case.
    True when it is done. Cancelling the waiter does not cancel the future (others may wait on it)."""
    await asyncio.wait({future}, timeout=max(timeout, 0.0))
    return future.done()


def _log_failure(uri: str, future: asyncio.Future) -> None:
    if not future.cancelled() and future.exception() is not None:  # retrieved, so asyncio does not warn
        logger.debug("analysis of %s failed", uri, exc_info=future.exception())


class Scheduler(Generic[T]):
    """Analyses of documents made by `analyse(uri)` on `executor`; `key(uri)` is the key an up-to-date
    analysis has (None: the document is not open), `latest(uri)` the last analysis made (with `.key`)."""

    def __init__(self, executor: Executor, analyse: Callable[[str], T | None],
                 key: Callable[[str], tuple | None], latest: Callable[[str], T | None], timeout: float) -> None:
        self._executor, self._analyse, self._key, self._latest = executor, analyse, key, latest
        self.timeout = timeout
        self._jobs: dict[str, Job] = {}

    def running(self, uri: str) -> Job | None:
        job = self._jobs.get(uri)
        return job if job is not None and not job.future.done() else None

    def forget(self, uri: str) -> None:
        """The document was closed: a job under way ends on its own (and finds no document)."""
        self._jobs.pop(uri, None)

    def _start(self, uri: str, key: tuple) -> Job:
        future = asyncio.get_running_loop().run_in_executor(self._executor, self._analyse, uri)
        future.add_done_callback(lambda f: _log_failure(uri, f))
        job = self._jobs[uri] = Job(key, future)
        future.add_done_callback(lambda f: self._finished(uri, job))
        return job

    def _finished(self, uri: str, job: Job) -> None:
        """A job that has ended is not kept: its analysis is the workspace's to keep or drop (a bound on them)."""
        if self._jobs.get(uri) is job:
            del self._jobs[uri]

    async def get(self, uri: str) -> T | None:
        """The analysis of the document as it is now (or, while edits keep coming, the newest there is)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        for _ in range(ROUNDS):
            key = self._key(uri)
            if key is None:
                return None
            latest = self._latest(uri)
            if latest is not None and latest.key == key:  # type: ignore[attr-defined]
                return latest
            job = self.running(uri) or self._start(uri, key)
            if not await settled(job.future, deadline - loop.time()):
                raise AnalysisTimeout(f"the analysis of {uri} takes more than {self.timeout:g} s")
            if job.key == key:
                return job.future.result()
            # It was an older version's: look again (the text may have changed once more meanwhile).
        return self._latest(uri)
