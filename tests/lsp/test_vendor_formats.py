"""Vendor dialects of the backend yaml in the server (one server for the module, as Neovim): each of torch_npu's,
op-plugin's, torch_mlu's and torch_musa's files gets its diagnostics on their lines, a hover with upstream's
schema, a definition in native_functions.yaml, completion of op names and document symbols."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .helpers import NATIVE, SERVER, TAGS, capabilities, current_diagnostics, make_client, open_document, pos

NPU = """\
backend: NPU
cpp_namespace: at_npu::native
supported:
  - relu
  - func: add.Tensor
    op_api: True
  - relux
custom:
  - func: npu_thing(Tensor self) -> Tensor
  - func: npu_bad(Tenzor self) -> Tensor
"""
OP_PLUGIN = """\
all_version: [v2.12, v2.13]
official:
  - func: relu(Tensor self) -> Tensor
    op_api: all_version
  - func: add.Tensor(Tensor self, Tensor other) -> Tensor
    op_api: [v2.12, newest]
custom:
  - func: npu_x(Tensor self) -> Tensor
    op_api: v2.13, v2.99
"""
MLU = """\
aten:
  - func: relu
  - func: reluu
custom:
  - func: mlu_op(Tensor self) -> Tensor
    derived_type: bangc
"""
MUSA = """\
- func: relu
- func: add.Tensor(Tensor self, Tensor other) -> Tensor
- func: re
"""
FILES = {"npu_native_functions.yaml": NPU, "op_plugin_functions.yaml": OP_PLUGIN, "mlu_functions.yaml": MLU,
         "musa_functions.yaml": MUSA}
# (code, line, is an error) each file gets.
EXPECTED = {
    "npu_native_functions.yaml": [("OPG203", 9, True), ("OPG509", 6, True)],
    "op_plugin_functions.yaml": [("OPG550", 4, True), ("OPG551", 8, False)],
    "mlu_functions.yaml": [("OPG509", 2, False), ("OPG554", 5, True)],
    "musa_functions.yaml": [("OPG509", 2, True), ("OPG550", 1, True)],
}

SYMBOLS = {
    "npu_native_functions.yaml": {"supported": ["relu", "add.Tensor", "relux"], "custom": ["npu_thing", "npu_bad"]},
    "op_plugin_functions.yaml": {"official": ["relu", "add.Tensor"], "custom": ["npu_x"]},
    "mlu_functions.yaml": {"aten": ["relu", "reluu"], "custom": ["mlu_op"]},
    "musa_functions.yaml": {"relu": [], "add.Tensor": [], "re": []},
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def editor(lsp_client: LanguageClient, tmp_path: Path):
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "native_functions.yaml").write_text(NATIVE, encoding="utf-8")
    (ops / "tags.yaml").write_text(TAGS, encoding="utf-8")
    for name, text in FILES.items():
        (ops / name).write_text(text, encoding="utf-8")
    lsp_client.set_configuration({"debounceMs": 10}, section="opgen")
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=capabilities("neovim"), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        initialization_options={"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off"}))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    lsp_client.uris = {name: open_document(lsp_client, ops / name) for name in FILES}  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def uri_of(client: LanguageClient, name: str) -> str:
    return client.uris[name]  # type: ignore[attr-defined]


async def diagnostics_of(client: LanguageClient, name: str) -> list[tuple[str, int, bool]]:
    want = EXPECTED[name]
    found = await current_diagnostics(client, uri_of(client, name), lambda ds: len(ds) >= len(want), timeout=20)
    return sorted((str(d.code), d.range.start.line, d.severity == types.DiagnosticSeverity.Error) for d in found)


async def hover(client: LanguageClient, name: str, marker: str, occurrence: int = 1) -> str:
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(client, name)),
        position=pos(client, FILES[name], marker, 1, occurrence)))
    assert found is not None
    return found.contents.value  # type: ignore[union-attr]


async def definition_line(client: LanguageClient, name: str) -> int | None:
    found = await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(client, name)),
        position=pos(client, FILES[name], "relu", 1)))
    assert isinstance(found, types.Location), found
    assert found.uri.endswith("ops/native_functions.yaml")
    return found.range.start.line


@pytest.mark.asyncio
async def test_each_format_in_the_server(editor: LanguageClient) -> None:
    """All in one session: one server for the module (CI's budget)."""
    for name in FILES:  # diagnostics on their lines
        assert await diagnostics_of(editor, name) == sorted(EXPECTED[name]), name

    # hover: upstream's schema (and that the one written differs), the version range, a new op's own schema
    text = await hover(editor, "musa_functions.yaml", "add.Tensor")
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text and "differs" in text
    text = await hover(editor, "op_plugin_functions.yaml", "relu")
    assert "relu(Tensor self) -> Tensor" in text and "v2.12, v2.13" in text
    text = await hover(editor, "npu_native_functions.yaml", "npu_thing")
    assert "a new op" in text and "npu_thing(Tensor self) -> Tensor" in text
    for name in ("npu_native_functions.yaml", "mlu_functions.yaml"):  # upstream's schema in the other two formats
        assert "relu(Tensor self) -> Tensor" in await hover(editor, name, "relu"), name
    text = await hover(editor, "mlu_functions.yaml", "mlu_op")
    assert "a new op" in text and "mlu_op(Tensor self) -> Tensor" in text

    # definition: the op's entry in native_functions.yaml
    relu = NATIVE.splitlines().index("- func: relu(Tensor self) -> Tensor")
    for name in ("npu_native_functions.yaml", "mlu_functions.yaml", "musa_functions.yaml", "op_plugin_functions.yaml"):
        assert await definition_line(editor, name) == relu, name

    # completion of op names after `- func: `
    line = MUSA.splitlines().index("- func: re")
    found = await editor.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri_of(editor, "musa_functions.yaml")),
        position=types.Position(line=line, character=len("- func: re"))))
    items = found.items if isinstance(found, types.CompletionList) else found or []
    assert "relu" in {i.label for i in items}

    # document symbols: one group per section (torch_musa's file is one list: its ops)
    for name, want in SYMBOLS.items():
        symbols = await editor.text_document_document_symbol_async(types.DocumentSymbolParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of(editor, name))))
        assert symbols is not None
        tree = {s.name: [c.name for c in s.children or []] for s in symbols}  # type: ignore[union-attr]
        assert tree == want, name


def test_files_are_vendor_files() -> None:
    from opgen_lsp.model.vendor_formats import vendor_format

    assert [vendor_format(name, text) for name, text in FILES.items()] == [
        "torch_npu", "op-plugin", "torch_mlu", "torch_musa"]
    assert vendor_format(str(Path("x") / "other.yaml"), NPU) == "torch_npu"


@pytest.mark.corpus
@pytest.mark.asyncio
@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)  # one editor: the formats are not per client
async def test_the_real_files_get_no_error_in_the_server(client: LanguageClient) -> None:
    """torch_npu's and torch_mlu's real files (../shared/corpus) against torch 2.13 over stdio: no error (torch_mlu's
    file, of torch 2.4's line, keeps its warnings on the ops whose schemas changed since: docs/backends.md)."""
    from conftest import CORPUS

    from .helpers import write

    for corpus_name, name, warnings in (("torch_npu__npu_native_functions.yaml", "npu_native_functions.yaml", 0),
                                        ("torch_mlu__mlu_functions.yaml", "mlu_functions.yaml", 6)):
        text = (CORPUS / corpus_name).read_text(encoding="utf-8")
        uri = open_document(client, write(client, f"{name.split('_')[0]}/{name}", text))
        found = await current_diagnostics(client, uri, lambda ds, want=warnings: len(ds) >= want, timeout=30)
        assert [d for d in found if d.severity == types.DiagnosticSeverity.Error] == [], name
        assert len(found) == warnings, [(d.code, d.range.start.line) for d in found]
