"""gen.py (torchgen 2.13) fails on every input of tests/codegen/raise_sites.py that `opgen check` refuses, for the
reason opgen gives; on the inputs near those rules' edges that it accepts, `opgen check` is clean and `opgen
generate` writes gen.py's files byte for byte."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from codegen.raise_sites import ACCEPTED_INPUTS, INPUTS
from file_trees import aten_source, files_under, first_difference

from opgen_lsp.cli import main

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

ALL = {name: text for name, (text, _) in INPUTS.items()}
# What gen.py's last error line says on each (so that it fails for the reason opgen gives, not another).
TORCHGEN_SAYS = {
    "custom-class-argument": "unrecognized type CustomClassType",
    "cumsum-without-dtype": "Expected dtype argument for cumulative out op",
    "fixed-size-list-return": "fixed size list returns not supported",
    "in-place-with-two-returns": "must return self",
    "kernel-namespace-too-deep": "level(s) of custom namespace",
    "kernel-namespace-too-deep-to-register": "level(s) of custom namespace",
    "list-default-not-a-list": "Expected a list default",
    "optional-list-return": "unrecognized return type Tensor[]?",
    "optional-scalar-return": "unrecognized return type Scalar?",
    "structured-list-out": "Expected out_arg type to be ConstRefCType(BaseCType(tensorT))",
    "structured-tensor-options": "has tensor options arguments",
    "symint-kernel-without-symint": "without SymInt in schema",
    "symint-optional-list": "UnsatError",
    "symint-list-of-lists": "UnsatError",
    "two-kernel-namespaces": "only supports one namespace per operator",
    "ufunc-list-argument": "unrecognized type ListType",
    "ufunc-names-differ": "ScalarOnly and Generic must have same ufunc name",
    "ufunc-no-generic-loop": "ufunc_name must be non-None",
    "ufunc-optional-tensor": "Expected Tensor type, got Tensor?",
    "ufunc-scalar-functor-on-unary": "cannot use CUDAFunctorOnSelf on non-binary function",
    "ufunc-scalar-functor-dtype-without-plain-functor": "KeyError: 'CUDAFunctor",
    "ufunc-vector-without-scalar": "Double, dict_keys([<UfuncKey.CPUVector",
    "unfunctionalizable-op": "Expected composite implicit autograd kernel",
    "unsized-bool-list": "bool ListType must have a size",
    "view-aliases-a-second-argument": "to alias the output",
    "view-copy-without-kernel": "Expected metadata for view_copy kernel",
    "view-copy-kernel-renamed": "Expected kernel 'view_copy_symint', got 'view_copy_other'",
    "functional-variant-returns-an-alias": "Expected 1 + 0 == 0",
    "functional-variant-is-a-view": "Expected 1 + 0 == 0",
    "mutable-variant-returns-self-twice": "Expected 2 + 0 == 3",
    "generated-functional-of-self-returned-twice": "Expected 2 + 0 == 3",
    "mutable-optional-tensor-argument": "UnsatError",
    "manual-registration-of-a-structured-op": "has manual_kernel_registration=True",
    "manual-registration-of-a-ufunc-op": "has manual_kernel_registration=True",
    "mutable-list-return": "Native functions should never return a mutable tensor list",
    "generated-out-of-an-optional-return": "UnsatError",
    "view-in-a-group": "Unexpected view op",
    "view-writing-its-input": "UnsatError",
    "view-first-argument-not-a-tensor": "to be a tensor, but found an argument",
    "view-returns-a-non-tensor": "Expected tensor-like return type",
    "view-with-two-returns": "Expected 1 return, got 2",
    "view-without-copy": "appears to be a new operator that aliases its inputs",
}


def test_every_input_has_its_reason() -> None:
    assert set(TORCHGEN_SAYS) == set(ALL)


def _flags(out: Path) -> list[str]:
    return ["-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"), "--aoti-install-dir",
            str(out / "aoti")]


def _gen_py(source: Path, out: Path) -> subprocess.CompletedProcess:
    return reference.run(["-m", "torchgen.gen", "-s", str(source), *_flags(out)], cwd=source,
                         outputs=[out / "aten", out / "headeronly", out / "aoti"])


@pytest.mark.parametrize("name", sorted(ALL))
def test_gen_py_fails_on_it(name: str, aten: Path, tmp_path: Path) -> None:
    ran = _gen_py(aten_source(tmp_path, aten, ALL[name]), tmp_path / "out")
    errors = [line for line in ran.stderr.splitlines() if "Error" in line]
    assert ran.returncode != 0 and errors and TORCHGEN_SAYS[name] in errors[-1], ran.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(ACCEPTED_INPUTS))
def test_what_gen_py_accepts_opgen_generates_byte_for_byte(name: str, aten: Path, tmp_path: Path, capsys) -> None:
    source = aten_source(tmp_path / "src", aten, ACCEPTED_INPUTS[name])
    ran = _gen_py(source, tmp_path / "torchgen")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert main(["check", str(source / "native" / "native_functions.yaml")]) == 0, capsys.readouterr().out
    assert main(["generate", "-s", str(source), *_flags(tmp_path / "opgen"), "-j", "1"]) == 0
    theirs, ours = files_under(tmp_path / "torchgen"), files_under(tmp_path / "opgen")
    assert sorted(theirs) == sorted(ours)
    different = [p for p in theirs if theirs[p] != ours[p]]
    assert different == [], f"{different[0]}: {first_difference(theirs[different[0]], ours[different[0]])}"
