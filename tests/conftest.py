"""Shared fixtures: the reference (torchgen 2.13) and paths to real inputs."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
REFERENCE_TORCH = "2.13.0"
# The one reason every test of the real backend yamls gives when they are not beside the checkout.
CORPUS_ABSENT = (f"the backend-yaml corpus is not beside this checkout ({CORPUS}; a clone has no ../shared): "
                 "put the project's shared/ folder next to the repository to run these tests (CI does)")


def _reference_aten() -> Path | None:
    # The installed wheel's version and torchgen's folder, without importing torch (seconds on a loaded machine).
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    spec = importlib.util.find_spec("torchgen")  # torchgen ships inside the torch wheel
    if not version.startswith(REFERENCE_TORCH) or spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "packaged" / "ATen"


def corpus_present() -> bool:
    return CORPUS.is_dir() and any(CORPUS.glob("*.yaml"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `corpus` read ../shared/corpus: without it they skip with CORPUS_ABSENT (before pytest's own
    "empty parameter set" skip of a parametrization over no files), and in CI, which always has it, they fail."""
    if item.get_closest_marker("corpus") is not None:
        require_corpus()


def require_corpus() -> None:
    if corpus_present():
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must have the corpus: {CORPUS_ABSENT}")
    pytest.skip(CORPUS_ABSENT)


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


_OWN_CACHE = [""]  # the cache folder this process made for the run ("" when it made none)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN_CACHE[0]:
        shutil.rmtree(_OWN_CACHE[0], ignore_errors=True)
        os.environ.pop("OPGEN_CACHE_DIR", None)


def pytest_configure(config: pytest.Config) -> None:
    # opgen's persistent cache: a folder of the test run's own, never the user's (made before xdist starts its
    # workers, which inherit it; removed when the run ends).
    if "OPGEN_CACHE_DIR" not in os.environ:
        os.environ["OPGEN_CACHE_DIR"] = _OWN_CACHE[0] = tempfile.mkdtemp(prefix="opgen-cache-tests-")
    config.addinivalue_line("markers", "testing_hooks(hooks): the language server's test-only hooks (failHover, "
                                       "generateDelayMs, kernelWorkers), set for the servers the test starts")


@pytest.fixture(autouse=True)
def _testing_hooks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server reads its test-only hooks from the environment only (never from a client's settings):
    a test's servers inherit what its `testing_hooks` marker says (autouse: set before any server starts)."""
    marker = request.node.get_closest_marker("testing_hooks")
    if marker is not None:
        monkeypatch.setenv("OPGEN_LSP_TESTING", json.dumps(marker.args[0]))
    else:
        monkeypatch.delenv("OPGEN_LSP_TESTING", raising=False)


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

