"""Did-you-mean suggestions for misspelt names."""

from __future__ import annotations

import functools
from collections.abc import Iterable


def closest(word: str, candidates: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    # Memoized: a line with thousands of the same unknown name (a paste gone wrong) costs one search.
    return list(_closest(word, tuple(candidates), n, cutoff))


@functools.lru_cache(maxsize=256)  # a few did-you-means at a time; a pool is a tuple of names, kept small
def _closest(word: str, pool: tuple[str, ...], n: int, cutoff: float) -> tuple[str, ...]:
    import difflib  # noqa: PLC0415  (a misspelt name only: not a clean check's start-up)

    found = difflib.get_close_matches(word, pool, n=n, cutoff=cutoff)
    if not found:
        lowered = {c.lower(): c for c in pool}
        found = [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=n, cutoff=cutoff)]
    return tuple(found)


def did_you_mean(word: str, candidates: Iterable[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A message suffix and diagnostic data naming the closest candidates."""
    found = closest(word, candidates)
    if not found:
        return "", ()
    text = " or ".join(f"'{c}'" for c in found)
    return f"; did you mean {text}?", tuple(("replace", c) for c in found)
