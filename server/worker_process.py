"""What every worker process of opgen runs first (the initializer of its process pools).

A worker inherits its parent's standard streams. A language server's are the client's pipes: a worker left
holding them keeps them open after the server exits, and the client, which waits for their end, waits for ever.
A pool worker also outlives a server that exits without shutting its pool down. So a worker gives its streams up
at once and ends itself when its parent is gone.
"""

from __future__ import annotations

import os
import threading
import time

ORPHAN_POLL_SECONDS = 1.0


def start_worker() -> None:
    """Pool initializer: standard streams onto the null device, and an exit as soon as the parent is gone."""
    null = os.open(os.devnull, os.O_RDWR)
    for stream in (0, 1, 2):
        os.dup2(null, stream)
    os.close(null)
    parent = os.getppid()
    threading.Thread(target=_exit_when_orphaned, args=(parent,), name="opgen-orphan-watch", daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_POLL_SECONDS)
    os._exit(0)  # the parent is gone: no one will read this worker's results
