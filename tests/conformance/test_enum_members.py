"""opgen's enums, now declared member by member (so that editors and mypy see them), against torchgen 2.13's:
the same members in the same order (generated files list dispatch keys in declaration order)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.model.dispatch import DispatchKey
from opgen_lsp.model.native_function import ScalarType
from opgen_lsp.model.schema import BASE_TYPE_NAMES, BaseTy

pytestmark = pytest.mark.conformance


def test_dispatch_keys_are_torchgens_in_its_order(aten: Path) -> None:
    from torchgen.model import DispatchKey as Reference

    assert [k.name for k in DispatchKey] == [k.name for k in Reference]


def test_base_types_are_torchgens_in_its_order_then_dimname(aten: Path) -> None:
    from torchgen.model import BaseTy as Reference

    # Dimname (named tensors) is known to the releases before 2.13 only, ConstQuantizerPtr to those before 2.6;
    # model.lower refuses them per release.
    assert list(BASE_TYPE_NAMES) == [t.name for t in Reference] + ["Dimname", "ConstQuantizerPtr"]
    assert [t.name for t in BaseTy] == list(BASE_TYPE_NAMES)


def test_scalar_types_are_torchgens_in_its_order(aten: Path) -> None:
    from torchgen.model import ScalarType as Reference

    assert [t.name for t in ScalarType] == [t.name for t in Reference]
