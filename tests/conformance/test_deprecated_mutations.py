"""Mutation tests of deprecated.yaml: torch's Python binding generator and opgen on the same edited file.

torchgen 2.13 reads deprecated.yaml in gen_python_functions.load_signatures (on the native functions that get
Python bindings; one process for every file of the module, through the reference cache); opgen in `opgen check`
and the server. Same verdict for every mutation, opgen's error on the mutated entry with the recorded code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.index.derivatives import DeprecatedParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from .autograd_reference import verdicts

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
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), TagsParser().parse(tags_yaml.read_text()).names)


def _mutated(real: str, old: str, new: str) -> str:
    assert real.count(old) == 1
    return real.replace(old, new)


@pytest.fixture(scope="module")
def torch_rejects(deprecated_yaml, native_yaml, tags_yaml, tmp_path_factory):
    """deprecated.yaml text -> whether torchgen's reader rejects it: the real file and every mutation, read by one
    process of torchgen (through the reference cache)."""
    real = deprecated_yaml.read_text()
    texts = [real]
    for _, old, new, _, _ in MUTATIONS:
        if real.count(old) == 1:  # else the edit no longer applies: its test says so
            texts.append(_mutated(real, old, new))
    found = verdicts("deprecated", [(text, native_yaml) for text in texts], tags_yaml,
                     tmp_path_factory.mktemp("deprecated_mutations"), reads=[native_yaml])
    return dict(zip(texts, (verdict is not None for verdict in found), strict=True)).__getitem__


def test_real_file_is_clean_in_both(deprecated_yaml, opgen_native, torch_rejects):
    text = deprecated_yaml.read_text()
    assert not torch_rejects(text)
    assert DeprecatedParser(DEFAULT).check(text, opgen_native.functions) == ()


@pytest.mark.parametrize("id, old, new, rejected, code", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation(id, old, new, rejected, code, deprecated_yaml, opgen_native, torch_rejects):
    text = _mutated(deprecated_yaml.read_text(), old, new)
    first = text[:text.index(new)].count("\n")
    last = first + new.count("\n") - 1
    assert torch_rejects(text) == rejected
    found = DeprecatedParser(DEFAULT).check(text, opgen_native.functions)
    assert any(d.is_error for d in found) == rejected, [(d.code, d.message) for d in found]
    if code:
        assert [d for d in found if d.code == code and first <= d.span.start_line <= last], \
            [(d.code, d.span.start_line, d.message) for d in found]
    else:
        assert found == ()
