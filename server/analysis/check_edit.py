"""`opgen check` after an edit: the verdict on a native_functions.yaml from what the last run kept of its entries,
re-lowering only the entries whose text is new and re-running the whole-file passes only over the clusters of
entries they touch (check_memo.py keeps the record; this module makes and reads it).

A cluster is a set of entries closed under every relation the whole-file passes (model/native_yaml.py `assemble`)
and the AOTI shim check (shims.py) follow between operators: the same operator name or base name (declared twice,
inplace_view's out-of-place op, the backend indices, the fallback ops), the same signature (torchgen's grouping, the
generated variants), the same view signature (view groups) and a structured_delegate's target. Each operator,
generated ones included, contributes those as keys (model/assembly.py's op_keys: the server's re-check clusters its
operators alike); entries that share a key are one cluster. The passes' findings
about a cluster's operators are then a function of the cluster's entries (their texts in order) alone, so they are
kept per cluster, keyed by the digests of its entries.

An operator generated after the edit whose keys meet another cluster's makes the two clusters one, checked again.
Where the clusters cannot hold, the edit path answers None and the caller runs the full check: reading a file in part
(the memory budget), a release whose gen.py checks its CUDA kernel list against the whole file, and several operator
namespaces under a release whose Register<Key>.cpp drops registrations at a namespace change.

The record is read and written in a few C calls (marshal, bytes, one joined string), whatever the file's size: an
edit's check costs the new entries' lowering and their clusters' passes, and little else."""

from __future__ import annotations

import bisect
import hashlib
import os
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, repeat

from ..diagnostics import Diagnostic, first_diagnostics
from ..frozen import record
from ..index.documents import (
    _MOST_COST_PER_CHAR,
    PLACED_COST,
    STRAY_COST,
    Document,
    EntryResult,
    _not_text,
    entry_cost,
    memory_budget,
)
from ..index.native import NativeParser, NativeSnapshot, _order, problem_diagnostic
from ..model.assembly import Clusters, op_keys, settle
from ..model.lower import LoweredEntry
from ..model.native_function import NativeFunction
from ..model.native_yaml import Op, assemble
from ..releases import Release
from ..syntax.entries import entry_chunks, iter_chunks, stray_chunk_diagnostic
from ..text import BOM
from .check_memo import NativeVerdict, decode_diagnostics, encode_diagnostics

# What a native check adds to the parse's diagnostics (the AOTI shim check), as check.py's native_extra.
Extra = Callable[[str, NativeSnapshot], Sequence[Diagnostic]]

# A record (marshal: dicts, lists, bytes, strings and ints only), read in a few C calls whatever the file's size:
#   "order": the entries' digests in file order, one after another (16 bytes each);
#   "cluster": each entry's cluster (array "i", in file order; KEYLESS for an entry that lowers to no operator, which
#       relates to nothing and has no findings of the passes);
#   "keys", "owners": the keys of every operator (op_keys, joined by NUL, which no text read has) and each one's
#       cluster (array "i");
#   "local": entry digest -> the entry's own diagnostics (relative to its first line), for entries that have some;
#   "spaces": entry digest -> its operators' namespaces, for entries whose are not just aten's;
#   "found": cluster -> [problems, shim diagnostics], each [member position, diagnostic relative to it], for clusters
#       that have some;
#   "next": the next free cluster number; "listed", "checked": the fallback ops the shim check reads, and whether it
#       reads a list at all.
# Clusters are numbered once and keep their number from record to record while their entries stay. A key of an entry
# since removed may still name its old cluster: it can only join clusters needlessly (see op_keys), never wrongly.
Record = dict[str, object]
KEYLESS = -1
_UNSEEN = -2
_DEFAULT_SPACES = ("aten",)


def entry_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _relative(found: Iterable[tuple[int, Diagnostic]], lines: Sequence[int], position: dict[int, int]
              ) -> list[list[object]]:
    """(entry index, placed diagnostic) -> [position in its cluster, the diagnostic relative to its entry]."""
    return [[position[i], *encode_diagnostics([d.shifted(-lines[i])])] for i, d in found]


def _placed(items: object, lines: Sequence[int]) -> list[Diagnostic]:
    """What _relative wrote, placed again at the cluster members' lines; ValueError if it is not that."""
    if not isinstance(items, list):
        raise ValueError("not a list")
    out: list[Diagnostic] = []
    for item in items:
        if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int and 0 <= item[0] < len(lines)):
            raise ValueError("not a placed diagnostic")
        out.extend(d.shifted(lines[item[0]]) for d in decode_diagnostics([item[1]]))
    return out


def _usable(release: Release) -> bool:
    return not release.cuda_kernels_in_torch_cpu


def fallback_names(path: str, release: Release) -> list[str]:
    """The AOTI fallback ops the shim check of path reads (shims.ShimCheck: none when it reads no list): the shim
    check reports only those, so a cluster without one has nothing to report."""
    from .shims import load_fallback_ops  # (the full check loaded it already, for the shim check itself)

    source = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    fallbacks = load_fallback_ops(source, release)[0]
    return [] if fallbacks is None else sorted({name for name, _ in (*fallbacks.inductor, *fallbacks.aten)})


def _fallback_name(f: NativeFunction) -> str:
    """shims.fallback_op_name (not imported: that module loads the shim generator)."""
    return f"{f.namespace}.{f.func.name.name}.{f.func.name.overload_name or 'default'}"


def _keys_record(owners: dict[str, int]) -> dict[str, object]:
    return {"keys": "\0".join(owners), "owners": array("i", owners.values()).tobytes()}


def record_of(native: NativeSnapshot, extra: Sequence[Diagnostic], listed: list[str] | None) -> Record | None:
    """The record of a full check (its snapshot and the shim check's diagnostics); None where the edit path could
    not use one (the module's docstring). listed: fallback_names, when the shim check is the only extra check."""
    document = native.document
    if document.unread_from >= 0 or not _usable(native.release):
        return None
    placed = list(document.entries)
    lines = [p.line for p in placed]
    index_of_line = {line: i for i, line in enumerate(lines)}
    clusters = Clusters()
    keyed = [False] * len(placed)
    spaces: list[set[str]] = [set() for _ in placed]
    for op in native.functions.ops:
        i = index_of_line.get(op.line)
        if i is None:
            return None
        keyed[i] = True
        spaces[i].add(op.function.namespace)
        clusters.add(i, op_keys(op.function))
    roots = [clusters.find(i) if keyed[i] else KEYLESS for i in range(len(placed))]
    members: dict[int, list[int]] = {}
    for i, root in enumerate(roots):
        if root != KEYLESS:
            members.setdefault(root, []).append(i)
    position = {i: k for group in members.values() for k, i in enumerate(group)}
    problems: dict[int, list[tuple[int, Diagnostic]]] = {}
    for problem in native.functions.problems:
        i = index_of_line.get(problem.op.line)
        if i is None:
            return None
        problems.setdefault(roots[i], []).append((i, problem_diagnostic(problem)))
    shims: dict[int, list[tuple[int, Diagnostic]]] = {}
    for d in extra:
        i = bisect.bisect_right(lines, d.span.start_line) - 1
        if i < 0 or roots[i] == KEYLESS:
            return None
        shims.setdefault(roots[i], []).append((i, d))
    digests = [entry_digest(p.result.text) for p in placed]
    local = {digests[i]: encode_diagnostics(p.result.diagnostics) for i, p in enumerate(placed) if p.result.diagnostics}
    found = {root: [_relative(problems.get(root, ()), lines, position), _relative(shims.get(root, ()), lines, position)]
             for root in problems.keys() | shims.keys()}
    owners = {key: roots[i] for key, i in clusters.owner.items()}
    return {"order": b"".join(digests), "cluster": array("i", roots).tobytes(), **_keys_record(owners),
            "costs": array("q", [p.result.cost for p in placed]).tobytes(), "local": local,
            "spaces": _spaces_record(digests, spaces), "found": found, "next": len(placed),
            "listed": {name.encode(): [] for name in listed or ()}, "checked": {b"listed": [int(listed is not None)]}}


def _spaces_record(digests: Sequence[bytes], spaces: Sequence[set[str]]) -> dict[bytes, list[str]]:
    return {d: sorted(found) for d, found in zip(digests, spaces) if len(found) != 1 or "aten" not in found}


def _chunks(text: str) -> tuple[list[int], list[str], list[Diagnostic]] | None:
    """The entries' first lines and texts, and the diagnostics of stray text, as EntryListParser cuts the text; None
    when it has no entry or is no text."""
    if _not_text(text) is not None:
        return None
    whole = entry_chunks(text)
    stray: list[Diagnostic] = []
    if whole is not None:
        lines, texts = whole
    else:
        lines, texts = [], []
        for chunk in iter_chunks(text):
            line, chunk_text = chunk
            if chunk_text[0] == "-" and (len(chunk_text) == 1 or chunk_text[1] in " \t\r\n"):
                lines.append(line)
                texts.append(chunk_text)
            elif (d := stray_chunk_diagnostic(chunk)) is not None:
                stray.append(d)
    if not texts:
        return None
    return lines, texts, stray


def _may_stop_reading(chars: int, entries: int, stray: int, costs: Iterable[int]) -> bool:
    """Whether the parser's quick count (every placed entry at its full cost, entry_cost) may stop reading a text of
    chars characters with these entries' costs; within the budget, reading never stops."""
    if chars * _MOST_COST_PER_CHAR <= memory_budget(chars):
        return False
    return PLACED_COST * entries + STRAY_COST * stray + sum(costs) > memory_budget(chars)


@record
class _Known:
    """A record, read and its shape checked (ValueError where it is not what record_of writes)."""

    order: list[bytes]
    cluster: array[int]
    costs: array[int]
    owners: dict[str, int]
    local: dict[bytes, object]
    spaces: dict[bytes, object]
    found: dict[int, object]
    next: int
    listed: dict[bytes, object]
    checked: dict[bytes, object]

    @staticmethod
    def read(record: Record) -> _Known:
        order, cluster, costs, keys, owners = (record.get(k) for k in ("order", "cluster", "costs", "keys", "owners"))
        local, spaces, found, next_free = (record.get(k) for k in ("local", "spaces", "found", "next"))
        listed, checked = record.get("listed"), record.get("checked")
        if not (type(order) is bytes and type(cluster) is bytes and type(keys) is str and type(owners) is bytes
                and type(costs) is bytes and len(order) % 16 == 0 and len(cluster) == len(order) // 4
                and len(costs) == len(order) // 2 and len(owners) % 4 == 0
                and isinstance(local, dict) and isinstance(spaces, dict)
                and isinstance(found, dict) and type(next_free) is int and isinstance(listed, dict)
                and checked in ({b"listed": [0]}, {b"listed": [1]})):
            raise ValueError("not a record")
        clusters, entry_costs, key_owners = array("i"), array("q"), array("i")
        clusters.frombytes(cluster)
        entry_costs.frombytes(costs)
        key_owners.frombytes(owners)
        names = keys.split("\0") if key_owners else []
        if len(names) != len(key_owners):
            raise ValueError("not a record")
        digests = [order[k:k + 16] for k in range(0, len(order), 16)]
        return _Known(digests, clusters, entry_costs, dict(zip(names, key_owners)), local, spaces, found, next_free,
                      listed, checked)


def edit_verdict(path: str, text: str, valid_tags: frozenset[str], release: Release, record: Record,
                 extra: Extra | None) -> tuple[NativeVerdict, Record] | None:
    """The verdict on text from record (the last run's), and the record of text; None where the full check must
    answer (the module's docstring). Raises ValueError for a record that is not what record_of writes."""
    if not _usable(release):
        return None
    if text.startswith(BOM):
        text = text[1:]
    chunks = _chunks(text)
    if chunks is None:
        return None
    lines, texts, stray = chunks
    known = _Known.read(record)
    shim_listed = None if known.checked == {b"listed": [0]} else {n.decode() for n in known.listed}
    digests = list(map(entry_digest, texts))
    old_cluster = dict(zip(known.order, known.cluster))
    labels = list(map(old_cluster.get, digests, repeat(_UNSEEN)))  # each entry's old cluster, if the text was there
    parser = NativeParser(release=release)._entries(valid_tags)
    lowered = parser._cache  # entry text -> EntryResult, filled by _add_entries

    def lower(wanted: Iterable[str]) -> None:
        new = list(dict.fromkeys(t for t in wanted if t not in lowered))
        if new:
            parser._add_entries(new, {})

    fresh = [i for i, label in enumerate(labels) if label == _UNSEEN]
    costs = list(map(dict(zip(known.order, known.costs)).get, digests, repeat(0)))
    for i in fresh:
        costs[i] = entry_cost(texts[i])
    if _may_stop_reading(len(text), len(texts), len(stray), costs):
        return None  # (the memory budget might stop reading: the full check says where)
    lower(texts[i] for i in fresh)
    clusters = Clusters()
    clusters.owner = known.owners
    next_free = known.next
    local = {d: known.local[d] for d in set(digests) & known.local.keys()}
    spaces = {d: known.spaces[d] for d in set(digests) & known.spaces.keys()}
    numbered: dict[bytes, int] = {}
    for i in fresh:  # a new text: a new cluster, joined with those its operator's keys meet
        digest = digests[i]
        label = numbered.get(digest)
        if label is None:
            result = lowered[texts[i]]
            function = result.value.function if result.value is not None else None
            if result.diagnostics:
                local[digest] = encode_diagnostics(result.diagnostics)
            if function is None:
                label = KEYLESS
                spaces[digest] = []
            else:
                label = numbered[digest] = next_free
                next_free += 1
                clusters.add(label, op_keys(function))
                if function.namespace != "aten":
                    spaces[digest] = [function.namespace]
        labels[i] = label
    old_members: dict[int, list[bytes]] = {}
    for digest, label in zip(known.order, known.cluster):
        if label != KEYLESS:
            old_members.setdefault(label, []).append(digest)
    find, parent = clusters.find, clusters.parent
    members: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        if label != KEYLESS:
            members.setdefault(find(label) if label in parent else label, []).append(i)
    dirty = {root for root, group in members.items() if old_members.get(root) != [digests[i] for i in group]}
    owner = clusters.owner

    def work(root: int) -> tuple[_Checked, set[str]]:
        group = members[root]
        lower(texts[i] for i in group)
        found = _check_cluster(path, [(lines[i], texts[i]) for i in group], lowered, release, extra, shim_listed)
        return found, {k for _, op_keys_found, _ in found[0] for k in op_keys_found}

    def join(root: int, other: int) -> int:  # an operator made anew relates to another cluster: one, checked again
        joined = members.pop(root) + members.pop(other)
        root = clusters.join(root, other)
        members[root] = sorted(joined)
        return root
    checked: dict[int, tuple[list[tuple[int, Diagnostic]], Sequence[Diagnostic]]] = {}
    for root, (ops, found_problems, found_shims) in settle(dirty, clusters, work, join, alive=members).items():
        group = members[root]
        entry_of_line = {lines[i]: i for i in group}
        found_spaces: dict[bytes, set[str]] = {digests[i]: set() for i in group}
        for line, _, namespace in ops:
            found_spaces[digests[entry_of_line[line]]].add(namespace)
        for digest, names in found_spaces.items():
            if names == {"aten"}:
                spaces.pop(digest, None)
            else:
                spaces[digest] = sorted(names)
        checked[root] = ([(entry_of_line[line], d) for line, d in found_problems], found_shims)
    if not release.register_dispatch_key_sharded:
        names = {n for digest in set(digests) for n in spaces.get(digest, _DEFAULT_SPACES)}  # type: ignore[attr-defined]
        if len(names) > 1:
            return None  # _lost_registrations reads the order of namespaces through the whole file
    problems: list[Diagnostic] = []
    shims: list[Diagnostic] = []
    found: dict[int, object] = {}
    for root, group in members.items():
        member_lines = [lines[i] for i in group]
        if root in checked:
            placed_problems, placed_found = checked[root]
            placed_shims = [(group[bisect.bisect_right(member_lines, d.span.start_line) - 1], d) for d in placed_found]
            problems.extend(d for _, d in placed_problems)
            shims.extend(placed_found)
            if placed_problems or placed_shims:
                position = {i: k for k, i in enumerate(group)}
                found[root] = [_relative(placed_problems, lines, position), _relative(placed_shims, lines, position)]
            continue
        kept = known.found.get(root)
        if kept is None:
            continue
        if not (isinstance(kept, list) and len(kept) == 2):
            raise ValueError("not a cluster's findings")
        problems.extend(_placed(kept[0], member_lines))
        shims.extend(_placed(kept[1], member_lines))
        found[root] = kept
    own = [d.shifted(line) for line, digest in zip(lines, digests) if digest in local
           for d in decode_diagnostics(local[digest])]
    diagnostics = first_diagnostics(chain(stray, own, problems), len(stray) + len(own) + len(problems), _order)
    shims.sort(key=lambda d: (d.span.start_line, d.span.start_col))
    roots = [find(label) if label in parent else label for label in labels]
    alive = members.keys()
    moved = {o: find(o) for o in set(owner.values()) if o in parent or o not in alive}
    owners = owner if not moved else {key: moved.get(o, o) for key, o in owner.items() if moved.get(o, o) in alive}
    return NativeVerdict(diagnostics, tuple(shims)), {
        "order": b"".join(digests), "cluster": array("i", roots).tobytes(), "costs": array("q", costs).tobytes(),
        **_keys_record(owners), "local": local,
        "spaces": spaces, "found": found, "next": next_free, "listed": known.listed, "checked": known.checked}


# What _check_cluster finds: each operator's (line, keys, namespace), the problems (placed), the shim diagnostics.
_Checked = tuple[list[tuple[int, list[str], str]], list[tuple[int, Diagnostic]], Sequence[Diagnostic]]


def _check_cluster(path: str, members: list[tuple[int, str]], lowered: dict[str, EntryResult[LoweredEntry]],
                   release: Release, extra: Extra | None, listed: set[str] | None) -> _Checked:
    """The whole-file passes over one cluster's entries (first line, text) in file order: each operator's (line,
    keys, namespace), the problems (the line of the entry each is about, placed), the shim check's diagnostics."""
    ops = []
    for line, text in members:
        value = lowered[text].value
        if value is not None and value.function is not None:
            ops.append(Op(value.function, line, value.metadata, False))
    if not ops:
        return [], [], ()
    functions = assemble(ops, release=release)
    found = [(op.line, op_keys(op.function), op.function.namespace) for op in functions.ops]
    problems = [(p.op.line, problem_diagnostic(p)) for p in functions.problems]
    if extra is None or listed is not None and not any(_fallback_name(op.function) in listed for op in functions.ops):
        return found, problems, ()  # (the shim check reports listed ops only: its module is not loaded)
    return found, problems, extra(path, NativeSnapshot(Document((), ()), functions, (), release))
