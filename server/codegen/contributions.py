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
those values; one of the recent contributions of every family (see Contributions); and one of the orders (see
Orders): each family's items' fingerprints and digests as a run last keyed its files, so that the next run, after
an edit, digests only the items whose fingerprints differ from those and loads no family's digests. Values must be
marshal-able (str, list, tuple, dict, int, bool, None): an item's error that gen.py raises when it builds the file is
kept as a value too, raised when the file is built (files/deferred.py).
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, TypeVar, cast

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
    recent entry keeps only the others."""

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
            recent = self._recent.get(family)
            if isinstance(recent, dict):
                stored.update(recent)
            stored.update(self._new.get(family, {}))  # (computed for a digest before the family was loaded)
            self._stored[family] = stored
            self._used[family] = {}
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
        for values in (self._stored.get(family), self._new.get(family), recent if isinstance(recent, dict) else None):
            if values is not None and fingerprint in values:
                return value_digest(values[fingerprint])
        value = compute(item)
        self._computed(family, fingerprint, value)
        return value_digest(value)

    def digests(self, family: str, items: Sequence[Any], compute: Callable[[Any], object]) -> list[bytes]:
        """The digest of each item's contribution to the family (value_digest), without loading the family's
        values: from its digests entry (the digest of every value it held when last written whole), the recent
        values, and the values computed now (an item none of them knows is computed, and kept)."""
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
        for i, found in enumerate(out):
            if found is None:
                fingerprint = fingerprints[i]
                stored = self._stored.get(family)
                value = stored[fingerprint] if stored is not None and fingerprint in stored else \
                    self._new.get(family, {}).get(fingerprint, _ABSENT)
                if value is _ABSENT:
                    value = compute(items[i])
                    self._computed(family, fingerprint, value)
                out[i] = known[fingerprint] = value_digest(value)
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
        for i, value in enumerate(values):
            if value is _ABSENT:
                values[i] = compute(items[i])
                self._computed(family, fingerprints[i], values[i])
        self._used[family].update(zip(fingerprints, values, strict=True))
        return values

    def save(self) -> None:
        """Keep what this run computed (see the class); the orders are kept by Orders.save, once the writer
        processes' are gathered."""
        if not self._new:
            return
        recent = dict(self._recent or {})
        for family, values in self._new.items():
            recent[family] = {**recent.get(family, {}), **values}
        if sum(map(len, recent.values())) > self.RECENT_LIMIT:
            for family in sorted(recent):
                # a family loaded: the values this run used (stale ones dropped); else all it holds, with those
                # computed now (for digests only: _family adds them from _new, so _new is emptied after this)
                values = self._used[family] if family in self._used else self._family(family)
                known = self._digests.get(family, {})  # (the digests this run has: of the same values)
                try:
                    payload = marshal.dumps(values)
                    digests = marshal.dumps({fp: known.get(fp) or value_digest(v) for fp, v in values.items()})
                except ValueError:  # a value marshal cannot hold: a bug of the family, never stored half
                    continue
                if self._cache.put(self._key(family), payload) and self._cache.put(self._digests_key(family), digests):
                    del recent[family]
        self._new = {}
        try:
            payload = marshal.dumps(recent)
        except ValueError:
            return
        self._cache.put(self._recent_key(), payload)
        self._recent = recent


_ABSENT = object()
_DIGEST = 20  # the bytes of a value_digest


class Place:
    """Where this run's fingerprints of a family's items differ from the recorded ones (Orders.place)."""

    def __init__(self, digests: bytes, spans: list[tuple[int, int, int]]) -> None:
        self._digests = digests
        # (start, end in the recorded items, end in this run's): the recorded [start:end] is this run's [start:end'],
        # ascending (a span starts at the same index in both: spans of one length, or one after a common prefix)
        self._spans = spans
        self.changed = [i for start, _, new_end in spans for i in range(start, new_end)]

    def splice(self, digests: list[bytes]) -> bytes:
        """The recorded digests with those of the changed items (in the order of `changed`) in their places."""
        pieces, at, taken = [], 0, 0
        for start, old_end, new_end in self._spans:
            count = new_end - start
            pieces += [self._digests[at * _DIGEST:start * _DIGEST], *digests[taken:taken + count]]
            at, taken = old_end, taken + count
        pieces.append(self._digests[at * _DIGEST:])
        return b"".join(pieces)


class Orders:
    """Each family's items' fingerprints, in order, and their contributions' digests, as a run last keyed its files
    (one cache entry: the fingerprint lists by their digest, shared by the families over the same items; each use, a
    family in a part of a file's key, by its name, with the digest of its list and its digests joined).

    A use whose fingerprints differ from the recorded ones at no more than MOST_CHANGED places (an edit: the same
    items but those of the edited entries) takes the recorded digests but at those places; any other (none
    recorded, items added or removed far apart) digests every item, and the entry is written again with this run's.
    A digest is of (the run's constants, the family, the item's fingerprint), and a use is named with its family:
    equal fingerprints have equal digests, so an entry that is not what this class writes can only cost the full
    digests, never a wrong one. Writer processes hand theirs to the parent (taken, adopt), which writes them all."""

    MOST_CHANGED = 64

    def __init__(self, cache: Cache, key: str) -> None:
        self._cache = cache
        self._key = key
        self._lists: dict[bytes, list[bytes]] | None = None
        self._recorded: dict[str, tuple[bytes, bytes]] = {}
        self._now: dict[str, tuple[bytes, list[bytes], bytes]] = {}
        self._ids: dict[int, bytes] = {}  # (id of a fingerprint list -> its digest; the lists live for the run)
        self._moved = False

    def _load(self) -> dict[bytes, list[bytes]]:
        if self._lists is None:
            self._lists = {}
            payload = self._cache.get(self._key)
            try:
                value = marshal.loads(payload) if payload is not None else None
            except (ValueError, EOFError, TypeError):
                value = None  # (an entry this code did not write: as none)
            if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], dict) \
                    and isinstance(value[1], dict):
                self._lists, self._recorded = value
            else:
                self._moved = True
        return self._lists

    def _id(self, fingerprints: list[bytes]) -> bytes:
        found = self._ids.get(id(fingerprints))
        if found is None:
            # (marshal: an encoding of the list no other list shares, where a joined one could)
            found = self._ids[id(fingerprints)] = hashlib.sha1(marshal.dumps(fingerprints)).digest()
        return found

    def place(self, name: str, fingerprints: list[bytes]) -> Place | None:
        """Where fingerprints differ from those recorded for the use `name`; None when too much (or nothing
        recorded, or a record this class did not write)."""
        lists = self._load()
        recorded = self._recorded.get(name)
        if not (isinstance(recorded, tuple) and len(recorded) == 2):
            return None
        list_id, digests = recorded
        old = lists.get(list_id) if isinstance(list_id, bytes) else None
        if not isinstance(old, list) or not isinstance(digests, bytes) or len(digests) != _DIGEST * len(old):
            return None
        if list_id == self._id(fingerprints):
            return Place(digests, [])
        spans = _differences(old, fingerprints, self.MOST_CHANGED)
        return None if spans is None else Place(digests, spans)

    def keyed(self, name: str, fingerprints: list[bytes], digests: bytes, changed: int | None) -> None:
        """This run's fingerprints and digests of the use `name`, taken from the record at `changed` places (None:
        not from the record): the orders are written again when one was not, or far from it."""
        self._now[name] = (self._id(fingerprints), fingerprints, digests)
        if changed is None or changed > self.MOST_CHANGED // 2:
            self._moved = True

    def taken(self) -> tuple[bool, dict[str, tuple[bytes, list[bytes], bytes]]]:
        """What this process keyed (for the parent's adopt): whether the orders moved, and each use's."""
        return self._moved, self._now

    def adopt(self, taken: tuple[bool, dict[str, tuple[bytes, list[bytes], bytes]]]) -> None:
        moved, now = taken
        self._moved = self._moved or moved
        self._now.update(now)

    def save(self) -> None:
        """Write the orders when a use's recorded ones were missing or far from this run's (the uses this run did
        not key keep their record)."""
        if not self._moved or not self._now:
            return
        self._load()
        kept = {name: value for name, value in self._recorded.items() if name not in self._now
                and isinstance(value, tuple) and len(value) == 2 and (self._lists or {}).get(value[0]) is not None}
        uses = {**kept, **{name: (list_id, digests) for name, (list_id, _, digests) in self._now.items()}}
        lists = {list_id: fingerprints for list_id, fingerprints, _ in self._now.values()}
        for list_id, _ in kept.values():
            lists.setdefault(list_id, (self._lists or {})[list_id])
        try:
            payload = marshal.dumps((lists, uses))
        except ValueError:
            return
        if self._cache.put(self._key, payload):
            self._moved = False


def _differences(old: list[bytes], new: list[bytes], most: int) -> list[tuple[int, int, int]] | None:
    """Where new differs from old: (start, end in old, end in new) spans, ascending; None over `most` items. Lists
    of one length differ item by item; otherwise in one span, between their common first and last items."""
    if len(old) == len(new):
        spans: list[tuple[int, int, int]] = []
        at = _first_difference(old, new, 0)
        while at < len(old):
            if len(spans) == most:
                return None
            spans.append((at, at + 1, at + 1))
            at = _first_difference(old, new, at + 1)
        return spans
    shortest = min(len(old), len(new))
    prefix = _first_difference(old[:shortest], new[:shortest], 0)
    suffix = _first_difference(old[::-1][:shortest - prefix], new[::-1][:shortest - prefix], 0)
    if len(new) - suffix - prefix > most:
        return None
    return [(prefix, len(old) - suffix, len(new) - suffix)]


def _first_difference(old: list[bytes], new: list[bytes], start: int) -> int:
    """The first index from start where lists of one length differ (their length if none): by halves, each
    comparison of two slices done in C (the lists are thousands long, their differences few)."""
    low, high = start, len(old)
    if old[low:] == new[low:]:
        return high
    while high - low > 1:  # (a difference lies in [low, high), none before low)
        middle = (low + high) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle
    return low


def value_digest(value: object) -> bytes:
    """A contribution's digest: of its marshal form, version 2 (no references between objects, so equal values
    give equal bytes whatever objects they share)."""
    return hashlib.sha1(marshal.dumps(cast(Any, value), 2)).digest()
