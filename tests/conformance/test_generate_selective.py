"""`opgen generate` with operator selection and static dispatch writes torchgen's bytes, file for file.

The variants (conftest.SELECTIVE_VARIANTS): a selection yaml of our own (a few ops and what they
need, with per-op overload rules), --op-registration-whitelist with --force-schema-registration,
and --static-dispatch-backend CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from file_trees import files_under

from opgen_lsp.cli.generate import add_generate_parser, options_from_args
from opgen_lsp.codegen.generate import generate
from opgen_lsp.releases import DEFAULT

from .conftest import SELECTIVE_VARIANTS

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


def _options(aten: Path, root: Path, flags: tuple[str, ...]):
    import argparse

    parser = argparse.ArgumentParser()
    add_generate_parser(parser.add_subparsers())
    args = parser.parse_args(["generate", "-s", str(aten), "-d", str(root / "aten"), "--headeronly-install-dir",
                              str(root / "headeronly"), "--aoti-install-dir", str(root / "aoti"), *flags])
    return options_from_args(args, DEFAULT)


@pytest.mark.parametrize("variant", sorted(SELECTIVE_VARIANTS))
def test_selective_variant_is_byte_identical(variant: str, aten: Path, torchgen_selective_outputs,
                                             tmp_path: Path) -> None:
    theirs = files_under(torchgen_selective_outputs(variant))
    result = generate(_options(aten, tmp_path, SELECTIVE_VARIANTS[variant]))
    assert result.errors == () and result.missing == ()
    ours = files_under(tmp_path)
    assert sorted(ours) == sorted(theirs)
    different = sorted(name for name in theirs if ours[name] != theirs[name])
    print(f"{variant}: {len(theirs) - len(different)} of {len(theirs)} files byte-identical")
    assert different == []


def test_selection_changes_what_is_registered(aten: Path, torchgen_selective_outputs) -> None:
    """A guard that the variant is selective at all: few schemas registered, no functionalization kernels."""
    schema = (torchgen_selective_outputs("selection_yaml") / "aten" / "RegisterSchema.cpp").read_text()
    assert schema.count("m.def(") < 50 and '"add.Tensor' in schema and '"add.Scalar' not in schema
    assert '"mul.Scalar' in schema  # aten::mul names every overload


def test_both_selections_are_an_error(aten: Path, tmp_path: Path) -> None:
    flags = ("--op-registration-whitelist", "aten::add", "--op-selection-yaml-path", "x.yaml")
    result = generate(_options(aten, tmp_path, flags))
    assert result.errors and "together" in result.errors[0]


def test_bad_selection_yaml_is_an_error(aten: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("operators:\n  aten::add:\n    include_all_overloads: maybe\n")
    result = generate(_options(aten, tmp_path / "out", ("--op-selection-yaml-path", str(bad))))
    assert result.invalid and result.errors and str(bad) in result.errors[0]
    assert result.located == (f"{bad}:3:28: error: 'include_all_overloads' must be true or false, not 'maybe' "
                              "[OPG802]",)
