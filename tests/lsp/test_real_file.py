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
    line = next(i for i, l in enumerate(lines) if l.startswith("- func:"))
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
    assert count == sum(1 for l in lines if l.startswith("- func:"))
