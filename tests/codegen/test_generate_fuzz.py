"""What `opgen check` accepts, `opgen generate` generates: seeded edits of the raise-site inputs (annotations,
returns, argument types, dispatch tables, tags, added variants) go through the check and, where it is clean,
through every file of the generator, which must raise nothing (an error there is a rule the check lacks).

This fuzzer found, after the raise sites were first listed, the mutable optional tensor and the mutable list
return (OPG208), the view grouped with other variants and the view that writes its input (OPG128), the CPU-scalar
CUDA functor with a dtype the plain one lacks (OPG127) and a structured op registered by hand (OPG116). Replay
another sequence with OPGEN_FUZZ_SEED=<n>; a failure prints the input.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from reliability.fuzz import env_seed

from opgen_lsp.codegen.files.context import GenerateOptions
from opgen_lsp.codegen.generate import Engine
from opgen_lsp.index.inputs import InputError
from opgen_lsp.releases import DEFAULT

from .raise_sites import ACCEPTED_INPUTS, INPUTS

pytestmark = [pytest.mark.conformance, pytest.mark.slow]  # the reference's templates and tags
INPUT_COUNT = 3000


def _replace(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


def _append(entry: str) -> Callable[[str], str]:
    return lambda text: text + entry


EDITS: tuple[Callable[[str], str], ...] = (
    _replace("(a)", "(a!)"), _replace("(a!)", "(a)"), _replace("(a!) self", " self"),
    _replace("Tensor self", "Tensor(a!) self"), _replace("Tensor(a) self", "Tensor(a -> *) self"),
    _replace("-> Tensor\n", "-> (Tensor, Tensor)\n"), _replace("-> Tensor(a!)\n", "-> ()\n"),
    _replace("-> Tensor(a)\n", "-> Tensor(a)[]\n"), _replace("-> Tensor", "-> Tensor?"),
    _replace(") -> Tensor", ", Tensor(b!) other) -> Tensor"), _replace("Tensor self", "Tensor[] self"),
    _replace("Tensor self", "Tensor? self"), _replace("int ", "SymInt "), _replace("int ", "SymInt[] "),
    _replace("Tensor other", "Scalar other"), _replace("Tensor(a!) out", "Tensor(a!)[] out"),
    _replace(" Tensor(a!) out)", " Tensor(a!) out, Tensor(b!) out2)"),
    lambda text: re.sub(r"  dispatch:\n(    [^\n]*\n)+", "", text, count=1),
    _replace("CPU:", "CompositeExplicitAutograd:"), _replace("CPU:", "CompositeImplicitAutograd:"),
    _replace("foo(", "foo_("), _replace("foo.out(", "foo.out2("), _replace("structured: True\n", ""),
    _replace("variants: function", "variants: function, method"),
    _replace("Tensor self", "Tensor self, SymInt[] size"), _replace("Tensor self", "Tensor self, Tensor[] tensors"),
    _replace("-> Tensor\n", "-> Tensor[]\n"), _replace("CPU:", "QuantizedCPU:"), _replace("(All)", "(Float, Half)"),
    _replace("Generic: foo", "ScalarOnly: foo"),
    _append("  tags: inplace_view\n"), _append("  autogen: foo.out\n"), _append("  manual_kernel_registration: True\n"),
    _append("  structured_delegate: foo.out\n"), _append("  variants: function, method\n"),
    _append("- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: foo_\n"),
    _append("- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: foo_out\n"),
    _append("- func: foo_copy(Tensor self) -> Tensor\n  tags: view_copy\n  dispatch:\n"
            "    CompositeExplicitAutogradNonFunctional: foo_copy\n"),
)


@pytest.fixture(scope="module")
def engine(aten: Path, tmp_path_factory) -> Engine:
    source = tmp_path_factory.mktemp("fuzz_source")
    (source / "native").mkdir()
    shutil.copy(aten / "native" / "tags.yaml", source / "native" / "tags.yaml")
    (source / "templates").symlink_to(aten / "templates")
    return Engine(GenerateOptions(source_path=str(source), release=DEFAULT))


def test_what_check_accepts_generates(engine: Engine) -> None:
    seeds = sorted({text for text, _ in INPUTS.values()} | set(ACCEPTED_INPUTS.values()))
    rng = random.Random(env_seed())
    generated = 0
    for _ in range(INPUT_COUNT):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 4)):
            text = rng.choice(EDITS)(text)
        try:
            engine.files(text)
        except InputError:  # the check refuses it: nothing to generate
            continue
        except Exception as exc:  # noqa: BLE001  (any other failure is a rule the check lacks)
            pytest.fail(f"opgen check accepts this native_functions.yaml, and generating it raises "
                        f"{type(exc).__name__}: {exc}\n{text}")
        generated += 1
    assert generated > INPUT_COUNT // 50  # the edits leave enough inputs the check accepts to mean something
