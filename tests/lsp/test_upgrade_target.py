"""opgen.upgradeTarget in the server: OPG975 on each backend op that changes from the yaml's release to the target,
OPG976 when the target's file is not at hand (in-process, on the workspace the server analyses with)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from release_files import release_native

from opgen_lsp.diagnostics import Severity
from opgen_lsp.lsp import config
from opgen_lsp.lsp.workspace import Workspace

from .helpers import current_diagnostics, open_document, pos, rng, write

BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\n- cholesky\n"


def _changes(ws: Workspace, uri: str, target: str | None) -> list[tuple[str, int, Severity, str]]:
    """The backend document's diagnostics with opgen.upgradeTarget set to target."""
    ws.settings = config.Settings(native_functions_path=ws.settings.native_functions_path, upgrade_target=target)
    analysis = ws.analyse(uri)
    assert analysis is not None
    return [(d.code, d.span.start_line, d.severity, d.message) for d in analysis.diagnostics]


def test_each_op_that_changes_in_the_target_gets_an_information_diagnostic(tmp_path: Path, monkeypatch) -> None:
    native = release_native("2.13.0")
    release_native("2.15.0")
    ws = Workspace(root=str(tmp_path), settings=config.Settings(native_functions_path=str(native)))
    path = tmp_path / "xla_native_functions.yaml"
    uri = path.as_uri()
    ws.open(uri, str(path), BACKEND, 1)
    assert _changes(ws, uri, None) == []
    [(code, line, severity, message)] = _changes(ws, uri, "2.15")
    assert (code, line, severity) == ("OPG975", 4, Severity.INFORMATION)
    assert message.splitlines() == [
        "'cholesky' removed from torch 2.13.0 to 2.15.0",
        "schema in 2.13.0: cholesky(Tensor self, bool upper=False) -> Tensor",
        "schema in 2.15.0: (none)",
        "kernel in 2.13.0: static at::Tensor cholesky(const at::Tensor & self, bool upper);",
        "kernel in 2.15.0: (none)"]
    assert _changes(ws, uri, "2.13.0") == []  # the yaml's own release
    # A release whose file is not at hand: said once, at the first key.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    [(code, line, severity, message)] = _changes(ws, uri, "2.8")
    assert (code, line, severity) == ("OPG976", 0, Severity.WARNING)
    assert message.startswith("opgen.upgradeTarget: torch 2.8's native_functions.yaml is not at hand")


NPU = ("backend: NPU\ncpp_namespace: at_npu::native\nsupported:\n  - add.Tensor\n  - cholesky\ncustom:\n"
       "  - func: npu_thing(Tensor self) -> Tensor\n")


def test_a_torch_npu_file_gets_opg975_and_a_vendor_format_not_compared_is_said(tmp_path: Path) -> None:
    native = release_native("2.13.0")
    release_native("2.15.0")
    ws = Workspace(root=str(tmp_path), settings=config.Settings(native_functions_path=str(native)))
    path = tmp_path / "npu_native_functions.yaml"
    ws.open(path.as_uri(), str(path), NPU, 1)
    [(code, line, severity, message)] = _changes(ws, path.as_uri(), "2.15")
    assert (code, line, severity) == ("OPG975", 4, Severity.INFORMATION)
    assert message.splitlines()[0] == "'cholesky' removed from torch 2.13.0 to 2.15.0"
    assert "kernel in 2.13.0: static at::Tensor cholesky(const at::Tensor & self, bool upper);" in message
    mlu = tmp_path / "mlu_functions.yaml"
    ws.open(mlu.as_uri(), str(mlu), "aten:\n  - func: cholesky\n", 1)
    found = [c for c in _changes(ws, mlu.as_uri(), "2.15") if c[0].startswith("OPG97")]
    assert [(c[0], c[1], c[2]) for c in found] == [("OPG976", 0, Severity.WARNING)]
    assert found[0][3].startswith("opgen.upgradeTarget: cannot compare: torch_mlu's format is not compared yet")


def test_the_setting_is_a_torch_version_or_null() -> None:
    warnings: list[str] = []
    assert config.settings_from({"upgradeTarget": "2.15"}, warn=warnings.append).upgrade_target == "2.15"
    assert config.settings_from({"upgradeTarget": "latest"}, warn=warnings.append).upgrade_target is None
    assert warnings == ["opgen: setting 'upgradeTarget' must be a torch version such as '2.14' or '2.14.1', or "
                        "null, not 'latest'; using the default None"]


# Over stdio, as an editor sees it: the yaml checked as torch 2.13, opgen.upgradeTarget 2.15 (cholesky is removed in
# 2.14; add.Tensor does not change).
XLA = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\n- cholesky\n"


@pytest.mark.asyncio
@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)  # one editor: the rule is not per client
@pytest.mark.init_options({"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off",
                           "torchVersion": "2.13", "upgradeTarget": "2.15"})
async def test_the_server_publishes_opg975_and_its_hover_shows_both_releases(client) -> None:
    release_native("2.13.0")
    release_native("2.15.0")
    uri = open_document(client, write(client, "xla_native_functions.yaml", XLA))
    found = await current_diagnostics(client, uri, lambda ds: len(ds) >= 1)
    assert [(str(d.code), d.range.start.line, d.severity) for d in found] == [
        ("OPG975", 4, types.DiagnosticSeverity.Information)]
    [cholesky] = found
    assert cholesky.range == rng(client, XLA, "cholesky")
    assert cholesky.message.startswith("'cholesky' removed from torch 2.13.0 to 2.15.0\n")

    async def hover(marker: str) -> str:
        answer = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, XLA, marker, 1)))
        assert answer is not None
        return answer.contents.value  # type: ignore[union-attr]

    text = await hover("cholesky")
    assert "cholesky(Tensor self, bool upper=False) -> Tensor" in text  # upstream's schema, as before
    assert "**Upgrade** (`opgen.upgradeTarget`): 'cholesky' removed from torch 2.13.0 to 2.15.0" in text
    assert "kernel in 2.13.0: static at::Tensor cholesky(const at::Tensor & self, bool upper);" in text
    assert "kernel in 2.15.0: (none)" in text
    assert "Upgrade" not in await hover("add.Tensor")  # an op that does not change: no note


@pytest.mark.asyncio
@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)
@pytest.mark.init_options({"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off",
                           "torchVersion": "2.13", "upgradeTarget": "2.15"})
async def test_torch_npu_file_over_stdio_gets_opg975_and_its_hover_note(client) -> None:
    release_native("2.13.0")
    release_native("2.15.0")
    uri = open_document(client, write(client, "npu_native_functions.yaml", NPU))
    found = await current_diagnostics(client, uri, lambda ds: len(ds) >= 1)
    assert [(str(d.code), d.range.start.line, d.severity) for d in found] == [
        ("OPG975", 4, types.DiagnosticSeverity.Information)]
    assert found[0].range == rng(client, NPU, "cholesky")
    answer = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, NPU, "cholesky", 1)))
    assert answer is not None
    text = answer.contents.value  # type: ignore[union-attr]
    assert "**Upgrade** (`opgen.upgradeTarget`): 'cholesky' removed from torch 2.13.0 to 2.15.0" in text
    assert "kernel in 2.13.0: static at::Tensor cholesky(const at::Tensor & self, bool upper);" in text


def test_the_hover_note_keeps_a_message_quoting_a_fence_inside_its_code_block() -> None:
    # A schema or declaration may hold backticks (a default string, a comment in a custom file); a run of three
    # would close a ``` fence early and turn the rest of the note into Markdown.
    from opgen_lsp.analysis.hover import as_plain_text
    from opgen_lsp.diagnostics import diag
    from opgen_lsp.lsp.features import upgrade_note
    from opgen_lsp.text import Span

    rest = ["schema in 2.13.0: foo(str s=\"```\") -> Tensor", "```", "kernel in 2.15.0: ```` **not bold**"]
    span = Span(4, 2, 4, 5)
    note = upgrade_note([diag("OPG975", span, "'foo' changed schema\n" + "\n".join(rest))], span)
    lines = note.split("\n")
    opening = lines.index(next(line for line in lines if line.startswith("```")))
    fence = lines[opening]
    assert set(fence) == {"`"} and len(fence) > 4  # longer than the longest run inside (4)
    assert lines[opening + 1:] == [*rest, fence]  # no line inside closes it: none is a run of len(fence) or more
    assert as_plain_text(note).split("\n")[-3:] == rest  # and a client without Markdown sees the lines as they are
