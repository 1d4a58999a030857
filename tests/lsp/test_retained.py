"""Memory returned and bounded (issue 27, finding 6): the workspace keeps the analyses of the most recently used
documents only (opgen.retainedAnalyses), re-analyses the others on demand, and closing a document drops what was
kept for it. The server-wide figures (300 copies of the real file) are measured by benchmarks/bench_memory.py."""

from __future__ import annotations

import asyncio
import gc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from opgen_lsp.lsp.analyses import Scheduler
from opgen_lsp.lsp.config import Settings, parse_settings
from opgen_lsp.lsp.retained import RetainedAnalyses
from opgen_lsp.lsp.workspace import Workspace

from .helpers import NATIVE, TAGS

BROKEN = NATIVE + "\n- func: broken(Tensor self -> Tensor\n"


def _workspace(tmp_path: Path, limit: int, count: int) -> tuple[Workspace, list[str]]:
    workspace = Workspace(str(tmp_path), Settings(retained_analyses=limit))
    uris = []
    for i in range(count):
        folder = tmp_path / f"copy{i}"
        folder.mkdir()
        (folder / "tags.yaml").write_text(TAGS, encoding="utf-8")
        path = folder / "native_functions.yaml"
        workspace.open(path.as_uri(), str(path), BROKEN, 1)
        uris.append(path.as_uri())
    return workspace, uris


def test_only_the_most_recently_used_analyses_are_kept(tmp_path: Path) -> None:
    workspace, uris = _workspace(tmp_path, 2, 5)
    made = {uri: workspace.analyse(uri) for uri in uris}
    kept = [uri for uri in uris if workspace.latest(uri) is not None]
    assert kept == uris[-2:]
    assert sorted(workspace._native_parsers) == sorted(uris[-2:])  # a dropped document's parser goes with it
    # Dropped but made for the same inputs: not stale (no re-check round and round), analysed again on demand.
    assert workspace.stale() == []
    assert [workspace.dropped(uri) for uri in uris] == [True, True, True, False, False]
    again = workspace.analyse(uris[0])
    assert again is not None and again.key == workspace.key(uris[0])
    assert again.diagnostics == made[uris[0]].diagnostics and again.diagnostics
    assert workspace.current(uris[0]) is again and workspace.latest(uris[-2]) is None


def test_a_dropped_document_whose_inputs_changed_is_stale(tmp_path: Path) -> None:
    workspace, uris = _workspace(tmp_path, 1, 2)
    for uri in uris:
        workspace.analyse(uri)
    (tmp_path / "copy0" / "tags.yaml").write_text(TAGS + "\n", encoding="utf-8")
    assert workspace.stale() == [uris[0]]


def test_using_an_analysis_keeps_it(tmp_path: Path) -> None:
    workspace, uris = _workspace(tmp_path, 2, 3)
    workspace.analyse(uris[0])
    workspace.analyse(uris[1])
    assert workspace.current(uris[0]) is not None  # used: now the most recent
    workspace.analyse(uris[2])
    assert workspace.latest(uris[0]) is not None and workspace.latest(uris[1]) is None


def test_closing_documents_drops_what_was_read_for_them(tmp_path: Path) -> None:
    workspace, uris = _workspace(tmp_path, 16, 3)
    for uri in uris:
        workspace.analyse(uri)
    assert len(workspace._tags_snapshots) == 3 and len(workspace._releases) == 3
    for uri in uris:
        workspace.close(uri)
    memos = (workspace._native_parsers, workspace._releases, workspace._tree_checks, workspace._tags_snapshots,
             workspace._tags_parsers, workspace._shim_checks, workspace._missing_kernels)
    assert [len(m) for m in memos] == [0] * len(memos)
    assert len(workspace._analyses) == 0


def test_the_scheduler_keeps_no_finished_job() -> None:
    async def main() -> int:
        with ThreadPoolExecutor(1) as executor:
            scheduler = Scheduler(executor, lambda uri: object(), lambda uri: (1,), lambda uri: None, 10.0)
            await scheduler.get("file:///a")
            await asyncio.sleep(0)
            return len(scheduler._jobs)

    assert asyncio.run(main()) == 0


def test_the_bound_is_a_setting() -> None:
    warnings: list[str] = []
    assert parse_settings({"retainedAnalyses": 3}, warnings.append).retained_analyses == 3
    assert parse_settings({"retainedAnalyses": 0}, warnings.append).retained_analyses == Settings().retained_analyses
    assert warnings and "retainedAnalyses" in warnings[0]


def test_retained_analyses_remember_the_key_of_what_they_drop() -> None:
    class Made:
        def __init__(self, key: tuple) -> None:
            self.key = key

    kept: RetainedAnalyses[Made] = RetainedAnalyses(1)
    assert kept.put("a", Made((1,))) == []
    assert kept.put("b", Made((2,))) == ["a"]
    assert kept.get("a") is None and kept.dropped_key("a") == (1,)
    kept.forget("a")
    assert kept.dropped_key("a") is None and len(kept) == 1


def test_a_handled_notification_leaves_no_future_behind() -> None:
    """pygls 2 files the future of each notification (and of each step of a generator handler) under a fresh id
    and never takes it out: every didOpen and didClose kept a future for the life of the process."""
    from opgen_lsp.lsp.server import create_server
    from opgen_lsp.serve import Codegen

    protocol = create_server(Codegen()).protocol
    seen: list[object] = []

    async def handler(value: int) -> int:
        return value

    def steps():
        got = yield handler, (1,), {}
        return got

    async def main() -> None:
        for i in range(3):
            protocol._execute_handler(f"n{i}", handler, seen.append, args=(i,))
            protocol._execute_handler(f"g{i}", steps, seen.append)
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert len(seen) == 6
    assert protocol._request_futures == {}


def _live(kind: type) -> int:
    """Objects of `kind` alive, frozen ones (documents.paused_gc freezes the first cold parse's) included."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        return sum(1 for o in gc.get_objects() if type(o) is kind)
    finally:
        if frozen:
            gc.freeze()


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_closing_the_last_document_empties_the_process_wide_memos(tmp_path: Path) -> None:
    """The memos of pure functions (parsed schemas, kernel readings, interned yaml nodes) serve open documents; once
    none is open they go, with the model objects they held (issue 27: they kept ~150,000 objects of the first
    documents for good, and the allocator's arenas with them). While one is open they stay."""
    from opgen_lsp.frozen import clear_memos
    from opgen_lsp.lsp.server import create_server
    from opgen_lsp.model.schema import FunctionSchema
    from opgen_lsp.model.schema_parser import parse_schema
    from opgen_lsp.serve import Codegen
    from opgen_lsp.syntax import canonical

    clear_memos()
    canonical.forget_interned()
    gc.collect()
    before = _live(FunctionSchema)
    server = create_server(Codegen())
    server.model = Workspace(str(tmp_path), Settings(retained_analyses=2))
    uris = []
    for i in range(4):
        folder = tmp_path / f"copy{i}"
        folder.mkdir()
        (folder / "tags.yaml").write_text(TAGS, encoding="utf-8")
        path = folder / "native_functions.yaml"
        server.model.open(path.as_uri(), str(path), NATIVE.replace("Tensor self", f"Tensor self{i}", 1), 1)
        assert server.model.analyse(path.as_uri()) is not None
        uris.append(path.as_uri())
    assert parse_schema.cache_info().currsize > 0 and canonical._pairs
    assert _live(FunctionSchema) > before
    for uri in uris[:-1]:
        server.closed(uri)  # (no event loop: the memory is released at once)
    assert parse_schema.cache_info().currsize > 0 and canonical._pairs  # one still open: the memos stay
    server.closed(uris[-1])
    assert parse_schema.cache_info().currsize == 0
    assert (canonical._plain_values, canonical._key_nodes, canonical._pairs) == ({}, {}, {})
    assert clear_memos() <= 1  # every memo of the package was emptied (but retained's malloc_trim, looked up after)
    assert _live(FunctionSchema) <= before


def _functions(analysis: object) -> list[object]:
    """The lowered entries of a native document (those the file spells out, not the ones generated from them)."""
    return [placed.result.value for placed in analysis.native.document.entries]  # type: ignore[attr-defined]


def test_copies_of_a_file_share_one_model_until_the_last_is_closed(tmp_path: Path) -> None:
    """Documents whose entries lower alike (same text, tags and release) share the lowered entries: 300 copies of the
    real file hold one model, not 300 (issue 27). The diagnostics are those of a parser of its own, edits included,
    and the shared entries go with the last document that used them."""
    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT

    workspace, uris = _workspace(tmp_path, 4, 3)
    first, second, third = (workspace.analyse(uri) for uri in uris)
    assert first is not None and second is not None and third is not None
    assert all(a is b for a, b in zip(_functions(first), _functions(second), strict=True))
    assert len(workspace._shared_entries) == 2  # one cache for the native entries, one for the tags

    def alone(text: str) -> tuple:
        tags = TagsParser().parse(TAGS)
        return NativeParser(release=DEFAULT).parse(text, tags.names).diagnostics

    # Edited apart, each still gets what a parser of its own gives, whatever the other left in the shared cache.
    edited = BROKEN.replace("Tensor other", "Tensor other2", 1)
    workspace.change(uris[0], edited, 2)
    assert workspace.analyse(uris[0]).diagnostics == alone(edited)  # type: ignore[union-attr]
    assert workspace.analyse(uris[1]).diagnostics == alone(BROKEN) == second.diagnostics  # type: ignore[union-attr]

    # Other tags: another lowering (an unknown tag is an error there), so another cache.
    (tmp_path / "copy2" / "tags.yaml").write_text(TAGS.replace("- tag: core", "- tag: kore"), encoding="utf-8")
    changed = workspace.analyse(uris[2])
    assert changed is not None and changed.diagnostics != third.diagnostics
    assert not set(map(id, _functions(changed))) & set(map(id, _functions(second)))
    assert len(workspace._shared_entries) == 3  # (all tags.yaml entries lower alike: one cache)

    del first, second, third, changed
    for uri in uris:
        workspace.close(uri)
    gc.collect()
    assert len(workspace._shared_entries) == 0


def test_a_shared_cache_keeps_what_any_of_its_parsers_uses_and_drops_the_rest() -> None:
    """A small file's edits do not drop a large file's entries from the cache they share (each would then compose
    every entry again on its next edit), and entries no parser uses any more still go."""
    from opgen_lsp.index.documents import SharedEntries
    from opgen_lsp.index.native import NativeParser
    from opgen_lsp.releases import DEFAULT

    shared = SharedEntries()
    large_text = "".join(f"- func: op{i}(Tensor self) -> Tensor\n  variants: function\n" for i in range(200))
    large, small = NativeParser(release=DEFAULT, shared=shared), NativeParser(release=DEFAULT, shared=shared)
    before = large.parse(large_text, frozenset())
    for i in range(300):  # every edit a new entry: the cache must not grow with them
        small.parse(f"- func: little{i}(Tensor self) -> Tensor\n", frozenset())
    after = large.parse("- func: extra(Tensor self) -> Tensor\n" + large_text, frozenset())
    assert [p.result for p in after.document.entries][1:] == [p.result for p in before.document.entries]
    assert all(a.result is b.result for a, b in zip(after.document.entries[1:], before.document.entries, strict=True))
    cache = shared.cache(("native_functions.yaml", frozenset(), frozenset(), large.release))
    assert len(cache) <= 2 * 202 + 64 and "- func: little0(Tensor self) -> Tensor\n" not in cache
