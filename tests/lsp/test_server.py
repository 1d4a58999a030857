"""The language server end to end, as VS Code (push diagnostics, UTF-16) and Neovim (pull, UTF-8) drive it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .helpers import (
    NATIVE,
    SERVER,
    TAGS,
    capabilities,
    current_diagnostics,
    diagnostics,
    edit,
    encoding,
    make_client,
    open_document,
    pos,
    rng,
    summary,
    units,
    uses_pull,
    write,
)

pytestmark = pytest.mark.asyncio


def workspace(client: LanguageClient, native: str = NATIVE, tags: str | None = TAGS) -> tuple[str, str]:
    """native_functions.yaml (and tags.yaml beside it) on disk; the native one opened."""
    path = write(client, "native/native_functions.yaml", native)
    if tags is not None:
        write(client, "native/tags.yaml", tags)
    return open_document(client, path), native


def part(client: LanguageClient, text: str, marker: str, start: int, end: int) -> types.Range:
    """The range of marker[start:end] at the marker's first occurrence."""
    return types.Range(start=pos(client, text, marker, start), end=pos(client, text, marker, end))


def tid(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


# ---------------------------------------------------------------- capabilities

async def test_initialize_advertises_the_features(client: LanguageClient):
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    sync = caps.text_document_sync
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_symbol_provider and caps.workspace_symbol_provider and caps.folding_range_provider
    assert caps.completion_provider is not None
    assert caps.diagnostic_provider is not None and caps.diagnostic_provider.inter_file_dependencies
    # Neovim offers UTF-8 first; VS Code says nothing, which means UTF-16.
    assert encoding(client) == ("utf-8" if client.capabilities.general.position_encodings else "utf-16")


# ---------------------------------------------------------------- diagnostics

async def test_diagnostics_follow_incremental_edits(client: LanguageClient):
    uri, text = workspace(client)
    assert await diagnostics(client, uri, 1) == []

    # Misspell a dispatch key: CUDA -> CUDAA in relu's table.
    where = rng(client, text, "CUDA: relu")
    key_end = types.Position(line=where.start.line, character=where.start.character + 4)
    edit(client, uri, 2, types.Range(start=key_end, end=key_end), "A")
    found = await diagnostics(client, uri, 2)
    assert summary(found) == [("OPG104", where.start.line, where.start.character, where.start.line,
                               where.start.character + 5)]
    assert found[0].severity == types.DiagnosticSeverity.Error
    assert found[0].source == "opgen"
    assert "CUDAA" in found[0].message and "did you mean 'CUDA'" in found[0].message
    if not uses_pull(client):
        assert client.published[uri][-1].version == 2  # type: ignore[attr-defined]

    # Delete the extra letter again.
    after = types.Position(line=key_end.line, character=key_end.character + 1)
    edit(client, uri, 3, types.Range(start=key_end, end=after), "")
    assert await diagnostics(client, uri, 3) == []


async def test_columns_are_counted_in_the_negotiated_encoding(client: LanguageClient):
    native = NATIVE.replace("  tags: [core, pointwise]\n\n- func: _fused",
                            "  tags: [core, \U0001F600, bogus]\n\n- func: _fused")
    uri, text = workspace(client, native)
    found = await diagnostics(client, uri, 1)
    line = text.split("\n")[pos(client, text, "bogus").line]
    emoji = rng(client, text, "\U0001F600")
    bogus = rng(client, text, "bogus")
    assert summary(found) == sorted([
        ("OPG107", emoji.start.line, emoji.start.character, emoji.end.line, emoji.end.character),
        ("OPG107", bogus.start.line, bogus.start.character, bogus.end.line, bogus.end.character),
    ])
    # The column of 'bogus' really is in code units of the encoding, past a 4-byte character.
    assert bogus.start.character == units(client, line[:line.index("bogus")])

    # An edit addressed in those units, after the emoji, lands where it should: bogus -> core.
    edit(client, uri, 2, bogus, "core")
    found = await diagnostics(client, uri, 2)
    assert summary(found) == [("OPG107", emoji.start.line, emoji.start.character, emoji.end.line,
                               emoji.end.character)]

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=tid(uri), position=pos(client, text, "bogus", 1)))
    assert hover is not None and "Core ATen operators" in hover.contents.value  # type: ignore[union-attr]


async def test_editing_tags_rechecks_native_documents(client: LanguageClient):
    uri, text = workspace(client)
    assert await diagnostics(client, uri, 1) == []
    tags_uri = open_document(client, client.root / "native/tags.yaml")  # type: ignore[attr-defined]
    assert await diagnostics(client, tags_uri, 1) == []

    # Rename the tag 'core' in the open tags.yaml (not saved): both uses in the native file break.
    edit(client, tags_uri, 2, rng(client, TAGS, "core"), "kernel")
    expected = [("OPG107", r.start.line, r.start.character, r.end.line, r.end.character)
                for r in (rng(client, text, "core", 1), rng(client, text, "core", 2))]
    found = await current_diagnostics(client, uri, lambda ds: summary(ds) == expected)
    assert summary(found) == expected
    assert "unknown tag 'core'" in found[0].message

    # Closing tags.yaml falls back to the file on disk, which still has 'core'.
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=tid(tags_uri)))
    assert await current_diagnostics(client, uri, lambda ds: ds == []) == []


async def test_tags_changed_on_disk_recheck_native_documents(client: LanguageClient):
    uri, text = workspace(client)
    assert await diagnostics(client, uri, 1) == []
    if client.capabilities.workspace.did_change_watched_files.dynamic_registration:  # type: ignore[union-attr]
        # register_options arrive as plain JSON (their type depends on the method).
        watchers = [w["globPattern"] for r in client.registrations for w in r.register_options["watchers"]]  # type: ignore
        assert watchers == ["**/*.{cpp,cc,cxx,cu,cuh,mm,h,hpp}", "**/native_functions.yaml", "**/tags.yaml"]
    tags = write(client, "native/tags.yaml", TAGS.replace("pointwise", "elementwise"))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=tags.as_uri(), type=types.FileChangeType.Changed)]))
    found = await current_diagnostics(client, uri, lambda ds: len(ds) == 4)
    assert [d.code for d in found] == ["OPG107"] * 4


@pytest.mark.init_options({"debounceMs": 300})
async def test_only_the_latest_version_is_published(client: LanguageClient):
    if uses_pull(client):
        pytest.skip("only push clients are sent diagnostics")
    uri, text = workspace(client)
    assert await diagnostics(client, uri, 1) == []
    where = rng(client, text, "CUDA: relu")
    key_end = types.Position(line=where.start.line, character=where.start.character + 4)
    after = types.Position(line=key_end.line, character=key_end.character + 1)
    for version in range(2, 7):  # CUDA -> CUDAA -> CUDA -> ... -> CUDAA, faster than the debounce
        if version % 2 == 0:
            edit(client, uri, version, types.Range(start=key_end, end=key_end), "A")
        else:
            edit(client, uri, version, types.Range(start=key_end, end=after), "")
    found = await diagnostics(client, uri, 6)
    assert [d.code for d in found] == ["OPG104"]
    assert [p.version for p in client.published[uri]] == [1, 6]  # type: ignore[attr-defined]


async def test_missing_tags_yaml_is_reported(client: LanguageClient):
    uri, text = workspace(client, tags=None)
    found = await diagnostics(client, uri, 1)
    codes = [d.code for d in found]
    assert codes[0] == "OPG900" and found[0].range.start == types.Position(line=0, character=0)
    assert "no tags.yaml found" in found[0].message
    assert codes.count("OPG107") == 6  # every tag use: none are defined


async def test_closing_clears_pushed_diagnostics(client: LanguageClient):
    if uses_pull(client):
        pytest.skip("only push clients are sent diagnostics")
    uri, _ = workspace(client, NATIVE.replace("CPU, CUDA: relu", "CPUX: relu"))
    assert len(await diagnostics(client, uri, 1)) == 1
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=tid(uri)))
    assert await current_diagnostics(client, uri, lambda ds: ds == []) == []


# ---------------------------------------------------------------- symbols, folding

async def test_document_symbols_group_overloads(client: LanguageClient):
    uri, text = workspace(client)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=tid(uri)))
    assert [s.name for s in symbols] == ["add", "relu", "_fused_thing"]
    add = symbols[0]
    assert [c.name for c in add.children] == ["add.Tensor", "add_.Tensor", "add.out"]
    assert all(c.kind == types.SymbolKind.Function for c in [*symbols, *add.children])

    out = add.children[2]
    assert out.selection_range == part(client, text, "add.out(Tensor", 0, 7)
    assert out.detail.startswith("(Tensor self, Tensor other")
    # The entry: from its '- func:' line to its last line, not the blank line after it.
    assert out.range.start == types.Position(line=pos(client, text, "- func: add.out").line, character=0)
    assert out.range.end == pos(client, text, "  tags: pointwise\n\n- func: relu", len("  tags: pointwise"))
    assert add.range.start.line == 1 and add.range.end == out.range.end

    relu = symbols[1]
    assert relu.children is None
    assert relu.selection_range == part(client, text, "relu(Tensor", 0, 4)


async def test_workspace_symbols_search_op_names(client: LanguageClient):
    uri, text = workspace(client)
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="addout"))
    assert [s.name for s in found] == ["add.out"]
    assert found[0].location.uri == uri
    assert found[0].location.range.start == pos(client, text, "add.out(Tensor")

    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="add"))
    assert [s.name for s in found][:3] == ["add.out", "add.Tensor", "add_.Tensor"]
    assert "_fused_thing" not in [s.name for s in found]


async def test_folding_ranges_one_per_entry(client: LanguageClient):
    uri, text = workspace(client)
    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=tid(uri)))
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("- func:")]
    assert [(f.start_line, f.end_line) for f in folds] == [(1, 5), (7, 11), (13, 19), (21, 25), (27, 30)]
    assert [f.start_line for f in folds] == starts


# ---------------------------------------------------------------- completion

COMPLETE = """\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function
  structured_delegate: mu
  tags: [core, po
  dispatch:
    CPU, Sparse
  vari

- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA: mul_out
  tags:
  - core
  - 

- func: sub.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  variants: 
"""  # noqa: W291 (the spaces after "-" and "variants:" are where completion is asked)


async def complete(client: LanguageClient, uri: str, position: types.Position) -> dict[str, types.CompletionItem]:
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=tid(uri), position=position))
    items = result.items if isinstance(result, types.CompletionList) else result
    return {item.label: item for item in items}


async def test_completion_in_each_context(client: LanguageClient):
    path = write(client, "native/native_functions.yaml", COMPLETE)
    write(client, "native/tags.yaml", TAGS)
    uri = open_document(client, path)
    text = COMPLETE

    # Entry keys at column 2: with descriptions, without the keys the entry already has.
    items = await complete(client, uri, pos(client, text, "vari\n", 4))
    assert "device_check" in items and "structured_delegate" not in items and "func" not in items
    key = items["python_module"]
    assert key.kind == types.CompletionItemKind.Property
    assert key.text_edit.new_text == "python_module: "
    assert key.text_edit.range == part(client, text, "vari\n", 0, 4)
    assert "Python module" in key.documentation.value  # type: ignore[union-attr]

    # Dispatch keys inside dispatch:, after a comma too.
    items = await complete(client, uri, pos(client, text, "Sparse\n", 6))
    assert {"SparseCPU", "SparseCUDA", "CompositeExplicitAutograd"} <= set(items)
    assert "Autograd" not in items  # not allowed in native_functions.yaml
    assert items["SparseCPU"].kind == types.CompletionItemKind.EnumMember
    assert items["SparseCPU"].text_edit.range.start == pos(client, text, "Sparse\n")

    # Tags from tags.yaml, inline and as block list items.
    items = await complete(client, uri, pos(client, text, "po\n", 2))
    assert set(items) == {"core", "pointwise", "nondeterministic_seeded"}
    assert items["pointwise"].detail == "Pointwise operators."
    items = await complete(client, uri, pos(client, text, "  - \n", 4))
    assert set(items) == {"core", "pointwise", "nondeterministic_seeded"}

    # variants: function / method.
    items = await complete(client, uri, pos(client, text, "variants: \n", 10))
    assert set(items) == {"function", "method", "function, method"}

    # structured_delegate: the structured out= operators, with their schemas.
    items = await complete(client, uri, pos(client, text, "delegate: mu", 12))
    assert set(items) == {"mul.out", "sub.out"}
    assert items["mul.out"].detail == "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
    assert items["mul.out"].sort_text < items["sub.out"].sort_text  # the entry's own base name first

    # Inside a schema: types where a type is being written, nothing on an argument's name.
    assert "Tensor" in await complete(client, uri, pos(client, text, "Tensor other) -> Tensor\n", 3))
    assert await complete(client, uri, pos(client, text, "Tensor other) -> Tensor\n", 9)) == {}


# ---------------------------------------------------------------- definition, references

async def test_definition_of_delegates_and_autogen(client: LanguageClient):
    uri, text = workspace(client)
    location = await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, text, "structured_delegate: add.out", 23)))
    assert location is not None
    assert location.uri == uri
    assert location.range == part(client, text, "add.out(Tensor", 0, 7)

    # autogen names an operator generated from this very entry.
    location = await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, text, "_fused_thing.out", 3)))
    assert location.range.start == pos(client, text, "_fused_thing(Tensor")

    # Not on a reference: nothing.
    assert await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, text, "NoCheck"))) is None


async def test_references_of_an_op(client: LanguageClient):
    """On the operator's name: every name of its family (add, add_, add.out: what a rename of `add` changes); on
    the overload: that overload's names (tests/lsp/test_rename.py has the other files)."""
    uri, text = workspace(client)
    expected = [pos(client, text, "add.Tensor(Tensor"), pos(client, text, "delegate: add.out", 10, 1),
                pos(client, text, "add_.Tensor(Tensor"), pos(client, text, "delegate: add.out", 10, 2),
                pos(client, text, "add.out(Tensor")]
    for where in (pos(client, text, "add.out(Tensor", 2), pos(client, text, "delegate: add.out", 12, 2)):
        found = await client.text_document_references_async(types.ReferenceParams(
            text_document=tid(uri), position=where, context=types.ReferenceContext(include_declaration=True)))
        assert [ln.range.start for ln in found] == expected
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=tid(uri), position=expected[0], context=types.ReferenceContext(include_declaration=False)))
    assert [ln.range.start for ln in found] == expected[1:]
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=tid(uri), position=pos(client, text, "delegate: add.out", 15),
        context=types.ReferenceContext(include_declaration=True)))
    assert [ln.range.start for ln in found] == [pos(client, text, "delegate: add.out", 14, 1),
                                                pos(client, text, "delegate: add.out", 14, 2),
                                                pos(client, text, "add.out(Tensor", 4)]


# ---------------------------------------------------------------- hover

async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str | None:
    result = await client.text_document_hover_async(types.HoverParams(text_document=tid(uri), position=position))
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


@pytest.mark.init_options({"debounceMs": 10, "commandLinks": True})  # as the VS Code extension says it
async def test_hover(client: LanguageClient):
    uri, text = workspace(client)
    entry_key = await hover_text(client, uri, pos(client, text, "structured_inherits", 3))
    assert entry_key.startswith("**structured_inherits**: the base class of the generated meta class")

    # On a dispatch key: what kind of key it is, then that key's kernel declaration and registration.
    dispatch_key = await hover_text(client, uri, pos(client, text, "CPU, CUDA: add_out", 6))
    first, rest = dispatch_key.split("\n", 1)
    assert first.startswith("**CUDA** (dispatch key): A backend key") and "structured kernels" in first
    assert rest.startswith("\nCUDA kernel declaration (NativeFunctions.h)\n```cpp\n"
                           "struct TORCH_API structured_add_out : public at::meta::structured_add_Tensor {")
    assert "CUDA registration (RegisterCUDAEverything.cpp)\n```cpp\nm.impl(\"add.out\"," in dispatch_key
    assert "command:opgenLsp.showGenerated?%5B%22add.out%22%5D" in dispatch_key
    composite = await hover_text(client, uri, pos(client, text, "CompositeExplicitAutograd", 2))
    assert "Composite key" in composite and "derivatives.yaml" in composite

    tag = await hover_text(client, uri, pos(client, text, "core, pointwise", 1))
    assert tag == "**core** (tag)\n\nCore ATen operators, part of the stable opset."

    # On func: what the op is, its at:: signature, its kernels (none of its own: a structured delegate).
    schema = await hover_text(client, uri, pos(client, text, "Scalar alpha=1) -> Tensor\n", 3))
    assert schema.startswith("**aten::add.Tensor** (functional: returns new values and mutates no argument)\n\n"
                             "at:: (Functions.h)\n```cpp\n"
                             "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha=1);\n```")
    assert "No kernel of its own: the structured kernels of `add.out` implement it." in schema
    assert "- variants: function, method" in schema and "- returns `Tensor`" in schema
    out = await hover_text(client, uri, pos(client, text, "add.out(Tensor", 1))
    assert out.startswith("**aten::add.out** (out=: writes its results into the `out` arguments)")
    assert "at::Tensor & add_out(at::Tensor & out, const at::Tensor & self" in out
    assert "Native kernels (NativeFunctions.h)\n```cpp\n// CPU, CUDA\nstruct TORCH_API structured_add_out" in out
    # The rest of the generated code is one command away.
    assert "generated pieces: [opgen: Show generated code](command:opgenLsp.showGenerated?%5B%22add.out%22%5D)" in out
    assert all(len(h.splitlines()) <= 40 for h in (dispatch_key, schema, out))

    delegate = await hover_text(client, uri, pos(client, text, "delegate: add.out", 12))
    assert delegate.startswith("**aten::add.out**")
    assert await hover_text(client, uri, types.Position(line=0, character=3)) is None  # a comment


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client))
async def plain_client(lsp_client: LanguageClient, tmp_path: Path):
    """Emacs (eglot) without markdown-mode: its hover contentFormat is [plaintext]."""
    caps = capabilities("emacs")
    caps.text_document.hover.content_format = [types.MarkupKind.PlainText]
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(  # type: ignore[attr-defined]
        capabilities=caps, root_uri=tmp_path.as_uri(), initialization_options={"debounceMs": 10}))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_hover_is_plain_text_for_a_client_without_markdown(plain_client: LanguageClient):
    uri, text = workspace(plain_client)
    result = await plain_client.text_document_hover_async(types.HoverParams(
        text_document=tid(uri), position=pos(plain_client, text, "add.out(Tensor", 1)))
    assert result is not None and result.contents.kind == types.MarkupKind.PlainText
    value = result.contents.value
    assert value.startswith("aten::add.out (out=: writes its results into the out arguments)\n\nat:: (Functions.h)\n"
                            "at::Tensor & add_out(at::Tensor & out, const at::Tensor & self")
    assert not any(mark in value for mark in ("```", "**", "`", "](command:")), value
    # A command it cannot run is not named: the CLI command that prints the same code is.
    path = plain_client.root / "native" / "native_functions.yaml"  # type: ignore[attr-defined]
    assert value.rstrip().endswith(f"generated pieces: opgen explain add.out --native-functions {path}"), value
    assert "Show generated code" not in value


async def test_hover_names_the_cli_command_for_a_client_without_command_links(client: LanguageClient):
    """A Markdown client other than the VS Code extension (Neovim, ...) cannot run `command:` links either."""
    uri, text = workspace(client)
    out = await hover_text(client, uri, pos(client, text, "add.out(Tensor", 1))
    assert out.rstrip().endswith("generated pieces: `opgen explain add.out --native-functions "
                                 f"{client.root / 'native' / 'native_functions.yaml'}`"), out  # type: ignore[attr-defined]
    assert "command:" not in out


# ---------------------------------------------------------------- robustness, settings

@pytest.mark.testing_hooks({"failHover": True})
@pytest.mark.init_options({"debounceMs": "soon"})
async def test_a_failing_handler_does_not_stop_the_server(client: LanguageClient):
    uri, text = workspace(client)
    # A bad setting is reported and its default used.
    warnings = [m.message for m in client.log_messages if m.type == types.MessageType.Warning]
    assert any("debounceMs" in m and "'soon'" in m for m in warnings)
    assert await diagnostics(client, uri, 1) == []

    at = pos(client, text, "structured_inherits")
    for _ in range(2):
        assert await client.text_document_hover_async(types.HoverParams(text_document=tid(uri), position=at)) is None
    errors = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
    assert len(errors) == 2 and all("hover failed" in m and "testing.failHover" in m for m in errors)

    # Still serving.
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=tid(uri)))
    assert [s.name for s in symbols] == ["add", "relu", "_fused_thing"]
    location = await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, text, "delegate: add.out", 12)))
    assert location is not None


@pytest.mark.configuration({"tagsPath": "elsewhere/my_tags.yaml"})
async def test_tags_path_from_workspace_configuration(client: LanguageClient):
    write(client, "elsewhere/my_tags.yaml", TAGS.replace("pointwise", "elementwise"))
    uri, text = workspace(client)
    found = await diagnostics(client, uri, 1)
    # Read through workspace/configuration: pointwise is not a tag of elsewhere/my_tags.yaml.
    assert [d.code for d in found] == ["OPG107"] * 4
    assert found[0].range.start == pos(client, text, "pointwise")


# ---------------------------------------------------------------- the torch release (status item)

async def _releases(client: LanguageClient, count: int, timeout: float = 20.0) -> list[dict]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(client.releases) < count and loop.time() < deadline:  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)
    return client.releases  # type: ignore[attr-defined]


async def test_the_server_tells_the_client_each_native_files_release(client: LanguageClient):
    """opgen/release: the release a native_functions.yaml is checked as and where it came from (a checkout's
    version.txt), again only when it changes (opgen.torchVersion), for the client's status item."""
    root = client.root  # type: ignore[attr-defined]
    (root / "version.txt").write_text("2.14.0\n")
    path = write(client, "aten/src/ATen/native/native_functions.yaml", NATIVE)
    write(client, "aten/src/ATen/native/tags.yaml", TAGS)
    uri = open_document(client, path)
    (first,) = await _releases(client, 1)
    assert first == {"uri": uri, "version": "2.14.0", "profile": "2.14.1", "source": f"version.txt of {root}",
                     "fit": "known", "label": f"torch 2.14.0 (version.txt of {root})", "note": ""}
    edit(client, uri, 2, rng(client, NATIVE, "relu", 1), "relu")  # an edit changes no release: nothing sent
    await diagnostics(client, uri, 2)
    assert len(client.releases) == 1  # type: ignore[attr-defined]

    settings = {"debounceMs": 10, "torchVersion": "2.16.0a0"}
    client.set_configuration(settings, section="opgen")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"opgen": settings}))
    second = (await _releases(client, 2))[-1]
    assert (second["version"], second["profile"], second["source"], second["fit"]) == \
        ("2.16.0a0", "2.15.0", "opgen.torchVersion", "newer")
    assert "newer than the releases opgen knows" in second["note"]


@pytest.mark.init_options({"debounceMs": 10, "testing": {"failHover": True}})
@pytest.mark.configuration({"testing": {"failHover": True, "generateDelayMs": 10000}})
async def test_test_only_hooks_are_no_client_setting(client: LanguageClient):
    """A workspace's settings made every hover fail and each generated file wait 10 s (issue 27)."""
    uri, text = workspace(client)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=tid(uri), position=pos(client, text, "structured_inherits")))
    assert hover is not None
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]
    assert any("setting 'testing' is ignored" in m.message for m in client.log_messages)
