"""gen.py (torchgen 2.13) fails on every input of tests/codegen/raise_sites.py, as `opgen check` (RULE and GUARDED
inputs, located errors) or at least `opgen generate` (UNCHECKED_INPUTS, exit 1) say it does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codegen.raise_sites import INPUTS, UNCHECKED_INPUTS

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

ALL = {**{name: text for name, (text, _) in INPUTS.items()}, **UNCHECKED_INPUTS}
# What gen.py's last error line says on each (so that it fails for the reason opgen gives, not another).
TORCHGEN_SAYS = {
    "custom-class-argument": "unrecognized type CustomClassType",
    "fixed-size-list-return": "fixed size list returns not supported",
    "in-place-with-two-returns": "must return self",
    "kernel-namespace-too-deep": "level(s) of custom namespace",
    "list-default-not-a-list": "Expected a list default",
    "optional-list-return": "unrecognized return type Tensor[]?",
    "optional-scalar-return": "unrecognized return type Scalar?",
    "structured-list-out": "Expected out_arg type to be ConstRefCType(BaseCType(tensorT))",
    "structured-tensor-options": "has tensor options arguments",
    "symint-kernel-without-symint": "without SymInt in schema",
    "two-kernel-namespaces": "only supports one namespace per operator",
    "ufunc-list-argument": "unrecognized type ListType",
    "ufunc-names-differ": "ScalarOnly and Generic must have same ufunc name",
    "ufunc-no-generic-loop": "ufunc_name must be non-None",
    "ufunc-optional-tensor": "Expected Tensor type, got Tensor?",
    "ufunc-scalar-functor-on-unary": "cannot use CUDAFunctorOnSelf on non-binary function",
    "ufunc-vector-without-scalar": "Double, dict_keys([<UfuncKey.CPUVector",
    "unfunctionalizable-op": "Expected composite implicit autograd kernel",
    "unsized-bool-list": "bool ListType must have a size",
    "view-aliases-a-second-argument": "to alias the output",
    "view-copy-without-kernel": "Expected metadata for view_copy kernel",
    "view-first-argument-not-a-tensor": "to be a tensor, but found an argument",
    "view-returns-a-non-tensor": "Expected tensor-like return type",
    "view-with-two-returns": "Expected 1 return, got 2",
    "view-without-copy": "appears to be a new operator that aliases its inputs",
}


def test_every_input_has_its_reason() -> None:
    assert set(TORCHGEN_SAYS) == set(ALL)


@pytest.mark.parametrize("name", sorted(ALL))
def test_gen_py_fails_on_it(name: str, aten: Path, tmp_path: Path) -> None:
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "native_functions.yaml").write_text(ALL[name], encoding="utf-8")
    (tmp_path / "native" / "tags.yaml").write_text((aten / "native" / "tags.yaml").read_text(encoding="utf-8"),
                                                   encoding="utf-8")
    (tmp_path / "templates").symlink_to(aten / "templates")
    ran = subprocess.run([sys.executable, "-m", "torchgen.gen", "-s", str(tmp_path), "-d", str(tmp_path / "out"),
                          "--aoti-install-dir", str(tmp_path / "aoti")], cwd=tmp_path, capture_output=True, text=True)
    errors = [line for line in ran.stderr.splitlines() if "Error" in line]
    assert ran.returncode != 0 and errors and TORCHGEN_SAYS[name] in errors[-1], ran.stderr[-2000:]
