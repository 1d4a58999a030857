"""The analyses the server keeps: those of the most recently used open documents, at most a bound of them.

An analysis of the real native_functions.yaml holds its parsed model (about 10 MB). Keeping one for every open
document made memory grow with the documents open (issue 27: 3.3 GB with 300 open), so only the `limit` most
recently used are kept; a document whose analysis is dropped keeps its text, and is analysed again when a request
needs it. The key of the dropped analysis is remembered, so that the document does not count as stale (which would
re-check it, and drop another, round and round) while its inputs are unchanged.

Analyses are stored on the analysis thread and read on the event loop: a lock keeps the order consistent.
Nothing here knows LSP.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from ..frozen import clear_memos
from ..syntax.canonical import forget_interned

T = TypeVar("T")

DEFAULT_LIMIT = 16


class RetainedAnalyses(Generic[T]):
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = max(1, limit)
        self._kept: OrderedDict[str, T] = OrderedDict()
        self._dropped: dict[str, tuple] = {}  # uri -> key of its last analysis, no longer kept
        self._lock = threading.Lock()

    def get(self, uri: str, touch: bool = True) -> T | None:
        """The document's last analysis, if kept (with `touch`, it becomes the most recently used)."""
        with self._lock:
            found = self._kept.get(uri)
            if found is not None and touch:
                self._kept.move_to_end(uri)
            return found

    def put(self, uri: str, analysis: T) -> list[str]:
        """Keep the document's new analysis; the documents whose analyses this drops, least recently used first."""
        with self._lock:
            self._kept[uri] = analysis
            self._kept.move_to_end(uri)
            self._dropped.pop(uri, None)
            dropped = []
            while len(self._kept) > self.limit:
                old, gone = self._kept.popitem(last=False)
                self._dropped[old] = gone.key  # type: ignore[attr-defined]
                dropped.append(old)
            return dropped

    def dropped_key(self, uri: str) -> tuple | None:
        """The key of the document's last analysis when it was made but is no longer kept."""
        with self._lock:
            return self._dropped.get(uri)

    def forget(self, uri: str) -> None:
        """The document was closed."""
        with self._lock:
            self._kept.pop(uri, None)
            self._dropped.pop(uri, None)

    def __len__(self) -> int:
        return len(self._kept)


@functools.lru_cache(maxsize=1)  # one C function, looked up once
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]  # glibc only
    except (AttributeError, OSError):
        return None


def release_freed_memory(no_document_open: bool = False) -> int:
    """Give the memory of closed documents back to the system: collect cycles, then ask glibc's malloc to return
    its free pages (the analysis thread's heap keeps them otherwise: 250 MB after 30 copies of the real file were
    opened and closed). Elsewhere the collection alone.

    With `no_document_open` (the last document was closed), the process-wide memos of pure functions are emptied
    first (frozen.clear_memos, the yaml interning): they serve open documents, and would keep the first documents'
    schemas, nodes and strings for good, and with them the allocator's arenas those share with freed objects (30
    copies of the real file opened and closed: 8,000 memo entries, 150,000 objects, kept until then). The next
    document opened fills them again (the cost of one cold check). The memo entries emptied are returned."""
    cleared = 0
    if no_document_open:
        cleared = clear_memos()
        forget_interned()
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    return cleared
