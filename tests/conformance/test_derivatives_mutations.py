"""Mutation tests of derivatives.yaml: torch's own autograd loader and opgen on the same edited file.

Each mutation edits one entry of the real derivatives.yaml (found by its `- name: SCHEMA` line) or adds
one. Both torchgen 2.13's loader (torchgen.packaged.autograd.load_derivatives: one process for every file of
the module, through the reference cache) and opgen read the result; the test asserts that

1. torchgen does what the mutation records (so an edit that stopped applying shows as such);
2. opgen reports an error if and only if torchgen rejects the file;
3. when it does, one of opgen's errors has the mutation's code and lies on the mutated entry;
4. accepted mutations that are surely mistakes get the recorded warning, on the entry.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from .autograd_reference import verdicts

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@dataclass(frozen=True)
class Edited:
    text: str
    first: int  # 0-based first line of the mutated (or added) entry
    last: int  # inclusive


@dataclass(frozen=True)
class Mutation:
    id: str
    apply: Callable[[str], Edited]
    rejected: bool  # what torchgen 2.13 does with the file
    code: str  # the error (rejected) or warning (accepted, "" for none) opgen must give on the entry
    native_extra: str = ""  # an entry appended to a copy of native_functions.yaml


def _entry_range(lines: list[str], schema: str) -> tuple[int, int]:
    starts = [i for i, line in enumerate(lines) if line.startswith(f"- name: {schema}")]
    assert len(starts) == 1, (schema, len(starts))
    first = last = starts[0]
    while last + 1 < len(lines) and not lines[last + 1].startswith("-"):
        last += 1
    return first, last


def edit(schema: str, old: str, new: str) -> Callable[[str], Edited]:
    def apply(text: str) -> Edited:
        lines = text.splitlines(keepends=True)
        first, last = _entry_range(lines, schema)
        block = "".join(lines[first:last + 1])
        assert block.count(old) == 1, (schema, old)
        block = block.replace(old, new)
        out = "".join(lines[:first]) + block + "".join(lines[last + 1:])
        return Edited(out, first, first + block.count("\n") - 1)
    return apply


def add_after(schema: str, block: str) -> Callable[[str], Edited]:
    def apply(text: str) -> Edited:
        lines = text.splitlines(keepends=True)
        _, last = _entry_range(lines, schema)
        out = "".join(lines[:last + 1]) + block + "\n" + "".join(lines[last + 1:])
        return Edited(out, last + 1, last + block.count("\n"))
    return apply


def reject(id: str, apply, code: str, native_extra: str = "") -> Mutation:
    return Mutation(id, apply, True, code, native_extra)


def accept(id: str, apply, code: str = "") -> Mutation:
    return Mutation(id, apply, False, code)


ABS = "abs(Tensor self) -> Tensor"
ADD = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
CHUNK = "chunk(Tensor(a -> *) self"
SORT = "sort(Tensor self, int dim=-1"
BATCH_NORM = "native_batch_norm(Tensor input"
POOL = "max_pool2d_with_indices(Tensor self"
POOL_BACKWARD = "max_pool2d_with_indices_backward(Tensor grad_output"
ACOS = "acos(Tensor self) -> Tensor"
ABS_FORMULA = "  self: grad * self.sgn()\n"

MUTATIONS = [
    # ---- the entry's own shape
    reject("no-name", add_after(ABS, "- self: grad\n"), "OPG700"),
    reject("name-not-a-string", add_after(ABS, "- name: [abs]\n  self: grad\n"), "OPG701"),
    reject("name-not-a-schema", add_after(ABS, "- name: abs\n  self: grad\n"), "OPG703"),
    reject("formula-not-a-string", edit(ABS, ABS_FORMULA, "  self: 1\n"), "OPG702"),
    reject("formula-empty", edit(ABS, ABS_FORMULA, "  self:\n"), "OPG702"),
    reject("duplicate-key", edit(ABS, ABS_FORMULA, ABS_FORMULA + "  self: grad\n"), "OPG004"),
    reject("yaml-syntax", edit(ABS, ABS_FORMULA, "  self: [grad\n"), "OPG001"),
    reject("dispatch-not-a-mapping", edit(CHUNK, "  dispatch:\n    Default:\n", "  dispatch: Default\n  x:\n    Default:\n"),
           "OPG708"),
    reject("dispatch-key-formulas-not-a-mapping",
           edit(CHUNK, "    AutogradNestedTensor:\n      self: chunk_backward_nested(grads, self, chunks, dim)\n",
                "    AutogradNestedTensor: chunk_backward_nested\n"), "OPG708"),
    reject("invalid-autograd-key", edit(CHUNK, "    AutogradNestedTensor:", "    AutogradNestedTensr:"), "OPG707"),
    reject("output-differentiability-not-a-list", edit(SORT, "output_differentiability: [True, False]",
                                                       "output_differentiability: True"), "OPG709"),
    reject("output-differentiability-condition-with-two-outputs",
           edit(SORT, "output_differentiability: [True, False]",
                "output_differentiability: ['self.requires_grad()', False]"), "OPG709"),
    reject("output-differentiability-a-string", edit(ABS, ABS_FORMULA, "  output_differentiability: ab\n" + ABS_FORMULA),
           "OPG709"),
    reject("output-differentiability-two-keys",
           edit(ABS, ABS_FORMULA, "  output_differentiability: {a: 1, b: 2}\n" + ABS_FORMULA), "OPG709"),
    # ---- resolution against native_functions.yaml
    reject("unknown-schema", edit(ABS, "- name: abs(Tensor self)", "- name: abss(Tensor self)"), "OPG704"),
    reject("schema-not-exactly-printed", edit(ABS, "- name: abs(Tensor self)", "- name: abs(Tensor  self)"), "OPG704"),
    reject("no-canonical-function", add_after(ABS, "- name: adaptive_avg_pool3d_backward.grad_input(Tensor grad_output, "
                                                   "Tensor self, *, Tensor(a!) grad_input) -> Tensor(a!)\n"
                                                   "  self: grad\n"), "OPG705"),
    reject("argument-named-result", add_after(ABS, "- name: opgen_probe(Tensor self, Tensor result) -> Tensor\n"
                                                   "  self: grad\n"), "OPG706",
           native_extra="- func: opgen_probe(Tensor self, Tensor result) -> Tensor\n"),
    reject("argument-named-grad-input-mask",
           add_after(ABS, "- name: opgen_probe(Tensor self, bool[3] grad_input_mask) -> Tensor\n  self: grad\n"),
           "OPG706", native_extra="- func: opgen_probe(Tensor self, bool[3] grad_input_mask) -> Tensor\n"),
    reject("argument-and-named-output",
           add_after(ABS, "- name: opgen_probe(Tensor self, Tensor values) -> (Tensor values, Tensor b)\n"
                          "  self, values: grads[0] + grads[1]\n"), "OPG710",
           native_extra="- func: opgen_probe(Tensor self, Tensor values) -> (Tensor values, Tensor b)\n"),
    # ---- formula names
    reject("misspelt-argument", edit(ABS, "  self: grad * self.sgn()", "  slef: grad * self.sgn()"), "OPG711"),
    reject("misspelt-entry-key", edit(SORT, "output_differentiability:", "output_differentiabilty:"), "OPG702"),
    reject("result-for-several-outputs", edit(BATCH_NORM, "  result0: batch_norm_jvp", "  result: batch_norm_jvp"),
           "OPG712"),
    reject("result-index-past-outputs", edit(BATCH_NORM, "  result0: batch_norm_jvp", "  result5: batch_norm_jvp"),
           "OPG712"),
    reject("non-differentiable-and-formula", edit(POOL_BACKWARD, "  indices: non_differentiable",
                                                  "  indices, self: non_differentiable"), "OPG713"),
    # ---- backward formulas
    reject("grads-out-of-bounds", edit(ABS, ABS_FORMULA, "  self: grads[1] * self.sgn()\n"), "OPG714"),
    reject("sizes-call", edit(ABS, ABS_FORMULA, "  self: grad * self.sizes()[0]\n"), "OPG715"),
    reject("size-int-call", edit(ABS, ABS_FORMULA, "  self: grad * self.size(0)\n"), "OPG715"),
    reject("strides-call", edit(ABS, ABS_FORMULA, "  self: grad * self.strides()[0]\n"), "OPG715"),
    reject("sym-strides-in-shared-formula", edit(BATCH_NORM, '"grad.defined() ?', '"input.sym_strides().size() && grad.defined() ?'),
           "OPG716"),
    reject("mixed-grad-and-grads", edit(ADD, "maybe_multiply(grad, alpha.conj())", "maybe_multiply(grads[0], alpha.conj())"),
           "OPG717"),
    reject("only-grads-0", edit(ABS, ABS_FORMULA, "  self: grads[0] * self.sgn()\n"), "OPG718"),
    reject("named-gradient-mixed-with-grad", edit(SORT, "value_selecting_reduction_backward_symint(grad, dim",
                                                  "value_selecting_reduction_backward_symint(grad_values + grad, dim"),
           "OPG719"),
    # ---- forward formulas
    reject("forward-formula-plain-name", edit(ABS, "self_p.sgn()", "self.sgn()"), "OPG720"),
    reject("auto-element-wise-in-place", add_after(ACOS, "- name: acos_(Tensor(a!) self) -> Tensor(a!)\n"
                                                         "  self: grad * 2\n  result: auto_element_wise\n"), "OPG721"),
    reject("auto-element-wise-two-inputs", edit(ADD, "  result: self_t + maybe_multiply(other_t, alpha)",
                                                "  result: auto_element_wise"), "OPG721"),
    reject("auto-element-wise-without-backward", edit(ACOS, "  self: grad * -((-self * self + 1).rsqrt()).conj()\n", ""),
           "OPG721"),
    reject("auto-element-wise-adjacent-uses", edit(ACOS, "(-self * self + 1)", "(-self*self + 1)"), "OPG720"),
    reject("auto-linear-two-outputs", edit(POOL, "  result0: gather(self_t.flatten(-2), -1, result1.flatten(-2)).view_as(result1)",
                                           "  result0, result1: auto_linear"), "OPG722"),
    reject("auto-linear-no-differentiable-input",
           edit(ABS, ABS_FORMULA + "  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())\n",
                "  self: non_differentiable\n  result: auto_linear\n"), "OPG722"),
    # ---- what torchgen lets through
    accept("harmless-reorder", edit(ADD, "  self: handle_r_to_c(self.scalar_type(), grad)\n  other: handle_r_to_c",
                                    "  other: handle_r_to_c")),  # (self is dropped: a formula less is not wrong)
    accept("harmless-comment", edit(ABS, ABS_FORMULA, "  # a comment\n" + ABS_FORMULA)),
    accept("sym-strides-for-itself", edit(ABS, ABS_FORMULA, "  self: grad * self.sym_strides()[0]\n")),
    accept("duplicate-entry", add_after(ABS, "- name: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                                             "  self: grad * self.sgn()\n"), "OPG752"),
    accept("formula-beside-dispatch", edit(CHUNK, "  dispatch:\n", "  self: grad\n  dispatch:\n"), "OPG750"),
    accept("misspelt-second-argument", edit(ADD, "  self: handle_r_to_c(self.scalar_type(), grad)",
                                            "  self, othr: handle_r_to_c(self.scalar_type(), grad)"), "OPG751"),
    accept("output-differentiability-too-long", edit(SORT, "output_differentiability: [True, False]",
                                                     "output_differentiability: [True, False, True]"), "OPG754"),
    # torchgen iterates the value: one character, or one key, reads as a one-condition list
    accept("output-differentiability-one-character",
           edit(ABS, ABS_FORMULA, "  output_differentiability: x\n" + ABS_FORMULA), "OPG757"),
    accept("output-differentiability-one-key",
           edit(ABS, ABS_FORMULA, "  output_differentiability: {x: 1}\n" + ABS_FORMULA), "OPG757"),
    accept("formula-for-an-int", edit(CHUNK, "      self: chunk_backward_nested(grads, self, chunks, dim)",
                                      "      self, chunks: chunk_backward_nested(grads, self, chunks, dim)"), "OPG756"),
]

@pytest.fixture(scope="module")
def real_derivatives(aten: Path) -> Path:
    return aten.parent / "autograd" / "derivatives.yaml"


@pytest.fixture(scope="module")
def opgen_native(native_yaml: Path, tags_yaml: Path):
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names), tags


@pytest.fixture(scope="module")
def torch_rejects(real_derivatives, native_yaml, tags_yaml, tmp_path_factory):
    """(derivatives.yaml text, appended native entry) -> whether torchgen's loader rejects it: the real file and
    every mutation, read by one process of torchgen (through the reference cache)."""
    folder = tmp_path_factory.mktemp("derivatives_mutations")
    real = real_derivatives.read_text()
    cases = [(real, "")]
    for mutation in MUTATIONS:
        try:
            cases.append((mutation.apply(real).text, mutation.native_extra))
        except AssertionError:
            pass  # the edit no longer applies: its test says so
    natives: dict[str, Path] = {"": native_yaml}
    for _, extra in cases:
        if extra not in natives:  # native_functions.yaml with the entry appended, the tags beside it
            tree = folder / f"native_{len(natives)}"
            tree.mkdir()
            shutil.copy(tags_yaml, tree / "tags.yaml")
            (tree / "native_functions.yaml").write_text(native_yaml.read_text() + extra)
            natives[extra] = tree / "native_functions.yaml"
    found = verdicts("derivatives", [(text, natives[extra]) for text, extra in cases], tags_yaml, folder,
                     reads=[native_yaml])
    rejected = {case: verdict is not None for case, verdict in zip(cases, found, strict=True)}
    return lambda text, native_extra="": rejected[text, native_extra]


def opgen_diagnostics(derivatives: str, native_snapshot):
    return DerivativesChecker().check(DerivativesParser().parse(derivatives), native_snapshot.functions, DEFAULT).diagnostics


def test_real_file_is_clean_in_both(real_derivatives, opgen_native, torch_rejects):
    text = real_derivatives.read_text()
    assert not torch_rejects(text)
    assert opgen_diagnostics(text, opgen_native[0]) == ()


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.id)
def test_mutation(mutation: Mutation, real_derivatives, native_yaml, opgen_native, torch_rejects):
    edited = mutation.apply(real_derivatives.read_text())
    native_snapshot = opgen_native[0]
    if mutation.native_extra:
        native_snapshot = NativeParser(release=DEFAULT).parse(native_yaml.read_text() + mutation.native_extra, opgen_native[1].names)
        assert not native_snapshot.diagnostics
    assert torch_rejects(edited.text, mutation.native_extra) == mutation.rejected
    diagnostics = opgen_diagnostics(edited.text, native_snapshot)
    errors = [d for d in diagnostics if d.is_error]
    assert bool(errors) == mutation.rejected, [f"{d.span.start_line + 1}: {d.code} {d.message}" for d in diagnostics]
    if mutation.code:
        on_entry = [d for d in diagnostics if d.code == mutation.code and edited.first <= d.span.start_line <= edited.last]
        assert on_entry, [f"{d.span.start_line + 1}: {d.code} {d.message}" for d in diagnostics]
    else:
        assert diagnostics == ()
