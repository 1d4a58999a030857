"""RegisterSchema.cpp's fragments (Release.schema_fragment_namespaces): from 2.0 the schemas of the namespaces other
libraries also define (quantized, quantized_decomposed) are registered in a TORCH_LIBRARY_FRAGMENT, those of any
other custom namespace in a TORCH_LIBRARY; before, every custom namespace gets a TORCH_LIBRARY. Neither release's
own yaml has a custom namespace, so gen.py of 1.13.1 and 2.0.1 runs on its own yaml with an op in each kind of
namespace added, and opgen's files are compared with all of its (RegisterSchema.cpp modulo tag order, as in the
matrix)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import reference
from file_trees import assert_same_files, files_under, first_difference

from opgen_lsp.cli import main

from .test_release_matrix import SCHEMA, _aten, release, release_folder, tags_sorted

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ENTRIES = """
- func: quantized::opgen_fragment_op(Tensor self) -> Tensor
  variants: function

- func: opgen_custom::opgen_library_op(Tensor self) -> Tensor
  variants: function
"""


@pytest.mark.parametrize("version", ["1.13.1", "2.0.1"])
def test_custom_namespaces_register_as_the_release_does(version: str, tmp_path: Path, monkeypatch) -> None:
    folder = release_folder(version)
    aten = tmp_path / "ATen"
    shutil.copytree(_aten(folder) / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(_aten(folder) / "native" / "tags.yaml", aten / "native" / "tags.yaml")
    (aten / "native" / "native_functions.yaml").write_text(
        (_aten(folder) / "native" / "native_functions.yaml").read_text() + ENTRIES)
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    theirs = reference.run_digests(["-m", "torchgen.gen", "-s", str(aten), "-d", "aten"], cwd=ref,
                                   pythonpath=[folder], outputs=[Path("aten")])
    assert theirs.done.returncode == 0, theirs.done.stderr[-2000:]
    monkeypatch.chdir(ours)
    assert main(["generate", "-s", str(aten), "-d", "aten", "--torch-version", version, "--jobs", "1"]) == 0
    got = files_under(ours)
    expected = dict(theirs.files)
    theirs_schema, ours_schema = expected.pop(SCHEMA).read(), got.pop(SCHEMA)
    assert tags_sorted(theirs_schema) == ours_schema, first_difference(tags_sorted(theirs_schema), ours_schema)
    assert_same_files(expected, got)
    # What tells the releases apart, so that the comparison cannot pass on nothing.
    text = theirs_schema.decode()
    assert "TORCH_LIBRARY(opgen_custom, m)" in text
    assert ("TORCH_LIBRARY_FRAGMENT(quantized, m)" in text) == bool(release(version).schema_fragment_namespaces)
    assert ("TORCH_LIBRARY(quantized, m)" in text) != bool(release(version).schema_fragment_namespaces)
