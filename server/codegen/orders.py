"""The orders of the contributions' digests (see Orders): each use of a family in a file's key, its items'
fingerprints in order and their digests, as the last run keyed its files; a run after an edit takes the recorded
digests but where the fingerprints differ (codegen/contributions.py's digests_blob)."""

from __future__ import annotations

import hashlib
import marshal

from ..cache.store import Cache

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
        recorded_lists = self._load()
        kept = {name: value for name, value in self._recorded.items() if name not in self._now
                and isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bytes)
                and recorded_lists.get(value[0]) is not None}
        uses = {**kept, **{name: (list_id, digests) for name, (list_id, _, digests) in self._now.items()}}
        lists = {list_id: fingerprints for list_id, fingerprints, _ in self._now.values()}
        for list_id, _ in kept.values():
            lists.setdefault(list_id, recorded_lists[list_id])
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
