"""opgen's model of the real native_functions.yaml equals torchgen 2.13's, field by field."""

from __future__ import annotations

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from . import canonical

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@pytest.fixture(scope="module")
def reference(native_yaml, tags_yaml):
    from torchgen import gen

    parsed = gen.parse_native_yaml(str(native_yaml), str(tags_yaml))
    fs = parsed.native_functions
    return {
        "functions": [canonical.native_function(f, f.loc.line) for f in fs],
        "indices": {str(k): canonical.backend_index(v) for k, v in parsed.backend_indices.items()},
        "groups": [canonical.group(g) for g in gen.get_grouped_native_functions(fs)],
        "view_groups": [canonical.group(g) for g in gen.get_grouped_by_view_native_functions(fs)],
    }


@pytest.fixture(scope="module")
def ours(native_yaml, tags_yaml):
    tags = TagsParser().parse(tags_yaml.read_text())
    snapshot = NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)
    model = snapshot.functions
    return {
        "functions": [canonical.native_function(op.function, op.line + 1) for op in model.ops],
        "indices": {str(k): canonical.backend_index(v) for k, v in model.backend_indices.items()},
        "groups": [canonical.group(g) for g in model.groups],
        "view_groups": [canonical.group(g) for g in model.view_groups],
        "diagnostics": snapshot.diagnostics,
    }


def test_no_diagnostics_on_the_real_file(ours):
    assert [(d.span.start_line + 1, d.code, d.message) for d in ours["diagnostics"]] == []


def test_every_native_function_matches(reference, ours):
    theirs, mine = reference["functions"], ours["functions"]
    assert [f["name"] for f in mine] == [f["name"] for f in theirs]
    assert len(mine) == 3101
    for expected, got in zip(theirs, mine):
        assert got == expected, expected["name"]


def test_every_backend_index_matches(reference, ours):
    assert list(ours["indices"]) == list(reference["indices"])
    for key, expected in reference["indices"].items():
        assert ours["indices"][key] == expected, key


def test_groups_match(reference, ours):
    assert ours["groups"] == reference["groups"]


def test_view_groups_match(reference, ours):
    assert ours["view_groups"] == reference["view_groups"]


def test_signature_keys_print_the_signatures(native_yaml, tags_yaml):
    from opgen_lsp.model.schema import signature_key

    tags = TagsParser().parse(tags_yaml.read_text())
    for op in NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names).functions.ops:
        func = op.function.func
        assert signature_key(func) == str(func.signature()), str(func)
        assert signature_key(func, True) == str(func.signature(strip_view_copy_name=True)), str(func)
