"""OPG960 in the server: what gen.py's AOTI shim generator fails on shows in an open native_functions.yaml, as
`opgen check` reports it (tests/codegen/test_aoti_shim_rule.py), and follows edits of the entry and of
fallback_ops.py; the verdicts of unchanged entries are kept between re-checks."""

from __future__ import annotations

from pathlib import Path

from opgen_lsp.analysis.shims import ShimCheck
from opgen_lsp.index.native import NativeParser
from opgen_lsp.lsp import config
from opgen_lsp.lsp.workspace import Workspace
from opgen_lsp.pieces.dest import aoti
from opgen_lsp.releases import DEFAULT

TAGS = "- tag: core\n  desc: core aten\n"
FAILING = "- func: foo(Tensor self, Device[] devices) -> Tensor\n  dispatch:\n    CPU: foo\n"
FINE = "- func: foo(Tensor self, Device devices) -> Tensor\n  dispatch:\n    CPU: foo\n"


def _aten(tmp_path: Path, fallback_ops: str) -> Path:
    aten = tmp_path / "ATen"
    for folder in ("native", "aoti"):
        (aten / folder).mkdir(parents=True)
    (aten / "native" / "tags.yaml").write_text(TAGS)
    (aten / "native" / "native_functions.yaml").write_text(FAILING)
    (aten / "aoti" / "fallback_ops.py").write_text(fallback_ops)
    return aten


def _codes(ws: Workspace, uri: str) -> list[tuple[str, int, int]]:
    analysis = ws.analyse(uri)
    assert analysis is not None
    return [(d.code, d.span.start_line, d.span.start_col) for d in analysis.diagnostics]


def test_the_server_reports_a_failing_shim_argument_and_follows_edits(tmp_path: Path) -> None:
    aten = _aten(tmp_path, 'inductor_fallback_ops = {"aten.foo.default": {}}\naten_shimified_ops = {}\n')
    native = aten / "native" / "native_functions.yaml"
    ws = Workspace(root=str(tmp_path), settings=config.Settings(torch_version="2.13"))
    uri = native.as_uri()
    ws.open(uri, str(native), FAILING, 1)
    assert _codes(ws, uri) == [("OPG960", 0, FAILING.index("Device[]"))]
    ws.change(uri, FINE, 2)
    assert _codes(ws, uri) == []
    ws.change(uri, FAILING, 3)
    assert _codes(ws, uri) == [("OPG960", 0, FAILING.index("Device[]"))]
    # fallback_ops.py no longer lists the op: read again (a new size), no error on the next re-check.
    (aten / "aoti" / "fallback_ops.py").write_text("inductor_fallback_ops = {}\naten_shimified_ops = {}\n")
    ws.change(uri, FAILING + "\n", 4)
    assert _codes(ws, uri) == []


def test_an_unchanged_entry_keeps_its_verdict(tmp_path: Path, monkeypatch) -> None:
    aten = _aten(tmp_path, 'inductor_fallback_ops = {"aten.foo.default": {}}\naten_shimified_ops = {}\n')
    native = str(aten / "native" / "native_functions.yaml")
    parser = NativeParser(release=DEFAULT)
    tries: list[str] = []
    compute = aoti.compute_shim
    monkeypatch.setattr(aoti, "compute_shim", lambda func, *rest: tries.append(str(func.name)) or compute(func, *rest))
    check = ShimCheck()
    other = "- func: bar(Tensor self) -> Tensor\n"
    first = check(native, parser.parse(FAILING + other, frozenset({"core"})))
    again = check(native, parser.parse(FAILING + other.replace("bar", "baz"), frozenset({"core"})))
    assert [d.code for d in first] == [d.code for d in again] == ["OPG960"]
    assert tries == ["foo"], "the unchanged listed entry is tried once"
