"""What every worker process of opgen runs first (the initializer of its process pools).

A worker inherits its parent's standard streams. A language server's are the client's pipes: a worker left
holding them keeps them open after the server exits, and the client, which waits for their end, waits for ever.
A pool worker also outlives a server that exits without shutting its pool down. So a worker gives its streams up
at once and ends itself when its parent is gone, also when the parent was gone before the worker had started (a
server may exit while its pool's workers still import: the parent's pid is then no longer there to compare with,
but its sentinel pipe is closed).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from multiprocessing.process import BaseProcess

ORPHAN_POLL_SECONDS = 1.0


def start_worker() -> None:
    """Pool initializer: standard streams onto the null device, and an exit as soon as the parent is gone."""
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.close(null)
    watch = threading.Thread(target=_exit_with_parent, args=(multiprocessing.parent_process(), os.getppid()),
                             name="opgen-orphan-watch", daemon=True)
    watch.start()


def _exit_with_parent(parent: BaseProcess | None, parent_pid: int) -> None:
    if parent is not None:
        parent.join()  # returns once the parent's end of the sentinel pipe is closed: the parent has ended
    else:  # not started by multiprocessing: the parent's pid changes when it ends
        while os.getppid() == parent_pid:
            time.sleep(ORPHAN_POLL_SECONDS)
    os._exit(0)  # no one will read this worker's results
