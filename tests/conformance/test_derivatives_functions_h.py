"""The autograd Node structs opgen shows for derivatives.yaml, against the Functions.h torch's generator writes.

The test runs torchgen 2.13's autograd loader and gen_autograd_functions (both packaged with torch) on the real
derivatives.yaml (one process, through the reference cache), then checks that opgen finds the same node classes
and that each struct it writes appears verbatim in the generated Functions.h.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import reference

from opgen_lsp.analysis import derivatives as query
from opgen_lsp.analysis.autograd.functions_h import node_declaration
from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from .autograd_reference import ORACLE

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@pytest.fixture(scope="module")
def functions_h(aten: Path, native_yaml: Path, tags_yaml: Path, tmp_path_factory) -> str:
    """torchgen's Functions.h of the real derivatives.yaml (autograd_release_oracle.py, through the reference cache)."""
    autograd = aten.parent / "autograd"
    out = tmp_path_factory.mktemp("autograd_functions")
    job = {"derivatives": [], "deprecated": [], "functions_h": [str(autograd / "derivatives.yaml"), str(native_yaml),
                                                                str(tags_yaml), str(autograd / "templates"), str(out)]}
    reference.run_json(ORACLE, job, out, inputs=[autograd, native_yaml, tags_yaml], outputs=[out / "Functions.h"])
    return (out / "Functions.h").read_text()


@pytest.fixture(scope="module")
def check(aten: Path, native_yaml: Path, tags_yaml: Path):
    tags = TagsParser().parse(tags_yaml.read_text())
    native = NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)
    document = DerivativesParser().parse((aten.parent / "autograd" / "derivatives.yaml").read_text())
    return DerivativesChecker().check(document, native.functions, DEFAULT)


@pytest.fixture(scope="module")
def nodes(check):
    return check.nodes


def test_same_node_classes(functions_h: str, nodes) -> None:
    # Including the `<Node>_copy` twin torchgen writes for each node of a view op with a view_copy function.
    theirs = re.findall(r"^struct TORCH_API (\w+) :", functions_h, re.M)
    assert sorted(theirs) == sorted(n.op for n in nodes)
    assert len(nodes) > 600 and sum(n.op.endswith("_copy") for n in nodes) > 30


def test_every_struct_appears_verbatim(functions_h: str, nodes) -> None:
    missing = [n.op for n in nodes if node_declaration(n, DEFAULT) not in functions_h]
    assert missing == []


def test_every_entry_hover_shows_its_structs_verbatim(functions_h: str, check) -> None:
    """The hover of each entry's name: line, as the server shows it: every struct of the entry is in Functions.h."""
    shown = 0
    for line, entry, analysis in check.analyses:
        span = entry.name_node.span.shifted(line)
        found = query.hover(check, span.start_line, span.start_col)
        assert found is not None and f"```\n{analysis.function.func}\n```" in found.markdown
        for node in query.nodes_of(check, line):
            struct = node_declaration(node, DEFAULT)
            assert f"```cpp\n{struct}```" in found.markdown and struct in functions_h, node.op
            shown += 1
    assert shown == len(check.nodes)
