"""Per-item contributions to aggregated files, kept across runs: a run after a one-entry edit recomputes only the
contributions of the items that entry is part of.

An aggregated file (Functions.h, Register<Key>_N.cpp, Declarations.yaml, ...) is a template filled with a base
environment and, per item (an op, a group, a view group), that item's contribution: what the family's per-item
function makes of it. Such a function reads only its item and the run's constants (release, options, templates,
tags, selection, fallback ops, native-AOT declarations: every input but native_functions.yaml itself), so its
value is kept under (the run's constants, the family, the item's fingerprint).

An item's fingerprint is the digest of the text of the entries it is lowered from: a group's members' entries; a
generated op's name, the entry it is generated from and its groups' entries. Positions are not part of it: an entry
moved unchanged keeps its contributions (the order of the items in a file comes from the model, rebuilt every run).

A file made from nothing but the run's constants and contributions is keyed by the digests of those
contributions, in order (Contributions.digests_blob, GenContext.values_key): its key is known without loading the
values, so a file an edit leaves as it was costs neither loading nor building (file_record.py).

Storage: one cache entry per family (marshal of {fingerprint: value}), loaded on first use; one of the digests of
those values (for a family some file's key is made of); one of the recent contributions of every family (see
Contributions); and one of the orders (see Orders): each family's items' fingerprints and digests as a run last
keyed its files, so that the next run, after an edit, digests only the items whose fingerprints differ from those
and loads no family's digests. Values must be marshal-able (str, list, tuple, dict, int, bool, None): an item's
error that gen.py raises when it builds the file is kept as a value too, raised when the file is built
(files/deferred.py).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..cache.store import Cache, namespaced
from ..model.native_function import NativeFunction
from .orders import Orders

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
        self._lists: dict[int, list[bytes]] = {}
        self._keep: list[object] = []  # the items whose ids are memo keys, kept alive for the run

    def all_of(self, items: Sequence[Any]) -> list[bytes]:
        """[of(item) for item in items], kept for the sequence (the model's tuples are walked by many families)."""
        found = self._lists.get(id(items))
        if found is None:
            found = self._lists[id(items)] = list(map(self.of, items))
            self._keep.append(items)
        return found

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
    """The contributions memo of one run (see the module); `constants`: the digest of every run constant.

    What a run computes goes first into one small entry shared by every family (the recent contributions: one
    write per run, whatever the number of families an edit touched); once it holds more than RECENT_LIMIT values,
    each family loaded in the run is written whole with the values the run used (stale ones dropped) and the
    recent entry keeps only the others. A family this run computed RECENT_LIMIT values of is written whole as soon
    as the files that share it are (unit_done), and let go."""

    RECENT_LIMIT = 1000

    def __init__(self, cache: Cache, constants: str, fingerprints: Fingerprints) -> None:
        self._cache = cache
        self._constants = constants
        self.fingerprints = fingerprints
        self.orders = Orders(cache, namespaced("contribution-orders", _FORMAT, constants))
        self._stored: dict[str, dict[bytes, Any]] = {}
        self._used: dict[str, dict[bytes, Any]] = {}
        self._recent: dict[str, dict[bytes, Any]] | None = None
        self._new: dict[str, dict[bytes, Any]] = {}
        self._digests: dict[str, dict[bytes, bytes]] = {}
        self._written: set[str] = set()  # families written whole before save (see unit_done)
        self._kept_to_end: set[str] = set()  # families unit_done leaves to save
        self._digested: set[str] = set()  # families a file's key was made of (digests_blob, digests)
        self.computed = 0

    def _key(self, family: str) -> str:
        return namespaced("contributions", _FORMAT, self._constants, family)

    def _digests_key(self, family: str) -> str:
        return namespaced("contribution-digests", _FORMAT, self._constants, family)

    def _recent_key(self) -> str:
        return namespaced("contributions-recent", _FORMAT, self._constants)

    def _family(self, family: str) -> dict[bytes, Any]:
        stored = self._stored.get(family)
        if stored is None:
            if self._recent is None:
                self._recent = self._load(self._recent_key())
            stored = self._load(self._key(family))
            used: dict[bytes, Any] = {}
            if family in self._written:  # written whole by unit_done with the values this run used: used again
                used = dict(stored)
                self._kept_to_end.add(family)
            recent = self._recent.get(family)
            if isinstance(recent, dict):
                stored.update(recent)
            stored.update(self._new.get(family, {}))  # (computed for a digest before the family was loaded)
            self._stored[family] = stored
            self._used[family] = used
        return stored

    def _load(self, key: str) -> dict[Any, Any]:
        payload = self._cache.get(key)
        if payload is None:
            return {}
        try:
            value = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):  # an entry this code did not write: a miss
            return {}
        return value if isinstance(value, dict) else {}

    def _computed(self, family: str, fingerprint: bytes, value: object) -> None:
        stored = self._stored.get(family)
        if stored is not None:
            stored[fingerprint] = value
        self._new.setdefault(family, {})[fingerprint] = value
        self.computed += 1

    def digests_blob(self, family: str, items: Sequence[Any], compute: Callable[[Any], object], use: str) -> bytes:
        """b"".join(digests(family, items, compute)), from the orders when this run's fingerprints differ from those
        recorded for this use (the file and part it keys: see Orders) at few places: the digests of the others are
        the recorded ones."""
        self._digested.add(family)
        fingerprints = self.fingerprints.all_of(items)
        name = f"{family}\0{use}"
        place = self.orders.place(name, fingerprints)
        if place is None:
            blob = b"".join(self.digests(family, items, compute))
        else:
            blob = place.splice([self._digest_of(family, fingerprints[i], items[i], compute) for i in place.changed])
        self.orders.keyed(name, fingerprints, blob, None if place is None else len(place.changed))
        return blob

    def _digest_of(self, family: str, fingerprint: bytes, item: Any, compute: Callable[[Any], object]) -> bytes:
        """The digest of one item's contribution: from the digests loaded, the values known, or computed now."""
        known = self._digests.get(family)
        if known is not None and fingerprint in known:
            return known[fingerprint]
        if self._recent is None:
            self._recent = self._load(self._recent_key())
        recent = self._recent.get(family)
        stored = self._family(family) if family in self._written else self._stored.get(family)  # (let go: back)
        for values in (stored, self._new.get(family), recent if isinstance(recent, dict) else None):
            if values is not None and fingerprint in values:
                return value_digest(values[fingerprint])
        value = compute(item)
        self._computed(family, fingerprint, value)
        return value_digest(value)

    def digests(self, family: str, items: Sequence[Any], compute: Callable[[Any], object]) -> list[bytes]:
        """The digest of each item's contribution to the family (value_digest), without loading the family's
        values: from its digests entry (the digest of every value it held when last written whole), the recent
        values, and the values computed now (an item none of them knows is computed, and kept)."""
        self._digested.add(family)
        known = self._digests.get(family)
        if known is None:
            if self._recent is None:
                self._recent = self._load(self._recent_key())
            known = self._load(self._digests_key(family))
            recent = self._recent.get(family)
            for fingerprint, value in (recent.items() if isinstance(recent, dict) else ()):
                known[fingerprint] = value_digest(value)
            self._digests[family] = known
        fingerprints = self.fingerprints.all_of(items)
        out: list[bytes | None] = list(map(known.get, fingerprints))  # (in bulk: after an edit, few are unknown)
        if None not in out:
            return cast(list[bytes], out)
        stored = self._stored.get(family) or {}  # (a first run: every value is there, computed for its file)
        for i, found in enumerate(out):
            if found is None:
                value = stored.get(fingerprints[i], _ABSENT)
                out[i] = known[fingerprints[i]] = value_digest(value) if value is not _ABSENT else \
                    self._digest_of(family, fingerprints[i], items[i], compute)
        return cast(list[bytes], out)  # (each None replaced)

    def of(self, family: str, item: Any, compute: Callable[[Any], T]) -> T:
        """The item's contribution to the family: stored, or compute(item) now (and stored at save)."""
        stored = self._family(family)
        fingerprint = self.fingerprints.of(item)
        found = stored.get(fingerprint, _ABSENT)
        if found is _ABSENT:
            found = compute(item)
            self._computed(family, fingerprint, found)
        self._used[family][fingerprint] = found
        return found  # type: ignore[no-any-return]

    def many(self, family: str, items: Sequence[Any], compute: Callable[[Any], T]) -> list[T]:
        """[of(family, item, compute) for item in items], in bulk."""
        stored = self._family(family)
        fingerprints = self.fingerprints.all_of(items)
        values = list(map(stored.get, fingerprints, repeat(_ABSENT)))
        if _ABSENT in values:  # (_computed's work inline: a first run computes every item here)
            new = self._new.setdefault(family, {})
            for i, value in enumerate(values):
                if value is _ABSENT:
                    values[i] = stored[fingerprints[i]] = new[fingerprints[i]] = compute(items[i])
                    self.computed += 1
        self._used[family].update(zip(fingerprints, values, strict=True))
        return values

    def unit_done(self) -> None:
        """Files that share pieces are written (a unit of work: workers.py): each family this run computed at least
        RECENT_LIMIT values of is written whole now, as save would, and dropped, so that a first run does not hold
        every piece it computed until its end. Almost every family serves one unit; one used again is loaded back,
        and then kept to the end."""
        for family in [f for f, values in self._new.items() if len(values) >= self.RECENT_LIMIT]:
            if family in self._kept_to_end:
                continue
            if not self._write_whole(family):
                self._kept_to_end.add(family)
                continue
            self._written.add(family)
            for table in (self._stored, self._used, self._new, self._digests):
                table.pop(family, None)

    def _write_whole(self, family: str) -> bool:
        """Write the family's entry: the values this run used if it loaded the family (stale ones dropped), else all
        it holds with those computed now; and, if this run digested the family, its digests' entry. False when not
        written. (A family no file is keyed by, only per-operator files keyed by their items, is never digested;
        a digests entry an earlier run wrote is never wrong, a value being its item's and the constants' alone.)"""
        # (for digests only: _family adds the values computed now from _new, so save empties _new after this)
        values = self._used[family] if family in self._used else self._family(family)
        known = self._digests.get(family, {})  # (the digests this run has: of the same values)
        try:
            payload = marshal.dumps(values)
            digests = None if family not in self._digested else \
                marshal.dumps({fp: known.get(fp) or value_digest(v) for fp, v in values.items()})
        except ValueError:  # a value marshal cannot hold: a bug of the family, never stored half
            return False
        return self._cache.put(self._key(family), payload) and \
            (digests is None or self._cache.put(self._digests_key(family), digests))

    def save(self) -> None:
        """Keep what this run computed (see the class); the orders are kept by Orders.save, once the writer
        processes' are gathered."""
        if not self._new and not self._written:
            return
        recent = dict(self._recent or {})
        for family in self._written:  # (their whole entries hold them)
            recent.pop(family, None)
        for family, values in self._new.items():
            recent[family] = {**recent.get(family, {}), **values}
        if sum(map(len, recent.values())) > self.RECENT_LIMIT:
            for family in sorted(recent):
                if self._write_whole(family):
                    del recent[family]
        self._new = {}
        try:
            payload = marshal.dumps(recent)
        except ValueError:
            return
        self._cache.put(self._recent_key(), payload)
        self._recent = recent


_ABSENT = object()


def value_digest(value: object) -> bytes:
    """A contribution's digest: of its marshal form, version 2 (no references between objects, so equal values
    give equal bytes whatever objects they share)."""
    if value.__class__ is list and not value:  # (most groups' contribution to most keys' files)
        return _EMPTY_LIST_DIGEST
    return hashlib.sha1(marshal.dumps(cast(Any, value), 2)).digest()


_EMPTY_LIST_DIGEST = hashlib.sha1(marshal.dumps([], 2)).digest()
