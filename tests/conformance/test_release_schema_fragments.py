"""RegisterSchema.cpp's fragments (Release.schema_fragment_namespaces): from 2.0 the schemas of the namespaces other
libraries also define (quantized, quantized_decomposed) are registered in a TORCH_LIBRARY_FRAGMENT, those of any
other custom namespace in a TORCH_LIBRARY; before, every custom namespace gets a TORCH_LIBRARY. Neither release's
own yaml has a custom namespace, so gen.py of 1.13.1 and 2.0.1 runs on its own yaml with an op in each kind of
namespace added, and opgen's files are compared with all of its (RegisterSchema.cpp modulo tag order, as in the
matrix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_release_matrix import SCHEMA, generated_with_entries, release

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ENTRIES = """
- func: quantized::opgen_fragment_op(Tensor self) -> Tensor
  variants: function

- func: opgen_custom::opgen_library_op(Tensor self) -> Tensor
  variants: function
"""


@pytest.mark.parametrize("version", ["1.13.1", "2.0.1"])
def test_custom_namespaces_register_as_the_release_does(version: str, tmp_path: Path, monkeypatch) -> None:
    expected = generated_with_entries(version, ENTRIES, tmp_path, monkeypatch)
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    text = expected[SCHEMA].decode()
    assert "TORCH_LIBRARY(opgen_custom, m)" in text
    assert ("TORCH_LIBRARY_FRAGMENT(quantized, m)" in text) == bool(release(version).schema_fragment_namespaces)
    assert ("TORCH_LIBRARY(quantized, m)" in text) != bool(release(version).schema_fragment_namespaces)
