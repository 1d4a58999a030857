"""The server diagnoses an operator selection yaml (gen.py's --op-selection-yaml-path) opened under any name, as
`opgen check` does (the rules: tests/conformance/test_selection_yaml.py)."""

from __future__ import annotations

import pytest
from pytest_lsp import LanguageClient

from .helpers import current_diagnostics, open_document, summary, write

pytestmark = pytest.mark.asyncio

BAD = "include_all_operators: false\noperators:\n  aten::add:\n    name: aten::mul\n  aten::sub: 1\n"
GOOD = "operators:\n  aten::add.Tensor:\n    include_all_overloads: false\n"


async def test_a_selection_yaml_gets_its_errors_at_their_places(client: LanguageClient):
    uri = open_document(client, write(client, "build/my_ops.yaml", BAD))
    found = await current_diagnostics(client, uri, lambda ds: len(ds) == 2)
    assert summary(found) == [("OPG804", 3, 10, 3, 19), ("OPG805", 4, 13, 4, 14)]


async def test_a_good_one_gets_none(client: LanguageClient):
    uri = open_document(client, write(client, "build/ok.yaml", GOOD))
    bad = open_document(client, write(client, "build/bad.yaml", BAD))
    assert len(await current_diagnostics(client, bad, lambda ds: len(ds) == 2)) == 2  # both are analysed by now
    assert await current_diagnostics(client, uri, lambda ds: ds == [], timeout=2) == []
