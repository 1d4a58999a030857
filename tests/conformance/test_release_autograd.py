"""derivatives.yaml and deprecated.yaml per torch release: each release's own autograd loader, its Python binding
generator's deprecated.yaml reader and its Functions.h generator, against opgen held to that release.

For every release opgen knows (its torchgen from the cache of tools/torchgen_release.py), one process of that
release's torchgen (autograd_release_oracle.py) reads every file of the release at once, and the tests compare:

- the release's own derivatives.yaml and deprecated.yaml (with its own native_functions.yaml): accepted by both,
  and `opgen check` on them is clean, with the release detected from the packaged torch/version.py;
- a sample of the derivatives.yaml mutations of test_derivatives_mutations.py (every FEW-th, a different offset
  per release, so that the releases together run each at least once; 2.13 runs them all there), all the deprecated.yaml mutations
  of test_deprecated_mutations.py, and the mutations that tell releases apart (named tensors, the Python binding
  skip list): the same verdict, and opgen's error on the mutated entry with the recorded code;
- the Functions.h Node structs the hover shows: the same node classes, each struct verbatim in that release's
  Functions.h.

And the derivatives.yaml and deprecated.yaml of a PyTorch 2.6 source tree (~/.cache/opgen/trees, docs/kernels.md)
against that tree's own tools/autograd loader. Marked `versions` and `slow`: CI runs it.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import reference
from real_trees import TREES, native_yaml, trees_folder

from opgen_lsp.analysis.autograd.functions_h import node_declaration
from opgen_lsp.analysis.autograd.load import DerivativesCheck, DerivativesChecker
from opgen_lsp.cli import main
from opgen_lsp.index.derivatives import DeprecatedParser, DerivativesParser
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.releases import RELEASES, Release

from . import test_deprecated_mutations as deprecated_mutations
from .test_derivatives_mutations import ABS, BATCH_NORM, MUTATIONS, Edited, Mutation, add_after, edit
from .test_release_matrix import release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ORACLE = Path(__file__).with_name("autograd_release_oracle.py")
VERSIONS = [r.version for r in RELEASES]
FEW = 6
# The sample offsets count from 2.4.1 (the oldest release when they were chosen), so that a release added before
# it keeps the others' samples (each checked against its release's loader); an older one takes the offsets below.
_OFFSET_ORIGIN = VERSIONS.index("2.4.1")


# The releases whose wheel has no torchgen/packaged/autograd (1.13 and 2.0), and the PyTorch tree whose own
# tools/autograd stands in for the release tag's (docs/trees.md): the 1.13 fork's torchgen is 1.13.1's file for
# file, pytorch_zc's is 2.0.1's but for its ZC key (the other 2.0 fork's load_derivatives.py is the same file).
TREE_AUTOGRAD = {"1.13.1": "pytorch-1.13", "2.0.1": "pytorch-zc-2.0"}


@dataclass(frozen=True)
class Source:
    """Where a release's autograd files and generators are read from: its wheel's torchgen/packaged, or a tree."""

    pythonpath: Path  # the torchgen (and, for a tree, tools.autograd) the reference imports
    autograd: Path  # derivatives.yaml, deprecated.yaml, templates/
    native: Path  # native_functions.yaml and tags.yaml
    package: str  # the module of the autograd generators


def source_of(version: str) -> Source:
    """The release's autograd source; skips (saying how to get it) when it is not here."""
    folder = release_folder(version)
    packaged = folder / "torchgen" / "packaged"
    if (packaged / "autograd").is_dir():
        return Source(folder, packaged / "autograd", packaged / "ATen" / "native", "torchgen.packaged.autograd")
    name = TREE_AUTOGRAD[version]  # a wheel without it is one of these (test_the_wheels_without_autograd)
    tree = _tree(name, f"torch {version}'s wheel has no torchgen/packaged/autograd; ")
    return Source(tree, tree / "tools" / "autograd", tree / "aten" / "src" / "ATen" / "native", "tools.autograd")


def release(version: str) -> Release:
    return next(r for r in RELEASES if r.version == version)


@dataclass(frozen=True)
class Case:
    """One edited file of a release: what torch and opgen must say about it."""

    id: str
    text: str
    first: int  # 0-based lines of the mutated entry
    last: int
    rejected: bool
    code: str
    native_extra: str = ""


# ---------------------------------------------------------------- the mutations that tell releases apart

TRANSPOSE_COPY = "transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor"
FOREACH_ADD = "_foreach_add.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]"
NAMED_SUM = "sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
# The declarations of the Tensor methods later releases bind by hand, as 2.12 declares them: a tree of an older
# release that declares one too gets it a generated binding (deprecated.yaml can call it).
NUMEL = ("- func: numel(Tensor self) -> int\n  variants: method\n  device_check: NoCheck\n  device_guard: False\n"
         "  manual_cpp_binding: True\n")
SYM_IS_CONTIGUOUS = ("- func: sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> SymBool\n"
                     "  variants: function\n  device_check: NoCheck\n  device_guard: False\n  manual_cpp_binding: True\n")


# The calls 2.0's loader refuses in a backward formula (OPG715) and 1.13's saves as plain integers: every release
# runs them. And `.strides()` in a formula shared by several inputs: 1.13's loader asserts (OPG716), later ones
# refuse the call itself (OPG715).
PLAIN_SIZE_CALLS = ("sizes-call", "size-int-call", "strides-call")
STRIDES_SHARED = Mutation("plain-strides-in-shared-formula",
                          edit(BATCH_NORM, '"grad.defined() ?', '"input.strides().size() && grad.defined() ?'),
                          True, "OPG715")


def _mutations(at: int) -> list[Mutation]:
    """The sample of a release (at: its offset) and the mutations every release runs."""
    sample = MUTATIONS[at::FEW]
    return sample + [m for m in MUTATIONS if m.id in PLAIN_SIZE_CALLS and m not in sample] + [STRIDES_SHARED]


def _for_release(m: Mutation, r: Release) -> Mutation:
    """The mutation with the verdict the release's loader gives (the recorded one is 2.13's)."""
    if r.autograd.formulas_take_int_sizes and m.id in PLAIN_SIZE_CALLS:
        return replace(m, rejected=False, code="")
    if r.autograd.formulas_take_int_sizes and m is STRIDES_SHARED:
        return replace(m, code="OPG716")
    return m


def derivatives_cases(r: Release, text: str) -> list[Case]:
    at = (VERSIONS.index(r.version) - _OFFSET_ORIGIN) % FEW
    cases = []
    for m in map(lambda m: _for_release(m, r), _mutations(at)):
        try:
            edited = m.apply(text)
        except AssertionError:  # the entry it edits is not in this release's file (chunk's, before 2.2)
            continue
        cases.append(Case(m.id, edited.text, edited.first, edited.last, m.rejected, m.code, m.native_extra))
    # An entry for a named-tensor op: fine while the release has them, an unknown schema after.
    named: Edited = add_after(ABS, f"- name: {NAMED_SUM}\n  self: grad\n")(text)
    cases.append(Case("named-tensor-op", named.text, named.first, named.last, not r.named_tensor_types,
                      "OPG704" if not r.named_tensor_types else ""))
    # An entry of its own for a view's _copy op: it wins from 2.3; before, the loader does not know the function.
    copy: Edited = add_after(ABS, f"- name: {TRANSPOSE_COPY}\n  self: grad.transpose(dim0, dim1)\n")(text)
    cases.append(Case("view-copy-entry", copy.text, copy.first, copy.last, not r.autograd.names_view_copies,
                      "OPG704" if not r.autograd.names_view_copies else ""))
    # A _foreach_ op's forward formula naming its tensor list plainly: refused from 2.1, exempt before.
    foreach: Edited = add_after(ABS, f"- name: {FOREACH_ADD}\n  self: grad\n  other: grad\n"
                                     "  result: self_t + other_t + self\n")(text)
    checked = r.autograd.forward_checks_foreach_lists
    cases.append(Case("foreach-forward-names-list", foreach.text, foreach.first, foreach.last, checked,
                      "OPG720" if checked else ""))
    return cases


def _declared(native: str, entry: str) -> str:
    """The entry to append so that the native yaml declares the op (nothing when it does already)."""
    return "" if entry.split("\n", 1)[0] in native else entry


def deprecated_cases(r: Release, text: str, native: str) -> list[Case]:
    cases = []
    for id, old, new, rejected, code in deprecated_mutations.MUTATIONS:
        assert text.count(old) == 1, (r.version, id)
        edited = text.replace(old, new)
        first = edited[:edited.index(new)].count("\n")
        cases.append(Case(id, edited, first, first + new.count("\n") - 1, rejected, code))
    for id, entry, op, declaration in (
            ("calls-numel", "- name: numel(Tensor self) -> int\n  aten: numel(self)\n", "numel", NUMEL),
            ("calls-sym-is-contiguous", "- name: sym_is_contiguous(Tensor self, MemoryFormat memory_format) -> SymBool\n"
                                        "  aten: sym_is_contiguous(self, memory_format)\n", "sym_is_contiguous",
             SYM_IS_CONTIGUOUS)):
        first = text.count("\n")
        skipped = op in r.python_bindings_skip_hand_bound
        if not r.symbool_type:  # (a release without SymBool: the op returns bool; what is tested is its name)
            entry, declaration = entry.replace("SymBool", "bool"), declaration.replace("SymBool", "bool")
        cases.append(Case(id, text + entry, first, first + 1, skipped, "OPG743" if skipped else "",
                          _declared(native, declaration)))
    named = f"- name: {NAMED_SUM.replace('sum.dim_DimnameList', 'sum')}\n  aten: sum(self, dim, keepdim, dtype)\n"
    first = text.count("\n")
    cases.append(Case("dimname-argument", text + named, first, first + 1, not r.named_tensor_types,
                      "OPG203" if not r.named_tensor_types else ""))
    # A type torchgen knew until 2.5 (the reader compares only the arguments the call passes).
    quantized = "- name: add(Tensor self, Tensor other, ConstQuantizerPtr quantizer) -> Tensor\n  aten: add(self, other)\n"
    cases.append(Case("quantizer-argument", text + quantized, first, first + 1, not r.const_quantizer_ptr_type,
                      "OPG203" if not r.const_quantizer_ptr_type else ""))
    return cases


# ---------------------------------------------------------------- one run of the release's torchgen

@dataclass(frozen=True)
class Run:
    release: Release
    native_text: str
    native: NativeSnapshot
    tags: frozenset[str]
    derivatives: list[tuple[Case, str | None]]  # (case, the release's verdict)
    deprecated: list[tuple[Case, str | None]]
    own: dict[str, str | None]  # the release's verdicts on its own derivatives.yaml and deprecated.yaml
    functions_h: str


_RUNS: dict[str, Run] = {}


def run_of(version: str, tmp_path_factory) -> Run:
    """Every file of the release through its torchgen, in one process (once per release)."""
    if version in _RUNS:
        return _RUNS[version]
    source = source_of(version)
    r = release(version)
    native, tags = source.native / "native_functions.yaml", source.native / "tags.yaml"
    own_derivatives, own_deprecated = source.autograd / "derivatives.yaml", source.autograd / "deprecated.yaml"
    native_text = native.read_text()
    tmp = tmp_path_factory.mktemp(f"autograd_{version}")
    extras: dict[str, Path] = {}

    def native_for(extra: str) -> Path:
        """native_functions.yaml with an entry appended (in a folder of its own, with the tags beside it)."""
        if not extra:
            return native
        if extra not in extras:
            tree = tmp / f"native_{len(extras)}"
            tree.mkdir()
            shutil.copy(tags, tree / "tags.yaml")
            (tree / "native_functions.yaml").write_text(native_text + extra)
            extras[extra] = tree / "native_functions.yaml"
        return extras[extra]

    def job(kind: str, cases: list[Case]) -> list[list[str]]:
        out = []
        for i, case in enumerate(cases):
            path = tmp / f"{kind}_{i}" / ("derivatives.yaml" if kind == "derivatives" else "deprecated.yaml")
            path.parent.mkdir()
            path.write_text(case.text)
            out.append([str(path), str(native_for(case.native_extra)), str(tags)])
        return out

    derivatives = derivatives_cases(r, own_derivatives.read_text())
    deprecated = deprecated_cases(r, own_deprecated.read_text(), native_text)
    own = [[str(own_derivatives), str(native), str(tags)]]
    spec = {"derivatives": own + job("derivatives", derivatives),
            "deprecated": [[str(own_deprecated), str(native), str(tags)]] + job("deprecated", deprecated),
            "functions_h": [str(own_derivatives), str(native), str(tags), str(source.autograd / "templates"),
                            str(tmp)], "autograd": source.package}
    (tmp / "job.json").write_text(json.dumps(spec))
    # tmp holds the job and every edited file it names (a reference-cache input as a whole); the rest are the
    # release's own, in the torchgen the cache's key covers (a tree's tools/autograd and native files are named).
    tree_inputs = [] if source.package.startswith("torchgen.") else [source.autograd, native, tags]
    done = reference.run([str(ORACLE), str(tmp / "job.json")], cwd=tmp, outputs=[tmp / "Functions.h"],
                         pythonpath=[source.pythonpath], inputs=[tmp, *tree_inputs])
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = json.loads(done.stdout)
    names = TagsParser().parse(tags.read_text()).names
    _RUNS[version] = Run(r, native_text, NativeParser(release=r).parse(native_text, names), names,
                         list(zip(derivatives, verdicts["derivatives"][1:])),
                         list(zip(deprecated, verdicts["deprecated"][1:])),
                         {"derivatives": verdicts["derivatives"][0], "deprecated": verdicts["deprecated"][0]},
                         (tmp / "Functions.h").read_text())
    return _RUNS[version]


def _native_of(run: Run, extra: str) -> NativeSnapshot:
    if not extra:
        return run.native
    snapshot = NativeParser(release=run.release).parse(run.native_text + extra, run.tags)
    assert not [d for d in snapshot.diagnostics if d.is_error], extra
    return snapshot


def _agrees(case: Case, theirs: str | None, found: tuple, what: str) -> None:
    assert (theirs is not None) == case.rejected, (what, case.id, theirs)
    errors = [d for d in found if d.is_error]
    shown = [f"{d.span.start_line + 1}: {d.code} {d.message}" for d in found]
    assert bool(errors) == case.rejected, shown
    if case.code:
        assert [d for d in found if d.code == case.code and case.first <= d.span.start_line <= case.last], shown
    else:
        assert not errors, shown


def _per_release(kind: str) -> list:
    """(version, case id) of every case of that kind of every release, to parametrize with."""
    out = []
    for at, version in enumerate(VERSIONS):
        if kind == "derivatives":
            ids = [m.id for m in _mutations((at - _OFFSET_ORIGIN) % FEW)] + ["named-tensor-op", "view-copy-entry",
                                                                                  "foreach-forward-names-list"]
        else:
            ids = [m[0] for m in deprecated_mutations.MUTATIONS] + ["calls-numel", "calls-sym-is-contiguous",
                                                                     "dimname-argument", "quantizer-argument"]
        out += [pytest.param(version, i, id=f"{version}-{i}") for i in ids]
    return out


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("version", VERSIONS)
def test_the_release_files_are_clean_for_both(version: str, tmp_path_factory, capsys) -> None:
    run = run_of(version, tmp_path_factory)
    assert run.own == {"derivatives": None, "deprecated": None}
    autograd = source_of(version).autograd
    status = main(["check", str(autograd / "derivatives.yaml"), str(autograd / "deprecated.yaml")])
    out = capsys.readouterr()
    assert status == 0 and "no problems in 2 files" in out.out, out.out + out.err
    assert out.err == ""  # a known release: no note


def test_the_wheels_without_autograd_are_those_read_from_a_tree() -> None:
    without = [v for v in VERSIONS if not (release_folder(v) / "torchgen" / "packaged" / "autograd").is_dir()]
    assert without == sorted(TREE_AUTOGRAD, key=VERSIONS.index)


def _case(cases: list[tuple[Case, str | None]], id: str, version: str) -> tuple[Case, str | None]:
    found = next((c for c in cases if c[0].id == id), None)
    if found is None:
        pytest.skip(f"{id}: the entry it edits is not in torch {version}'s file")
    return found


@pytest.mark.parametrize("version, id", _per_release("derivatives"))
def test_derivatives_mutation(version: str, id: str, tmp_path_factory) -> None:
    run = run_of(version, tmp_path_factory)
    case, theirs = _case(run.derivatives, id, version)
    check = DerivativesChecker().check(DerivativesParser().parse(case.text), _native_of(run, case.native_extra).functions,
                                       run.release)
    _agrees(case, theirs, check.diagnostics, f"torch {version}'s autograd loader")


@pytest.mark.parametrize("version, id", _per_release("deprecated"))
def test_deprecated_mutation(version: str, id: str, tmp_path_factory) -> None:
    run = run_of(version, tmp_path_factory)
    case, theirs = _case(run.deprecated, id, version)
    found = DeprecatedParser(run.release).check(case.text, _native_of(run, case.native_extra).functions)
    _agrees(case, theirs, found, f"torch {version}'s deprecated.yaml reader")


def _own_check(run: Run) -> DerivativesCheck:
    autograd = source_of(run.release.version).autograd
    return DerivativesChecker().check(DerivativesParser().parse((autograd / "derivatives.yaml").read_text()),
                                      run.native.functions, run.release)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_hover_structs_are_the_release_functions_h(version: str, tmp_path_factory) -> None:
    run = run_of(version, tmp_path_factory)
    check = _own_check(run)
    theirs = re.findall(r"^struct TORCH_API (\w+) :", run.functions_h, re.M)
    assert sorted(theirs) == sorted(n.op for n in check.nodes)
    assert [n.op for n in check.nodes if node_declaration(n, run.release) not in run.functions_h] == []


@pytest.mark.parametrize("older, newer", [("2.0.1", "2.1.2"), ("2.6.0", "2.7.1")])
def test_the_structs_differ_where_the_releases_do(older: str, newer: str, tmp_path_factory) -> None:
    """2.0's structs are not 2.1's (compiled autograd's members came), 2.6's not 2.7's (compiled_args became
    const): each release's struct is in its own file only."""
    old, new = run_of(older, tmp_path_factory), run_of(newer, tmp_path_factory)
    node = _own_check(old).nodes[0]
    assert node_declaration(node, old.release) in old.functions_h
    assert node_declaration(node, old.release) not in new.functions_h
    assert node_declaration(node, new.release) not in old.functions_h


# ---------------------------------------------------------------- a PyTorch 2.6 source tree

def _tree(name: str, why: str = "") -> Path:
    """The tree (with its tools/autograd); skips with one reason, `why` first, when it is not here."""
    folder = trees_folder() / name
    if not (folder / "tools" / "autograd" / "derivatives.yaml").is_file() or not native_yaml(folder).is_file():
        pytest.skip(f"{why}its autograd files are read from the {name} tree ({TREES[name][0]}), absent from "
                    f"{folder.parent}: clone it and extract aten c10 torchgen tools/autograd version.txt into "
                    f"{folder} (docs/trees.md)")
    return folder


def test_a_pytorch_2_6_tree_gets_no_false_error(tmp_path, capsys) -> None:
    tree = _tree("pytorch-2.6")
    autograd = tree / "tools" / "autograd"
    native = tree / "aten" / "src" / "ATen" / "native"
    spec = {"derivatives": [[str(autograd / "derivatives.yaml"), str(native / "native_functions.yaml"),
                             str(native / "tags.yaml")]],
            "deprecated": [[str(autograd / "deprecated.yaml"), str(native / "native_functions.yaml"),
                            str(native / "tags.yaml")]], "functions_h": None, "autograd": "tools.autograd"}
    (tmp_path / "job.json").write_text(json.dumps(spec))
    # The tree's own torchgen and loader (tools/autograd imports torchgen from the tree).
    done = reference.run([str(ORACLE), str(tmp_path / "job.json")], cwd=tmp_path, pythonpath=[tree],
                         inputs=[autograd, native / "native_functions.yaml", native / "tags.yaml"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {"derivatives": [None], "deprecated": [None]}
    status = main(["check", str(autograd / "derivatives.yaml"), str(autograd / "deprecated.yaml")])
    out = capsys.readouterr()
    assert status == 0 and "no problems in 2 files" in out.out, out.out + out.err
