"""How diagnostics reach each kind of client, and stay current when another file changes.

A client that pulls and takes workspace/diagnostic/refresh gets pulls and refresh requests; a client
that pulls but cannot be told to pull again (Neovim 0.11) gets pushes, and empty pulls, so that an edit
of tags.yaml still re-checks the native_functions.yaml it shows.
"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import NATIVE, PULL_WITH_REFRESH, TAGS, current_diagnostics, open_document, uses_pull, write

pytestmark = pytest.mark.asyncio

UNKNOWN_TAG = "unknown tag"


def _pull(client: LanguageClient, uri: str):
    return client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri)))


def _tag_problems(ds: list[types.Diagnostic]) -> list[str]:
    return [d.message for d in ds if UNKNOWN_TAG in d.message]


def _drop_tag_from_disk(client: LanguageClient) -> None:
    """tags.yaml loses `pointwise`, which the native file uses; the server learns it from the file watcher."""
    tags = write(client, "tags.yaml", TAGS.replace("- tag: pointwise\n  desc: Pointwise operators.\n", ""))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=tags.as_uri(), type=types.FileChangeType.Changed)]))


@pytest.mark.parametrize("client", [PULL_WITH_REFRESH], indirect=True)
async def test_a_client_that_can_refresh_pulls_and_is_asked_to_pull_again(client: LanguageClient):
    assert uses_pull(client)
    write(client, "tags.yaml", TAGS)
    uri = open_document(client, write(client, "native_functions.yaml", NATIVE))
    first = await _pull(client, uri)
    assert first.kind == "full" and _tag_problems(list(first.items)) == []
    before = client.diagnostic_refreshes  # type: ignore[attr-defined]
    _drop_tag_from_disk(client)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while client.diagnostic_refreshes == before and loop.time() < deadline:  # type: ignore[attr-defined]
        await asyncio.sleep(0.02)
    assert client.diagnostic_refreshes > before, "no workspace/diagnostic/refresh after tags.yaml changed"
    again = await _pull(client, uri)
    assert _tag_problems(list(again.items)), "the pull after the refresh still lacks the unknown tag"
    assert client.published.get(uri) is None  # type: ignore[attr-defined]  # pulled, never pushed


@pytest.mark.parametrize("client", ["neovim"], indirect=True)
async def test_a_client_that_cannot_refresh_gets_pushes_that_follow_other_files(client: LanguageClient):
    assert client.capabilities.text_document.diagnostic is not None  # type: ignore[union-attr]
    assert not uses_pull(client)
    write(client, "tags.yaml", TAGS)
    uri = open_document(client, write(client, "native_functions.yaml", NATIVE))
    pushed = await current_diagnostics(client, uri, lambda ds: True)
    assert _tag_problems(pushed) == []
    pulled = await _pull(client, uri)
    assert list(pulled.items) == []  # the pushed list is the one the client shows: no second copy
    _drop_tag_from_disk(client)
    updated = await current_diagnostics(client, uri, _tag_problems)
    assert _tag_problems(updated), "no push for native_functions.yaml after tags.yaml changed"
