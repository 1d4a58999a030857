"""Writing in forked processes: every file written once, failures are errors (never a hang, never silent)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from opgen_lsp.codegen.plan import PlanError
from opgen_lsp.codegen.workers import Job, internal_error, merge_units, write_in_processes

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def jobs_of(root: Path, n: int, data=None) -> list[Job]:
    return [Job(str(root), f"d{i % 3}/f{i}.h", data or (lambda i=i: f"file {i}\n".encode())) for i in range(n)]


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_every_file_is_written_once_whatever_the_number_of_processes(tmp_path: Path, processes: int) -> None:
    jobs = jobs_of(tmp_path, 40)
    result, _, stopped = write_in_processes(jobs, [[i] for i in range(40)], processes)
    assert stopped == () and result.ok
    assert sorted(result.written) == sorted(str(tmp_path / j.path) for j in jobs)
    assert all((tmp_path / f"d{i % 3}/f{i}.h").read_bytes() == f"file {i}\n".encode() for i in range(40))
    again, _, _ = write_in_processes(jobs, [[i] for i in range(40)], processes)
    assert again.written == () and len(again.unchanged) == 40


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_finish_runs_in_each_process_with_its_own_files_and_what_it_returns_comes_back(tmp_path: Path,
                                                                                     processes: int) -> None:
    def finish(done) -> tuple[object, ...]:  # what this process wrote, as the process that wrote it
        return tuple((os.getpid(), path) for path, _ in done.digests)

    jobs = jobs_of(tmp_path, 40)
    result, finished, stopped = write_in_processes(jobs, [[i] for i in range(40)], processes, finish=finish)
    assert stopped == () and len(result.written) == 40
    assert sorted(path for _, path in finished) == sorted(result.written)  # each file told once, by one process
    assert len({pid for pid, _ in finished}) <= processes


def test_a_plan_error_in_any_process_stops_the_run_with_its_message(tmp_path: Path) -> None:
    def bad() -> bytes:
        raise PlanError("no template Nope.h in the templates folder")

    jobs = jobs_of(tmp_path, 20) + [Job(str(tmp_path), "bad.h", bad)]
    _, _, stopped = write_in_processes(jobs, [[20]] + [[i] for i in range(20)], 2)
    assert stopped == ("no template Nope.h in the templates folder",)
    assert not (tmp_path / "bad.h").exists()


def test_an_unexpected_exception_is_one_line_naming_it_and_where_it_was_raised(tmp_path: Path) -> None:
    def broken() -> bytes:
        raise KeyError("oops")

    _, _, stopped = write_in_processes([Job(str(tmp_path), "x.h", broken)], [[0]], 2)
    assert len(stopped) == 1 and "\n" not in stopped[0]
    assert stopped[0].startswith("internal error: KeyError: 'oops' (raised at ") and " in broken;" in stopped[0]


def test_processes_meeting_the_same_bug_report_it_once(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()

    def broken() -> bytes:  # each process waits until both have taken a file, then fails the same way
        (seen / str(os.getpid())).touch()
        deadline = time.monotonic() + 30
        while len(list(seen.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise ValueError("bad")

    jobs = [Job(str(tmp_path / "out"), f"f{i}.h", broken) for i in range(4)]
    _, _, stopped = write_in_processes(jobs, [[i] for i in range(4)], 2)
    assert len(list(seen.iterdir())) == 2
    assert len(stopped) == 1 and stopped[0].startswith("internal error: ValueError: bad (raised at ")


def test_an_internal_error_names_opgens_file_from_the_package() -> None:
    try:
        merge_units(None)  # type: ignore[arg-type]
    except TypeError as exc:
        said = internal_error(exc)
    assert "\n" not in said and " (raised at opgen_lsp/codegen/workers.py:" in said, said


def test_a_worker_that_dies_is_reported(tmp_path: Path) -> None:
    parent = os.getpid()

    def die_in_child() -> bytes:
        if os.getpid() != parent:
            os._exit(7)
        time.sleep(0.01)  # leave the child time to claim a file
        return b"written by the parent\n"

    jobs = [Job(str(tmp_path), f"f{i}.h", die_in_child) for i in range(50)]
    _, _, stopped = write_in_processes(jobs, [[i] for i in range(50)], 2)
    assert len(stopped) == 1 and "worker process" in stopped[0] and "exited with status 7" in stopped[0]


def test_merge_units_keeps_order_and_bounds_the_count() -> None:
    units = [[i] for i in range(10)]
    assert merge_units(units, limit=20) == units
    merged = merge_units(units, limit=4)
    assert len(merged) <= 4 and [j for u in merged for j in u] == list(range(10))


def test_running_out_of_file_descriptors_for_a_child_leaves_its_share_to_the_others(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    import errno

    from opgen_lsp.codegen import workers

    real_pipe, calls = os.pipe, []

    def pipe():  # the claims' pipe and the first child's; then the descriptors run out
        calls.append(1)
        if len(calls) > 2:
            raise OSError(errno.EMFILE, "Too many open files")
        return real_pipe()

    monkeypatch.setattr(workers.os, "pipe", pipe)
    jobs = jobs_of(tmp_path, 30)
    result, _, stopped = write_in_processes(jobs, [[i] for i in range(30)], 4)
    assert stopped == () and result.ok and len(result.written) == 30


@pytest.mark.parametrize("value, expected", [("3", 3), ("", None), ("0", None), ("two", None), ("²", None), ("٣", None)])
def test_opgen_processes_takes_a_positive_ascii_number_only(monkeypatch, value: str, expected: int | None) -> None:
    from opgen_lsp.codegen.generate import default_processes

    monkeypatch.setenv("OPGEN_PROCESSES", value)
    monkeypatch.setattr("opgen_lsp.codegen.generate.usable_cpus", lambda: 7)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    assert default_processes() == (expected if expected is not None else 2)
