"""Bounded memory (issue 16): reading a file costs at most 20 times its size, for every kind of costly input.

The peak is tracemalloc's (every allocation of the parse, deterministic; the text itself counted on top), on
inputs of 1 MiB with the budget's floor lowered to 2 MiB so that its bound per character is what holds, as it
does for files over 6 MB with the real floor. Peak RSS of `opgen check` and of the server on larger inputs:
benchmarks/bench_bounded.py.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from opgen_lsp.index import backend, documents
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import DEFAULT

from . import costly

pytestmark = pytest.mark.slow  # (memory bounds measured over large inputs: CI runs them; the not-slow loop does not)

SIZE = 1024 * 1024
FLOOR = 2 * 1024 * 1024
TAGS = frozenset({"core"})
RELEASES = Path.home() / ".cache" / "opgen" / "torchgen"


def _peak_of(parse, text: str) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        parse(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _stops(document: documents.Document) -> list[int]:
    """Where reading stopped (a file's own diagnostics come before its capped list of them all)."""
    return [d.span.start_line for d in document.diagnostics if d.code == "OPG007"]


@pytest.mark.parametrize("name", list(costly.CLASSES))
def test_reading_any_input_costs_at_most_twenty_times_its_size(monkeypatch, name):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    make = costly.CLASSES[name]
    NativeParser(release=DEFAULT).parse(make(50_000), TAGS)  # imports, memos of keys: what any earlier file leaves
    text = make(SIZE)
    peak = _peak_of(lambda t: NativeParser(release=DEFAULT).parse(t, TAGS), text)
    print(f"{name}: {peak / len(text):.1f}x")
    assert peak + len(text) <= 20 * len(text), f"{name}: {peak / len(text):.1f}x"


def test_cheap_inputs_are_read_whole_and_costly_ones_stop_where_their_budget_ends(monkeypatch):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    repeated = NativeParser(release=DEFAULT).parse(costly.many_entries(SIZE), TAGS)
    assert len(repeated.document.entries) == SIZE // 10 and _stops(repeated.document) == []
    dense = NativeParser(release=DEFAULT).parse(costly.dense_flow_lists(SIZE), TAGS)
    [line] = _stops(dense.document)
    # Entries of two lines, each estimated at about 1 MB (2,000 values), against 16 bytes a character.
    first = dense.document.entries[0].result
    assert abs(line // 2 - documents.memory_budget(SIZE) // (first.cost + documents.PLACED_COST)) <= 1
    assert len(dense.document.entries) == line // 2


def test_a_backend_yaml_just_within_its_budget_costs_at_most_twenty_times_its_size(monkeypatch, inputs):
    """Ops listed twice each (a warning apiece), one a line, lines padded with a comment so that the file's values
    come to just under what its size pays for: the costliest backend yaml that is still composed."""
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    names = [str(op.function.func.name) for op in inputs.native.functions.ops]
    width = -(-2 * backend.BACKEND_VALUE_COST // (documents.MEMORY_PER_CHAR * 95 // 100))  # two values a line
    lines = [f"- {name}  #".ljust(width - 1, "x") + "\n" for name in names * 2]
    text = "backend: XLA\ncpp_namespace: x\nsupported:\n" + "".join(lines[:SIZE // width])
    peak = _peak_of(lambda t: check_backend(t, inputs.native), text)
    found = check_backend(text, inputs.native).diagnostics
    assert "OPG007" not in {d.code for d in found} and len(found) > 2_000
    print(f"backend yaml of {len(text):,} characters: {peak / len(text):.1f}x")
    assert peak + len(text) <= 20 * len(text), f"{peak / len(text):.1f}x"


def test_a_re_parse_stops_where_a_fresh_parse_does(monkeypatch):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    text = costly.distinct_functions(SIZE)
    parser = NativeParser(release=DEFAULT)
    parser.parse(text, TAGS)
    edited = "- func: g(Tensor self) -> Tensor\n" + text
    again = parser.parse(edited, TAGS)
    assert again.diagnostics == NativeParser(release=DEFAULT).parse(edited, TAGS).diagnostics
    assert len(_stops(again.document)) == 1


def test_the_server_stops_reading_at_the_same_place(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    text = costly.dense_block_lists(SIZE)
    path = tmp_path / "native_functions.yaml"
    (tmp_path / "tags.yaml").write_text("- tag: core\n  desc: x\n")
    workspace = Workspace(str(tmp_path))
    workspace.open(path.as_uri(), str(path), text, 1)
    analysis = workspace.analyse(path.as_uri())
    served = _stops(analysis.native.document)  # type: ignore[union-attr]
    assert served and served == _stops(NativeParser(release=DEFAULT).parse(text, TAGS).document)


def _aten_folders() -> list[Path]:
    import torchgen

    installed = Path(torchgen.__file__).parent / "packaged"
    cached = sorted(RELEASES.glob("*/torchgen/packaged")) if RELEASES.is_dir() else []
    return [folder / "ATen" / "native" for folder in [installed, *cached]]


def _native_files() -> list[Path]:
    return [p for p in (folder / "native_functions.yaml" for folder in _aten_folders()) if p.is_file()]


def _derivatives_files() -> list[Path]:
    return [p for p in (folder.parent.parent / "autograd" / "derivatives.yaml" for folder in _aten_folders())
            if p.is_file()]


def test_real_files_take_less_than_half_the_floor(monkeypatch):
    """The real native_functions.yaml, tags.yaml and derivatives.yaml of torch 2.13 (installed) and of every
    release in the torchgen cache (tools/torchgen_release.py) are read whole with half the budget."""
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", documents.MIN_MEMORY_BUDGET // 2)
    natives = _native_files()
    assert natives, "torch's own native_functions.yaml is installed with it"
    for path in natives:
        text = path.read_text(encoding="utf-8")
        tags = TagsParser().parse((path.parent / "tags.yaml").read_text(encoding="utf-8"))
        assert _stops(tags.document) == []
        snapshot = NativeParser(release=DEFAULT).parse(text, tags.names)
        assert _stops(snapshot.document) == [] and len(snapshot.document.entries) > 2_000, path
    for path in _derivatives_files():
        parsed = DerivativesParser().parse(path.read_text(encoding="utf-8"))
        assert _stops(parsed.document) == [] and len(parsed.placed()) > 500, path


@pytest.mark.parametrize("value, megabytes", [("200", 200), ("", 96), ("0", 96), ("lots", 96), ("²", 96)])
def test_the_budget_floor_is_a_positive_ascii_number_of_megabytes(monkeypatch, value: str, megabytes: int) -> None:
    monkeypatch.setenv(documents.MEMORY_BUDGET_VARIABLE, value)
    assert documents._floor_from_environment() == megabytes * 1024 * 1024


def test_the_quick_count_clears_real_files_and_the_exact_count_decides_the_rest(monkeypatch):
    """Every release's real native_functions.yaml is cleared by the quick count (_Repeats: no set of texts, no second
    pass); files it cannot clear are counted again exactly, so each stops where the exact count alone stops it."""
    exact_counts: list[int] = []
    exact = documents._Budget

    def counted(chars: int) -> documents._Budget:
        exact_counts.append(chars)
        return exact(chars)

    monkeypatch.setattr(documents, "_Budget", counted)
    for path in _native_files():
        tags = TagsParser().parse((path.parent / "tags.yaml").read_text(encoding="utf-8")).names
        NativeParser(release=DEFAULT).parse(path.read_text(encoding="utf-8"), tags)
    assert exact_counts == []

    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", FLOOR)
    for text in (costly.many_entries(SIZE), costly.dense_flow_lists(SIZE)):  # read whole; stopped
        exact_counts.clear()
        quick = NativeParser(release=DEFAULT).parse(text, TAGS)
        assert exact_counts == [len(text)], "the quick count ran over, so the file was counted again exactly"
        with monkeypatch.context() as alone:
            alone.setattr(documents, "_Repeats", exact)  # the exact count from the start
            expected = NativeParser(release=DEFAULT).parse(text, TAGS)
        assert _stops(quick.document) == _stops(expected.document)
        assert len(quick.document.entries) == len(expected.document.entries)
        assert quick.diagnostics == expected.diagnostics
