"""Lazy-tensor backend yamls (gen_lazy_tensor's input), end to end as VS Code and as Neovim: the hover shows
the IR node class and kernel gen_lazy_tensor generates, exactly as `opgen generate-lazy` writes them, and
what gen_lazy_tensor rejects is diagnosed (OPG535-537) when the shape-inference header is known."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from opgen_lsp.cli import main

from .helpers import NATIVE, TAGS, current_diagnostics, diagnostics, edit, open_document, pos, write

pytestmark = pytest.mark.asyncio

LAZY = """\
backend: XLA
cpp_namespace: my_lazy
full_codegen:
- relu
- add.Tensor
ir_gen:
- _fused_thing
"""
RELU_SHAPE = "TORCH_API std::vector<torch::lazy::Shape> compute_shape_relu(const at::Tensor & self);"
HEADER = f"#pragma once\nnamespace torch {{\nnamespace lazy {{\n{RELU_SHAPE}\n}}\n}}\n"
CONFIG = {"lazy": {"shapeInferenceHeader": "include/shape_inference.h"}}


def setup(client: LanguageClient, lazy: str = LAZY, header: str = HEADER) -> tuple[str, Path]:
    write(client, "ops/native_functions.yaml", NATIVE)
    write(client, "ops/tags.yaml", TAGS)
    write(client, "include/shape_inference.h", header)
    path = write(client, "ops/lazy.yaml", lazy)
    return open_document(client, path), path


async def hover_text(client: LanguageClient, uri: str, text: str, marker: str) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, text, marker, 2)))
    assert hover is not None
    return hover.contents.value  # type: ignore[union-attr]


def code_blocks(markdown: str) -> list[str]:
    return re.findall(r"```cpp\n(.*?)\n```", markdown, re.S)


def generated(client: LanguageClient, flags: list[str]) -> dict[str, str]:
    """The files `opgen generate-lazy` writes for the same yaml (its conformance with torchgen is tested)."""
    root: Path = client.root  # type: ignore[attr-defined]
    out = root / "generated"
    assert main(["generate-lazy", "-s", str(root / "ops/lazy.yaml"), "-o", str(out), "--native-functions",
                 str(root / "ops/native_functions.yaml"), "--shape-inference-hdr",
                 str(root / "include/shape_inference.h"), *flags]) == 0
    return {p.name: p.read_text() for p in out.iterdir()}


@pytest.mark.configuration(CONFIG)
async def test_hover_shows_the_generated_ir_class_and_kernel(client: LanguageClient):
    uri, _ = setup(client)
    assert await diagnostics(client, uri, 1) == []
    files = generated(client, [])

    shown = await hover_text(client, uri, LAZY, "- relu")
    assert "gen_lazy_tensor generates `XLANativeFunctions::relu` (registered to `XLA`)" in shown
    node, kernel, shape = code_blocks(shown)[-3:]
    assert node.startswith("class Relu : public Node {") and node in files["LazyIr.h"]
    assert "XLANativeFunctions::relu(const at::Tensor & self)" in kernel and kernel in files["XLANativeFunctions.cpp"]
    assert shape == RELU_SHAPE
    assert "Declared in `" in shown and "include/shape_inference.h`" in shown

    shown = await hover_text(client, uri, LAZY, "- add.Tensor")
    node, kernel = code_blocks(shown)[-2:]
    assert node in files["LazyIr.h"] and kernel in files["XLANativeFunctions.cpp"]
    assert "auto out_meta = at::meta::add(" in kernel
    assert "from the meta kernel" in shown

    shown = await hover_text(client, uri, LAZY, "- _fused_thing")
    blocks = code_blocks(shown)
    assert any(b.startswith("class FusedThing : public Node {") and b in files["LazyIr.h"] for b in blocks)
    assert "Lazy kernel" not in shown


@pytest.mark.configuration({"lazy": {"preset": "torchscript",
                                     "shapeInferenceHeader": "include/shape_inference.h"}})
async def test_hover_follows_the_torchscript_preset(client: LanguageClient):
    uri, _ = setup(client)
    await diagnostics(client, uri, 1)
    files = generated(client, ["--gen-ts-lowerings", "--node-base", "TsNode", "--node-base-hdr",
                               "torch/csrc/lazy/ts_backend/ts_node.h"])
    shown = await hover_text(client, uri, LAZY, "- relu")
    node = next(b for b in code_blocks(shown) if b.startswith("class Relu"))
    assert "public TsNode" in node and "torch::lazy::TSOpVector Lower(" in node
    assert node in files["LazyIr.h"]
    assert "TorchScript settings" in shown


@pytest.mark.configuration(CONFIG)
async def test_missing_shape_function_is_diagnosed_on_the_op(client: LanguageClient):
    uri, _ = setup(client, header="#pragma once\n")
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line) for d in found] == [("OPG535", pos(client, LAZY, "relu").line)]
    assert "compute_shape_relu" in found[0].message and RELU_SHAPE in found[0].message
    shown = await hover_text(client, uri, LAZY, "- relu")
    assert "**Not declared** in `" in shown

    # Declaring it in the header on disk clears the error.
    header = write(client, "include/shape_inference.h", HEADER)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=header.as_uri(), type=types.FileChangeType.Changed)]))
    assert await current_diagnostics(client, uri, lambda ds: not ds) == []


async def test_other_backends_are_not_checked_without_a_header(client: LanguageClient):
    uri, _ = setup(client, header="#pragma once\n")
    assert await diagnostics(client, uri, 1) == []
    shown = await hover_text(client, uri, LAZY, "- relu")
    assert "none is known here: setting `opgen.lazy.shapeInferenceHeader`" in shown
    assert "default settings" in shown


async def test_torchscript_yaml_is_checked_against_the_checkouts_header(client: LanguageClient):
    """PyTorch's own `backend: Lazy` yaml: the header under the workspace root (a checkout), as its build does."""
    lazy = LAZY.replace("backend: XLA", "backend: Lazy").replace("my_lazy", "torch::lazy")
    write(client, "torch/csrc/lazy/core/shape_inference.h", "#pragma once\n")
    uri, _ = setup(client, lazy=lazy)
    found = await diagnostics(client, uri, 1)
    assert [d.code for d in found] == ["OPG535"]
    assert "torch/csrc/lazy/core/shape_inference.h does not declare compute_shape_relu" in found[0].message
    shown = await hover_text(client, uri, lazy, "- relu")
    assert "public TsNode" in shown  # the auto preset: TorchScript settings for the Lazy backend


async def test_torchscript_yaml_inside_a_checkout_above_the_workspace(client: LanguageClient):
    """A yaml inside a PyTorch checkout that is not the workspace root (as when a subfolder of it is opened):
    the checkout is found from the yaml's folder upward."""
    lazy = LAZY.replace("backend: XLA", "backend: Lazy").replace("my_lazy", "torch::lazy")
    root: Path = client.root  # type: ignore[attr-defined]
    checkout = root.parent / f"{root.name}-checkout"
    header = checkout / "torch/csrc/lazy/core/shape_inference.h"
    header.parent.mkdir(parents=True)
    header.write_text(HEADER)
    (checkout / "aten").mkdir()
    for name, text in (("native_functions.yaml", NATIVE), ("tags.yaml", TAGS), ("lazy.yaml", lazy)):
        (checkout / "aten" / name).write_text(text)
    uri = open_document(client, checkout / "aten" / "lazy.yaml")
    assert await diagnostics(client, uri, 1) == []
    shown = await hover_text(client, uri, lazy, "- relu")
    assert f"Declared in `{header}`" in shown


@pytest.mark.configuration(CONFIG)
async def test_bad_non_native_entry(client: LanguageClient):
    lazy = LAZY + "non_native:\n- func: not a schema\n"
    uri, _ = setup(client, lazy=lazy)
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line) for d in found] == [("OPG536", pos(client, lazy, "not a schema").line)]


@pytest.mark.configuration(CONFIG)
async def test_editing_the_open_header_rechecks_the_lazy_yaml(client: LanguageClient):
    """The header's editor text is what the check reads (as for any open file): an edit, not only a save,
    re-checks the yaml."""
    uri, _ = setup(client, header="#pragma once\n")
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["OPG535"]
    header = open_document(client, client.root / "include/shape_inference.h")  # type: ignore[attr-defined]
    end = types.Position(line=1, character=0)
    edit(client, header, 2, types.Range(start=end, end=end), HEADER)
    assert await current_diagnostics(client, uri, lambda ds: not ds, timeout=5) == []
    # Closed unsaved: the file on disk, which does not declare it, counts again.
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=header)))
    assert [d.code for d in await current_diagnostics(client, uri, lambda ds: bool(ds), timeout=5)] == ["OPG535"]
