"""The distribution lists every package of the source tree (a non-editable install needs them all)."""

from __future__ import annotations

import tomllib

from conftest import ROOT


def test_every_package_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    root = ROOT / config["package-dir"]["opgen_lsp"]
    found = {"opgen_lsp" + "".join("." + part for part in init.parent.relative_to(root).parts)
             for init in root.rglob("__init__.py")}
    assert set(config["packages"]) == found
