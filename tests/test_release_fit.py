"""tests/release_fit.py, which the release matrix and benchmarks/bench_releases.py share: the tag-order comparison of
RegisterSchema.cpp, the refusals read from opgen's diagnostics and the ops left out for them, the flags' spellings.
(The matrix, -m versions, holds them to each release's torchgen: the refused ops are exactly those it fails on.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from release_fit import SCHEMA, Refusals, refusals, same_file, spelled, tags_sorted, without_refused

from opgen_lsp.releases import Release, resolve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_generate  # noqa: E402


def profile(version: str) -> Release:
    resolved = resolve(version, "--torch-version")
    assert resolved is not None
    return resolved.release


def test_tag_lists_sort_inside_their_braces_only() -> None:
    line = b'm.def("abs(Tensor self) -> Tensor", {at::Tag::pointwise, at::Tag::core});\nm.def("b() -> ()", {});\n'
    assert tags_sorted(line) == line.replace(b"pointwise, at::Tag::core", b"core, at::Tag::pointwise")
    assert tags_sorted(b"{at::Tag::b}, {at::Tag::a}") == b"{at::Tag::b}, {at::Tag::a}"


SET_ORDER = b'm.def("abs(Tensor self) -> Tensor", {at::Tag::pointwise, at::Tag::core});\n'
SORTED = tags_sorted(SET_ORDER)


@pytest.mark.parametrize("version, modulo", [("1.13.1", True), ("2.0.1", True), ("2.1.2", False), ("2.13.0", False)])
def test_register_schema_is_compared_modulo_tag_order_before_2_1_only(version: str, modulo: bool) -> None:
    release = profile(version)
    assert same_file(SCHEMA, SET_ORDER, SORTED, release) is modulo
    assert same_file(SCHEMA, SORTED, SORTED, release)
    assert not same_file(SCHEMA, SET_ORDER, SET_ORDER, release) or not modulo, "opgen writes the tags sorted"
    assert not same_file("aten/Functions.h", SET_ORDER, SORTED, release), "any other file: byte for byte"
    assert not same_file(SCHEMA, SET_ORDER, SORTED.replace(b"abs", b"neg"), release)


def test_the_bench_counts_identical_files_as_the_matrix_and_says_which_took_tag_order() -> None:
    theirs = {SCHEMA: SET_ORDER, "aten/Functions.h": b"x", "aten/Other.h": b"y"}
    ours = {SCHEMA: SORTED, "aten/Functions.h": b"x", "aten/Other.h": b"z"}
    assert bench_generate.identical(theirs, ours, profile("2.0.1")) == (2, (SCHEMA,))
    assert bench_generate.identical(theirs, ours, profile("2.13.0")) == (1, ())
    assert bench_generate.identical(theirs, ours, None) == (1, ())
    assert bench_generate.identical({**theirs, SCHEMA: SORTED}, ours, profile("2.0.1")) == (2, ())


# What opgen prints for torch_xla's yaml checked as 1.13.1 (the messages' fixed parts; the matrix reads real runs).
SAID = """\
xla.yaml:349:5: error: 'split_with_sizes_copy' is listed without its variant 'split_with_sizes_copy.out': with \
use_out_as_primary false, torchgen generates a kernel for 'split_with_sizes_copy.out' that calls the functional one, \
but cannot for this variant, since it returns nothing. (torchgen: torch 1.13's gen_out_inplace_wrapper fails) [OPG514]
xla.yaml:353:5: warning: 'std' is CompositeImplicitAutograd, so it has no backward of its own [OPG521]
xla.yaml:429:5: error: 'embedding' is listed under 'symint', but its schema has no SymInt argument, so there is no \
SymInt signature for its kernel; remove it from 'symint' [OPG513]
"""

YAML = """\
backend: XLA
cpp_namespace: torch_xla
supported:
- embedding
- split_with_sizes_copy
- std
symint:
- embedding
- select.int
"""


def test_refusals_are_read_from_opgens_diagnostics_and_left_out() -> None:
    found = refusals(SAID)
    assert found == Refusals({"split_with_sizes_copy": "split_with_sizes_copy.out"}, frozenset({"embedding"}))
    assert found.names() == ["split_with_sizes_copy", "embedding (symint)"]
    # the wrapper's op leaves every section; the symint op only `symint` (its kernel stays, unsymint)
    assert without_refused(YAML, found) == YAML.replace("- split_with_sizes_copy\n", "").replace(
        "symint:\n- embedding\n", "symint:\n")
    assert not refusals("xla.yaml:353:5: warning: 'std' ... [OPG521]\n")


def test_flags_are_spelled_with_underscores_for_1_13_only() -> None:
    args = ["-s", "x.yaml", "-o", "out", "--gen-ts-lowerings", "--node-base", "TsNode", "--node-base-hdr", "a/b-c.h"]
    assert spelled(args, profile("2.0.1")) == args
    assert spelled(args, profile("1.13.1")) == ["-s", "x.yaml", "-o", "out", "--gen_ts_lowerings", "--node_base",
                                                "TsNode", "--node_base_hdr", "a/b-c.h"]
