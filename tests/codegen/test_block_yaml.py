"""block_yaml writes what PyYAML's dumper (gen.py's settings) writes, or says it cannot."""

from collections import OrderedDict

import pytest

from opgen_lsp.pieces.dest.block_yaml import Unsupported, block_yaml, is_certainly_plain
from opgen_lsp.pieces.dest.declarations_yaml import format_yaml

TRICKY_STRINGS = [
    "", " ", "a ", " a", "self", "at::Tensor", "const at::Tensor &", "true", "True", "false", "no", "off", "on",
    "yes", "Y", "n", "null", "Null", "~", "1", "-1", "1.0", "1e-05", ".inf", "-.inf", ".nan", "0x1F", "0o17",
    "1_000", "2020-01-01", "12:30:45", "<<", "=", "-", "- a", "-a", "?", "? a", "?a", ":", ": a", ":a", "a:", "a: b",
    "a:b", "a #b", "a#b", "#a", ",a", "a,b", "[a]", "a[]", "{a}", "&a", "*a", "!a", "|a", ">a", "'a'", "a'b",
    '"valid"', 'a"b', "%a", "@a", "`a", "---", "--- a", "...", "... a", "a\tb", "caf\u00e9", "a\\b",
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "at::Tensor (const at::Tensor &)",
    "::std::tuple<at::Tensor,at::Tensor>", "c10::optional<at::Scalar>", "a  b", "0", "00", "+1", "+", ".", "a.",
]


def _matches_pyyaml_unless_refused(data) -> None:
    try:
        text = block_yaml(data, format_yaml)
    except Unsupported:
        return
    assert text == format_yaml(data)


@pytest.mark.parametrize("s", TRICKY_STRINGS)
def test_strings_as_values_and_items_match_pyyaml(s):
    _matches_pyyaml_unless_refused([OrderedDict([("name", s), ("items", [s, "x"]), ("args", [{"b": s, "a": 1}])])])


def test_plain_only_when_pyyaml_writes_it_plain():
    for s in TRICKY_STRINGS:
        if is_certainly_plain(s):
            assert format_yaml([s]) == f"- {s}\n", s


@pytest.mark.parametrize("value", [None, True, False, 0, -3, 10**20, 1.0, 0.5, 1e-05, 1e-15, 1 / 3, float("inf"),
                                   float("-inf"), float("nan")])
def test_scalars_match_pyyaml(value):
    data = [OrderedDict([("default", value), ("list", [value])])]
    assert block_yaml(data, format_yaml) == format_yaml(data)


def test_nesting_order_and_empty_collections_match_pyyaml():
    data = [
        OrderedDict([("z", 1), ("a", [])]),
        OrderedDict([("m", {}), ("nested", {"y": [1, 2], "x": {"q": None}}), ("lst", [{}, [], {"k": "v"}])]),
    ]
    assert block_yaml(data, format_yaml) == format_yaml(data)


@pytest.mark.parametrize("data", [[], [[1, 2]], [OrderedDict([("a", "two\nlines")])], [OrderedDict([(1, "a")])],
                                  [OrderedDict([("a", (1, 2))])],
                                  [OrderedDict([("k" * 129, 1)])], [{1: "a", "b": 2}]])
def test_what_it_does_not_cover_is_refused(data):
    with pytest.raises(Unsupported):
        block_yaml(data, format_yaml)


@pytest.mark.parametrize("n", [100, 127, 128, 129, 300])
def test_long_keys_match_pyyaml_or_are_refused(n):
    _matches_pyyaml_unless_refused([OrderedDict([("k" * n, 1), ("v", "x" * n)])])


def test_equal_floats_of_other_signs_are_not_confused():
    # 0.0 == -0.0 (and hash alike): a cache of dumped scalars keyed by value alone gives the first one's text
    for data in ([OrderedDict([("a", 0.0), ("b", -0.0)])], [OrderedDict([("a", -0.0), ("b", 0.0)])]):
        assert block_yaml(data, format_yaml) == format_yaml(data)
