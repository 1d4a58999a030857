"""The whole-file passes (native_yaml.py `assemble`) of one native_functions.yaml from edit to edit: after an edit,
only the clusters of operators it touched are assembled again.

A cluster is a set of operators closed under every relation the passes follow between operators (op_keys: the same
name or base name, signature or view signature, a structured_delegate's target). What the passes make of a
cluster (its generated ops, groups, view groups and problems) is what they make of its entries alone, in file order,
and where each item goes in the whole file's lists follows from the cluster too: an item's order key is where its
signature (of its pre-group, or its view signature) first appears, an entry's index in the file or a generated op's
own key (the entry that heads the pre-group that made it, and its rank there). analysis/check_edit.py keeps verdicts
per cluster across runs on the same ground.

So an edit re-assembles the clusters of the entries whose operator changed; an operator made anew whose keys meet
another cluster's joins the two, assembled again as one; each cluster's old items leave the lists and its new ones
go in by their keys. An entry added or removed (every index after it moves), many entries changed at once, or
several operator namespaces under a release whose Register<Key>.cpp drops registrations at a change of namespace
(an order through the whole file) run the full passes, with their per-group memo."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container, Iterable, Sequence
from itertools import chain
from typing import Generic, TypeVar

from ..frozen import new_tuple
from ..releases import Release
from .native_function import NativeFunction, NativeFunctionsGroup, NativeFunctionsViewGroup
from .native_yaml import GroupMemo, NativeFunctions, Op, Problem, assemble, facts

# More entries changed at once than this, or than half of them (a paste, a replace-all, new tags): the full passes,
# whose memo serves them better.
MOST_CHANGED = 16


NO_CLUSTER = -1  # the cluster of an entry that has no operator

Item = NativeFunction | NativeFunctionsGroup | NativeFunctionsViewGroup
Key = tuple[int, ...]
T = TypeVar("T")


def op_keys(f: NativeFunction) -> list[str]:
    """What relates an operator to others in the whole-file passes (the module's docstring). The kinds of key are not
    told apart: two keys of different kinds that happen to be equal join clusters needlessly, never wrongly."""
    fx = facts(f)
    name = f.func.name
    delegate = f.structured_delegate
    if delegate is None:
        return [str(name), name.name.base, fx.signature, fx.view_signature]
    return [str(name), name.name.base, fx.signature, fx.view_signature, str(delegate)]


def order_keys(entries: Sequence[Op | None], indices: Sequence[int], result: NativeFunctions
               ) -> tuple[list[Key], list[Key], list[Key]]:
    """The order keys of result's generated ops, groups and view groups (the module's docstring), result being
    assemble's over the operators of entries[i] for i in indices, in file order."""
    index: dict[int, int] = {}
    first_of: dict[str, Key] = {}  # pre-group signature -> where it first appears
    view_first_of: dict[str, Key] = {}
    for i in indices:
        op = entries[i]
        if op is None:
            continue
        f = op.function
        index.setdefault(id(f), i)
        fx = facts(f)
        if fx.kind is not None:
            first_of.setdefault(fx.signature, (0, i))
        if fx.view_group_kind is not None:
            view_first_of.setdefault(fx.view_signature, (0, i))
    made: list[Key] = []
    last, rank = -1, 0
    for op, head in zip(result.generated_ops, result.made_by):
        at = index[id(head)]
        rank = rank + 1 if at == last else 0
        last = at
        key = (at, rank)
        made.append(key)
        fx = facts(op.function)
        first_of.setdefault(fx.signature, (1, *key))
        if fx.view_group_kind is not None:
            view_first_of.setdefault(fx.view_signature, (1, *key))
    return (made, _ranked(first_of[facts(_head(g)).signature] for g in result.groups),
            _ranked(view_first_of[facts(_head(g)).view_signature] for g in result.view_groups))


def _head(item: Item) -> NativeFunction:
    if isinstance(item, NativeFunction):
        return item
    return item.view if isinstance(item, NativeFunctionsViewGroup) else item.functional


def _ranked(firsts: Iterable[Key]) -> list[Key]:
    """Each item's key: where its signature first appears, and its rank among the items of that signature (which
    follow one another)."""
    out: list[Key] = []
    last: Key = ()
    rank = 0
    for first in firsts:
        rank = rank + 1 if first == last else 0
        last = first
        out.append((*first, rank))
    return out


class _Sorted(Generic[T]):
    """One of the whole file's lists (generated ops, groups or view groups), kept in the order of its items' keys,
    with the keys of each cluster's items."""

    def __init__(self, items: Sequence[T], keys: Sequence[Key], clusters: Sequence[int]) -> None:
        self.items, self.keys = list(items), list(keys)
        self.of: dict[int, list[Key]] = {}
        for key, c in zip(keys, clusters):
            self.of.setdefault(c, []).append(key)

    def drop(self, cluster: int) -> None:
        for key in self.of.pop(cluster, ()):
            at = bisect.bisect_left(self.keys, key)
            del self.keys[at], self.items[at]

    def put(self, cluster: int, items: Sequence[T], keys: Sequence[Key]) -> None:
        for item, key in zip(items, keys):
            at = bisect.bisect_left(self.keys, key)
            self.keys.insert(at, key)
            self.items.insert(at, item)
        if keys:
            self.of[cluster] = list(keys)


class Clusters:
    """Union-find over labels (operator indices, cluster numbers), joined by shared keys (op_keys)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.owner: dict[str, int] = {}

    def find(self, i: int) -> int:
        parent = self.parent
        root = parent.get(i, i)
        if root == i:
            return i
        while (up := parent.get(root, root)) != root:
            root = up
        while i != root:  # (the path, compressed)
            parent[i], i = root, parent[i]
        return root

    def join(self, i: int, j: int) -> int:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)
        return min(a, b)

    def add(self, i: int, keys: Iterable[str]) -> None:
        owner = self.owner
        for key in keys:
            j = owner.setdefault(key, i)
            if j != i:
                self.join(i, j)


R = TypeVar("R")


def settle(dirty: set[int], clusters: Clusters, work: Callable[[int], tuple[R, set[str]]],
           join: Callable[[int, int], int], alive: Container[int] | None = None) -> dict[int, R]:
    """Work each dirty cluster again, the lowest first: work(c) gives its result and its operators' keys. When those
    keys meet another cluster (alive, if given), the two are joined (join returns the cluster kept) and worked again
    as one; else the cluster owns its keys (one no longer used stays its own: it can only join clusters needlessly).
    The result of each cluster worked and not joined since. Shared by the re-assembly here and the cached check's
    verdicts (analysis/check_edit.py), over in-memory entries and over records alike."""
    done: dict[int, R] = {}
    owner, find = clusters.owner, clusters.find
    while dirty:
        c = min(dirty)
        dirty.discard(c)
        result, keys = work(c)
        met = {find(o) for o in map(owner.get, keys) if o is not None} - {c}
        if alive is not None:
            met = {m for m in met if m in alive}
        if met:
            for other in met:
                done.pop(other, None)
                dirty.discard(other)
                c = join(c, other)
            dirty.add(c)
            continue
        for key in keys:
            owner[key] = c
        done[c] = result
    return done


def layout_of(entries: Sequence[Op | None], result: NativeFunctions, release: Release) -> Layout | None:
    """The layout of result, assembled from the operators of entries (None: an entry that has none); None where one
    cannot be kept (the module's docstring). A cluster is named by an entry's index, a generated op by the number of
    entries plus its own."""
    namespaces = {op.function.namespace for op in result.ops}
    if not release.register_dispatch_key_sharded and len(namespaces) > 1:
        return None
    count = len(entries)
    labels = [i for i, op in enumerate(entries) if op is not None]
    labels.extend(range(count, count + len(result.made_by)))
    clusters = Clusters()
    for label, op in zip(labels, result.ops, strict=True):
        clusters.add(label, op_keys(op.function))
    cluster = list(map(clusters.find, labels))
    entry_cluster = [NO_CLUSTER] * count
    for label, c in zip(labels, cluster):
        if label < count:
            entry_cluster[label] = c
    namespace = None if release.register_dispatch_key_sharded else next(iter(namespaces), None)
    return Layout(entries, result, entry_cluster, cluster, {key: clusters.find(label)
                                                             for key, label in clusters.owner.items()}, namespace)


class Layout:
    """Where a document's operators, clusters and items are, kept from edit to edit by the Assembly that owns it
    (which updates it in place as it assembles clusters again): each entry's cluster (named by an operator's index;
    clusters joined since, and each key's, in clusters), each cluster's entries, the three lists, each cluster's
    problems; namespace: every operator's, where the order of namespaces matters (else None)."""

    def __init__(self, entries: Sequence[Op | None], result: NativeFunctions, entry_cluster: list[int],
                 cluster: list[int], owner: dict[str, int], namespace: str | None) -> None:
        """entry_cluster: each entry's cluster (NO_CLUSTER: it has no operator); cluster: each of result's ops'."""
        self.namespace = namespace
        self.entry_cluster = entry_cluster
        self.members: dict[int, list[int]] = {}
        for i, c in enumerate(entry_cluster):
            if c != NO_CLUSTER:
                self.members.setdefault(c, []).append(i)
        self.clusters = Clusters()
        self.clusters.owner = owner
        of_function = {id(op.function): c for op, c in zip(result.ops, cluster)}
        made, grouped, viewed = order_keys(entries, range(len(entries)), result)
        self.generated = _Sorted(result.generated_ops, made, cluster[len(result.entry_ops):])
        self.made_by = dict(zip(made, result.made_by))
        self.groups = _Sorted(result.groups, grouped, [of_function[id(_head(g))] for g in result.groups])
        self.view_groups = _Sorted(result.view_groups, viewed, [of_function[id(_head(g))] for g in result.view_groups])
        self.problems: dict[int, tuple[Problem, ...]] = {}
        for p in result.problems:
            c = of_function[id(p.op.function)]
            self.problems[c] = (*self.problems.get(c, ()), p)

    def join(self, c: int, other: int) -> int:
        """The two clusters made one (named by the smaller number); their items are left to replace."""
        keep = self.clusters.join(c, other)
        self.members[keep] = sorted(self.members[keep] + self.members.pop(max(c, other)))
        return keep


class Assembly:
    """The passes over one document's operators, kept from one check to the next (a NativeParser holds one)."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self._memo = GroupMemo()
        self._entries: Sequence[Op | None] = ()
        self._lines: list[int] = []  # each entry's line (-1: no operator), as _after_edit compares them
        self._result: NativeFunctions | None = None
        # where the last result's items lie, built when an edit first needs it; False: none can be kept
        self._layout: Layout | None | bool = None
        self.faults = 0  # re-assemblies that raised (each answered by the full passes)

    def assemble(self, entries: Sequence[Op | None]) -> NativeFunctions:
        """The passes over the operators of entries, each entry's in file order (None: an entry that has none)."""
        lines = list(map(_line, entries))
        try:
            result = self._after_edit(entries, lines)
        except Exception:  # noqa: BLE001  (a bug of the shortcut: the full passes answer, and the tests count it)
            self.faults += 1
            result = None
        if result is None:
            result = assemble([op for op in entries if op is not None], self._memo, release=self.release)
            self._layout = None
        self._entries, self._lines, self._result = entries, lines, result
        return result

    def _after_edit(self, entries: Sequence[Op | None], lines: list[int]) -> NativeFunctions | None:
        """The result for entries (at lines) from the last one, assembling again only the clusters of the entries
        changed; None where the full passes must run (the module's docstring)."""
        old_entries, old_lines, old = self._entries, self._lines, self._result
        if old is None or len(entries) != len(old_entries):
            return None
        changed = [i for i, new, was in zip(range(len(entries)), entries, old_entries)
                   if new is not was and (new is None or was is None or new[0] is not was[0])]
        if len(changed) > min(MOST_CHANGED, len(entries) // 2):
            return None
        if not changed and lines == old_lines:
            return old  # (the same operators at the same lines: nothing to do)
        if self._layout is None:
            self._layout = layout_of(old_entries, old, self.release) or False
        layout = self._layout
        if layout is False:
            return None
        assert isinstance(layout, Layout)
        dirty = set()
        for i in changed:
            c = layout.entry_cluster[i]
            if c == NO_CLUSTER:  # an entry that had no operator: a cluster of its own, joined as its keys say
                c = layout.entry_cluster[i] = i
                layout.members[i] = [i]
            dirty.add(layout.clusters.find(c))
        assembled = self._reassemble(layout, entries, dirty)
        if assembled is None:
            return None
        if lines != old_lines:  # (an op's line is where its problems show: those of every other cluster move too)
            line = {was: new for was, new in zip(old_lines, lines) if was >= 0 and new >= 0}
            layout.generated.items = [_relined(op, line) for op in layout.generated.items]
            for c, kept in layout.problems.items():
                layout.problems[c] = tuple(_relined_problem(p, line) for p in kept)
        for c, (sub, gone) in assembled.items():
            for cluster in (c, *gone):
                for listed in (layout.generated, layout.groups, layout.view_groups):
                    listed.drop(cluster)
                layout.problems.pop(cluster, None)
            made, grouped, viewed = order_keys(entries, layout.members[c], sub)
            layout.generated.put(c, sub.generated_ops, made)
            layout.made_by.update(zip(made, sub.made_by))
            layout.groups.put(c, sub.groups, grouped)
            layout.view_groups.put(c, sub.view_groups, viewed)
            if sub.problems:
                layout.problems[c] = sub.problems
        problems = tuple(chain.from_iterable(layout.problems[c] for c in sorted(layout.problems)))
        made_by = tuple(map(layout.made_by.__getitem__, layout.generated.keys))
        ops = [op for op in entries if op is not None]
        return NativeFunctions((*ops, *layout.generated.items), tuple(layout.groups.items),
                               tuple(layout.view_groups.items), problems, made_by=made_by)

    def _reassemble(self, layout: Layout, entries: Sequence[Op | None], dirty: set[int]
                    ) -> dict[int, tuple[NativeFunctions, list[int]]] | None:
        """Each dirty cluster assembled again, joined with those its operators' keys now meet: cluster -> (its
        result, the clusters it absorbed); None where the full passes must run (a change of namespace where the
        order of namespaces matters)."""
        absorbed: dict[int, list[int]] = {}
        namespace = layout.namespace

        def work(c: int) -> tuple[NativeFunctions, set[str]]:
            sub = assemble([op for op in map(entries.__getitem__, layout.members[c]) if op is not None],
                           release=self.release)
            if namespace is not None and any(op.function.namespace != namespace for op in sub.ops):
                raise _OtherNamespace
            return sub, {key for op in sub.ops for key in op_keys(op.function)}

        def join(c: int, other: int) -> int:
            keep = layout.join(c, other)
            absorbed[keep] = [*absorbed.pop(c, []), *absorbed.pop(other, []), max(c, other)]
            return keep
        try:
            done = settle(dirty, layout.clusters, work, join)
        except _OtherNamespace:
            return None
        return {c: (sub, absorbed.get(c, [])) for c, sub in done.items()}


class _OtherNamespace(Exception):
    """A cluster assembled again holds an operator of another namespace (see Assembly._reassemble)."""


def _line(op: Op | None) -> int:
    return -1 if op is None else op[1]


def _relined(op: Op, line: dict[int, int]) -> Op:
    """op at its entry's new line (one of a cluster assembled again may have none: it is dropped anyway)."""
    return new_tuple(Op, (op.function, line.get(op.line, op.line), op.metadata, op.generated))


def _relined_problem(p: Problem, line: dict[int, int]) -> Problem:
    return Problem(_relined(p.op, line), p.code, p.message, p.where)
