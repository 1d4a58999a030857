"""torchgen's readers of the autograd yamls, run in this process on edited copies, for the mutation tests."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

_counter = itertools.count()


def rejects(read: Callable[[str], object], text: str, tmp: Path, stem: str) -> bool:
    """Whether torchgen's `read(path)` rejects `text`: any exception, as it rejects with assertions,
    RuntimeErrors and crashes alike. Each call writes a new file, since torchgen's loaders cache by path."""
    path = tmp / f"{stem}_{next(_counter)}.yaml"
    path.write_text(text)
    try:
        read(str(path))
    except Exception:
        return True
    return False
