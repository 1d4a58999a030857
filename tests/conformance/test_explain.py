"""Every snippet `opgen explain` shows for every operator appears verbatim in torchgen's own output."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.codegen.options import CodegenOptions
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import DEFAULT

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@pytest.fixture(scope="module")
def explainer(native_yaml: Path, tags_yaml: Path) -> Explainer:
    tags = TagsParser().parse(tags_yaml.read_text()).names
    snapshot = NativeParser(CodegenOptions(DEFAULT).ignore_keys, release=DEFAULT).parse(native_yaml.read_text(), tags)
    return Explainer(snapshot.functions, snapshot.release)


def test_every_snippet_of_every_op_is_in_torchgens_output(explainer: Explainer, torchgen_gen_output: Path) -> None:
    files: dict[str, str] = {}
    missing = []
    checked = 0
    for name in explainer.names:
        for snippet in explainer.explain(name):
            if snippet.file not in files:
                files[snippet.file] = (torchgen_gen_output / snippet.file).read_text()
            checked += 1
            if snippet.code not in files[snippet.file]:
                missing.append((name, snippet.title, snippet.code[:300]))
    print(f"checked {checked} snippets of {len(explainer.names)} operators")
    assert len(explainer.names) == 3101
    assert checked > 15000
    assert missing == []


def test_every_dispatch_key_of_every_op_has_its_pieces(explainer: Explainer) -> None:
    """Each kernel an op has yields its declaration (on the out= op for structured groups), its
    registration wrapper and its m.impl line."""
    model = explainer.model
    registrations = 0
    for op in model.ops:
        f = op.function
        titles = {s.title for s in explainer.explain(str(f.func.name))}
        for key, index in model.backend_indices.items():
            meta = index.get_kernel(f)
            if meta is None or f.manual_kernel_registration:
                continue
            if not (meta.structured and f.func.kind().name != "out"):
                assert f"{key} kernel declaration" in titles, (str(f.func.name), str(key))
            assert f"{key} registration wrapper" in titles and f"{key} registration" in titles, (str(f.func.name), str(key))
            registrations += 1
    print(f"{registrations} kernel registrations checked")
    assert registrations > 4500
