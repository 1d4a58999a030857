"""The server on the real native_functions.yaml of torchgen 2.13 (skipped without torch)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .helpers import SERVER, diagnostics, edit, make_client, open_document

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def vscode(lsp_client: LanguageClient, native_yaml: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=native_yaml.parent.as_uri(),
        initialization_options={"debounceMs": 10},
    ))
    yield
    await lsp_client.shutdown_session()


async def test_real_native_functions_yaml(vscode: LanguageClient, native_yaml: Path):
    text = native_yaml.read_text(encoding="utf-8")
    lines = text.split("\n")
    uri = open_document(vscode, native_yaml, text)
    assert await diagnostics(vscode, uri, 1, timeout=120) == []

    # Hover the first func line.
    line = next(i for i, ln in enumerate(lines) if ln.startswith("- func:"))
    hover = await vscode.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=10)))
    assert hover is not None
    name = lines[line][len("- func: "):].split("(")[0]
    assert hover.contents.value.startswith(f"**aten::{name}**")  # type: ignore[union-attr]

    # An edit in the middle re-checks quickly, and its undo too.
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("- func:"))
    here = types.Position(line=middle, character=0)
    started = time.perf_counter()
    edit(vscode, uri, 2, types.Range(start=here, end=here), "  bogus: [unclosed\n")
    found = await diagnostics(vscode, uri, 2)
    assert [d.code for d in found] == ["OPG001"]
    edit(vscode, uri, 3, types.Range(start=here, end=types.Position(line=middle + 1, character=0)), "")
    assert await diagnostics(vscode, uri, 3) == []
    assert time.perf_counter() - started < 10  # two re-checks; about 0.1 s each on a 2-core machine

    symbols = await vscode.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    count = sum(len(s.children) if s.children else 1 for s in symbols)
    assert count == sum(1 for ln in lines if ln.startswith("- func:"))


async def test_real_file_tokens_lenses_and_actions(vscode: LanguageClient, native_yaml: Path):
    text = native_yaml.read_text(encoding="utf-8")
    uri = open_document(vscode, native_yaml, text)
    await diagnostics(vscode, uri, 1, timeout=120)
    funcs = sum(1 for ln in text.split("\n") if ln.startswith("- func:"))
    started = time.perf_counter()
    tokens = await vscode.text_document_semantic_tokens_full_async(types.SemanticTokensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert len(tokens.data) // 5 > 5 * funcs  # type: ignore[union-attr]
    lenses = await vscode.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    formula_lenses = {lens.range.start.line: lens.command.title for lens in lenses  # type: ignore[union-attr]
                      if lens.command.title.startswith("∂")}  # type: ignore[union-attr]
    assert len(lenses) - len(formula_lenses) == 2 * funcs
    abs_line = text.split("\n").index("- func: abs(Tensor self) -> Tensor")
    assert formula_lenses[abs_line] == "∂ derivatives.yaml:221 (AbsBackward0)"
    assert len(formula_lenses) > 1000  # the ops of the packaged derivatives.yaml and their other variants
    assert time.perf_counter() - started < 10
    result = await vscode.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.showGenerated", arguments=[{"op": "add.Tensor", "uri": uri}]))
    assert "at::_ops::add_Tensor" in result["text"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def backend_only(lsp_client: LanguageClient, tmp_path: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=tmp_path.as_uri(),
        initialization_options={"debounceMs": 10}))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_backend_yaml_alone_uses_the_installed_torch(backend_only: LanguageClient):
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- add.Tensor\n- abss\n"
    path = backend_only.root / "xla_native_functions.yaml"  # type: ignore[attr-defined]
    path.write_text(text, encoding="utf-8")
    uri = open_document(backend_only, path, text)
    found = await diagnostics(backend_only, uri, timeout=120)
    assert [d.code for d in found] == ["OPG509"] and "did you mean 'abs'" in found[0].message
    hover = await backend_only.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=4)))
    assert "XLANativeFunctions::add" in hover.contents.value  # type: ignore[union-attr]
    location = await backend_only.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=3, character=4)))
    assert location.uri.endswith("torchgen/packaged/ATen/native/native_functions.yaml")  # type: ignore[union-attr]
