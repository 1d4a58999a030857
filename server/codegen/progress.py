"""How far a generation is: the files planned, how many are done (built and written, or found unchanged) and how
many of those were written. `opgen generate` shows it on a terminal, the server as work-done progress."""

from __future__ import annotations

from collections.abc import Callable

from ..frozen import record


@record
class Progress:
    planned: int  # the files to build (those opgen can generate)
    done: int
    written: int  # of the files done, those whose bytes changed (the others are left untouched)

    @property
    def percentage(self) -> int:
        return 100 * self.done // max(self.planned, 1)

    def text(self) -> str:
        return f"{self.done}/{self.planned} files, {self.written} written"


Report = Callable[[Progress], None]
