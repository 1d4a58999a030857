"""The server ends when its client does, even when its event loop is stuck (issue 15).

- `watch(pid)`: a daemon thread polls the client process named in `initialize` (processId) and ends
  this process when it is gone (exited, a zombie, or its pid reused by another process), as the LSP
  specification asks. A pid that cannot be seen when it is named (a client in another pid namespace)
  is not watched, rather than taken for gone.
- `exit_after(seconds)`: once the connection has ended (stdin closed), a clean exit is given that
  long; a stuck analysis thread (which the interpreter would wait for) or a stuck loop cannot keep
  the process alive past it.

Threads, not coroutines: a loop that never yields never runs a coroutine.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

logger = logging.getLogger(__name__)

POLL_S = 1.0
EXIT_GRACE_S = 3.0


def _start_time(pid: int) -> str | None:
    """The process' start time (Linux /proc), None where there is no /proc; '' when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except FileNotFoundError:
        return "" if os.path.isdir("/proc/self") else None
    except OSError:
        return None
    return "" if fields[0] == b"Z" else fields[19].decode()


def alive(pid: int, started: str | None = None) -> bool:
    """Whether process `pid` runs (and, when `started` is known, is the same process as then)."""
    now = _start_time(pid)
    if now is not None:
        return now != "" and (started is None or now == started)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def hard_exit(code: int, why: str) -> None:
    logger.warning("opgen-lsp: %s; exiting", why)
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:
            pass
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)


def watch(pid: int | None, poll: float = POLL_S) -> bool:
    """Exit when the process `pid` is gone; False (not watched) when there is none to watch."""
    if pid is None or pid <= 0 or pid == os.getpid():
        return False
    started = _start_time(pid)
    if not alive(pid, started):
        logger.warning("opgen-lsp: the client process %s named in initialize cannot be seen; it is not watched", pid)
        return False

    def run() -> None:
        while alive(pid, started):
            time.sleep(poll)
        hard_exit(1, f"the client process {pid} is gone")

    threading.Thread(target=run, name="opgen-watchdog", daemon=True).start()
    return True


def exit_after(seconds: float = EXIT_GRACE_S, code: int = 0) -> None:
    """End the process `seconds` from now, unless it has ended by itself before."""
    def run() -> None:
        time.sleep(seconds)
        hard_exit(code, f"still running {seconds:g} s after the connection ended")

    threading.Thread(target=run, name="opgen-exit", daemon=True).start()
