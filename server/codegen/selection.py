"""Operator selection for gen.py's --op-registration-whitelist and --op-selection-yaml-path (a selection yaml's
reading and rules: model/selection.py)."""

from __future__ import annotations

from collections.abc import Iterable

from ..model.selection import ALL_OPERATORS, Selection, read_selection

__all__ = ["ALL_OPERATORS", "Selection", "from_allow_list", "read_selection"]


def from_allow_list(names: Iterable[str]) -> Selection:
    """--op-registration-whitelist: every overload of each name."""
    return Selection(False, tuple((n, True) for n in sorted(set(names))))
