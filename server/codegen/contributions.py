"""Per-item contributions to aggregated files, kept across runs: a run after a one-entry edit recomputes only the
contributions of the items that entry is part of.

An aggregated file (Functions.h, Register<Key>_N.cpp, Declarations.yaml, ...) is a template filled with a base
environment and, per item (an op, a group, a view group), that item's contribution: what the family's per-item
function makes of it. Such a function reads only its item and the run's constants (release, options, templates,
tags, selection, fallback ops, native-AOT declarations: every input but native_functions.yaml itself), so its
value is kept under (the run's constants, the family, the item's fingerprint).

An item's fingerprint is the digest of the text of the entries it is lowered from: a group's members' entries, a
generated op's base entry (the one it is generated from). Positions are not part of it: an entry moved unchanged
keeps its contributions (the order of the items in a file comes from the model, rebuilt every run).

Storage: one cache entry per family (marshal of {fingerprint: value}), loaded on first use; a family that computed
anything is written back with the values this run used, so the entry holds what the current file makes and no more.
Values must be marshal-able (str, list, tuple, dict, int, bool, None).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..cache.store import Cache, namespaced
from ..model.native_function import NativeFunction

if TYPE_CHECKING:
    from ..model.native_yaml import NativeFunctions

T = TypeVar("T")
_FORMAT = "1"


def entry_digests(text: str, entry_lines: Sequence[int]) -> list[bytes]:
    """The digest of each entry's text (from its first line to the next entry's), for entries starting at
    entry_lines (0-based, ascending)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    bounds = [starts[line] if line < len(starts) else len(text) for line in entry_lines] + [len(text)]
    return [hashlib.sha1(text[bounds[i]:bounds[i + 1]].encode("utf-8", "surrogatepass")).digest()
            for i in range(len(entry_lines))]


class Fingerprints:
    """Each item's fingerprint in one model: the digest of the entries it is lowered from (see the module)."""

    def __init__(self, model: NativeFunctions, text: str) -> None:
        lines = sorted({op.line for op in model.ops})
        digests = dict(zip(lines, entry_digests(text, lines), strict=True))
        self._of_function: dict[int, bytes] = {id(op.function): digests[op.line] for op in model.ops}
        # A generated op is made from its group's entries (which base it is made from, the other members'
        # autogen lists), and several are made from one entry: its fingerprint is its name, its base entry's and
        # those of every group holding it.
        generated = {id(op.function): op.function for op in model.ops if op.generated}
        if generated:
            extra: dict[int, list[bytes]] = {key: [str(f.func.name).encode()] for key, f in generated.items()}
            for g in (*model.groups, *model.view_groups):
                members = () if isinstance(g, NativeFunction) else g.functions()
                if any(id(m) in generated for m in members):
                    together = b"".join(self._of_function[id(m)] for m in members)
                    for m in members:
                        if id(m) in generated:
                            extra.setdefault(id(m), []).append(together)
            for key, parts in extra.items():
                self._of_function[key] = hashlib.sha1(self._of_function[key] + b"".join(parts)).digest()
        self._memo: dict[int, bytes] = {}
        self._keep: list[object] = []  # the items whose ids are memo keys, kept alive for the run

    def of(self, item: Any) -> bytes:
        """The fingerprint of a NativeFunction, a group or a view group of this model."""
        found = self._memo.get(id(item))
        if found is not None:
            return found
        own = self._of_function.get(id(item))
        if own is not None:
            value = b"f" + own
        else:  # a group: its members in order, each with its place (functional, out, ...), None included
            members = [getattr(item, name) for name in item.__dataclass_fields__]
            value = hashlib.sha1(type(item).__name__.encode() + b"".join(
                b"-" if m is None else self._of_function[id(m)] for m in members)).digest()
        self._memo[id(item)] = value
        self._keep.append(item)
        return value


class Contributions:
    """The contributions memo of one run (see the module); `constants`: the digest of every run constant."""

    def __init__(self, cache: Cache, constants: str, fingerprints: Fingerprints) -> None:
        self._cache = cache
        self._constants = constants
        self.fingerprints = fingerprints
        self._stored: dict[str, dict[bytes, Any]] = {}
        self._used: dict[str, dict[bytes, Any]] = {}
        self._dirty: set[str] = set()
        self.computed = 0

    def _key(self, family: str) -> str:
        return namespaced("contributions", _FORMAT, self._constants, family)

    def _family(self, family: str) -> dict[bytes, Any]:
        stored = self._stored.get(family)
        if stored is None:
            stored = self._load(family)
            self._stored[family] = stored
            self._used[family] = {}
        return stored

    def _load(self, family: str) -> dict[bytes, Any]:
        payload = self._cache.get(self._key(family))
        if payload is None:
            return {}
        try:
            value = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):  # an entry this code did not write: a miss
            return {}
        return value if isinstance(value, dict) else {}

    def of(self, family: str, item: Any, compute: Callable[[Any], T]) -> T:
        """The item's contribution to the family: stored, or compute(item) now (and stored at save)."""
        stored = self._family(family)
        fingerprint = self.fingerprints.of(item)
        found = stored.get(fingerprint, _ABSENT)
        if found is _ABSENT:
            found = compute(item)
            stored[fingerprint] = found
            self._dirty.add(family)
            self.computed += 1
        self._used[family][fingerprint] = found
        return found  # type: ignore[no-any-return]

    def save(self) -> None:
        """Write back each family that computed something, with the values this run used."""
        for family in sorted(self._dirty):
            try:
                payload = marshal.dumps(self._used[family])
            except ValueError:  # a value marshal cannot hold: a bug of the family, never stored half
                continue
            self._cache.put(self._key(family), payload)
        self._dirty.clear()


_ABSENT = object()
