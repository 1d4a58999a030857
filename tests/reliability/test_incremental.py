"""Incremental equals full: one long-lived NativeParser fed edit after edit sees what a fresh parser sees.

Compared: diagnostics, the model (canonical form of every function, the groups and view
groups), hovers at probe positions, document symbols and entry placement.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT

from . import fuzz

pytestmark = pytest.mark.slow  # (random edit sequences over the real file: CI runs them; the not-slow loop does not)

SEED = fuzz.env_seed()


def _window(entries: list[str], rng: random.Random, size: int) -> str:
    start = rng.randrange(max(1, len(entries) - size))
    return "".join(entries[start:start + size])


def run_sequence(base: str, edits: list[fuzz.Edit], tags, rng: random.Random, check_every: int = 0) -> str:
    """Apply edits through one parser; compare with a fresh parse at the end (and every `check_every` edits)."""
    parser = NativeParser(release=DEFAULT)
    text = base
    parser.parse(text, tags.names)
    for i, edit in enumerate(edits, 1):
        text = fuzz.apply(text, edit)
        incremental = parser.parse(text, tags.names)
        if i == len(edits) or (check_every and i % check_every == 0):
            fresh = NativeParser(release=DEFAULT).parse(text, tags.names)
            probes = fuzz.sample_positions(text, rng, 12)
            assert fuzz.state(incremental, tags, text, probes) == fuzz.state(fresh, tags, text, probes), \
                f"after {i} edits: {edits[:i]!r}"
    return text


def test_random_edit_sequences(inputs, native_entries):
    rng = random.Random(SEED)
    for _ in range(25):
        base = _window(native_entries, rng, 40)
        run_sequence(base, fuzz.random_edits(base, rng, 15, native_entries), inputs.tags, rng, check_every=5)


@settings(settings.get_profile("reliability"), max_examples=40)
@given(rng=st.randoms(use_true_random=False), count=st.integers(1, 25))
def test_edit_sequences_property(inputs, native_entries, rng, count):
    base = _window(native_entries, rng, 30)
    run_sequence(base, fuzz.random_edits(base, rng, count, native_entries), inputs.tags, rng)


def test_cut_and_paste_whole_entries_back_and_forth(inputs, native_entries):
    """Moving entries around reuses cached results at new lines; the placement must follow."""
    rng = random.Random(SEED + 1)
    base = "".join(native_entries[:60])
    parser = NativeParser(release=DEFAULT)
    text = base
    for _ in range(30):
        entries = fuzz.entries_of(text)
        i, j = rng.randrange(len(entries)), rng.randrange(len(entries))
        entries.insert(j, entries.pop(i))
        text = "".join(entries)
        assert parser.parse(text, inputs.tags.names).diagnostics == NativeParser(release=DEFAULT).parse(text, inputs.tags.names).diagnostics
    probes = fuzz.sample_positions(text, rng, 30)
    assert fuzz.state(parser.parse(text, inputs.tags.names), inputs.tags, text, probes) == \
        fuzz.state(NativeParser(release=DEFAULT).parse(text, inputs.tags.names), inputs.tags, text, probes)


def test_valid_tags_changing_between_parses(inputs, native_entries):
    base = "".join(native_entries[:50])
    parser = NativeParser(release=DEFAULT)
    few = frozenset(list(inputs.tags.names)[:3])
    for tags in (inputs.tags.names, few, frozenset(), inputs.tags.names):
        assert parser.parse(base, tags).diagnostics == NativeParser(release=DEFAULT).parse(base, tags).diagnostics


@pytest.mark.slow
def test_edit_sequences_on_the_whole_file(inputs, native_text, native_entries):
    rng = random.Random(SEED + 2)
    for _ in range(3):
        run_sequence(native_text, fuzz.random_edits(native_text, rng, 40, native_entries), inputs.tags, rng,
                     check_every=20)


@pytest.mark.slow
def test_many_edit_sequences(inputs, native_entries):
    rng = random.Random(SEED + 3)
    for _ in range(150):
        base = _window(native_entries, rng, 60)
        run_sequence(base, fuzz.random_edits(base, rng, 20, native_entries), inputs.tags, rng, check_every=10)
