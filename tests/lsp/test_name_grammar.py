"""The server applies the name grammar (model/cpp_names.py) as the CLI does: an opgen.outputDir that the backend's
generated C++ would spell in its #include lines must be a path an #include can hold, whatever line break it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .test_workspace_features import setup_backend

pytestmark = pytest.mark.asyncio

INJECTED = "out\u2028#error INJECTED\u2028"


@pytest.mark.configuration({"outputDir": INJECTED})
async def test_an_output_dir_with_a_unicode_line_break_is_refused(client: LanguageClient):
    uri, _, _ = setup_backend(client)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri, "target": "backend"}]))
    assert result["written"] == 0 and len(result["errors"]) == 1, result
    assert "has a line break (U+2028), which an #include line cannot hold" in result["errors"][0]
    root: Path = client.root  # type: ignore[attr-defined]
    assert not any("\n#error INJECTED" in p.read_text(encoding="utf-8", errors="replace")
                   for p in root.rglob("*") if p.is_file())
    assert not (root / INJECTED).exists()
