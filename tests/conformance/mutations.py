"""Edits of the real native_functions.yaml for the mutation tests.

Every edit targets a real entry found by its operator name (the `- func: NAME(`
line), so the tests stay stable when unrelated parts of the file change.  An
edit returns the mutated text and the 0-based, inclusive line range of the
entry it changed or added: from that entry's first line up to the line before
the next entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutated:
    text: str
    first: int  # 0-based line where the mutated/added entry starts
    last: int  # 0-based line, inclusive: the line before the next entry


@dataclass(frozen=True)
class Mutation:
    id: str
    apply: Callable[[str], Mutated]
    # What torchgen 2.13 does with the mutated file: True = rejects (raises).
    rejected: bool
    why: str = ""


def _is_entry_start(line: str) -> bool:
    return line.startswith("-")


def entry_range(lines: list[str], name: str) -> tuple[int, int]:
    """First and last (inclusive) line of the entry whose func is `name(...)`."""
    prefix = f"- func: {name}("
    starts = [i for i, line in enumerate(lines) if line.startswith(prefix)]
    if len(starts) != 1:
        raise LookupError(f"expected exactly one entry for {name!r}, found {len(starts)}")
    first = starts[0]
    last = first
    while last + 1 < len(lines) and not _is_entry_start(lines[last + 1]):
        last += 1
    return first, last


def entry_text(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    first, last = entry_range(lines, name)
    return "".join(lines[first:last + 1])


def _splice(text: str, first: int, last: int, block: str) -> tuple[str, int]:
    """Replace lines first..last (inclusive) with `block`; returns the text and the block's line count."""
    lines = text.splitlines(keepends=True)
    if block and not block.endswith("\n"):
        block += "\n"
    new = "".join(lines[:first]) + block + "".join(lines[last + 1:])
    return new, len(block.splitlines())


def edit(name: str, old: str, new: str, count: int = 1) -> Callable[[str], Mutated]:
    """Replace `old` by `new` inside the entry of `name` (`old` must occur exactly `count` times)."""

    def apply(text: str) -> Mutated:
        lines = text.splitlines(keepends=True)
        first, last = entry_range(lines, name)
        block = "".join(lines[first:last + 1])
        found = block.count(old)
        if found != count:
            raise LookupError(f"{old!r} occurs {found} times in the entry of {name!r}, expected {count}")
        mutated, n = _splice(text, first, last, block.replace(old, new))
        return Mutated(mutated, first, first + n - 1)

    return apply


def rewrite(name: str, change: Callable[[str], str]) -> Callable[[str], Mutated]:
    """Replace the whole entry of `name` by change(entry text)."""

    def apply(text: str) -> Mutated:
        lines = text.splitlines(keepends=True)
        first, last = entry_range(lines, name)
        block = "".join(lines[first:last + 1])
        changed = change(block)
        if changed == block:
            raise LookupError(f"the rewrite left the entry of {name!r} unchanged")
        mutated, n = _splice(text, first, last, changed)
        return Mutated(mutated, first, first + n - 1)

    return apply


def add_after(name: str, block: str | Callable[[str], str]) -> Callable[[str], Mutated]:
    """Insert a new entry (or top-level item) right after the entry of `name`.

    `block` may be a function of the whole text (e.g. to copy an existing entry).
    The reported range is the inserted lines only.
    """

    def apply(text: str) -> Mutated:
        lines = text.splitlines(keepends=True)
        _, last = entry_range(lines, name)
        added = block(text) if callable(block) else block
        if not added.endswith("\n"):
            added += "\n"
        if not added.endswith("\n\n"):
            added += "\n"
        at = last + 1
        n = len(added.splitlines())
        if not lines[last].strip() == "":
            # keep one blank line between the previous entry and the new one
            added = "\n" + added
            at_first = at + 1
        else:
            at_first = at
        mutated = "".join(lines[:at]) + added + "".join(lines[at:])
        return Mutated(mutated, at_first, at_first + n - 1)

    return apply
