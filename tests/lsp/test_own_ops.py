"""A backend's own operator file in the server (docs/backends.md): recognised by its content, checked as its
patched torchgen parses it (no OPG105 on PrivateUse1, no OPG307 on a lone out= op), each op against the release's
own schema; hover keeps working on it."""

from __future__ import annotations

import pytest
from lsprotocol import types
from own_ops_files import ADD_OUT, FUSED_GELU, TAGS
from pytest_lsp import LanguageClient

from opgen_lsp.index.base_text import release_native_path

from .helpers import diagnostics, open_document, pos, rng, write

pytestmark = pytest.mark.asyncio

# A drifted default (alpha=2), an op torch 2.13 does not declare, an op of the backend's own namespace.
OWN = ADD_OUT.replace("alpha=1", "alpha=2") + """
- func: reluu(Tensor self) -> Tensor
  dispatch:
    PrivateUse1: relu_mine

""" + FUSED_GELU


@pytest.mark.parametrize("client", ["visual-studio-code"], indirect=True)  # one editor: the kind is not per client
@pytest.mark.init_options({"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off",
                           "torchVersion": "2.13"})
async def test_the_server_checks_a_backend_operator_file_against_its_release(client: LanguageClient):
    if release_native_path("2.13.0") is None:
        pytest.skip("torch 2.13's native_functions.yaml is not at hand")
    write(client, "csrc/aten/tags.yaml", TAGS)
    uri = open_document(client, write(client, "csrc/aten/native_functions.yaml", OWN))
    found = await diagnostics(client, uri, 1)
    assert sorted((str(d.code), d.range.start.line) for d in found) == [("OPG590", 0), ("OPG591", 8)]
    drift = next(d for d in found if d.code == "OPG590")
    assert drift.message.endswith("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    unknown = next(d for d in found if d.code == "OPG591")
    assert unknown.range.start == pos(client, OWN, "reluu")
    assert "did you mean 'relu'" in unknown.message
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=rng(client, OWN, "fused_gelu(").start))
    assert hover is not None and "fused_gelu" in hover.contents.value  # type: ignore[union-attr]
