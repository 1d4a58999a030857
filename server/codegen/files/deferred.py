"""A per-item error kept as a value, raised when the file is built, where gen.py fails.

A file keyed by its items' contributions (contributions.py) digests them before it is built, and the memo keeps them
with marshal: so computing an item's contribution must not raise (keying a file is not where gen.py fails), and its
value must be plain data (no exception object). One encoding for every such family: `(True, value)` when computed,
`(False, message)` when gen.py fails on the item; `values` gives the values back in order and raises PlanError with
the first failure's message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypeVar

from ..plan import PlanError

T = TypeVar("T")
# (True, the value) or (False, the message gen.py fails with): marshal-able whenever the value is.
Deferred = tuple[Literal[True], T] | tuple[Literal[False], str]


def computed(value: T) -> Deferred[T]:
    return True, value


def failed(exc: Exception) -> Deferred[T]:
    return False, str(exc)


def values(found: Iterable[Deferred[T]]) -> list[T]:
    """The values, in order; PlanError at the first that failed."""
    out: list[T] = []
    for item in found:
        if item[0] is False:
            raise PlanError(item[1])
        out.append(item[1])
    return out
