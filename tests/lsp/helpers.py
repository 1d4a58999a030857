"""Sample inputs and helpers for the end-to-end language server tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "opgen_lsp.serve", "--stdio"]
# The editors whose capabilities the servers of the tests are started with; Neovim's (push diagnostics, no
# pull) only in the full suite: the not-slow loop tries each feature once.
CLIENTS = ["visual-studio-code", pytest.param("neovim", marks=pytest.mark.slow)]
# A client that pulls diagnostics and can be asked to pull again (as current VS Code does).
PULL_WITH_REFRESH = "pull-with-refresh"


def capabilities(name: str) -> types.ClientCapabilities:
    """pytest-lsp's capability set of an editor, or PULL_WITH_REFRESH: VS Code's with pull diagnostics."""
    if name != PULL_WITH_REFRESH:
        return client_capabilities(name)
    caps = client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=True)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps

TAGS = """\
- tag: core
  desc: Core ATen operators, part of the stable opset.
- tag: pointwise
  desc: Pointwise operators.
- tag: nondeterministic_seeded
  desc: Random operators.
"""

NATIVE = """\
# A small native_functions.yaml for the language server tests.
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck
  structured_delegate: add.out
  variants: function, method
  tags: [core, pointwise]

- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  device_check: NoCheck
  variants: method
  structured_delegate: add.out
  tags: pointwise

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  device_check: NoCheck
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA: add_out
  tags: pointwise

- func: relu(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU, CUDA: relu
  tags: [core, pointwise]

- func: _fused_thing(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: _fused_thing
  autogen: _fused_thing.out
"""


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.setdefault(params.uri, []).append(params)  # type: ignore[attr-defined]


def _register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)  # type: ignore[attr-defined]


def _record_refresh(client: LanguageClient, params: None) -> None:
    client.diagnostic_refreshes += 1  # type: ignore[attr-defined]


def _record_inlay_refresh(client: LanguageClient, params: None) -> None:
    client.inlay_hint_refreshes += 1  # type: ignore[attr-defined]


def _record_release(client: LanguageClient, params: object) -> None:
    """pygls hands a custom notification's params over as a namedtuple."""
    fields = params if isinstance(params, dict) else params._asdict()  # type: ignore[attr-defined]
    client.releases.append(dict(fields))  # type: ignore[attr-defined]


def make_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics (with its version), registration,
    opgen/release notification and count of workspace/diagnostic/refresh and workspace/inlayHint/refresh
    requests."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = {}  # type: ignore[attr-defined]
    client.releases = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]
    client.diagnostic_refreshes = 0  # type: ignore[attr-defined]
    client.inlay_hint_refreshes = 0  # type: ignore[attr-defined]
    handlers = dict(DEFAULT_CLIENT_FEATURES)
    handlers[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    handlers[types.CLIENT_REGISTER_CAPABILITY] = _register_capability
    handlers[types.WORKSPACE_DIAGNOSTIC_REFRESH] = _record_refresh
    handlers[types.WORKSPACE_INLAY_HINT_REFRESH] = _record_inlay_refresh  # (Neovim's capabilities ask for it)
    handlers["opgen/release"] = _record_release
    register_lsp_features(client, handlers)
    return client


# ---------------------------------------------------------------- helpers for the tests

def encoding(client: LanguageClient) -> str:
    kind = client.init_result.capabilities.position_encoding  # type: ignore[attr-defined]
    return getattr(kind, "value", kind) or "utf-16"


def units(client: LanguageClient, text: str) -> int:
    """The length of `text` in the position encoding the server chose for this client."""
    name = encoding(client)
    if name == "utf-8":
        return len(text.encode("utf-8"))
    if name == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def pos(client: LanguageClient, text: str, marker: str, offset: int = 0, occurrence: int = 1) -> types.Position:
    """The LSP position of the `occurrence`-th `marker` in `text` (plus `offset` code points)."""
    at = -1
    for _ in range(occurrence):
        at = text.index(marker, at + 1)
    at += offset
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return types.Position(line=line, character=units(client, text[start:at]))


def rng(client: LanguageClient, text: str, marker: str, occurrence: int = 1) -> types.Range:
    start = pos(client, text, marker, 0, occurrence)
    return types.Range(start=start, end=pos(client, text, marker, len(marker), occurrence))


def uses_pull(client: LanguageClient) -> bool:
    """Whether the server gives this client its diagnostics by pull: it must also take refresh requests."""
    caps = client.capabilities
    return (caps.text_document.diagnostic is not None  # type: ignore[union-attr]
            and bool(caps.workspace.diagnostics and caps.workspace.diagnostics.refresh_support))  # type: ignore


def write(client: LanguageClient, relative: str, text: str) -> Path:
    path = client.root / relative  # type: ignore[attr-defined]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def open_document(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="yaml", version=version, text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def edit(client: LanguageClient, uri: str, version: int, range_: types.Range, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(range=range_, text=text)]))


async def diagnostics(client: LanguageClient, uri: str, version: int | None = None,
                      timeout: float = 20.0) -> list[types.Diagnostic]:
    """The document's diagnostics: pulled (clients that pull) or the first publish for `version` or later."""
    if uses_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        return list(report.items)  # type: ignore[union-attr]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for params in reversed(client.published.get(uri, [])):  # type: ignore[attr-defined]
            if version is None or (params.version is not None and params.version >= version):
                return list(params.diagnostics)
        await asyncio.sleep(0.01)
    raise TimeoutError(f"no diagnostics for {uri} at version {version}")


async def current_diagnostics(client: LanguageClient, uri: str, expect, timeout: float = 20.0
                              ) -> list[types.Diagnostic]:
    """The document's diagnostics once `expect(diagnostics)` holds (push clients: the latest publish, waiting
    for it up to `timeout`; pull clients: one pull). Returns the last seen list either way."""
    if uses_pull(client):
        return await diagnostics(client, uri)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    latest: list[types.Diagnostic] = []
    while loop.time() < deadline:
        seen = client.published.get(uri, [])  # type: ignore[attr-defined]
        if seen:
            latest = list(seen[-1].diagnostics)
            if expect(latest):
                break
        await asyncio.sleep(0.01)
    return latest


def summary(ds: list[types.Diagnostic]) -> list[tuple[str, int, int, int, int]]:
    return sorted((str(d.code), d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character) for d in ds)
