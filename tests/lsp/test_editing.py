"""PyTorch's format (textDocument/formatting, OPG009 and its quick fix), compatibility against git HEAD
(OPG209/OPG210) and serverInfo, end to end through pytest-lsp."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from lsprotocol import types
from nativefunctions_lint import lint_dump
from pytest_lsp import LanguageClient

from opgen_lsp.releases import NEWEST, OLDEST

from .helpers import NATIVE, TAGS, open_document, write
from .test_kernels import until
from .test_workspace_features import apply

pytestmark = pytest.mark.asyncio
EDITING_ON = {"debounceMs": 10, "pytorchFormatCheck": True, "compatibilityBase": "HEAD"}
# NATIVE with three things the lint's round trip changes: spacing after a key, a lower-case boolean, and a
# flow list's inner spaces are kept (ruamel keeps them), so two lines change.
UNFORMATTED = NATIVE.replace("  variants: function, method\n", "  variants:   function, method\n", 1) \
    .replace("  device_check: NoCheck\n", "  device_check: NoCheck\n  manual_cpp_binding: false\n", 1)


async def test_server_info_names_the_package_and_the_releases(client: LanguageClient):
    info = client.init_result.server_info  # type: ignore[attr-defined]
    assert info.name == "opgen-lsp"
    assert re.fullmatch(rf"\d+\.\d+\.\d+ \(torch {OLDEST.series}-{NEWEST.series}, default 2\.\d+\)", info.version), info.version
    assert client.init_result.capabilities.document_formatting_provider  # type: ignore[attr-defined]


async def test_formatting_gives_the_lints_replacement(client: LanguageClient):
    path = write(client, "native/native_functions.yaml", UNFORMATTED)
    write(client, "native/tags.yaml", TAGS)
    uri = open_document(client, path)
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=types.TextDocumentIdentifier(uri=uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
    assert edits and len(edits) == 2  # only the lines that change
    assert apply(UNFORMATTED, edits, client) == lint_dump(UNFORMATTED)
    assert all(e.new_text.count("\n") == e.range.end.line - e.range.start.line for e in edits)


async def test_a_formatted_file_and_other_files_get_no_edits(client: LanguageClient):
    """Also a file ruamel cannot read: no edits (the server says why in a warning) and the server goes on."""
    broken = write(client, "broken/native_functions.yaml", "- func: a(Tensor x) -> Tensor\n  tags: [core\n")
    native = write(client, "native/native_functions.yaml", NATIVE)
    tags = write(client, "native/tags.yaml", TAGS)
    for uri in (open_document(client, broken), open_document(client, native), open_document(client, tags)):
        edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri), options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
        assert edits is not None and list(edits) == []


@pytest.mark.init_options(EDITING_ON)
async def test_opg009_at_the_first_changed_line_with_its_quick_fix(client: LanguageClient):
    path = write(client, "native/native_functions.yaml", UNFORMATTED)
    write(client, "native/tags.yaml", TAGS)
    uri = open_document(client, path)
    found = [d for d in await until(client, uri, lambda ds: any(d.code == "OPG009" for d in ds), 90) if d.code == "OPG009"]
    first = next(i for i, (a, b) in enumerate(zip(UNFORMATTED.splitlines(), lint_dump(UNFORMATTED).splitlines()))
                 if a != b)
    assert [(d.range.start.line, d.severity) for d in found] == [(first, types.DiagnosticSeverity.Warning)]
    assert "2 place(s) would change" in found[0].message
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=found[0].range,
        context=types.CodeActionContext(diagnostics=found)))
    fixes = [a for a in actions if isinstance(a, types.CodeAction) and "NATIVEFUNCTIONS" in a.title]
    assert len(fixes) == 1 and fixes[0].kind == types.CodeActionKind.QuickFix
    assert apply(UNFORMATTED, fixes[0].edit.changes[uri], client) == lint_dump(UNFORMATTED)  # type: ignore[union-attr]


@pytest.mark.init_options(EDITING_ON)
async def test_compatibility_against_git_head(client: LanguageClient):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = client.root  # type: ignore[attr-defined]
    path = write(client, "native/native_functions.yaml", NATIVE)
    write(client, "native/tags.yaml", TAGS)
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *command], check=True,
                       capture_output=True)
    changed = NATIVE.replace("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                             "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor", 1)
    assert changed != NATIVE
    uri = open_document(client, path, changed)
    seen = await until(client, uri, lambda ds: {"OPG209", "OPG210"} <= {d.code for d in ds}, 90)
    found = [d for d in seen if d.code in ("OPG209", "OPG210")]
    line = changed.splitlines().index("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor")
    assert sorted((str(d.code), d.range.start.line, d.range.start.character, d.severity) for d in found) == [
        ("OPG209", line, 8, types.DiagnosticSeverity.Warning), ("OPG210", line, 8, types.DiagnosticSeverity.Information)]
    assert "'alpha' changed its default" in found[0].message
