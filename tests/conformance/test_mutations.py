"""Mutation tests: mistakes injected into the real native_functions.yaml.

For every mutation both torchgen 2.13 (the reference) and opgen read the
mutated text, and the test asserts that

1. opgen reports an error if and only if torchgen rejects the file;
2. when torchgen rejects it, one of opgen's errors lies on the mutated (or
   added) entry, i.e. between its `- func:` line and the next entry;
3. harmless edits give no opgen error at all and torchgen accepts them.

`Mutation.rejected` records what torchgen does with each mutated file; it is
checked first so that an edit that silently stopped applying (or no longer
means what its id says) shows up as such rather than as a disagreement.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import reference

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from .mutations import Mutated, Mutation, add_after, edit, entry_text, rewrite

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

ORACLE = Path(__file__).with_name("release_oracle.py")  # torchgen's verdict, as gen.py reads the file


def reject(id: str, apply, why: str = "") -> Mutation:
    return Mutation(id, apply, rejected=True, why=why)


def accept(id: str, apply, why: str = "") -> Mutation:
    return Mutation(id, apply, rejected=False, why=why)


def _drop_line(line: str):
    def change(block: str) -> str:
        assert block.count(line) == 1, line
        return block.replace(line, "")
    return change


def _reorder_abs(block: str) -> str:
    # abs: func, device_check, variants, dispatch (4 lines), tags  ->  func, tags, dispatch, variants, device_check
    lines = block.splitlines(keepends=True)
    func, device_check, variants = lines[0], lines[1], lines[2]
    dispatch, tags, rest = lines[3:8], lines[8], lines[9:]
    assert device_check.startswith("  device_check:") and variants.startswith("  variants:")
    assert dispatch[0] == "  dispatch:\n" and tags.startswith("  tags:")
    return "".join([func, tags, *dispatch, variants, device_check, *rest])


NEW_OP = (
    "- func: opgen_mutation_probe(Tensor self, int dim, *, Scalar alpha=1) -> Tensor\n"
    "  variants: function\n"
    "  dispatch:\n"
    "    CPU: opgen_mutation_probe_cpu\n"
    "    CUDA: opgen_mutation_probe_cuda\n"
)

MUTATIONS: list[Mutation] = [
    # ---- dispatch tables -------------------------------------------------------------------
    reject("dispatch-unknown-key", edit("abs.out", "    CPU, CUDA, MPS, MTIA: abs_out", "    CPUU, CUDA, MPS, MTIA: abs_out")),
    reject("dispatch-unknown-key-later-in-list", edit("acos.out", "CPU, CUDA, MPS: acos_out", "CPU, CUDA, MPSS: acos_out")),
    reject("dispatch-key-not-supported-in-native-yaml",
           edit("abs.out", "    CPU, CUDA, MPS, MTIA: abs_out\n", "    CPU, CUDA, MPS, MTIA: abs_out\n    XLA: abs_out_xla\n")),
    reject("dispatch-kernel-missing", edit("abs", "    CompositeExplicitAutograd: abs\n", "    CompositeExplicitAutograd:\n")),
    reject("dispatch-not-a-mapping", edit("acos.out", "  dispatch:\n    CPU, CUDA, MPS: acos_out\n", "  dispatch: acos_out\n")),
    accept("dispatch-key-given-twice",
           edit("acos.out", "    CPU, CUDA, MPS: acos_out\n", "    CPU, CUDA, MPS: acos_out\n    CPU: acos_out_cpu\n"),
           why="torchgen lets the later line override the earlier one for the same key"),
    reject("dispatch-kernel-namespace-too-deep", edit("acos.out", "CPU, CUDA, MPS: acos_out", "CPU, CUDA, MPS: a::b::c::d::acos_out")),
    reject("dispatch-two-composite-keys",
           edit("abs", "    CompositeExplicitAutograd: abs\n",
                "    CompositeExplicitAutograd: abs\n    CompositeImplicitAutograd: abs_implicit\n")),
    reject("dispatch-lone-implicit-kernel-with-other-name", add_after(
        "abs.out",
        "- func: opgen_mutation_probe(Tensor self) -> Tensor\n"
        "  dispatch:\n"
        "    CompositeImplicitAutograd: some_other_name\n")),
    reject("dispatch-redundant-implicit-table", add_after(
        "abs.out",
        "- func: opgen_mutation_probe(Tensor self) -> Tensor\n"
        "  dispatch:\n"
        "    CompositeImplicitAutograd: opgen_mutation_probe\n")),
    reject("manual-registration-with-dispatch",
           edit("abs", "  variants: function, method\n", "  variants: function, method\n  manual_kernel_registration: True\n")),
    reject("factory-new-without-dispatch", edit(
        "new_zeros",
        "  dispatch:\n"
        "    # NB: Although this composite mutates on the inside, it is\n"
        "    # non-differentiable so NonFunctional doesn't apply\n"
        "    CompositeExplicitAutograd: new_zeros\n", "")),
    reject("factory-like-without-dispatch", edit(
        "ones_like",
        "  dispatch:\n"
        "    # NB: Although this composite mutates on the inside, it is\n"
        "    # non-differentiable so NonFunctional doesn't apply\n"
        "    CompositeExplicitAutograd: ones_like\n"
        "    NestedTensorCPU, NestedTensorHPU, NestedTensorCUDA: ones_like\n", "")),
    reject("ufunc-unknown-dtype",
           edit("add.out", "Generic: add (AllAndComplex, BFloat16, Half, ComplexHalf)", "Generic: add (AllAndComplex, Bogus)")),
    # ---- func: schema strings --------------------------------------------------------------
    reject("func-argument-type-typo", edit("abs", "abs(Tensor self)", "abs(Tensr self)")),
    reject("func-return-type-typo", edit("abs", "abs(Tensor self) -> Tensor\n", "abs(Tensor self) -> Tensr\n")),
    reject("func-fixed-size-list-of-zero", edit("max_pool2d", "(Tensor self, int[2] kernel_size", "(Tensor self, int[0] kernel_size")),
    reject("func-unclosed-list-type", edit("permute", "int[] dims", "int[ dims")),
    reject("func-missing-arrow", edit("abs", "abs(Tensor self) -> Tensor\n", "abs(Tensor self) Tensor\n")),
    reject("func-missing-close-paren", edit("abs", "abs(Tensor self) -> Tensor\n", "abs(Tensor self -> Tensor\n")),
    reject("alias-write-to-alias-set", edit("abs_", "abs_(Tensor(a!) self)", "abs_(Tensor(a|b!) self)")),
    reject("alias-sets-before-and-after", edit("permute", "permute(Tensor(a) self", "permute(Tensor(a|b -> c|d) self")),
    reject("alias-uppercase-letter", edit("abs_", "abs_(Tensor(a!) self)", "abs_(Tensor(A!) self)")),
    reject("argument-without-name", edit("abs", "abs(Tensor self)", "abs(Tensor)")),
    reject("argument-illegal-character", edit("_masked_scale", "float scale", "float$scale")),
    reject("argument-reserved-python-keyword", edit("_masked_scale", "Tensor mask, float scale", "Tensor mask, int lambda")),
    reject("out-argument-not-keyword-only", edit("abs.out", "abs.out(Tensor self, *, Tensor(a!) out)", "abs.out(Tensor self, Tensor(a!) out)")),  # noqa: E501
    reject("out-returns-not-aliased", edit("abs.out", "Tensor(a!) out) -> Tensor(a!)", "Tensor(a!) out) -> Tensor")),
    reject("out-returns-more-than-out-args",
           edit("abs.out", "Tensor(a!) out) -> Tensor(a!)", "Tensor(a!) out) -> (Tensor(a!), Tensor(b!))")),
    accept("overload-name-default", edit("abs", "- func: abs(Tensor self)", "- func: abs.default(Tensor self)"),
           why="torchgen reserves only the overload name 'functional'"),
    reject("overload-name-functional-on-inplace-op",
           edit("abs_", "- func: abs_(Tensor(a!) self)", "- func: abs_.functional(Tensor(a!) self)")),
    reject("func-namespace-too-deep", edit("abs", "- func: abs(Tensor self)", "- func: a::b::abs(Tensor self)")),
    reject("inplace-op-self-not-mutable",
           edit("abs_", "- func: abs_(Tensor(a!) self) -> Tensor(a!)", "- func: abs_(Tensor self) -> Tensor")),
    accept("argument-illegal-character-inside-name", edit("_masked_scale", "float scale", "float sc$ale"),
           why="torchgen does not check that argument names are identifiers (opgen only warns)"),
    # ---- tags --------------------------------------------------------------------------------
    reject("tag-unknown", edit("abs", "tags: [core, pointwise]", "tags: [core, pointwisee]")),
    reject("tag-unknown-scalar", edit("acos.out", "  tags: pointwise\n", "  tags: pointwize\n")),
    reject("tag-item-is-a-mapping", edit("abs", "tags: [core, pointwise]", "tags: [core, {pointwise: true}]")),
    reject("tag-nondeterministic-seeded-removed", rewrite("bernoulli", _drop_line("  tags: nondeterministic_seeded\n"))),
    reject("tag-inplace-view-on-functional-op", edit("abs", "tags: [core, pointwise]", "tags: [core, pointwise, inplace_view]")),
    # ---- entry keys --------------------------------------------------------------------------
    reject("variants-typo", edit("abs", "  variants: function, method\n", "  variants: function, methodd\n")),
    reject("variants-method-on-out-op", edit("abs.out", "  device_check: NoCheck", "  variants: method\n  device_check: NoCheck")),
    reject("variants-both-on-out-op",
           edit("abs.out", "  device_check: NoCheck", "  variants: function, method\n  device_check: NoCheck")),
    reject("structured-on-functional-op", edit("abs", "  variants: function, method\n", "  variants: function, method\n  structured: True\n")),  # noqa: E501
    reject("structured-delegate-on-out-op",
           edit("abs.out", "  device_check: NoCheck", "  structured_delegate: acos.out\n  device_check: NoCheck")),
    reject("structured-delegate-to-missing-op", edit("acos", "structured_delegate: acos.out", "structured_delegate: nope.out")),
    reject("structured-delegate-to-unstructured-op", edit("acos", "structured_delegate: acos.out", "structured_delegate: abs.out")),
    reject("structured-inherits-without-structured",
           edit("abs.out", "  device_check: NoCheck", "  structured_inherits: TensorIteratorBase\n  device_check: NoCheck")),
    reject("device-check-unknown-value", edit("abs", "device_check: NoCheck ", "device_check: NoCheck2 ")),
    reject("device-check-foreach-exact-same", edit(
        "_foreach_add.Scalar",
        "  device_check: NoCheck   # foreach kernels fall back to slow path when tensor are on different devices\n", "")),
    reject("structured-not-a-bool", edit("acos.out", "  structured: True\n", "  structured: yes please\n")),
    reject("device-guard-not-a-bool", edit("resize_", "  device_guard: False\n", "  device_guard: Fals\n")),
    reject("python-module-on-method", edit("abs", "  variants: function, method\n", "  variants: function, method\n  python_module: nn\n")),
    reject("precomputed-item-without-arrow", edit("index_copy.out", "  - dim -> int dim\n", "  - dim int dim\n")),
    reject("precomputed-item-without-name", edit("index_copy.out", "  - dim -> int dim\n", "  - dim -> int\n")),
    reject("unknown-entry-key", edit("abs", "  dispatch:\n", "  dispatchh:\n")),
    reject("duplicate-key-in-entry", edit("abs", "  tags: [core, pointwise]\n", "  tags: [core, pointwise]\n  variants: function\n")),
    reject("autogen-missing-a-name", edit("resize_", "  autogen: resize, resize.out\n", "  autogen: resize.out\n")),
    reject("autogen-missing-the-functional-name",
           edit("embedding_renorm_", "autogen: embedding_renorm, embedding_renorm.out", "autogen: embedding_renorm.out")),
    accept("autogen-without-out-name-is-not-checked", edit("resize_", "  autogen: resize, resize.out\n", "  autogen: resize\n"),
           why="without an out= name nothing is generated, the lone in-place op forms no group and the list is never checked"),
    reject("autogen-not-a-string", edit("new_empty", "  autogen: new_empty.out\n", "  autogen: [new_empty.out]\n")),
    reject("autogen-bogus-name", edit("new_empty", "  autogen: new_empty.out\n", "  autogen: new_empty.out, new_empty.bogus\n")),
    reject("cpp-no-default-args-without-default", edit("all.dims", "cpp_no_default_args: ['dim']", "cpp_no_default_args: ['self']")),
    reject("const-ref-for-mutable-tensors-on-out-op",
           edit("abs.out", "  device_check: NoCheck", "  use_const_ref_for_mutable_tensors: True\n  device_check: NoCheck")),
    # ---- entries and the list itself -------------------------------------------------------
    reject("entry-without-func", rewrite("abs.out", lambda block: "- dispatch:\n    CPU: abs_out\n\n")),
    reject("entry-func-line-removed",
           edit("abs.out", "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  device_check", "- device_check")),
    reject("top-level-plain-string", add_after("abs.out", "- abs_out_cpu\n")),
    reject("duplicate-operator", add_after("abs.out", lambda text: entry_text(text, "abs").rstrip("\n") + "\n")),
    reject("duplicate-signature-under-new-overload", add_after(
        "abs.out",
        "- func: abs.copy(Tensor self) -> Tensor\n"
        "  dispatch:\n"
        "    CompositeExplicitAutograd: abs_copy\n")),
    reject("yaml-unclosed-quote", edit("abs.out", "    CPU, CUDA, MPS, MTIA: abs_out\n", '    CPU, CUDA, MPS, MTIA: "abs_out\n')),
    reject("yaml-bad-indentation", edit("abs.out", "    SparseCPU, SparseCUDA, SparseMPS: abs_sparse_out\n",
                                        "   SparseCPU, SparseCUDA, SparseMPS: abs_sparse_out\n")),
    reject("yaml-tab-indentation", edit("abs.out", "  device_check: NoCheck", "\tdevice_check: NoCheck")),
    # ---- harmless edits ----------------------------------------------------------------------
    accept("harmless-reordered-keys", rewrite("abs", _reorder_abs)),
    accept("harmless-added-comments", edit("abs", "  dispatch:\n    CompositeExplicitAutograd: abs\n",
                                           "  # a comment inside the entry\n  dispatch:\n    # and one inside dispatch\n"
                                           "    CompositeExplicitAutograd: abs  # trailing\n")),
    accept("harmless-removed-comments", edit(
        "ones_like",
        "    # NB: Although this composite mutates on the inside, it is\n"
        "    # non-differentiable so NonFunctional doesn't apply\n", "")),
    accept("harmless-removed-trailing-comment", edit("abs.out", "  device_check: NoCheck   # TensorIterator\n", "  device_check: NoCheck\n")),  # noqa: E501
    accept("harmless-blank-lines", edit("abs", "  dispatch:\n", "\n\n  dispatch:\n")),
    accept("harmless-new-op-with-dispatch", add_after("abs.out", NEW_OP)),
    accept("harmless-quoted-values", edit("abs.out", "    CPU, CUDA, MPS, MTIA: abs_out\n", '    "CPU, CUDA, MPS, MTIA": "abs_out"\n')),
    accept("harmless-quoted-func", edit("abs", "- func: abs(Tensor self) -> Tensor\n", "- func: 'abs(Tensor self) -> Tensor'\n")),
    accept("harmless-variants-swapped", edit("abs", "  variants: function, method\n", "  variants: method, function\n")),
    accept("harmless-tags-block-sequence", edit("abs", "  tags: [core, pointwise]\n", "  tags:\n  - core\n  - pointwise\n")),
    accept("harmless-lowercase-true", edit("acos.out", "  structured: True\n", "  structured: true\n")),
]


@pytest.fixture(scope="module")
def original(native_yaml) -> str:
    return native_yaml.read_text()


@pytest.fixture(scope="module")
def opgen(tags_yaml):
    """One parser for the whole module: it caches entries, so a mutation only re-parses what changed."""
    tags = TagsParser().parse(tags_yaml.read_text())
    parser = NativeParser(release=DEFAULT)
    return lambda text: parser.parse(text, tags.names)


@pytest.fixture(scope="module")
def torchgen_verdict(original, tags_yaml, tmp_path_factory):
    """text -> None when torchgen accepts it, else what it raised: the unmutated file and every mutation, read by
    one process of torchgen (release_oracle.py, through the reference cache)."""
    texts = [original]
    for mutation in MUTATIONS:
        try:
            texts.append(mutation.apply(original).text)
        except LookupError:
            pass  # the edit no longer applies: its test says so
    folder = tmp_path_factory.mktemp("native_mutations")
    paths = []
    for i, text in enumerate(texts):
        paths.append(folder / f"{i}.yaml")
        paths[-1].write_text(text, encoding="utf-8")
    done = reference.run([ORACLE, tags_yaml, *paths], cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = dict(zip(texts, json.loads(done.stdout), strict=True))
    return verdicts.__getitem__


def _describe(errors) -> str:
    return "\n".join(f"  line {d.span.start_line + 1}: {d.code} {d.message}" for d in errors) or "  (none)"


def _said(verdict: str | None) -> str:
    return "accepted" if verdict is None else verdict


def test_the_unmutated_file_is_accepted_by_both(original, opgen, torchgen_verdict):
    assert torchgen_verdict(original) is None
    assert [d for d in opgen(original).diagnostics if d.is_error] == []


def test_mutation_ids_are_unique():
    ids = [m.id for m in MUTATIONS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_mutation(mutation: Mutation, original, opgen, torchgen_verdict):
    mutated: Mutated = mutation.apply(original)
    assert mutated.text != original
    assert 0 <= mutated.first <= mutated.last < len(mutated.text.splitlines())

    theirs = torchgen_verdict(mutated.text)
    errors = [d for d in opgen(mutated.text).diagnostics if d.is_error]
    where = f"mutated entry: lines {mutated.first + 1}-{mutated.last + 1}"
    report = f"torchgen: {_said(theirs)}\nopgen errors:\n{_describe(errors)}\n{where}"
    if mutation.why:
        report += f"\nnote: {mutation.why}"

    # The edit means what it says: torchgen's verdict is the recorded one.
    assert (theirs is not None) == mutation.rejected, f"unexpected torchgen verdict\n{report}"
    # 1. opgen reports an error iff torchgen rejects.
    assert bool(errors) == (theirs is not None), f"opgen and torchgen disagree\n{report}"
    # 2. one of opgen's errors is on the mutated entry.
    if theirs is not None:
        assert any(mutated.first <= d.span.start_line <= mutated.last for d in errors), \
            f"no opgen error on the mutated entry\n{report}"
