"""The analysis scheduler (server/lsp/analyses.py): progress whatever the interleaving, stale work dropped,
a stuck analysis answered by a timeout. Each test runs its event loop on a thread of its own and is failed
when that thread does not end in time: a loop that spins (issue 15) blocks its own timeouts."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from opgen_lsp.lsp.analyses import AnalysisTimeout, Scheduler, settled

BOUND_S = 20.0  # generous: a loaded 2-core machine


def run_bounded(main) -> object:
    """asyncio.run(main()) on its own thread; fails when it does not end within BOUND_S."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = asyncio.run(main())
        except BaseException as exc:  # re-raised on the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_S)
    assert not thread.is_alive(), f"the event loop did not finish within {BOUND_S:g} s (spinning or stuck)"
    if "error" in out:
        raise out["error"]
    return out.get("value")


@dataclass(frozen=True)
class Made:
    key: tuple


class Document:
    """A document whose analysis blocks until released, counting the analyses made."""

    def __init__(self) -> None:
        self.generation = 0
        self.made: list[Made] = []
        self.release = threading.Event()
        self.started = threading.Event()

    def key(self, uri: str) -> tuple:
        return (self.generation,)

    def analyse(self, uri: str) -> Made:
        key = self.key(uri)  # the text as it is when the analysis starts
        self.started.set()
        self.release.wait()
        made = Made(key)
        self.made.append(made)
        return made

    def latest(self, uri: str) -> Made | None:
        return self.made[-1] if self.made else None


def scheduler(doc: Document, executor: ThreadPoolExecutor, timeout: float = 60.0) -> Scheduler:
    return Scheduler(executor, doc.analyse, doc.key, doc.latest, timeout)


def test_a_request_arriving_as_an_older_analysis_ends_makes_progress():
    """The livelock's interleaving: the older analysis' future is done, its callbacks have not run yet,
    and a request for the newer text comes in."""
    async def main():
        doc, executor = Document(), ThreadPoolExecutor(1)
        runs = scheduler(doc, executor)
        first = asyncio.ensure_future(runs.get("u"))
        await asyncio.sleep(0)
        await asyncio.get_running_loop().run_in_executor(None, doc.started.wait)
        doc.generation += 1  # an edit while the analysis of generation 0 runs
        job = runs._jobs["u"]
        doc.release.set()
        while not job.future.done():  # done, and in the same turn (before its callbacks run) a request
            await asyncio.sleep(0.001)
        got = await runs.get("u")
        executor.shutdown()
        return got, await first, doc.made
    got, first, made = run_bounded(main)
    assert got.key == (1,)
    assert first.key == (0,)
    assert [m.key for m in made] == [(0,), (1,)]


def test_a_burst_of_edits_costs_one_analysis_at_a_time_not_one_per_edit():
    async def main():
        doc, executor = Document(), ThreadPoolExecutor(1)
        runs = scheduler(doc, executor)
        waiters = [asyncio.ensure_future(runs.get("u"))]
        await asyncio.get_running_loop().run_in_executor(None, doc.started.wait)
        for _ in range(50):  # edits and requests while the first analysis runs
            doc.generation += 1
            waiters.append(asyncio.ensure_future(runs.get("u")))
            await asyncio.sleep(0)
        doc.release.set()
        answers = await asyncio.gather(*waiters)
        executor.shutdown()
        return answers, doc.made
    answers, made = run_bounded(main)
    assert [m.key for m in made] == [(0,), (50,)]  # the running one, then the text as it is: none between
    assert all(a.key == (50,) for a in answers[1:])


def test_a_stuck_analysis_times_out_and_the_loop_keeps_serving():
    async def main():
        doc, executor = Document(), ThreadPoolExecutor(1)
        runs = scheduler(doc, executor, timeout=0.3)
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)
        ticker = asyncio.ensure_future(tick())
        with pytest.raises(AnalysisTimeout):
            await runs.get("u")
        ticker.cancel()
        doc.release.set()  # let the thread end
        executor.shutdown()
        return ticks
    assert run_bounded(main) > 3


def test_waiting_for_a_future_that_is_done_yields_to_the_event_loop():
    async def main():
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        future.set_result(None)
        order = []
        loop.call_soon(order.append, "other")
        assert await settled(future, 1.0)
        order.append("after")
        return order
    assert run_bounded(main) == ["other", "after"]


def test_a_closed_document_has_no_analysis():
    async def main():
        doc, executor = Document(), ThreadPoolExecutor(1)
        runs = Scheduler(executor, doc.analyse, lambda uri: None, doc.latest, 5.0)
        got = await runs.get("u")
        executor.shutdown()
        return got, doc.made
    assert run_bounded(main) == (None, [])
