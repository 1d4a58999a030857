"""Generator arguments in gen_lazy_tensor's IR (Release.lazy_ir_keeps_generators): from 2.2 a node keeps its
Generator? argument (a scalar of the node, shown as "torch.Generator()"); before, it is left out of the node (and
of its constructor, its hash and ToString). A backend yaml whose full_codegen ops take one (bernoulli, random.to:
torch's own TorchScript backend lists them), through each release's gen_lazy_tensor and opgen's generate-lazy."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lazy_ts import full_codegen_yaml, lazy_ts_files, text_of
from .test_release_matrix import release

pytestmark = [pytest.mark.versions, pytest.mark.slow]

YAML = full_codegen_yaml("abs", "bernoulli", "random.to")


@pytest.mark.parametrize("version", ["2.1.2", "2.2.2"])
def test_generator_arguments_as_the_release_has_them(version: str, tmp_path: Path, monkeypatch) -> None:
    expected = lazy_ts_files(version, YAML, tmp_path, monkeypatch)
    # What tells the releases apart, so that the comparison cannot pass on nothing: the node's generator.
    kept = "torch.Generator()" in text_of(expected, "LazyIr.h")
    assert kept == release(version).lazy_ir_keeps_generators
