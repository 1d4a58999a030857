"""The text of a value that is the same in every process, for the persistent cache's keys."""

from __future__ import annotations

import dataclasses


def stable_text(value: object) -> str:
    """A value's text, the same in every process: repr, but sets sorted (their order follows the per-process string
    hash) and records field by field."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(stable_text, value))) + "}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "(" + ", ".join(map(stable_text, value)) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(sorted(f"{stable_text(k)}: {stable_text(v)}" for k, v in value.items())) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__ + "(" + ", ".join(f"{f.name}={stable_text(getattr(value, f.name))}"
                                                      for f in dataclasses.fields(value)) + ")"
    return repr(value)
