"""Backend yamls: opgen rejects exactly what torchgen 2.13's gen_backend_stubs rejects, and builds the same indices.

For every yaml in the shared corpus (read in place), torchgen's own
`gen_backend_stubs.run` runs (backend_oracle.py: one process for every file of a
test, through the reference cache; native_functions.yaml is parsed once per
process; `--dry-run` is not used, output goes to a temporary directory), then
opgen checks the same text:

- opgen reports an error iff torchgen rejects the file;
- for a rejected file, opgen has an error on the line that causes the
  rejection, and torchgen's message and opgen's share the fact (README.md of
  the corpus names the cause for each file);
- for an accepted file, opgen's BackendIndex for the backend key and for its
  autograd key (ops in order, kernel names, structured flags, namespaces,
  use_out_as_primary, device_guard, external) equals torchgen's.

The small rule cases of tests/analysis/test_backend_rules.py are run through
torchgen too: each error case must be rejected and each warning case accepted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import reference
from analysis.test_backend_rules import CUSTOM_NATIVE, ERRORS, WARNINGS
from conftest import CORPUS

from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

from . import canonical

pytestmark = [pytest.mark.conformance]

# The yamls of the corpus, in place (the folder native-torch-xpu-ops/ holds an input of torchgen.gen, not a backend
# yaml: gen_backend_stubs rejects it, and so must opgen).
CORPUS_FILES = sorted(CORPUS.rglob("*.yaml"))

# What the corpus README says torch 2.13 accepts.
ACCEPTED = {
    "pytorch-xla__xla_native_functions.yaml", "pytorch__ts_native_functions.yaml",
    "cyyever-pytorch__ts_native_functions.yaml", "torch-xpu-ops__xpu_functions.adjusted.yaml",
    "torch-xpu-ops__sparsexpu_functions.yaml", "ipex__xpu_functions.adjusted.yaml", "ipex__sparsexpu_functions.yaml",
    "ipex__nestedtensorxpu_functions.yaml", "ipex__quantizedxpu_functions.yaml", "torch_nupu__nupu_functions.yaml",
}
# Rejected files: (opgen's code, the start of the line that causes the rejection, the fact both tools state).
REJECTED = {
    "torch-xpu-ops__xpu_functions.yaml": ("OPG510", "backend: XPU", "Duplicate backend key: XPU"),
    "ipex__xpu_functions.yaml": ("OPG510", "backend: XPU", "Duplicate backend key: XPU"),
    # Named-tensor overloads, which torch 2.13 removed: the unknown op is said to be from an older release.
    "ipex__all_functions.yaml": ("OPG952", "- _sparse_log_softmax.Dimname",
                                 "Found an invalid operator name: _sparse_log_softmax.Dimname"),
    "torch_npu__npu_native_functions.yaml": ("OPG507", "custom:", "contains unexpected keys: custom"),
    # There is no backend line to point at: opgen points at the first key of the mapping.
    "torch_mlu__mlu_functions.yaml": ("OPG501", "aten:", 'You must provide a value for "backend"'),
    "native_functions.yaml": ("OPG500", "- func:", "Expected yaml_values to be a dict"),
    "tags.yaml": ("OPG500", "- tag:", "Expected yaml_values to be a dict"),
}


ORACLE = Path(__file__).with_name("backend_oracle.py")


@dataclass(frozen=True)
class Case:
    """A backend yaml for torchgen's gen_backend_stubs: its verdict, its indices when `parse` (and accepted), and
    what it writes into `out` when given."""

    name: str
    path: Path
    out: Path | None = None
    parse: bool = False


def torchgen_batch(cases: list[Case], folder: Path, inputs: tuple[Path, ...] = ()) -> dict[str, dict]:
    """name -> {"rejection": None or torchgen's error, "parsed": its indices or None}: every case in one process
    (backend_oracle.py, through the reference cache; folder holds the cases' files and outputs)."""
    job = {"cases": [{"name": c.name, "path": str(c.path), "out": c.out and str(c.out), "parse": c.parse}
                     for c in cases]}
    outs = [c.out for c in cases if c.out is not None]
    found: dict[str, dict] = reference.run_json(ORACLE, job, folder, inputs=[ORACLE.with_name("canonical.py"), *inputs],
                                                outputs=outs)
    return found


@pytest.fixture(scope="module")
def native(native_yaml, tags_yaml):
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=DEFAULT).parse(native_yaml.read_text(), tags.names)


@pytest.fixture(scope="module")
def torchgen(aten, tmp_path_factory) -> dict[str, dict]:
    """torchgen's verdicts (and indices) on the corpus files and the rule cases, in one batch."""
    folder = tmp_path_factory.mktemp("backend_batch")
    cases = [Case(f"corpus/{p.relative_to(CORPUS)}", p, parse=True) for p in CORPUS_FILES]
    for name, text, _ in RULE_CASES:
        path = folder / "rules" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        cases.append(Case(f"rule/{name}", path, out=folder / "out" / name))
    found = torchgen_batch(cases, folder, inputs=(CORPUS,) if CORPUS_FILES else ())
    for case in cases:
        found[case.name]["out"] = case.out
    return found


def _shown(diagnostics) -> str:
    return "\n".join(f"  {d.span.start_line + 1}:{d.span.start_col + 1} {d.severity.label} {d.code} {d.message}"
                     for d in diagnostics)


def _line_starting(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if line.strip().startswith(start))


@pytest.mark.corpus
def test_the_corpus_is_there():
    names = {p.name for p in CORPUS_FILES}
    assert ACCEPTED <= names and set(REJECTED) <= names


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[str(p.relative_to(CORPUS)) for p in CORPUS_FILES])
def test_corpus_file(torchgen, native, path):
    text = path.read_text()
    theirs = torchgen[f"corpus/{path.relative_to(CORPUS)}"]
    rejection = theirs["rejection"]
    snapshot = check_backend(text, native, vendors=False)
    errors = [d for d in snapshot.diagnostics if d.is_error]

    assert (rejection is None) == (path.name in ACCEPTED), f"torchgen's verdict differs from the README: {rejection}"
    assert bool(errors) == (rejection is not None), \
        f"torchgen: {rejection or 'accepted'}\nopgen:\n{_shown(snapshot.diagnostics)}"

    if rejection is not None:
        code, line_start, fact = REJECTED[path.name]
        assert fact in rejection
        line = _line_starting(text, line_start)
        at_line = [d for d in errors if d.code == code and d.span.start_line == line]
        assert at_line, f"expected {code} on line {line + 1}\nopgen:\n{_shown(errors)}"
        assert any(fact in d.message for d in at_line)
        return

    theirs = theirs["parsed"]
    ours = snapshot.resolved
    assert str(ours.backend_key) == theirs["backend_key"]
    assert str(ours.autograd_key) == str(theirs["autograd_key"])
    assert ours.yaml.cpp_namespace.value == theirs["cpp_namespace"]
    assert ours.class_name == theirs["class_name"]
    assert canonical.backend_index(ours.backend_index) == theirs["backend_index"]
    if theirs["autograd_key"] is None:
        assert ours.autograd_index is None
    else:
        assert canonical.backend_index(ours.autograd_index) == theirs["autograd_index"]


RULE_CASES = [(name, text, True) for name, text, _, _ in ERRORS] + \
             [(name, text, False) for name, text, _, _ in WARNINGS]
# The errors torchgen does not reject (OPG540): it pastes the name into the generated C++ as it is, where it
# cannot compile or brings code of the yaml's own; the text it pastes, as found in what it writes.
PASTED = {"class-name-not-an-identifier": "struct My-Functions {", "class-name-not-a-string": "struct 5 {",
          "empty-cpp-namespace": "namespace  {", "cpp-namespace-with-a-line-break": "\n#error INJECTED {"}


@pytest.mark.parametrize("name,text,rejected", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule_case_verdict(torchgen, native, name, text, rejected):
    rejection, out = torchgen[f"rule/{name}"]["rejection"], torchgen[f"rule/{name}"]["out"]
    has_errors = check_backend(text, native, vendors=False).has_errors
    assert (rejection is not None) == (rejected and name not in PASTED), f"torchgen: {rejection or 'accepted'}"
    assert has_errors == rejected
    if name in PASTED:
        written = "".join(p.read_text() for p in out.iterdir())
        assert PASTED[name] in written
    elif not rejected and os.path.isdir(out):
        assert all(p.stat().st_size > 0 for p in out.iterdir())


def test_every_pasted_case_is_an_opg540_error():
    assert set(PASTED) == {name for name, _, code, _ in ERRORS if code == "OPG540"}


# Against a native_functions.yaml of our own (as `opgen check --native-functions` reads one): torchgen runs on a
# tree shaped like PyTorch (ROOT/torchgen -> the installed torchgen, ROOT/aten/src/ATen/{native,templates}).
CUSTOM_CASES = [
    ("structured-out-on-meta", "backend: Meta\ncpp_namespace: x\nsupported:\n- foo.out\n- bar\n", True),
    ("manual-registration", "backend: XLA\ncpp_namespace: x\nsupported:\n- baz\n- bar\n", False),
    ("duplicate-cpu", "backend: CPU\ncpp_namespace: x\nsupported:\n- bar\n", True),
    ("meta-unstructured", "backend: Meta\ncpp_namespace: x\nsupported:\n- bar\n", False),
]


@pytest.fixture(scope="module")
def custom_tree(aten, tmp_path_factory) -> Path:
    import torchgen as torchgen_package

    root = tmp_path_factory.mktemp("pytorch")
    native_dir = root / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    (root / "torchgen").symlink_to(Path(torchgen_package.__file__).parent)
    (root / "aten" / "src" / "ATen" / "templates").symlink_to(aten / "templates")
    (native_dir / "native_functions.yaml").write_text(CUSTOM_NATIVE)
    (native_dir / "tags.yaml").write_text("- tag: core\n  desc: core\n")
    return root


@pytest.mark.parametrize("name,text,rejected", CUSTOM_CASES, ids=[c[0] for c in CUSTOM_CASES])
def test_custom_native_functions(custom_tree, name, text, rejected, tmp_path):
    path = tmp_path / "backend.yaml"
    path.write_text(text)
    # gen_backend_stubs reads the tree's aten/src/ATen beside the torchgen it imports.
    done = reference.run(["-m", "torchgen.gen_backend_stubs", "-s", str(path), "-o", "out"], cwd=tmp_path,
                         outputs=[Path("out")], pythonpath=[custom_tree], inputs=[custom_tree / "aten"])
    native_dir = custom_tree / "aten" / "src" / "ATen" / "native"
    tags = TagsParser().parse((native_dir / "tags.yaml").read_text())
    native = NativeParser(release=DEFAULT).parse((native_dir / "native_functions.yaml").read_text(), tags.names)
    assert (done.returncode != 0) == rejected, done.stderr[-2000:]
    assert check_backend(text, native, vendors=False).has_errors == rejected


def _mutants(count: int, seed: int, names: list[str]) -> list[tuple[str, str]]:
    """Corpus files with a few lines deleted, repeated, replaced or inserted (deterministic for a seed)."""
    import random

    rnd = random.Random(seed)
    files = sorted(CORPUS.glob("*.yaml"))
    inserted = ["use_out_as_primary: true", "use_out_as_primary: false", "device_guard: maybe", "symint:",
                "autograd:", "autograd: []", "backend: PrivateUse1", "full_codegen:", "class_name: X", "- func: abs",
                "- mul.out: {structured: true}", "cpp_namespace: a::b::c"]
    out = []
    for i in range(count):
        path = rnd.choice(files)
        lines = path.read_text().splitlines()
        for _ in range(rnd.randint(1, 4)):
            j = rnd.randrange(len(lines))
            m = rnd.random()
            if m < 0.25:
                del lines[j]
            elif m < 0.45:
                lines.insert(j, lines[j])
            elif m < 0.7 and lines[j].lstrip().startswith("- "):
                lines[j] = lines[j][: len(lines[j]) - len(lines[j].lstrip())] + "- " + rnd.choice(names)
            elif m < 0.8:
                lines.insert(j, rnd.choice(inserted))
            else:
                lines.insert(j, "  - " + rnd.choice(names))
        out.append((f"{i}-{path.stem}", "\n".join(lines) + "\n"))
    return out


@pytest.mark.slow
@pytest.mark.corpus
def test_mutated_corpus_verdicts(aten, native, tmp_path):
    """opgen reports an error iff torchgen rejects, over seeded mutations of the corpus."""
    names = [str(op.function.func.name) for op in native.functions.ops]
    mutants = _mutants(150, 2613, names)
    for name, text in mutants:
        (tmp_path / f"{name}.yaml").write_text(text)
    torchgen = torchgen_batch([Case(name, tmp_path / f"{name}.yaml") for name, _ in mutants], tmp_path)
    disagreements = []
    for name, text in mutants:
        rejection = torchgen[name]["rejection"]
        if (rejection is not None) != check_backend(text, native, vendors=False).has_errors:
            disagreements.append((name, rejection))
    assert disagreements == []
