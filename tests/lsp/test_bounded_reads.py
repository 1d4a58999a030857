"""The server reads files from disk with the bounded reader: a tags.yaml that is a FIFO or /dev/zero is named
in a diagnostic at once, and the server keeps answering (it once hung on the FIFO, or grew to 2.6 GB)."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import NATIVE, diagnostics, open_document, pos, write

pytestmark = pytest.mark.asyncio


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
async def test_a_tags_yaml_that_is_no_regular_file_is_named_and_hovers_still_answer(client: LanguageClient,
                                                                                    kind: str):
    path = write(client, "native/native_functions.yaml", NATIVE)
    tags = path.parent / "tags.yaml"
    if kind == "fifo":
        os.mkfifo(tags)
    else:
        tags.symlink_to("/dev/zero")
    uri = open_document(client, path, NATIVE)
    found = await diagnostics(client, uri, 1)
    why = "is a FIFO, not a regular file" if kind == "fifo" else "is a device, not a regular file"
    assert any(why in d.message for d in found), [d.message for d in found]
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, NATIVE, "func:", 2))), 20)
    assert hover is not None
