"""The server reads a file as torchgen does (open() in text mode, then PyYAML): a byte order mark before the
first entry and lines ended by a lone '\\r' give the diagnostics of the plain text, at the same places."""

from __future__ import annotations

import pytest
from pytest_lsp import LanguageClient

from .helpers import NATIVE, TAGS, diagnostics, open_document, summary, write

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

# One mistake, so that there is a place to compare.
BAD = NATIVE.replace("tags: [core, pointwise]", "tags: [core, pointwize]", 1)
VARIANTS = {"bom": lambda text: "\ufeff" + text, "cr": lambda text: text.replace("\n", "\r"),
            "bom-crlf": lambda text: "\ufeff" + text.replace("\n", "\r\n")}


async def _diagnostics_of(client: LanguageClient, folder: str, text: str) -> list:
    write(client, f"{folder}/tags.yaml", TAGS)
    uri = open_document(client, write(client, f"{folder}/native_functions.yaml", text), text)
    return await diagnostics(client, uri)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
async def test_same_diagnostics_as_the_plain_text(client: LanguageClient, variant: str):
    plain = await _diagnostics_of(client, "plain", BAD)
    assert [d.code for d in plain] == ["OPG107"]
    assert summary(await _diagnostics_of(client, variant, VARIANTS[variant](BAD))) == summary(plain)
