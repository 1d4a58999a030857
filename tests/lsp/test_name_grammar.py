"""The server applies the name grammar (model/cpp_names.py) as the CLI does: a name outside it is an error in the
diagnostics, and an opgen.outputDir that the backend's generated C++ would spell in its #include lines must be a path
an #include can hold, whatever line break it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import TAGS, diagnostics, open_document, write
from .test_workspace_features import setup_backend

pytestmark = pytest.mark.asyncio

INJECTED = "out\u2028#error INJECTED\u2028"
NATIVE = ('- func: "abs2.x\\u2028#error INJECTED\\u2028//(Tensor self) -> Tensor"\n  variants: function\n'
          '- func: "abs3(Tensor self, int a;b) -> Tensor"\n  variants: function\n')


@pytest.mark.configuration({"outputDir": INJECTED})
async def test_names_outside_the_grammar_are_errors_and_the_output_dir_too(client: LanguageClient):
    write(client, "other/native/tags.yaml", TAGS)
    found = await diagnostics(client, open_document(client, write(client, "other/native/native_functions.yaml",
                                                                    NATIVE)))
    assert sorted((d.range.start.line, d.code, d.severity) for d in found) == [
        (0, "OPG142", types.DiagnosticSeverity.Error), (2, "OPG143", types.DiagnosticSeverity.Error)]

    uri, _, _ = setup_backend(client)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri, "target": "backend"}]))
    assert result["written"] == 0 and len(result["errors"]) == 1, result
    assert "has a line break (U+2028), which an #include line cannot hold" in result["errors"][0]
    root: Path = client.root  # type: ignore[attr-defined]
    assert not any("\n#error INJECTED" in p.read_text(encoding="utf-8", errors="replace")
                   for p in root.rglob("*") if p.is_file())
    assert not (root / INJECTED).exists()
