"""Fixtures of the reliability tests: the real inputs, read once."""

from __future__ import annotations

import os

import pytest
from conftest import require_corpus
from hypothesis import HealthCheck, settings

from . import fuzz

# Seeded, bounded hypothesis runs: the same examples every run, no deadline (CI machines are slow).
settings.register_profile("reliability", max_examples=60, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="session")
def inputs() -> fuzz.Inputs:
    loaded = fuzz.load_inputs()
    if loaded is None:
        if os.environ.get("CI"):
            pytest.fail("torch 2.13.0 must be installed in CI")
        pytest.skip("torch 2.13.0 (whose torchgen ships native_functions.yaml) is not installed")
    return loaded


@pytest.fixture(scope="session")
def native_text(inputs: fuzz.Inputs) -> str:
    return (fuzz.aten_native() / "native_functions.yaml").read_text(encoding="utf-8")  # type: ignore[operator]


@pytest.fixture(scope="session")
def tags_text(inputs: fuzz.Inputs) -> str:
    return (fuzz.aten_native() / "tags.yaml").read_text(encoding="utf-8")  # type: ignore[operator]


@pytest.fixture(scope="session")
def native_entries(native_text: str) -> list[str]:
    return fuzz.entries_of(native_text)


@pytest.fixture(scope="session")
def backend_texts() -> dict[str, str]:
    require_corpus()
    return {p.name: p.read_text(encoding="utf-8") for p in fuzz.corpus_backends()}
