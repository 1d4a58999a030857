"""derivatives.yaml end to end: the real server over stdio, as VS Code and as Neovim, in a PyTorch-shaped tree."""

from __future__ import annotations

import pytest
from autograd_tree import DERIVATIVES, NATIVE, write_tree
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import current_diagnostics, diagnostics, edit, open_document, pos, rng, summary, write

# The struct gen_autograd_functions writes for mul.Tensor (checked against torch's own for the real file in
# tests/conformance/test_derivatives_functions_h.py).
MUL_NODE = """\
struct TORCH_API MulBackward0 : public TraceableFunction {
#endif
  using TraceableFunction::TraceableFunction;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "MulBackward0"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    other_.reset_data();
    self_.reset_data();
  }
"""


def tree(client: LanguageClient, derivatives: str = DERIVATIVES):
    return write_tree(client.root, derivatives)  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_diagnostics_follow_edits(client: LanguageClient):
    _, path = tree(client, DERIVATIVES.replace("  other: grad * self", "  othr: grad * self"))
    text = path.read_text()
    uri = open_document(client, path)
    found = await diagnostics(client, uri, 1)
    assert summary(found) == [("OPG711", 2, 2, 2, 6)]
    assert "did you mean 'other'?" in found[0].message
    edit(client, uri, 2, rng(client, text, "othr"), "other")
    fixed = await current_diagnostics(client, uri, lambda ds: not ds)
    assert fixed == []


@pytest.mark.asyncio
async def test_an_edit_of_the_open_native_functions_rechecks_it(client: LanguageClient):
    native, path = tree(client)
    native_uri = open_document(client, native)
    uri = open_document(client, path)
    assert await diagnostics(client, uri, 1) == []
    edit(client, native_uri, 2, rng(client, NATIVE, "int dim=-1"), "int dim=0")  # sort's schema changes
    found = await current_diagnostics(client, uri, lambda ds: bool(ds))
    assert [d.code for d in found] == ["OPG704"]


@pytest.mark.asyncio
async def test_hover_shows_the_schema_and_the_node_struct(client: LanguageClient):
    _, path = tree(client)
    uri = open_document(client, path)
    await diagnostics(client, uri, 1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, DERIVATIVES, "mul.Tensor", 3)))
    value = hover.contents.value  # type: ignore[union-attr]
    assert "mul.Tensor(Tensor self, Tensor other) -> Tensor" in value
    assert MUL_NODE in value
    # inside a formula: the argument's type
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, DERIVATIVES, "grad * other", 8)))
    assert "argument `Tensor other`" in hover.contents.value  # type: ignore[union-attr]
    assert "const at::Tensor &" in hover.contents.value  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_hover_struct_is_the_tree_release_one(client: LanguageClient):
    """A 2.6 checkout (version.txt): its Functions.h declares compiled_args non-const, as the hover shows."""
    _, path = tree(client)
    (client.root / "version.txt").write_text("2.6.0\n")  # type: ignore[attr-defined]
    uri = open_document(client, path)
    assert await diagnostics(client, uri, 1) == []
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, DERIVATIVES, "mul.Tensor", 3)))
    value = hover.contents.value  # type: ignore[union-attr]
    assert MUL_NODE in value and "  void compiled_args(CompiledNodeArgs& args) override;\n" in value
    assert "Autograd node, in Functions.h (torch 2.6):" in value


@pytest.mark.asyncio
async def test_a_tree_older_than_the_releases_known_gets_one_error(client: LanguageClient):
    _, path = tree(client, DERIVATIVES.replace("  other: grad * self", "  othr: grad * self"))
    (client.root / "version.txt").write_text("1.12.0\n")  # type: ignore[attr-defined]
    uri = open_document(client, path)
    found = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line) for d in found] == [("OPG951", 0)]  # the OPG711 is not checked
    assert "torch 1.12.0" in found[0].message and "1.13 to 2.15" in found[0].message


@pytest.mark.asyncio
async def test_completion_of_names_gradients_and_keys(client: LanguageClient):
    _, path = tree(client, DERIVATIVES.replace("  other: grad * self\n", "  other: gr\n  \n"))
    text = path.read_text()
    uri = open_document(client, path)
    await diagnostics(client, uri, 1)

    async def labels(position: types.Position) -> set[str]:
        found = await client.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position))
        return {i.label for i in found.items}  # type: ignore[union-attr]

    in_formula = await labels(pos(client, text, "other: gr", 9))
    assert {"grad", "grad_input_mask"} <= in_formula and "self" not in in_formula  # filtered by the prefix
    at_key = await labels(pos(client, text, "  \n", 2))
    assert {"self", "other", "result", "output_differentiability", "dispatch"} <= at_key
    forward = await labels(pos(client, text, "result: other_t", 8))
    assert {"other", "other_p", "other_t", "self_p", "auto_linear"} <= forward


@pytest.mark.asyncio
async def test_definition_both_ways_lenses_references_symbols(client: LanguageClient):
    native, path = tree(client)
    uri = open_document(client, path)
    native_uri = open_document(client, native)
    await diagnostics(client, uri, 1)
    target = await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, DERIVATIVES, "sort(", 1)))
    assert target.uri == native_uri and target.range == rng(client, NATIVE, "sort")  # type: ignore[union-attr]

    back = await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=native_uri), position=pos(client, NATIVE, "mul_.Tensor", 1)))
    assert [(t.uri, t.range.start.line) for t in back] == [(uri, 0)]  # type: ignore[union-attr]

    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=native_uri)))
    titles = {lens.range.start.line: lens.command.title for lens in lenses if "derivatives" in lens.command.title}
    assert titles == {0: "∂ derivatives.yaml:1 (MulBackward0)", 3: "∂ formulas of mul.Tensor (derivatives.yaml:1)",
                      6: "∂ derivatives.yaml:6 (SortBackward0)"}

    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=pos(client, DERIVATIVES, "mul.Tensor", 1),
        context=types.ReferenceContext(include_declaration=True)))
    # (the operator mul: its in-place variant's name too, as a rename of mul changes it)
    assert [(r.uri, r.range.start.line) for r in refs] == [(native_uri, 0), (native_uri, 3), (uri, 0)]

    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    names = [(s.name, getattr(s, "detail", None)) for s in symbols]
    assert names[0][0] == "mul.Tensor" and names[1][0] == "sort"


@pytest.mark.asyncio
async def test_deprecated_yaml_is_checked_against_the_tree(client: LanguageClient):
    tree(client)
    text = ("- name: mul(Tensor other, Tensor self) -> Tensor\n  aten: mul(self, other)\n\n"
            "- name: mul(Tensor self, Tensor other) -> Tensor\n  aten: mul(self, othr)\n")
    uri = open_document(client, write(client, "tools/autograd/deprecated.yaml", text))
    found = await diagnostics(client, uri, 1)
    assert summary(found) == [("OPG742", 4, 18, 4, 22)]
    assert "did you mean 'other'?" in found[0].message
