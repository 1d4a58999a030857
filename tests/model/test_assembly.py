"""The re-assembly of a language server's re-check (model/assembly.py): after each of a run of seeded random edits, a
long-lived parser's model (every op, generated op, group, view group, their order, the problems) and its diagnostics
are those of the full passes over the same entries; and the re-assembly is what answered most edits, so a path never
taken cannot pass."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import CORPUS
from native_edits import edit

from opgen_lsp.index import documents
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.model import assembly
from opgen_lsp.model.native_yaml import Problem, assemble
from opgen_lsp.releases import DEFAULT, Release, resolve

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "aten" / "native"


@pytest.fixture
def reassembled(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each pass of any Assembly since: whether the re-assembly answered it (False: the full passes)."""
    seen: list[bool] = []
    after_edit = assembly.Assembly._after_edit

    def counted(self: assembly.Assembly, ops: object, lines: object) -> object:
        found = after_edit(self, ops, lines)  # type: ignore[arg-type]
        seen.append(found is not None)
        return found

    monkeypatch.setattr(assembly.Assembly, "_after_edit", counted)
    return seen


def _problem_order(p: Problem) -> tuple[object, ...]:
    return (p.op.line, p.code, p.message, repr(p.where), str(p.op.function.func.name))


def assert_as_full_passes(snapshot: NativeSnapshot, release: Release) -> None:
    """snapshot's model is what the full passes make of its entries' operators, order included; its problems too
    (their order is the passes' own: compared as sorted lists), but for those a cut file leaves out (edited_run
    compares the diagnostics with a fresh parser's)."""
    got = snapshot.functions
    full = assemble(got.entry_ops, release=release)
    assert got.ops == full.ops
    assert got.made_by == full.made_by
    assert got.groups == full.groups
    assert got.view_groups == full.view_groups
    expected = sorted(full.problems, key=_problem_order)
    if snapshot.document.unread_from >= 0:  # a cut file: the parse drops the problems the unread rest may answer
        expected = [p for p in expected if p in got.problems]
    assert sorted(got.problems, key=_problem_order) == expected


def edited_run(native: Path, tags_path: Path, release: Release, seed: int, steps: int, reassembled: list[bool]
               ) -> int:
    """steps seeded random edits of native (tags.yaml left alone: new tags lower every entry anew), each checked
    against the full passes and a fresh parser's diagnostics; how many the re-assembly answered."""
    rng = random.Random(seed)
    text = native.read_text(encoding="utf-8")
    tags = tags_path.read_text(encoding="utf-8")
    valid = TagsParser().parse(tags).names
    parser = NativeParser(release=release)
    parser.parse(text, valid)
    history = [(text, tags)]
    del reassembled[:]
    for _ in range(steps):
        what, text, _ = edit(rng, text, tags, history)
        history.append((text, tags))
        snapshot = parser.parse(text, valid)
        assert_as_full_passes(snapshot, release)
        fresh = NativeParser(release=release).parse(text, valid)
        assert sorted(snapshot.diagnostics, key=repr) == sorted(fresh.diagnostics, key=repr), what
    assert parser._assembly.faults == 0
    return sum(reassembled)


@pytest.mark.parametrize("seed", range(4))
def test_the_sample_over_random_edits(seed: int, reassembled: list[bool]) -> None:
    answered = edited_run(SAMPLES / "native_functions.yaml", SAMPLES / "tags.yaml", DEFAULT, seed, 40, reassembled)
    assert answered >= 10


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.13.0", "2.6.0", "2.15.0"])
def test_the_real_file_over_random_edits(version: str, native_yaml: Path, tags_yaml: Path,
                                         reassembled: list[bool]) -> None:
    release = resolve(version, "--torch-release").release
    answered = edited_run(native_yaml, tags_yaml, release, int(version.split(".")[1]), 25, reassembled)
    assert answered >= 8


@pytest.mark.slow
@pytest.mark.corpus
def test_a_vendors_own_native_functions_over_random_edits(reassembled: list[bool]) -> None:
    """torch-xpu-ops' own native_functions.yaml and tags.yaml (the corpus; a file nobody here wrote), as 2.13."""
    folder = CORPUS / "native-torch-xpu-ops"
    answered = edited_run(folder / "native_functions.yaml", folder / "tags.yaml", DEFAULT, 11, 25, reassembled)
    assert answered >= 8


def test_a_file_cut_by_its_memory_budget_over_random_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           reassembled: list[bool]) -> None:
    """A file read only up to its memory budget (OPG007 at an entry of thousands of values, two thirds down): after
    each edit, the model of the entries read is the full passes' and the diagnostics a fresh parser's."""
    monkeypatch.setattr(documents, "memory_budget", lambda chars: 1_000_000)
    entries = (SAMPLES / "native_functions.yaml").read_text(encoding="utf-8").split("\n- func:")
    cut = 2 * len(entries) // 3
    heavy = " heavy(Tensor self) -> Tensor\n  tags: [" + ", ".join(["core"] * 3_000) + "]\n"
    native = tmp_path / "native_functions.yaml"
    native.write_text("\n- func:".join([*entries[:cut], heavy, *entries[cut:]]), encoding="utf-8")
    valid = TagsParser().parse((SAMPLES / "tags.yaml").read_text(encoding="utf-8")).names
    first = NativeParser(release=DEFAULT).parse(native.read_text(encoding="utf-8"), valid)
    assert [d.code for d in first.diagnostics if d.code == "OPG007"] == ["OPG007"]
    assert edited_run(native, SAMPLES / "tags.yaml", DEFAULT, 7, 40, reassembled) >= 10


def test_an_edit_that_keeps_every_relation_reassembles_one_cluster(reassembled: list[bool]) -> None:
    text = (SAMPLES / "native_functions.yaml").read_text(encoding="utf-8")
    valid = TagsParser().parse((SAMPLES / "tags.yaml").read_text(encoding="utf-8")).names
    parser = NativeParser(release=DEFAULT)
    first = parser.parse(text, valid).functions
    line = next(line for line in text.splitlines() if line.startswith("    CPU: ") and "," not in line)
    edited = parser.parse(text.replace(line, line + "_edited", 1), valid).functions
    assert reassembled[-1]
    assert sum(a is not b for a, b in zip(edited.groups, first.groups)) <= 1  # the one group, the rest as they were
    assert_as_full_passes(parser.parse(text.replace(line, line + "_edited", 1), valid), DEFAULT)


def test_an_entry_broken_and_mended_is_reassembled(reassembled: list[bool]) -> None:
    """A line that breaks an entry (it lowers to no operator: the op and its generated ones leave the lists), then
    its removal: each re-assembled, as the full passes make them."""
    text = (SAMPLES / "native_functions.yaml").read_text(encoding="utf-8")
    valid = TagsParser().parse((SAMPLES / "tags.yaml").read_text(encoding="utf-8")).names
    lines = text.splitlines(keepends=True)
    at = len(lines) // 2
    parser = NativeParser(release=DEFAULT)
    whole = parser.parse(text, valid).functions
    broken = parser.parse("".join([*lines[:at], "  bogus: [unclosed\n", *lines[at:]]), valid)
    assert reassembled[-1] and len(broken.functions.ops) < len(whole.ops)
    assert_as_full_passes(broken, DEFAULT)
    mended = parser.parse(text, valid)
    assert reassembled[-1]
    assert_as_full_passes(mended, DEFAULT)
    assert mended.functions.ops == whole.ops and mended.functions.groups == whole.groups


def test_an_entry_added_runs_the_full_passes(reassembled: list[bool]) -> None:
    text = (SAMPLES / "native_functions.yaml").read_text(encoding="utf-8")
    valid = TagsParser().parse((SAMPLES / "tags.yaml").read_text(encoding="utf-8")).names
    parser = NativeParser(release=DEFAULT)
    parser.parse(text, valid)
    parser.parse(text + "- func: opgen_new(Tensor self) -> Tensor\n", valid)
    assert reassembled[-1] is False


def _op(name: str, kernel: str) -> str:
    return f"- func: {name}(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CPU: {kernel}\n\n"


@pytest.mark.parametrize("version", ["2.6.0", "2.13.0"])
def test_a_change_of_namespace_where_their_order_matters(version: str, reassembled: list[bool]) -> None:
    """Before 2.7, Register<Key>.cpp drops registrations at a change of op namespace (OPG954), an order through the
    whole file: an edit that brings in a second namespace runs the full passes there, and is re-assembled after."""
    release = resolve(version, "--torch-release").release
    text = "".join(_op(name, f"{name}_cpu") for name in ("a", "b", "c", "d", "e", "f"))
    parser = NativeParser(release=release)
    parser.parse(text, frozenset())
    edited = text.replace("- func: e(", "- func: custom::e(")
    snapshot = parser.parse(edited, frozenset())
    assert_as_full_passes(snapshot, release)
    fresh = NativeParser(release=release).parse(edited, frozenset())
    assert sorted(snapshot.diagnostics, key=repr) == sorted(fresh.diagnostics, key=repr)
    assert bool([d for d in snapshot.diagnostics if d.code == "OPG954"]) is (version == "2.6.0")
    assert reassembled[-2] is (version != "2.6.0")  # (the last: the fresh parser's first pass)


def test_a_fault_of_the_reassembly_is_answered_by_the_full_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (SAMPLES / "native_functions.yaml").read_text(encoding="utf-8")
    valid = TagsParser().parse((SAMPLES / "tags.yaml").read_text(encoding="utf-8")).names
    parser = NativeParser(release=DEFAULT)
    parser.parse(text, valid)

    def broken(*args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(assembly, "order_keys", broken)
    line = next(line for line in text.splitlines() if line.startswith("    CPU: ") and "," not in line)
    snapshot = parser.parse(text.replace(line, line + "_edited", 1), valid)
    assert parser._assembly.faults == 1
    assert_as_full_passes(snapshot, DEFAULT)
