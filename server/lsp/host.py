"""What the feature modules (commands, kernels) may ask of the server that composes them.

server.py imports those modules and passes itself; they see it only through these Protocols (and those
they extend them with), so they never import server.py back and a test can hand them a stand-in.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from typing import Protocol

from lsprotocol import types
from pygls.progress import Progress

from .config import Settings


class Host(Protocol):
    """Messages to the user, `$/progress`, the settings and the worker threads."""

    @property
    def settings(self) -> Settings: ...

    @property
    def configured(self) -> asyncio.Event: ...  # set once the settings are known

    @property
    def work_done_progress(self) -> Progress: ...

    @property
    def analysis_executor(self) -> Executor: ...

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None: ...

    def warn(self, message: str) -> None: ...

    def report_failure(self, what: str, exc: BaseException) -> None: ...

    async def begin_progress(self, kind: str, begin: types.WorkDoneProgressBegin) -> str | None: ...

    def recheck_stale(self) -> None: ...
