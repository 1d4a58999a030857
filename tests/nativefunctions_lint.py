"""PyTorch's NATIVEFUNCTIONS lint as its procedure is documented (tools/linter/adapters/nativefunctions_linter.py
in PyTorch), written out for the tests as the reference of `opgen format`: load the text with ruamel.yaml in
round-trip mode with preserve_quotes, width 1000 and booleans False/True, and dump it again."""

from __future__ import annotations

import io

import pytest

ruamel_yaml = pytest.importorskip("ruamel.yaml")


def lint_dump(contents: str) -> str:
    """The lint's dump of `contents` (raises what ruamel raises when it cannot load it: the lint then fails)."""
    yaml = ruamel_yaml.YAML()
    yaml.preserve_quotes = True
    yaml.width = 1000
    yaml.boolean_representation = ["False", "True"]
    data = yaml.load(contents)
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()
