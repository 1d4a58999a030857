"""Shared fixtures: the reference (torchgen 2.13) and paths to real inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
REFERENCE_TORCH = "2.13.0"


def _reference_aten() -> Path | None:
    try:
        import torch  # noqa: F401  (torchgen ships inside the torch wheel)
        import torchgen
    except ImportError:
        return None
    if not torch.__version__.startswith(REFERENCE_TORCH):
        return None
    return Path(torchgen.__file__).parent / "packaged" / "ATen"


@pytest.fixture(scope="session")
def aten() -> Path:
    """torchgen's packaged ATen folder (native/native_functions.yaml, native/tags.yaml, templates/)."""
    path = _reference_aten()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"torch {REFERENCE_TORCH} must be installed in CI (pip install -e '.[test,conformance]')")
        pytest.skip(f"torch {REFERENCE_TORCH} (the reference torchgen) is not installed")
    return path


@pytest.fixture(scope="session")
def native_yaml(aten: Path) -> Path:
    return aten / "native" / "native_functions.yaml"


@pytest.fixture(scope="session")
def tags_yaml(aten: Path) -> Path:
    return aten / "native" / "tags.yaml"


@pytest.fixture(autouse=True)
def _torchgen_parse_cache_stays_pristine():
    """torchgen's gen_backend_stubs adds the backend's (external) indices to its cached parse of
    native_functions.yaml; a later test would then see "Duplicate backend key". Drop them after
    each test, so tests that run the reference in-process do not depend on their order."""
    yield
    import sys

    gen = sys.modules.get("torchgen.gen")
    if gen is None:
        return
    for parsed in gen._GLOBAL_PARSE_NATIVE_YAML_CACHE.values():
        for key in [k for k, index in parsed.backend_indices.items() if index.external]:
            del parsed.backend_indices[key]
