"""aoti/fallback_ops.py per release: until torch 2.12 an op's later versions list the arguments they add
({"v2": ["num_splits"]}); from 2.13 each is {"new_args": [...], "since": "TORCH_VERSION_X_Y_Z"}. The release
matrix compares the shims with each release's gen.py; these pin what each format accepts and refuses."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.shims import parse_fallback_ops
from opgen_lsp.pieces.dest.aoti import OpVersion
from opgen_lsp.releases import RELEASES

R2_12 = next(r for r in RELEASES if r.series == "2.12")
R2_13 = next(r for r in RELEASES if r.series == "2.13")


def _text(entry: str) -> str:
    return f'inductor_fallback_ops = {{"aten.f.default": {entry}}}\naten_shimified_ops = {{}}\n'


def test_2_12_versions_list_the_arguments_they_add() -> None:
    ops, error = parse_fallback_ops(_text('{"v2": ["block_table", "num_splits"], "v3": ["x"]}'), release=R2_12)
    assert error is None and ops is not None
    assert ops.inductor_map["aten.f.default"] == (
        OpVersion(1), OpVersion(2, ("block_table", "num_splits")), OpVersion(3, ("x",)))


def test_2_13_versions_are_dicts_with_since() -> None:
    ops, error = parse_fallback_ops(
        _text('{"since": "TORCH_VERSION_2_13_0", "v2": {"new_args": ["x"], "since": "TORCH_VERSION_2_14_0"}}'),
        release=R2_13)
    assert error is None and ops is not None
    assert ops.inductor_map["aten.f.default"] == (
        OpVersion(1, (), "TORCH_VERSION_2_13_0"), OpVersion(2, ("x",), "TORCH_VERSION_2_14_0"))


def test_2_12_takes_a_dict_version_as_its_keys() -> None:
    """gen.py 2.12 adds the keys of a 2.13-style entry to the arguments left out (no argument is named so):
    opgen writes what it writes."""
    ops, error = parse_fallback_ops(_text('{"v2": {"new_args": ["x"]}}'), release=R2_12)
    assert error is None and ops is not None
    assert ops.inductor_map["aten.f.default"] == (OpVersion(1), OpVersion(2, ("new_args",)))


@pytest.mark.parametrize("entry,release,message", [
    ('{"v2": ["x"]}', R2_13, "Variant v2 for aten.f.default must be a dict with a list 'new_args'"),
    ('{"since": "TORCH_VERSION_2_12_0"}', R2_12, "Version number for aten.f.default is since, not of the form vN"),
    ('{"v2": 2}', R2_12, "Variant v2 for aten.f.default must be a list of the argument names"),
    ('{"v2": [["x"]]}', R2_12, "Variant v2 for aten.f.default must be a list of the argument names"),
])
def test_the_other_format_is_refused_with_the_file(entry: str, release, message: str) -> None:
    ops, error = parse_fallback_ops(_text(entry), "t/fallback_ops.py", release=release)
    assert ops is None and error is not None
    assert error.startswith("t/fallback_ops.py: ") and message in error


R2_6 = next(r for r in RELEASES if r.series == "2.6")
R2_7 = next(r for r in RELEASES if r.series == "2.7")


@pytest.mark.parametrize("release", [R2_6, R2_7], ids=str)
def test_before_2_8_the_fallback_ops_are_a_set_of_names(release) -> None:
    """gen.py before 2.8 imports `inductor_fallback_ops` as a set and asks each op's name `in` it: every shim has
    one version, and there is no aten_shimified_ops."""
    ops, error = parse_fallback_ops('inductor_fallback_ops = {\n    "aten.g.out",\n    "aten.f.default",\n}\n',
                                    release=release)
    assert error is None and ops is not None
    assert ops.inductor == (("aten.f.default", (OpVersion(1),)), ("aten.g.out", (OpVersion(1),)))
    assert ops.aten == ()
    # Membership is all gen.py asks: a dict's keys or a list's names serve (a member that is no name never matches).
    ops, error = parse_fallback_ops('inductor_fallback_ops = {"aten.f.default": {"v2": ["x"]}}\n', release=release)
    assert error is None and ops is not None and ops.inductor == (("aten.f.default", (OpVersion(1),)),)
    ops, error = parse_fallback_ops('inductor_fallback_ops = ["aten.f.default", 3]\n', release=release)
    assert error is None and ops is not None and ops.inductor == (("aten.f.default", (OpVersion(1),)),)


@pytest.mark.parametrize("text,release,message", [
    ('inductor_fallback_ops = "aten.f.default"\n', R2_7, "inductor_fallback_ops is not a set of op names"),
    ('inductor_fallback_ops = 3\n', R2_6, "inductor_fallback_ops is not a set of op names"),
    ('inductor_fallback_ops = {"aten.f.default"}\naten_shimified_ops = {}\n', R2_12, "inductor_fallback_ops is not a dict"),
    ('aten_shimified_ops = {}\n', R2_7, "no inductor_fallback_ops"),
])
def test_a_set_or_a_dict_in_the_wrong_release_is_refused_with_the_file(text: str, release, message: str) -> None:
    ops, error = parse_fallback_ops(text, "t/fallback_ops.py", release=release)
    assert ops is None and error == f"t/fallback_ops.py: {message}"
