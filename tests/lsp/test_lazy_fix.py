"""OPG535's quick fix end to end, as VS Code and as Neovim: "Declare compute_shape_<op> in <header>" inserts
the declaration gen_lazy_tensor expects into the shape-inference header (its editor text when it is open),
next to the other declarations, and the yaml then checks clean."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from opgen_lsp.analysis.lazy.check import wheel_shape_header

from .helpers import NATIVE, TAGS, current_diagnostics, diagnostics, edit, open_document, write
from .test_lazy import CONFIG, LAZY, RELU_SHAPE, setup

pytestmark = pytest.mark.asyncio


def shape(name: str) -> str:
    return f"TORCH_API std::vector<torch::lazy::Shape> compute_shape_{name}(const at::Tensor & self);"


# A sorted block of declarations: relu goes between abs and zero.
SORTED = f"#pragma once\nnamespace torch::lazy {{\n{shape('abs')}\n{shape('zero')}\n}} // namespace torch::lazy\n"
FIXED = f"#pragma once\nnamespace torch::lazy {{\n{shape('abs')}\n{RELU_SHAPE}\n{shape('zero')}\n" \
        "} // namespace torch::lazy\n"


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (ASCII texts: code units are characters)."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = starts[e.range.start.line] + e.range.start.character
        text = text[:start] + e.new_text + text[starts[e.range.end.line] + e.range.end.character:]
    return text


async def declare_actions(client: LanguageClient, uri: str, d: types.Diagnostic) -> list[types.CodeAction]:
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    return [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("Declare ")]


@pytest.mark.configuration(CONFIG)
async def test_declares_the_shape_function_in_the_header_on_disk(client: LanguageClient):
    uri, _ = setup(client, header=SORTED)
    (missing,) = await diagnostics(client, uri, 1)
    assert missing.code == "OPG535"

    (action,) = await declare_actions(client, uri, missing)
    assert action.title == "Declare compute_shape_relu in shape_inference.h"
    assert action.kind == types.CodeActionKind.QuickFix and action.diagnostics[0].code == "OPG535"  # type: ignore[index]
    header = client.root / "include/shape_inference.h"  # type: ignore[attr-defined]
    (declare,) = action.edit.changes[header.as_uri()]  # type: ignore[union-attr,index]
    fixed = apply(SORTED, [declare])
    assert fixed == FIXED  # in alphabetical place, unindented, the rest unchanged

    # Saved to disk, the header satisfies gen_lazy_tensor: no OPG535, so no fix either.
    header.write_text(fixed, encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=header.as_uri(), type=types.FileChangeType.Changed)]))
    assert await current_diagnostics(client, uri, lambda ds: not ds) == []
    assert await declare_actions(client, uri, missing) == []


@pytest.mark.configuration(CONFIG)
async def test_an_open_header_is_edited_as_the_editor_has_it(client: LanguageClient):
    """The editor's unsaved text (here with one more, unsorted, declaration) is what the edit is made for."""
    uri, _ = setup(client, header="#pragma once\n")
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["OPG535"]
    path = client.root / "include/shape_inference.h"  # type: ignore[attr-defined]
    unsaved = f"#pragma once\nnamespace torch::lazy {{\n{shape('zero')}\n{shape('abs')}\n}}\n"
    header = open_document(client, path, unsaved)
    missing = (await current_diagnostics(client, uri, lambda ds: len(ds) == 1 and "zero" not in ds[0].message))[0]

    (action,) = await declare_actions(client, uri, missing)
    (declare,) = action.edit.changes[header]  # type: ignore[union-attr,index]
    fixed = apply(unsaved, [declare])
    assert fixed == f"#pragma once\nnamespace torch::lazy {{\n{shape('zero')}\n{shape('abs')}\n{RELU_SHAPE}\n}}\n"

    # The editor applies it: the yaml is re-checked against the edited text and the error goes.
    edit(client, header, 2, types.Range(start=types.Position(line=0, character=0),
                                        end=types.Position(line=5, character=0)), fixed)
    assert await current_diagnostics(client, uri, lambda ds: not ds, timeout=5) == []


async def test_no_fix_without_a_known_header(client: LanguageClient):
    """torch_xla-like yaml without opgen.lazy.shapeInferenceHeader: nothing is checked, nothing is offered."""
    uri, _ = setup(client, header="#pragma once\n")
    assert await diagnostics(client, uri, 1) == []
    line = LAZY.split("\n").index("- relu")
    relu = types.Diagnostic(range=types.Range(start=types.Position(line=line, character=2),
                                              end=types.Position(line=line, character=6)),
                            message="compute_shape_relu", code="OPG535")
    assert await declare_actions(client, uri, relu) == []


@pytest.mark.configuration({"lazy": {"shapeInferenceHeader": "include/missing.h"}})
async def test_no_fix_when_the_header_cannot_be_read(client: LanguageClient):
    uri, _ = setup(client)
    (unreadable,) = await diagnostics(client, uri, 1)
    assert unreadable.code == "OPG900"
    assert await declare_actions(client, uri, unreadable) == []


async def test_no_fix_into_the_installed_torch(client: LanguageClient):
    """`backend: Lazy` outside a checkout is checked against the wheel's header, which is no file to edit."""
    if wheel_shape_header() is None:
        pytest.skip("torch is not installed")
    lazy = "backend: Lazy\ncpp_namespace: torch::lazy\nfull_codegen:\n- _fused_thing\n"
    write(client, "ops/native_functions.yaml", NATIVE)
    write(client, "ops/tags.yaml", TAGS)
    uri = open_document(client, write(client, "ops/lazy.yaml", lazy))
    (missing,) = await diagnostics(client, uri, 1)
    assert missing.code == "OPG535" and "compute_shape__fused_thing" in missing.message
    assert await declare_actions(client, uri, missing) == []
