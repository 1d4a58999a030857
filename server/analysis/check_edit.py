"""`opgen check` after an edit: the verdict on a native_functions.yaml from what the last run kept of its entries,
re-lowering only the entries whose text is new and re-running the whole-file passes only over the clusters of
entries they touch (check_memo.py keeps the record; this module makes and reads it).

A cluster is a set of entries closed under every relation the whole-file passes (model/native_yaml.py `assemble`)
and the AOTI shim check (shims.py) follow between operators: the same operator name or base name (declared twice,
inplace_view's out-of-place op, the backend indices, the fallback ops), the same signature (torchgen's grouping, the
generated variants), the same view signature (view groups) and a structured_delegate's target. Each operator,
generated ones included, contributes those as keys; entries that share a key are one cluster. The passes' findings
about a cluster's operators are then a function of the cluster's entries (their texts in order) alone, so they are
kept per cluster, keyed by the digests of its entries.

Where that does not hold, the edit path answers None and the caller runs the full check: reading a file in part
(the memory budget), a release whose gen.py checks its CUDA kernel list against the whole file, several operator
namespaces under a release whose Register<Key>.cpp drops registrations at a namespace change, and an operator
generated after the edit whose keys meet another cluster's (the next full check records them)."""

from __future__ import annotations

import bisect
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from itertools import chain

from ..diagnostics import Diagnostic, first_diagnostics
from ..index.documents import (
    _MOST_COST_PER_CHAR,
    ENTRY_COST,
    PLACED_COST,
    STRAY_COST,
    VALUE_COST,
    Document,
    EntryResult,
    _not_text,
    entry_cost,
    estimated_nodes,
    memory_budget,
)
from ..index.native import NativeParser, NativeSnapshot, _order, problem_diagnostic
from ..model.lower import LoweredEntry
from ..model.native_function import NativeFunction
from ..model.native_yaml import Op, assemble, facts
from ..releases import Release
from ..syntax.entries import iter_chunks, stray_chunk_diagnostic
from ..text import BOM
from .check_memo import NativeVerdict, decode_diagnostics, encode_diagnostics

# What a native check adds to the parse's diagnostics (the AOTI shim check), as check.py's native_extra.
Extra = Callable[[str, NativeSnapshot], Sequence[Diagnostic]]

# A record (marshal: lists, dicts, bytes, strings and ints only):
#   "entries": entry digest -> [keys, namespaces, the entry's own diagnostics (relative to its first line)]
#   "clusters": cluster digest -> [problems, shim diagnostics], each [member position, diagnostic relative to it]
Record = dict[str, dict[bytes, list[object]]]


def entry_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def cluster_digest(members: Iterable[bytes]) -> bytes:
    """Its members' digests in order, as they are (hashing them again costs more than the longer key)."""
    return b"".join(members)


def op_keys(f: NativeFunction) -> list[str]:
    """What relates an operator to others in the whole-file passes (the module's docstring). The kinds of key are not
    told apart: two keys of different kinds that happen to be equal join clusters needlessly, never wrongly."""
    fx = facts(f)
    name = f.func.name
    delegate = f.structured_delegate
    if delegate is None:
        return [str(name), name.name.base, fx.signature, fx.view_signature]
    return [str(name), name.name.base, fx.signature, fx.view_signature, str(delegate)]


class _Clusters:
    """Union-find over entry indices, joined by shared keys."""

    def __init__(self, count: int) -> None:
        self.parent = list(range(count))
        self.owner: dict[str, int] = {}

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def add(self, i: int, keys: Iterable[str]) -> None:
        owner = self.owner
        for key in keys:
            j = owner.setdefault(key, i)
            if j != i:
                a, b = self.find(i), self.find(j)
                if a != b:
                    self.parent[max(a, b)] = min(a, b)

    def members(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.find(i), []).append(i)
        return out


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


def record_of(native: NativeSnapshot, extra: Sequence[Diagnostic], listed: list[str] | None) -> Record | None:
    """The record of a full check (its snapshot and the shim check's diagnostics); None where the edit path could
    not use one (the module's docstring). listed: fallback_names, when the shim check is the only extra check."""
    document = native.document
    if document.unread_from >= 0 or not _usable(native.release):
        return None
    placed = list(document.entries)
    lines = [p.line for p in placed]
    index_of_line = {line: i for i, line in enumerate(lines)}
    clusters = _Clusters(len(placed))
    keys: list[list[str]] = [[] for _ in placed]
    namespaces: list[set[str]] = [set() for _ in placed]
    for op in native.functions.ops:
        i = index_of_line.get(op.line)
        if i is None:
            return None
        found = op_keys(op.function)
        keys[i].extend(found)
        namespaces[i].add(op.function.namespace)
        clusters.add(i, found)
    by_cluster = clusters.members()
    position = {i: k for members in by_cluster.values() for k, i in enumerate(members)}
    problems: dict[int, list[tuple[int, Diagnostic]]] = {}
    for problem in native.functions.problems:
        i = index_of_line.get(problem.op.line)
        if i is None:
            return None
        problems.setdefault(clusters.find(i), []).append((i, problem_diagnostic(problem)))
    shims: dict[int, list[tuple[int, Diagnostic]]] = {}
    for d in extra:
        i = bisect.bisect_right(lines, d.span.start_line) - 1
        if i < 0:
            return None
        shims.setdefault(clusters.find(i), []).append((i, d))
    digests = [entry_digest(p.result.text) for p in placed]
    entries: dict[bytes, list[object]] = {}
    for i, p in enumerate(placed):
        same = entries.get(digests[i])  # an entry of the same text (in the same cluster): the keys of both
        if same is None:
            entries[digests[i]] = [keys[i], list(namespaces[i]), encode_diagnostics(p.result.diagnostics)]
        else:
            same[0] = [*same[0], *keys[i]]  # type: ignore[misc]
            same[1] = sorted({*same[1], *namespaces[i]})  # type: ignore[misc]
    kept: dict[bytes, list[object]] = {}
    for root, members in by_cluster.items():
        kept[cluster_digest(digests[i] for i in members)] = [
            _relative(problems.get(root, ()), lines, position), _relative(shims.get(root, ()), lines, position)]
    return {"entries": entries, "clusters": kept, "listed": {name.encode(): [] for name in listed or ()},
            "checked": {b"listed": [int(listed is not None)]}}


def _chunks(text: str) -> tuple[list[int], list[str], list[Diagnostic]] | None:
    """The entries' first lines and texts, and the diagnostics of stray text, as EntryListParser cuts the text; None
    when the file could be read in part (its budget might stop reading) or is no text."""
    if _not_text(text) is not None:
        return None
    lines: list[int] = []
    texts: list[str] = []
    stray: list[Diagnostic] = []
    for chunk in iter_chunks(text):
        line, chunk_text = chunk
        if chunk_text[0] == "-" and (len(chunk_text) == 1 or chunk_text[1] in " \t\r\n"):
            lines.append(line)
            texts.append(chunk_text)
        elif (d := stray_chunk_diagnostic(chunk)) is not None:
            stray.append(d)
    if not texts:
        return None
    if len(text) * _MOST_COST_PER_CHAR > memory_budget(len(text)):
        # As the parser's quick count: every placed entry at its full cost. Within the budget, reading never stops.
        spent = PLACED_COST * len(texts) + STRAY_COST * len(stray) + (
            sum(map(entry_cost, texts)) if stray else _entries_cost(text[len(text) - sum(map(len, texts)):], len(texts)))
        if spent > memory_budget(len(text)):
            return None
    return lines, texts, stray


def _entries_cost(text: str, count: int) -> int:
    """The sum of entry_cost over count entries that make up the text, one after another: its counts add up (no
    mark spans two entries, each of which starts at column 0 with '-')."""
    return (ENTRY_COST + VALUE_COST) * count + len(text) + VALUE_COST * (estimated_nodes(text) - 1)


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
    known_entries, known_clusters, listed = record.get("entries"), record.get("clusters"), record.get("listed")
    if not (isinstance(known_entries, dict) and isinstance(known_clusters, dict) and isinstance(listed, dict)
            and record.get("checked") in ({b"listed": [0]}, {b"listed": [1]})):
        raise ValueError("not a record")
    shim_listed = None if record["checked"] == {b"listed": [0]} else {n.decode() for n in listed}
    digests = [entry_digest(t) for t in texts]
    parser = NativeParser(release=release)._entries(valid_tags)
    lowered = parser._cache  # entry text -> EntryResult, filled by _add_entries

    def lower(wanted: Iterable[str]) -> None:
        new = list(dict.fromkeys(t for t in wanted if t not in lowered))
        if new:
            parser._add_entries(new, {})

    lower(t for t, d in zip(texts, digests) if d not in known_entries)
    summaries: dict[bytes, list[object]] = {}
    clusters = _Clusters(len(texts))
    for i, (entry_text, digest) in enumerate(zip(texts, digests)):
        summary = summaries.get(digest)
        if summary is None:
            summary = known_entries.get(digest)
            if summary is None:
                summary = _summary(lowered[entry_text])
            elif not _is_summary(summary):
                raise ValueError("not an entry summary")
            summaries[digest] = summary
        clusters.add(i, summary[0])  # type: ignore[arg-type]
    by_cluster = clusters.members()
    cluster_digests = {root: cluster_digest(digests[i] for i in members) for root, members in by_cluster.items()}
    dirty = [root for root in by_cluster if cluster_digests[root] not in known_clusters]
    lower(texts[i] for root in dirty for i in by_cluster[root])
    problems: list[Diagnostic] = []
    shims: list[Diagnostic] = []
    fresh_clusters: dict[bytes, list[object]] = {}
    fresh_owner: dict[str, int] = {}
    for root in dirty:
        members = by_cluster[root]
        ops, found_problems, found_shims = _check_cluster(path, [(lines[i], texts[i]) for i in members], lowered,
                                                          release, extra, shim_listed)
        entry_of_line = {lines[i]: i for i in members}
        keys: dict[int, set[str]] = {i: set() for i in members}
        namespaces: dict[int, set[str]] = {i: set() for i in members}
        for line, op_keys_found, namespace in ops:
            i = entry_of_line[line]
            for key in op_keys_found:  # a key met in another cluster: they were not closed (an operator made anew)
                owner = clusters.owner.get(key)
                if fresh_owner.setdefault(key, root) != root or (owner is not None and clusters.find(owner) != root):
                    return None
            keys[i].update(op_keys_found)
            namespaces[i].add(namespace)
        fresh: dict[bytes, tuple[set[str], set[str], str]] = {}
        for i in members:  # (entries of the same text: the keys of both)
            found_keys, found_spaces, _ = fresh.setdefault(digests[i], (set(), set(), texts[i]))
            found_keys |= keys[i]
            found_spaces |= namespaces[i]
        for digest, (found_keys, found_spaces, entry_text) in fresh.items():
            summaries[digest] = [sorted(found_keys), sorted(found_spaces),
                                 encode_diagnostics(lowered[entry_text].diagnostics)]
        position = {i: k for k, i in enumerate(members)}
        placed_problems = [(entry_of_line[line], d) for line, d in found_problems]
        member_lines = [lines[i] for i in members]
        placed_shims = [(members[bisect.bisect_right(member_lines, d.span.start_line) - 1], d) for d in found_shims]
        fresh_clusters[cluster_digests[root]] = [_relative(placed_problems, lines, position),
                                                 _relative(placed_shims, lines, position)]
        problems.extend(d for _, d in found_problems)
        shims.extend(found_shims)
    for root, members in by_cluster.items():
        if cluster_digests[root] in fresh_clusters:
            continue
        kept = known_clusters[cluster_digests[root]]
        if not (isinstance(kept, list) and len(kept) == 2):
            raise ValueError("not a cluster")
        member_lines = [lines[i] for i in members]
        problems.extend(_placed(kept[0], member_lines))
        shims.extend(_placed(kept[1], member_lines))
        fresh_clusters[cluster_digests[root]] = kept
    if not release.register_dispatch_key_sharded:
        spaces = {n for digest in set(digests) for n in summaries[digest][1]}  # type: ignore[attr-defined]
        if len(spaces) > 1:
            return None  # _lost_registrations reads the order of namespaces through the whole file
    local = [d.shifted(line) for line, digest in zip(lines, digests)
             for d in decode_diagnostics(summaries[digest][2])]
    diagnostics = first_diagnostics(chain(stray, local, problems), len(stray) + len(local) + len(problems), _order)
    shims.sort(key=lambda d: (d.span.start_line, d.span.start_col))
    entries = {digest: summaries[digest] for digest in digests}
    return NativeVerdict(diagnostics, tuple(shims)), {"entries": entries, "clusters": fresh_clusters,
                                                      "listed": listed, "checked": record["checked"]}


def _summary(result: EntryResult[LoweredEntry]) -> list[object]:
    """A new entry's summary before its cluster is checked: its own operator's keys (those it generates are added
    once the cluster is checked)."""
    function = result.value.function if result.value is not None else None
    if function is None:
        return [[], [], encode_diagnostics(result.diagnostics)]
    return [sorted(set(op_keys(function))), [function.namespace], encode_diagnostics(result.diagnostics)]


def _is_summary(summary: object) -> bool:
    # (a record checks as this opgen wrote it, under a key of this opgen's: its shape is asked, not each key's type)
    return type(summary) is list and len(summary) == 3 and type(summary[0]) is list and type(summary[1]) is list


def _check_cluster(path: str, members: list[tuple[int, str]], lowered: dict[str, EntryResult[LoweredEntry]],
                   release: Release, extra: Extra | None, listed: set[str] | None
                   ) -> tuple[list[tuple[int, list[str], str]], list[tuple[int, Diagnostic]], Sequence[Diagnostic]]:
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
