"""A pool's worker ends with the process that started it (server/worker_process.py), and lets go of the
parent's output at once: a server that ends by os._exit, while its worker is busy or still starting, must not
leave the worker holding the client's pipes (pytest-lsp then waits for ever) or living on (13 such workers were
found after one run of the suite: their server had ended before their initializer ran)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

# Starts a pool of the given start method, prints its worker's pid, and ends: at once (the worker is still
# importing), or once the worker is busy with a long job.
PARENT = """\
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from opgen_lsp.worker_process import start_worker

if __name__ == "__main__":
    method, when = sys.argv[1:]
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context(method),
                               initializer=start_worker)
    if when == "busy":
        print(pool.submit(os.getpid).result(), flush=True)
        pool.submit(time.sleep, 60)
        time.sleep(0.2)
    else:
        pool.submit(time.sleep, 60)
        print(*pool._processes, flush=True)
    os._exit(0)
"""


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
@pytest.mark.parametrize("when", ["starting", "busy"])
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_worker_ends_with_its_parent_and_lets_go_of_its_output(tmp_path, method: str, when: str) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    try:  # the output ends only when every process holding the pipe has let go of it
        done = subprocess.run([sys.executable, str(script), method, when], capture_output=True, text=True,
                              timeout=30)
    except subprocess.TimeoutExpired as exc:
        for pid in (exc.stdout or b"").split():  # (the stray worker, so that the failing test leaves none)
            os.kill(int(pid), 9)
        pytest.fail(f"the {method} worker outlived its parent and kept its stdout open")
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert pids, done.stderr
    stray = [p for p in pids if not _gone(p, within=15.0)]
    for pid in stray:
        os.kill(pid, 9)
    assert not stray, f"the {method} worker outlived its parent ({when})"
