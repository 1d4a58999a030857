"""Bounded work: a file of more YAML values than opgen composes gets one OPG007 where reading stops (instead of
gigabytes of nodes), and a file's diagnostics are capped, with a final OPG008 that counts the rest, in the CLI
and the server. Time and memory of the two large cases are measured in benchmarks/bench_bounded.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.cli import main
from opgen_lsp.diagnostics import MAX_DIAGNOSTICS_PER_FILE, Severity, cap_diagnostics, diag
from opgen_lsp.index import documents
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.releases import DEFAULT
from opgen_lsp.text import Span

ENTRY = "- func: f(Tensor self) -> Tensor\n"
MANY = MAX_DIAGNOSTICS_PER_FILE + 500


def test_a_file_of_too_many_values_stops_with_one_diagnostic(monkeypatch):
    monkeypatch.setattr(documents, "MIN_MEMORY_BUDGET", 500 * documents.VALUE_COST)
    first = "".join(ENTRY.replace("f(", f"f{i}(") for i in range(3))
    text = first + "- func: g(Tensor self) -> Tensor\n  tags: [" + ", ".join(["core"] * 2_000) + "]\n" + ENTRY
    snapshot = NativeParser(release=DEFAULT).parse(text, frozenset({"core"}))
    [stop] = [d for d in snapshot.diagnostics if d.code == "OPG007"]
    assert stop.span == Span.point(3, 0) and stop.is_error and "opgen stops reading this file here" in stop.message
    assert [e.line for e in snapshot.document.entries] == [0, 1, 2]  # read up to there, not after
    tags = TagsParser().parse("- tag: a\n  desc: " + ", ".join(["x"] * 2_000) + "\n")
    assert [d.code for d in tags.diagnostics] == ["OPG007"]


def test_a_small_file_is_never_counted(monkeypatch):
    """A file too short to pass its budget whatever it holds is not counted against it at all (each new entry's
    cost is still estimated once, for later parses of a longer text)."""
    monkeypatch.setattr(documents, "_Budget", lambda chars: 1 / 0)
    text = "".join(ENTRY.replace("f(", f"f{i}(") for i in range(10))
    assert NativeParser(release=DEFAULT).parse(text, frozenset()).diagnostics == ()


def test_a_backend_yaml_of_too_many_values_is_not_composed(monkeypatch, inputs):
    import opgen_lsp.index.backend as backend

    monkeypatch.setattr(backend, "memory_budget", lambda chars: 1_000 * backend.BACKEND_VALUE_COST)
    monkeypatch.setattr(backend, "compose", lambda text: 1 / 0)
    [d] = check_backend("backend: XLA\ncpp_namespace: x\nsupported: [" + ", ".join(["abs"] * 2_000) + "]\n",
                        inputs.native).diagnostics
    assert d.code == "OPG007" and d.span == Span.point(0, 0)


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_did_you_mean_over_every_op_stops_after_a_budget_of_searches(inputs):
    """Each search compares the name with every op (milliseconds): a yaml of thousands of misspelt ops gets
    suggestions for the first WHOLE_POOL_SEARCHES only, every one still reported, so its time stays linear."""
    from opgen_lsp.model.backend_resolve import WHOLE_POOL_SEARCHES

    count = WHOLE_POOL_SEARCHES + 20
    names = [f"abz{'x' * (i % 7)}_{i}" if i % 2 else f"addd{i}" for i in range(count)]
    text = "backend: XLA\ncpp_namespace: x\nsupported:\n" + "".join(f"- {n}\n" for n in names)
    unknown = [d for d in check_backend(text, inputs.native).diagnostics if d.code == "OPG509"]
    assert len(unknown) == count
    hinted = [d.span.start_line for d in unknown if "did you mean" in d.message]
    assert hinted and max(hinted) < 3 + WHOLE_POOL_SEARCHES
    assert not any("did you mean" in d.message for d in unknown[WHOLE_POOL_SEARCHES:])


def test_the_diagnostics_of_a_file_are_capped_with_a_final_count():
    diagnostics = NativeParser(release=DEFAULT).parse("- func: a\n" * MANY, frozenset()).diagnostics
    assert len(diagnostics) == MAX_DIAGNOSTICS_PER_FILE + 1
    *shown, more = diagnostics
    assert [d.span.start_line for d in shown] == list(range(MAX_DIAGNOSTICS_PER_FILE))
    assert more.code == "OPG008" and more.severity is Severity.ERROR
    assert more.message.startswith("500 more diagnostics in this file, 500 of them errors")
    assert more.span.start_line == MAX_DIAGNOSTICS_PER_FILE - 1  # after the last one shown


def test_opgen_check_prints_the_capped_list(tmp_path: Path, capsys):
    path = tmp_path / "native_functions.yaml"
    path.write_text("- func: a\n" * MANY)
    (tmp_path / "tags.yaml").write_text("- tag: core\n  desc: x\n")
    assert main(["check", str(path)]) == 1
    *lines, summary = capsys.readouterr().out.splitlines()
    assert len(lines) == MAX_DIAGNOSTICS_PER_FILE + 1
    assert summary == f"{MANY} errors, 0 warnings in 1 file, checked as torch 2.13 (default)"  # the summary counts what the cap hides
    assert lines[-1].endswith("error: 500 more diagnostics in this file, 500 of them errors; opgen shows the first "
                              f"{MAX_DIAGNOSTICS_PER_FILE:,} of each file [OPG008]")


def test_the_server_publishes_the_capped_list(tmp_path: Path):
    from opgen_lsp.lsp import features

    path = tmp_path / "native_functions.yaml"
    workspace = Workspace(str(tmp_path))
    workspace.open(path.as_uri(), str(path), "- func: a\n" * MANY, 1)
    analysis = workspace.analyse(path.as_uri())

    class Client:
        encoding = "utf-16"
    items = features.diagnostic_items(analysis, Client())  # type: ignore[arg-type]
    assert len(items) == MAX_DIAGNOSTICS_PER_FILE + 1 and items[-1].code == "OPG008"
    assert "more diagnostics in this file" in items[-1].message


def test_capping_again_counts_what_an_earlier_cap_left_out():
    warnings = [diag("OPG207", Span.point(i, 0), "w") for i in range(5)]
    once = cap_diagnostics(warnings, limit=3)
    assert [d.code for d in once] == ["OPG207"] * 3 + ["OPG008"] and once[-1].severity is Severity.WARNING
    assert once[-1].message.startswith("2 more diagnostics in this file; ")
    assert cap_diagnostics(once, limit=3) == once
    twice = cap_diagnostics(once[:3] + [diag("OPG200", Span.point(9, 0), "e")] + once[3:], limit=3)
    assert twice[-1].message.startswith("3 more diagnostics in this file, 1 of them errors")
    assert twice[-1].severity is Severity.ERROR and len(twice) == 4
