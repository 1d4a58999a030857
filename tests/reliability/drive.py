"""Driving the real language server over stdio (pytest-lsp's client), for the LSP reliability tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from opgen_lsp.lsp import features
from opgen_lsp.lsp.config import Settings
from opgen_lsp.lsp.convert import UTF16
from opgen_lsp.lsp.workspace import Workspace

from . import fuzz

SERVER = [sys.executable, "-m", "opgen_lsp.serve", "--stdio"]


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.published.setdefault(params.uri, []).append(params)  # type: ignore[attr-defined]


def _accept_registration(client: LanguageClient, params: types.RegistrationParams) -> None:
    return None


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = {}  # type: ignore[attr-defined]
    handlers = dict(DEFAULT_CLIENT_FEATURES)
    handlers[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    handlers[types.CLIENT_REGISTER_CAPABILITY] = _accept_registration
    register_lsp_features(client, handlers)
    return client


def capabilities(kind: str = "push") -> types.ClientCapabilities:
    """VS Code's capabilities ("push": diagnostics are published), or with pull diagnostics and refresh ("pull")."""
    caps = client_capabilities("visual-studio-code")
    if kind == "pull":
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=True)
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


async def initialize(client: LanguageClient, root: Path, options: dict | None = None,
                     capabilities: types.ClientCapabilities | None = None, process_id: int | None = None) -> None:
    client.init_result = await client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=capabilities or client_capabilities("visual-studio-code"), root_uri=root.as_uri(),
        process_id=process_id, initialization_options={"debounceMs": 10, **(options or {})}))


def server_pid(client: LanguageClient) -> int:
    return client._server.pid  # type: ignore[attr-defined,union-attr]


async def stop(client: LanguageClient, timeout: float = 10.0) -> None:
    """Shut the server down; one that does not answer (wedged) is killed."""
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout)
    except Exception:
        process = client._server  # type: ignore[attr-defined]
        if process is not None and process.returncode is None:
            process.kill()
    await client.stop()


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def client_position(text: str, offset: int) -> types.Position:
    """The position an LSP client gives `offset` (lines end at \\n, \\r\\n, \\r; UTF-16 columns)."""
    line = text.count("\n", 0, offset) + text.count("\r", 0, offset) - text.count("\r\n", 0, offset)
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    return types.Position(line=line, character=UTF16.units(text[start:offset]))


def inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def client_edit(text: str, edit: fuzz.Edit) -> fuzz.Edit:
    """The edit moved off the middle of a \\r\\n (a client cannot point there)."""
    start = edit.start - 1 if inside_crlf(text, edit.start) else edit.start
    end = edit.end + 1 if inside_crlf(text, edit.end) else edit.end
    return fuzz.Edit(start, max(start, end), edit.text)


def open_text(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="yaml", version=version, text=text)))
    return uri


def change(client: LanguageClient, uri: str, version: int, text: str, edit: fuzz.Edit) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=client_position(text, edit.start), end=client_position(text, edit.end)),
            text=edit.text)]))


def replace_all(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def published(client: LanguageClient, uri: str, version: int, timeout: float = 60.0) -> list[types.Diagnostic]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for params in reversed(client.published.get(uri, [])):  # type: ignore[attr-defined]
            if params.version is not None and params.version >= version:
                return list(params.diagnostics)
        await asyncio.sleep(0.02)
    raise TimeoutError(f"no diagnostics for {uri} at version {version}")


def summary(ds) -> list[tuple]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character, d.message) for d in ds)


def expected_diagnostics(text: str, tags_path: str) -> list[tuple]:
    """What the server should publish for `text` (the engine, converted as the server converts)."""
    workspace = Workspace(settings=Settings(tags_path=tags_path))
    uri = "file:///expected/native_functions.yaml"
    workspace.open(uri, "/expected/native_functions.yaml", text, 1)
    return summary(features.diagnostic_items(workspace.analyse(uri), features.Client()))  # type: ignore[arg-type]
