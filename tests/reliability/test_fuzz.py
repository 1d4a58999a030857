"""Fuzzing: no input makes any layer raise, and every input is answered within a time bound for its size.

Layers: parse (syntax, model, index), check (native, tags, backend yaml), explain on the
parsed model, and the LSP features through a workspace analysis (what the handlers call).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opgen_lsp.analysis.check import BACKEND, NATIVE, TAGS
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import DEFAULT

from . import fuzz

pytestmark = pytest.mark.slow  # (hundreds of generated inputs: CI runs them; the not-slow loop does not)

SEED = fuzz.env_seed()
FAST_INPUTS = 120
SLOW_INPUTS = 800


def _subset(entries: list[str], rng: random.Random, most: int = 25) -> str:
    picked = sorted(rng.sample(range(len(entries)), rng.randint(1, most)))
    return "".join(entries[i] for i in picked)


# ---------------------------------------------------------------- the seeded mutation fuzzer

def test_mutated_native_entries(inputs, native_entries):
    rng = random.Random(SEED)
    for _ in range(FAST_INPUTS):
        fuzz.check_one(fuzz.mutate(_subset(native_entries, rng), rng), inputs, rng, kind=NATIVE)


def test_mutated_backend_yamls(inputs, backend_texts):
    rng = random.Random(SEED + 1)
    names = sorted(backend_texts)
    for _ in range(FAST_INPUTS):
        fuzz.check_one(fuzz.mutate(backend_texts[rng.choice(names)], rng), inputs, rng, kind=BACKEND)


def test_mutated_tags(inputs, tags_text):
    rng = random.Random(SEED + 2)
    for _ in range(FAST_INPUTS // 3):
        fuzz.check_one(fuzz.mutate(tags_text, rng), inputs, rng, kind=TAGS)


@pytest.mark.slow
def test_mutation_fuzzer_budget(inputs, native_entries, backend_texts, tags_text):
    rng = random.Random(SEED + 3)
    names = sorted(backend_texts)
    for i in range(SLOW_INPUTS):
        if i % 10 < 6:
            text, kind = _subset(native_entries, rng), NATIVE
        elif i % 10 < 7:
            text, kind = tags_text, TAGS
        else:
            text, kind = backend_texts[rng.choice(names)], BACKEND
        fuzz.check_one(fuzz.mutate(text, rng), inputs, rng, kind=kind)


@pytest.mark.slow
def test_mutated_whole_file(inputs, native_text):
    """The whole real file, mutated: within the bound for its size (the cold parse dominates)."""
    rng = random.Random(SEED + 4)
    for _ in range(4):
        fuzz.check_one(fuzz.mutate(native_text, rng, 3), inputs, rng, kind=NATIVE, positions=20)


# ---------------------------------------------------------------- property-based

YAMLISH = st.lists(st.sampled_from(list("- :#,[]{}()|>!&*'\"\n\r\t\\.?%@`")
                                   + ["func", "dispatch", "CPU", "Tensor", "self", "->", "variants", "tags", "é",
                                      "\u2028", "\x85", "\x00", "\ud800", "  ", "\r\n", "\n- func: ", "\n  "]),
                   max_size=120).map("".join)


@settings(settings.get_profile("reliability"), max_examples=150)
@given(YAMLISH)
def test_any_yamlish_text(inputs, text):
    rng = random.Random(0)
    for kind in (NATIVE, TAGS, BACKEND):
        fuzz.check_one(text, inputs, rng, kind=kind, positions=4, explain_ops=2)


@settings(settings.get_profile("reliability"), max_examples=80)
@given(st.text(max_size=400))
def test_any_unicode_text(inputs, text):
    rng = random.Random(0)
    fuzz.check_one(text, inputs, rng, kind=NATIVE, positions=4)
    fuzz.check_one(text, inputs, rng, kind=BACKEND)


@settings(settings.get_profile("reliability"), max_examples=80)
@given(rng=st.randoms(use_true_random=False), count=st.integers(1, 6))
def test_mutations_of_real_entries(inputs, native_entries, rng, count):
    fuzz.check_one(fuzz.mutate(_subset(native_entries, rng, 8), rng, count), inputs, rng, kind=NATIVE)


@settings(settings.get_profile("reliability"), max_examples=40)
@given(rng=st.randoms(use_true_random=False), count=st.integers(1, 4))
def test_mutations_of_backend_yamls(inputs, backend_texts, rng, count):
    text = backend_texts[rng.choice(sorted(backend_texts))]
    fuzz.check_one(fuzz.mutate(text, rng, count), inputs, rng, kind=BACKEND)


# ---------------------------------------------------------------- inputs that crash torchgen (ORACLE.md)

GOOD = "- func: good(Tensor self) -> Tensor\n"
CRASHERS = [
    ("127406-no-func", "- structured: True\n  dispatch:\n    CPU: k\n", "OPG100", 0),
    ("127405-null-kernel", "- func: f(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd:\n",
     None, 2),
    ("127407-device-check", "- func: f(Tensor self) -> Tensor\n  device_check: NoCheck2\n", "OPG106", 1),
    ("127408-illegal-char", "- func: f(Tensor self, float$scale) -> Tensor\n", None, 0),
    ("127409-missing-delegate", "- func: f(Tensor self) -> Tensor\n  structured_delegate: nope.out\n", "OPG301", 1),
    ("127410-plain-string", "- just a string\n", "OPG003", 0),
    ("127411-precomputed", "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                           "  precomputed:\n  - nonsense\n", None, 3),
    ("162397-tag-mapping", "- func: f(Tensor self) -> Tensor\n  tags:\n  - {a: b}\n", None, 2),
    ("162395-argument-without-name", "- func: f(Tensor) -> Tensor\n", None, 0),
]


@pytest.mark.parametrize("text,code,line", [c[1:] for c in CRASHERS], ids=[c[0] for c in CRASHERS])
def test_torchgen_crashers_get_a_diagnostic(inputs, text, code, line):
    document = GOOD + "\n" + text  # the crasher is not the first entry: its line is placed
    snapshot = NativeParser(release=DEFAULT).parse(document, inputs.tags.names)
    errors = [d for d in snapshot.diagnostics if d.is_error]
    assert errors, text
    assert any(d.span.start_line == line + 2 for d in errors), errors
    if code is not None:
        assert code in {d.code for d in errors}
    Explainer(snapshot.functions, snapshot.release).explain("good")
    fuzz.check_one(document, inputs, random.Random(0), kind=NATIVE, positions=30)


def test_backend_op_written_as_a_mapping(inputs):
    text = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n- mul.out: {structured: true}\n"
    found = check_backend(text, inputs.native).diagnostics
    assert any(d.is_error and d.span.start_line == 4 for d in found), found


# ---------------------------------------------------------------- crashes the fuzzer found (now fixed)

def test_lone_surrogate_is_a_diagnostic(inputs):
    # Reachable through LSP: JSON may carry "\ud800". libyaml cannot encode it (UnicodeEncodeError).
    text = "- func: f(Tensor self) -> \ud800Tensor\n"
    snapshot = NativeParser(release=DEFAULT).parse(text, inputs.tags.names)
    [d] = snapshot.diagnostics
    assert d.code == "OPG001" and tuple(d.span) == (0, 26, 0, 27)
    assert [x.code for x in check_backend("backend: XLA\n\ud800", inputs.native).diagnostics] == ["OPG001"]


def test_control_character_is_placed_on_it(inputs):
    text = "- func: f(Tensor self) -> Tensor\n  variants: fu\x0cnction\n"
    [d] = NativeParser(release=DEFAULT).parse(text, inputs.tags.names).diagnostics
    assert d.code == "OPG001" and tuple(d.span) == (1, 14, 1, 15) and "U+000C" in d.message


def test_explain_of_a_method_whose_self_is_a_list(inputs):
    # No diagnostic (yet) for a method variant with a Tensor[] self; torchgen's codegen asserts on it.
    text = "- func: f(Tensor[] self) -> ()\n  variants: method, function\n"
    snapshot = NativeParser(release=DEFAULT).parse(text, inputs.tags.names)
    pieces = Explainer(snapshot.functions, snapshot.release).explain("f")
    assert pieces and pieces[0].title == "Cannot generate"


DEEP = {
    "block-sequences": "- " * 60000 + "x\n",  # crashed the process: SIGSEGV in libyaml's composer
    "closed-flow": "- func: f(Tensor self) -> Tensor\n  tags: " + "[" * 500 + "]" * 500 + "\n",  # RecursionError
    "open-flow": "- func: f(Tensor self) -> Tensor\n  tags: " + "[" * 30000 + "\n",  # about 3 s (quadratic)
    "indented": "- func: f(Tensor self) -> Tensor\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 100)),
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_refused_before_libyaml(name):
    # In a subprocess: a regression would crash the interpreter, not just fail.
    code = ("import sys, time\nfrom opgen_lsp.index.native import NativeParser\nfrom opgen_lsp.index.backend import "
            "check_backend\nfrom opgen_lsp.releases import DEFAULT\nt = sys.stdin.read()\ns = time.perf_counter()\n"
            "d = NativeParser(release=DEFAULT).parse(t, frozenset()).diagnostics\n"
            "b = check_backend('backend: XLA\\nsupported:\\n' + t, NativeParser(release=DEFAULT).parse('', frozenset()))\n"
            "print(time.perf_counter() - s, [x.code for x in d])")
    run = subprocess.run([sys.executable, "-c", code], input=DEEP[name], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    seconds, codes = run.stdout.split(" ", 1)
    assert float(seconds) < 1.0 and "OPG001" in codes


@pytest.mark.parametrize("levels", [3, 9])
def test_nested_aliases_stop_expanding(inputs, levels):
    lines = ["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    native = "- func: f(Tensor self) -> Tensor\n" + "\n".join(lines) + "\n  tags: *a" + str(levels - 1) + "\n"
    backend = "backend: XLA\ncpp_namespace: x\n" + "\n".join(ln[2:] for ln in lines) + f"\nsupported: *a{levels - 1}\n"
    started = time.perf_counter()
    native_codes = [d.code for d in NativeParser(release=DEFAULT).parse(native, inputs.tags.names).diagnostics]
    backend_codes = [d.code for d in check_backend(backend, inputs.native).diagnostics]
    assert time.perf_counter() - started < 10
    assert ("OPG001" in native_codes and "OPG001" in backend_codes) == (levels > 4)


def test_many_unknown_tags_stay_cheap(inputs):
    text = "- func: f(Tensor self) -> Tensor\n  tags: [" + ", ".join(["nope"] * 20000) + "]\n"
    _, elapsed = fuzz.check_one(text, inputs, random.Random(0), kind=NATIVE)
    assert elapsed < 10
