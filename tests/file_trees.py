"""Output folders as data, for tests that compare what two generators (or two runs) wrote."""

from __future__ import annotations

from pathlib import Path


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by its path relative to it, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def first_difference(torchgen: bytes, opgen: bytes) -> str:
    """Where two texts first differ, line by line, for an assertion message."""
    la, lb = torchgen.decode().splitlines(), opgen.decode().splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n  torchgen: {x!r}\n  opgen:    {y!r}"
    return f"lengths differ: {len(la)} vs {len(lb)} lines"
