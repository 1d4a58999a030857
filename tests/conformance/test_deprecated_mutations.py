"""Mutation tests of deprecated.yaml: torch's Python binding generator and opgen on the same edited file.

torchgen 2.13 reads deprecated.yaml in gen_python_functions.load_signatures (run here in this process, on
the native functions that get Python bindings); opgen in `opgen check` and the server. Same verdict for
every mutation, opgen's error on the mutated entry with the recorded code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.index.derivatives import DeprecatedParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from .autograd_reference import rejects

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

ADD = "- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor\n  aten: add(self, other, alpha)\n"
ADD_OUT = ("- name: add(Tensor self, Scalar alpha, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
           "  aten: add_out(out, self, other, alpha)\n")

# (id, old text, new text, torchgen rejects, opgen's code on the entry)
MUTATIONS = [
    ("unknown-value", ADD, ADD.replace("add(self, other, alpha)", "add(self, othr, alpha)"), True, "OPG742"),
    ("wrong-type", ADD, ADD.replace("Scalar alpha", "int alpha"), True, "OPG743"),
    ("unknown-op", ADD, ADD.replace("aten: add(", "aten: addd("), True, "OPG743"),
    ("out-arguments-reordered", ADD_OUT, ADD_OUT.replace("add_out(out, self,", "add_out(self, out,"), True, "OPG743"),
    ("different-returns", ADD, ADD.replace(") -> Tensor\n", ") -> (Tensor, Tensor)\n"), True, "OPG743"),
    ("not-a-call", ADD, ADD.replace("aten: add(self, other, alpha)", "aten: add"), True, "OPG741"),
    ("no-aten", ADD, ADD.replace("  aten: add(self, other, alpha)\n", ""), True, "OPG740"),
    ("bad-schema", ADD, ADD.replace("-> Tensor\n", "-> Tensr\n"), True, "OPG203"),
    # Ops torch gives no Python binding (SKIP_PYTHON_BINDINGS and its schema list) cannot be called.
    ("skipped-by-name", ADD, ADD + "- name: size(Tensor self, int dim) -> int\n  aten: size(self, dim)\n", True,
     "OPG743"),
    ("skipped-by-pattern", ADD, ADD + "- name: threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) "
                                      "-> Tensor\n  aten: threshold_backward(grad_output, self, threshold)\n", True,
     "OPG743"),
    ("skipped-by-schema", ADD, ADD + "- name: add(Tensor self, Scalar other, Scalar alpha) -> Tensor\n"
                                     "  aten: add(self, other, alpha)\n", True, "OPG743"),
    ("constant-one", ADD, ADD.replace("add(self, other, alpha)", "add(self, other, 1)"), False, ""),
    ("comment", ADD, "# a comment\n" + ADD, False, ""),
]


@pytest.fixture(scope="module")
def deprecated_yaml(aten: Path) -> Path:
    return aten.parent / "autograd" / "deprecated.yaml"


@pytest.fixture(scope="module")
def opgen_native(native_yaml: Path, tags_yaml: Path):
    return NativeParser().parse(native_yaml.read_text(), TagsParser().parse(tags_yaml.read_text()).names)


def torch_rejects(text: str, native: Path, tags: Path, tmp: Path) -> bool:
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.gen_python_functions import load_signatures, should_generate_py_binding

    functions = [f for f in parse_native_yaml(str(native), str(tags)).native_functions if should_generate_py_binding(f)]
    return rejects(lambda path: load_signatures(functions, path, method=False), text, tmp, "deprecated")


def test_real_file_is_clean_in_both(deprecated_yaml, native_yaml, tags_yaml, opgen_native, tmp_path):
    text = deprecated_yaml.read_text()
    assert not torch_rejects(text, native_yaml, tags_yaml, tmp_path)
    assert DeprecatedParser(DEFAULT).check(text, opgen_native.functions) == ()


@pytest.mark.parametrize("id, old, new, rejected, code", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation(id, old, new, rejected, code, deprecated_yaml, native_yaml, tags_yaml, opgen_native, tmp_path):
    real = deprecated_yaml.read_text()
    assert real.count(old) == 1
    text = real.replace(old, new)
    first = text[:text.index(new)].count("\n")
    last = first + new.count("\n") - 1
    assert torch_rejects(text, native_yaml, tags_yaml, tmp_path) == rejected
    found = DeprecatedParser(DEFAULT).check(text, opgen_native.functions)
    assert any(d.is_error for d in found) == rejected, [(d.code, d.message) for d in found]
    if code:
        assert [d for d in found if d.code == code and first <= d.span.start_line <= last], \
            [(d.code, d.span.start_line, d.message) for d in found]
    else:
        assert found == ()
