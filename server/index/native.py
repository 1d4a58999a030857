"""native_functions.yaml + tags.yaml as one analysed snapshot, with every diagnostic placed."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, diag, first_diagnostics
from ..frozen import new_tuple
from ..model.assembly import Assembly
from ..model.dispatch import DispatchKey
from ..model.lower import LoweredEntry, lower_native_function, parse_entry_schemas
from ..model.native_yaml import (
    NativeFunctions,
    Op,
    Problem,
    related_stem,
    unregistered_kernel_message,
    unregistered_torch_cpu_cuda_kernels,
)
from ..model.tags import Tag, lower_tag
from ..releases import Release
from ..syntax.locate import ScalarText
from ..syntax.nodes import YMap, YScalar
from ..text import Span
from .documents import Document, EntryListParser, SharedEntries, names_past, paused_gc

if TYPE_CHECKING:
    from ..pieces.explain import Explainer


@dataclass(frozen=True)
class TagsSnapshot:
    document: Document[Tag]
    tags: dict[str, Tag]
    diagnostics: tuple[Diagnostic, ...]
    # The tag names in the text past where reading stopped (OPG007): no op that uses one is told it is unknown.
    past_the_cut: frozenset[str] = frozenset()

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.tags) | self.past_the_cut


# What names an entry past the point where reading stopped: found by a scan, whatever the yaml's shape around it.
# Each starts at the line break before a line (a block or flow entry): a literal the regex engine searches for
# fast, and a scan linear in the text whatever it holds.
_TAG_NAME = re.compile(r"""\n[ \t\-{]*tag[ \t]*:[ \t]*['"]?([^\s'",}\]]+)""")
_FUNC_NAME = re.compile(r"""\n[ \t\-{]*func[ \t]*:[ \t]*['"]?([^\s('"]+)\(""")
# Problems across entries that can only be about what is there (a name or a signature declared twice), never about
# what is not.
_ABOUT_WHAT_IS_THERE = frozenset({"OPG300", "OPG304"})


def _stems_past_the_cut(text: str, document: Document[LoweredEntry]) -> frozenset[str]:
    stems = {related_stem(name) for name in names_past(text, document, _FUNC_NAME)}
    return frozenset(stems | {stem[1:] for stem in stems if stem.startswith("i")})  # __iand__ pairs with __and__


def _maybe_about_the_rest(problem: Problem, functions: NativeFunctions) -> bool:
    """Whether a problem across entries may be false because a related op lies past where reading stopped."""
    if problem.code in _ABOUT_WHAT_IS_THERE:
        return False
    f = problem.op.function
    return functions.may_lie_past_the_cut(str(f.func.name)) or (
        f.structured_delegate is not None and functions.may_lie_past_the_cut(str(f.structured_delegate)))


def _lower_tag_entry(entry: YMap) -> tuple[Tag | None, tuple[Diagnostic, ...]]:
    return lower_tag(entry)


class TagsParser:
    def __init__(self, shared: SharedEntries | None = None) -> None:
        """shared: entry caches shared with other parsers (a server's documents), else the parser's own."""
        cache = shared.cache(("tags.yaml",)) if shared is not None else None
        self._parser: EntryListParser[Tag] = EntryListParser("tags.yaml", _lower_tag_entry, cache=cache)

    def parse(self, text: str) -> TagsSnapshot:
        with paused_gc():
            return self._parse(text)

    def _parse(self, text: str) -> TagsSnapshot:
        document = self._parser.parse(text)
        tags: dict[str, Tag] = {}
        diagnostics = document.all_diagnostics()
        for placed in document.entries:
            tag = placed.result.value
            if tag is None:
                continue
            if tag.name in tags:
                name_node = tag.entry.value("tag")  # there: lower_tag accepted the entry
                span = (name_node or tag.entry).span.shifted(placed.line)
                diagnostics.append(diag("OPG402", span, f"tag '{tag.name}' is defined twice"))
                continue
            tags[tag.name] = tag
        return TagsSnapshot(document, tags, first_diagnostics(diagnostics, len(diagnostics), _order),
                            names_past(text, document, _TAG_NAME))


@dataclass(frozen=True)
class NativeSnapshot:
    document: Document[LoweredEntry]
    functions: NativeFunctions
    diagnostics: tuple[Diagnostic, ...]
    # The torch release it was read as (its rules; backend yamls resolved against it say what it lacks).
    release: Release

    @functools.cached_property
    def explainer(self) -> Explainer:
        """What torchgen generates for each op of this version (hover, explain, the backend's declarations): built
        once per snapshot, since building one walks every op and explaining one op does not."""
        from ..pieces.explain import Explainer  # the per-op pieces load on first use (a plain check needs none)

        return Explainer(self.functions, self.release)

    @functools.cached_property
    def ops_by_name(self) -> dict[str, Op]:
        """Each op by `name.overload` (one written in the file before a generated one), built on first use."""
        out: dict[str, Op] = {}
        for op in self.functions.ops:
            name = str(op.function.func.name)
            if name not in out or out[name].generated and not op.generated:
                out[name] = op
        return out


class NativeParser:
    """Parses native_functions.yaml text; entries are cached per set of valid tags.

    ignore_keys: dispatch keys left out of the model, as gen.py leaves out MPS, XPU
    and MTIA kernels unless asked for them; release: the torch release whose rules apply; shared: entry caches
    shared with the parsers of other documents (a server's), else the parser's own.
    """

    def __init__(self, ignore_keys: frozenset[DispatchKey] = frozenset(), *, release: Release,
                 shared: SharedEntries | None = None) -> None:
        self._ignore_keys = ignore_keys
        self.release = release
        self._shared = shared
        self._tags: frozenset[str] | None = None
        self._parser: EntryListParser[LoweredEntry] | None = None
        self._assembly = Assembly(release)

    def _entries(self, valid_tags: frozenset[str]) -> EntryListParser[LoweredEntry]:
        if self._parser is None or valid_tags != self._tags:
            ignore_keys, release = self._ignore_keys, self.release

            def lower(entry: YMap) -> tuple[LoweredEntry, tuple[Diagnostic, ...]]:
                lowered = lower_native_function(entry, valid_tags, ignore_keys, release=release)
                return lowered, lowered.diagnostics
            self._tags = valid_tags
            # An entry lowers to the same result wherever its text appears, given these three.
            cache = None if self._shared is None else self._shared.cache(
                ("native_functions.yaml", valid_tags, ignore_keys, release))
            self._parser = EntryListParser("native_functions.yaml", lower, parse_entry_schemas, cache)
        return self._parser

    def parse(self, text: str, valid_tags: frozenset[str]) -> NativeSnapshot:
        with paused_gc():
            return self._parse(text, valid_tags)

    def _parse(self, text: str, valid_tags: frozenset[str]) -> NativeSnapshot:
        document = self._entries(valid_tags).parse(text)
        entries: list[Op | None] = []
        for placed in document.entries:
            lowered = placed.result.value
            if lowered is not None and lowered.function is not None:
                # new_tuple (Op's own __new__ is Python code): this runs for every entry on every keystroke.
                entries.append(new_tuple(Op, (lowered.function, placed.line, lowered.metadata, False)))
            else:
                entries.append(None)
        functions = self._assembly.assemble(entries)
        ops = functions.entry_ops
        # gen.py's list of CUDA kernels in torch_cpu: a backend's own parse runs no gen.py
        unregistered = kernel_list_diagnostics(ops, self.release) if not self.release.parse_only else ()
        if document.unread_from >= 0:  # reading stopped: nothing may be called missing that lies past the cut
            functions = replace(functions, stems_past_the_cut=_stems_past_the_cut(text, document))
            functions = replace(functions, problems=tuple(p for p in functions.problems
                                                          if not _maybe_about_the_rest(p, functions)))
            unregistered = ()  # which kernels the file registers is known only of the whole file
        diagnostics = chain(document.each_diagnostic(), map(problem_diagnostic, functions.problems), unregistered)
        count = document.diagnostic_count() + len(functions.problems) + len(unregistered)
        return NativeSnapshot(document, functions, first_diagnostics(diagnostics, count, _order), self.release)


def kernel_list_diagnostics(ops: Sequence[Op], release: Release) -> tuple[Diagnostic, ...]:
    """OPG953 for each CUDA kernel gen.py lists as defined in torch_cpu that no CUDA-family key registers: at
    the entry that has it under another key, else at its op's CUDA kernel; those no entry relates to, in one
    diagnostic on the file's first line."""
    found = unregistered_torch_cpu_cuda_kernels(ops, release)
    located = tuple(diag("OPG953", problem_span(op, where), unregistered_kernel_message([kernel], release))
                    for kernel, op, where in found if op is not None)
    unrelated = [kernel for kernel, op, _ in found if op is None]
    if not unrelated:
        return located
    return (diag("OPG953", Span.point(0, 0), unregistered_kernel_message(unrelated, release)), *located)


def _order(d: Diagnostic) -> tuple[int, int, str]:
    return (d.span.start_line, d.span.start_col, d.code)


def problem_diagnostic(problem: Problem) -> Diagnostic:
    return diag(problem.code, problem_span(problem.op, problem.where), problem.message)


def problem_span(op: Op, where: object) -> Span:
    """Where a cross-entry problem shows: the key, the argument or the op's name."""
    source = op.function.source
    if source is None:
        return Span.point(op.line, 0)
    entry = source.entry
    text = ScalarText(source.func_scalar)
    spans = source.schema_spans
    span = text.span(*spans.name)
    if isinstance(where, tuple) and where[0] == "arg" and where[1] < len(spans.arguments):
        span = text.span(*spans.arguments[where[1]].whole)
    elif isinstance(where, tuple) and where[0] == "return" and where[1] < len(spans.each_return):
        span = text.span(*spans.each_return[where[1]])
    elif isinstance(where, tuple) and where[0] == "dispatch":  # the kernel of that dispatch key
        span = _dispatch_value_span(entry, where[1]) or entry.key_span("dispatch") or span
    elif isinstance(where, tuple) and where[0] == "ufunc":  # a key of the ufunc_inner_loop mapping
        loops = entry.value("ufunc_inner_loop")
        span = (loops.key_span(where[1]) if isinstance(loops, YMap) else None) or entry.key_span("ufunc_inner_loop") \
            or span
    elif isinstance(where, str) and where != "name":
        node = entry.value(where)
        if isinstance(node, YScalar) and node.value is not None:
            span = node.span
        elif node is not None:
            span = entry.key_span(where) or span
    return span.shifted(op.line)


def _dispatch_value_span(entry: YMap, key_name: str) -> Span | None:
    table = entry.value("dispatch")
    if isinstance(table, YMap):
        for k, v in table.pairs:
            if isinstance(k, YScalar) and isinstance(k.value, str) and key_name in map(str.strip, k.value.split(",")):
                return v.span
    return None
