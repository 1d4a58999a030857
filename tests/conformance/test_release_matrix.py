"""The release matrix: opgen against each torch release's own torchgen, on that release's own inputs.

For every release opgen knows (server/releases/), tools/torchgen_release.py brings that release's
torchgen (the wheel's torchgen/ folder) into the cache; the test runs it and opgen on the same input,
in one test, and compares:

- check verdicts: the release's native_functions.yaml + tags.yaml (no error from either), and the
  mutations of test_mutations.py applied to that yaml (opgen errs iff the release's torchgen rejects,
  and then on the mutated entry);
- gen.py's files, plain, --per-operator-headers and --xpu, byte for byte, and its outputs lists
  (--output-dependencies; 2.13 is the rest of tests/conformance; a release whose generation is not verified yet has
  these rows marked xfail(strict=True));
- gen_backend_stubs over the corpus (verdicts, and the files of every yaml the release accepts);
- gen_lazy_tensor on torch_xla's yaml (less the ops the release lacks), TorchScript settings, with the
  release's own shape-inference header.

A release that cannot be fetched (no network, no disk) is skipped with the reason. Marked `versions`
(and `slow`): CI runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import reference
from conftest import CORPUS
from file_trees import assert_same_files, files_under, first_difference
from release_files import torchgen_release_tool
from release_fit import FAILED_AT, SCHEMA, Refusals, fit_to, refusals, spelled, tags_sorted, without_refused

from opgen_lsp.cli import main
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import RELEASES, Release

from .mutations import Mutated
from .test_mutations import MUTATIONS

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ORACLE = Path(__file__).with_name("release_oracle.py")
VERSIONS = [r.version for r in RELEASES]
# The check verdicts of a release whose own yaml opgen does not yet check as its torchgen does (release: why).
CHECK_NOT_YET: dict[str, str] = {}


def not_yet(version: str, why: str | None) -> object:
    """`version` as a parameter, expected to fail (strictly: it must not pass unnoticed) when `why` says so."""
    if why is None:
        return version
    return pytest.param(version, marks=pytest.mark.xfail(strict=True, reason=why))


def generation_not_verified(version: str) -> str | None:
    """Why the generator rows of a release cannot pass yet (its generation is not yet gen.py's), or None."""
    r = next(r for r in RELEASES if r.version == version)
    return None if r.generation_verified else f"torch {version}'s generation is not yet identical to its gen.py's"


CHECKED = [not_yet(v, CHECK_NOT_YET.get(v)) for v in VERSIONS]
# All the mutations for the newest releases; a sample (every FEW-th) for the others, for CI time (the rules that
# differ between releases have tests of their own in tests/test_releases.py).
FULL_MUTATIONS = ("2.14.1", "2.15.0")
FEW = 8


@cache
def _obtain(version: str) -> tuple[Path | None, str]:
    try:
        return torchgen_release_tool().obtain(version), ""
    except (RuntimeError, OSError) as exc:
        return None, str(exc)


def release_folder(version: str) -> Path:
    """The release's cache folder (torchgen/, torch/version.py, ...); skips the test when it cannot be had."""
    folder, why = _obtain(version)
    if folder is None:
        pytest.skip(f"torch {version}'s torchgen cannot be had ({why}); get it with "
                    f"python3 tools/torchgen_release.py {version}")
    return folder


def release(version: str) -> Release:
    return next(r for r in RELEASES if r.version == version)


def _aten(folder: Path) -> Path:
    return folder / "torchgen" / "packaged" / "ATen"


def _torchgen(folder: Path, module: str, args: list[str], cwd: Path, outputs: list[str]) -> subprocess.CompletedProcess:
    """`module` of the torchgen on PYTHONPATH=folder, run in cwd; `outputs`: what it writes there. (A tree of
    _pytorch_shaped links its aten folders into that torchgen, whose bytes are in the reference cache's key.)"""
    return reference.run(["-m", module, *args], cwd=cwd, outputs=[Path(o) for o in outputs], pythonpath=[folder])


def _pytorch_shaped(folder: Path, root: Path) -> Path:
    """Trees shaped like a PyTorch checkout around the release's torchgen, for the tools that look for
    aten/src/ATen (its packaged ATen) near torchgen: beside it (gen_backend_stubs before 2.12) and one
    folder up (gen_lazy_tensor). root/lib/torchgen; returns root/lib, the folder to put on PYTHONPATH."""
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "torchgen").symlink_to(folder / "torchgen")
    for base in (root, root / "lib"):
        (base / "aten" / "src").mkdir(parents=True)
        (base / "aten" / "src" / "ATen").symlink_to(_aten(folder))
    return root / "lib"


def verdicts(folder: Path, tags: Path, natives: list[Path]) -> list[str | None]:
    """The release's torchgen on each native_functions.yaml: None (accepted) or what it raised."""
    done = reference.run([str(ORACLE), str(tags), *map(str, natives)], cwd=ORACLE.parent, pythonpath=[folder],
                         check=True)
    return json.loads(done.stdout)


def opgen_errors(version: str, text: str, tags: frozenset[str], parser: NativeParser | None = None) -> list:
    parser = parser or NativeParser(release=release(version))
    return [d for d in parser.parse(text, tags).diagnostics if d.is_error]


# ---------------------------------------------------------------- check verdicts

@pytest.mark.parametrize("version", CHECKED)
def test_the_release_yaml_is_clean_for_both(version: str) -> None:
    folder = release_folder(version)
    native = _aten(folder) / "native"
    assert verdicts(folder, native / "tags.yaml", [native / "native_functions.yaml"]) == [None]
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    errors = opgen_errors(version, (native / "native_functions.yaml").read_text(), tags)
    assert errors == [], "\n".join(f"{d.span.start_line + 1}: {d.code} {d.message}" for d in errors[:10])


def _applicable(original: str, every: int) -> list[tuple[str, Mutated]]:
    """The mutations (every `every`-th) that apply to this release's yaml (an edit whose target text
    differs in this release does not)."""
    out = []
    for mutation in MUTATIONS[::every]:
        try:
            mutated = mutation.apply(original)
        except (AssertionError, LookupError, ValueError):
            continue
        if mutated.text != original:
            out.append((mutation.id, mutated))
    return out


@pytest.mark.parametrize("version", CHECKED)
def test_mutations_agree_with_the_release(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    native = _aten(folder) / "native"
    original = (native / "native_functions.yaml").read_text()
    every = 1 if version in FULL_MUTATIONS else FEW
    mutations = _applicable(original, every)
    assert len(mutations) >= len(MUTATIONS[::every]) * 3 // 4, "most mutations should apply to every release"
    files = []
    for i, (_, mutated) in enumerate(mutations):
        path = tmp_path / f"m{i}" / "native_functions.yaml"
        path.parent.mkdir()
        path.write_text(mutated.text)
        files.append(path)
    theirs = verdicts(folder, native / "tags.yaml", files)
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    parser = NativeParser(release=release(version))
    disagreements = []
    for (name, mutated), said in zip(mutations, theirs):
        errors = opgen_errors(version, mutated.text, tags, parser)
        if bool(errors) != (said is not None):
            disagreements.append(f"{name}: torchgen {said or 'accepts'}; opgen {[d.code for d in errors]}")
        elif said is not None and not any(mutated.first <= d.span.start_line <= mutated.last for d in errors):
            disagreements.append(f"{name}: no opgen error on the mutated entry ({[d.code for d in errors]})")
    assert disagreements == [], "\n".join(disagreements)


# ---------------------------------------------------------------- gen.py

LAYOUTS = {"plain": [], "per-operator": ["--per-operator-headers"], "xpu": ["--xpu"], "rocm": ["--rocm"]}
# --rocm for the releases around its change (Release.rocm_guards_masquerade_as_cuda: the oldest, the last with the
# masquerading HIP guard, the first without), for CI time.
ROCM_RELEASES = ("2.5.1", "2.10.0", "2.11.0")


# A release's layouts one after the other, plain first: the memos its (cheaper) cold run fills serve the
# per-operator layout, the costliest.
# (--xpu only where gen.py takes it: from 2.6.)
# 2.13.0 is what the rest of tests/conformance compares with (installed torch); the matrix adds the others; a release
# whose generation is not verified yet has its rows, expected to fail.
GENERATE_CASES = [pytest.param(r.version, layout, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])
                  for r in RELEASES if r.version != "2.13.0"
                  for why in [generation_not_verified(r.version)] for layout in LAYOUTS
                  if (layout != "xpu" or r.gen_py_takes_xpu) and (layout != "rocm" or r.version in ROCM_RELEASES)]


def gen_py_args(folder: Path, layout: str) -> list[str]:
    """gen.py's command line for the release's own ATen folder in a layout, paths relative to the folder it runs in
    (the outputs lists, --output-dependencies, name the files by them)."""
    # gen.py before 2.12 has no --headeronly-install-dir (enum_tag.h goes to <install dir>/core).
    # gen.py before 2.4 has no --aoti-install-dir (its shims go to torch/csrc/inductor/aoti_torch/generated).
    gen_py = (folder / "torchgen" / "gen.py").read_text()
    headeronly = "--headeronly-install-dir" in gen_py
    aoti = "--aoti-install-dir" in gen_py
    return ["-s", str(_aten(folder)), "-d", "aten", *(["--aoti-install-dir", "aoti"] * aoti), *LAYOUTS[layout],
            "--output-dependencies", "outputs/generated.txt", *(["--headeronly-install-dir", "headeronly"] * headeronly)]


def gen_py_digests(folder: Path, layout: str, cwd: Path) -> reference.Outputs:
    """The release's gen.py on its own native_functions.yaml, run in cwd (an empty folder), its files as the
    reference cache's digests: one run per release and layout, whichever test asks first."""
    args = gen_py_args(folder, layout)
    # (before 2.4 the shims go under torch/: a folder of the outputs only then, so the other releases' runs keep
    # their cached digests)
    outputs = [Path(o) for o in ("aten", "aoti", "headeronly", "outputs")] + [Path("torch")] * ("aoti" not in args)
    theirs = reference.run_digests(["-m", "torchgen.gen", *args], cwd=cwd, pythonpath=[folder], outputs=outputs)
    assert theirs.done.returncode == 0, theirs.done.stderr[-2000:]
    return theirs


@pytest.mark.parametrize("version,layout", GENERATE_CASES)
def test_generate_is_byte_identical(version: str, layout: str, tmp_path: Path, monkeypatch) -> None:
    folder = release_folder(version)
    args = gen_py_args(folder, layout)
    # torchgen's files as the reference cache's digests (not written out and read back); opgen's as written.
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    theirs = gen_py_digests(folder, layout, ref)
    monkeypatch.chdir(ours)
    # In this process (--jobs 1): the memoised per-op pieces a release's first layout fills serve its next ones
    # (measured: the next layout 2-3 times faster), where worker processes would fill their memos and exit.
    assert main(["generate", *args, "--implemented-only", "--jobs", "1"]) == 0
    got = files_under(ours)
    # The outputs lists (--output-dependencies) are compared on their own, not counted as generated files.
    lists = {name for name in theirs.files if name.startswith("outputs/")}
    assert {n for n in got if n.startswith("outputs/")} == lists, "the outputs lists (--output-dependencies) differ"
    assert_same_files({n: theirs.files[n] for n in lists}, {n: got.pop(n) for n in lists})
    expected = {n: f for n, f in theirs.files.items() if n not in lists}
    print(f"torch {version} {layout}: {len(expected)} files")
    if not release(version).schema_tags_sorted and SCHEMA in expected:
        # gen.py's tag order is its set's (the hash seed's): the one file compared modulo the order in each list.
        assert SCHEMA in got, "files opgen does not write"
        theirs_schema, ours_schema = expected.pop(SCHEMA).read(), got.pop(SCHEMA)
        assert ours_schema == tags_sorted(ours_schema), "opgen writes each op's tags sorted"
        assert tags_sorted(theirs_schema) == ours_schema, \
            f"{SCHEMA} differs at {first_difference(tags_sorted(theirs_schema), ours_schema)}"
    assert_same_files(expected, got)


def generated_with_entries(version: str, entries: str, tmp_path: Path, monkeypatch) -> dict[str, bytes]:
    """gen.py of the release and opgen on the release's own ATen folder with `entries` appended to its yaml: every
    file opgen writes is gen.py's (RegisterSchema.cpp modulo tag order); gen.py's files, by name."""
    folder = release_folder(version)
    aten = tmp_path / "ATen"
    shutil.copytree(_aten(folder) / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(_aten(folder) / "native" / "tags.yaml", aten / "native" / "tags.yaml")
    (aten / "native" / "native_functions.yaml").write_text(
        (_aten(folder) / "native" / "native_functions.yaml").read_text() + entries)
    ref, ours = tmp_path / "torchgen", tmp_path / "opgen"
    ref.mkdir()
    ours.mkdir()
    theirs = reference.run_digests(["-m", "torchgen.gen", "-s", str(aten), "-d", "aten"], cwd=ref,
                                   pythonpath=[folder], outputs=[Path("aten")])
    assert theirs.done.returncode == 0, theirs.done.stderr[-2000:]
    monkeypatch.chdir(ours)
    assert main(["generate", "-s", str(aten), "-d", "aten", "--torch-version", version, "--jobs", "1"]) == 0
    got = files_under(ours)
    expected = dict(theirs.files)
    theirs_schema, ours_schema = expected.pop(SCHEMA).read(), got.pop(SCHEMA)
    assert tags_sorted(theirs_schema) == ours_schema, first_difference(tags_sorted(theirs_schema), ours_schema)
    assert_same_files(expected, got)
    return {name: f.read() for name, f in expected.items()} | {SCHEMA: theirs_schema}


# ---------------------------------------------------------------- gen_backend_stubs over the corpus

# The shared corpus (OPGEN_CORPUS overrides where it is, e.g. when testing from another worktree).
CORPUS_DIR = Path(os.environ.get("OPGEN_CORPUS") or CORPUS)
CORPUS_YAMLS = sorted(CORPUS_DIR.glob("*.yaml"))


# (expected to fail while the release's own yaml does not check clean or its generation is not gen.py's)
@pytest.mark.parametrize("version", [not_yet(v, CHECK_NOT_YET.get(v) or generation_not_verified(v))
                                     for v in VERSIONS if v != "2.13.0"])
def test_backend_corpus_agrees(version: str, tmp_path: Path, monkeypatch) -> None:
    folder = release_folder(version)
    if not CORPUS_YAMLS:
        pytest.skip(f"the shared corpus is not at {CORPUS_DIR}")
    native = _aten(folder) / "native" / "native_functions.yaml"
    templates = _aten(folder) / "templates"
    oracle = _pytorch_shaped(folder, tmp_path / "oracle")  # gen_backend_stubs before 2.12 reads ../aten/src/ATen
    disagreements, accepted = [], 0
    for source in CORPUS_YAMLS:
        ref, ours = tmp_path / source.stem / "torchgen", tmp_path / source.stem / "opgen"
        ref.mkdir(parents=True)
        ours.mkdir()
        done = _torchgen(oracle, "torchgen.gen_backend_stubs", ["-s", str(source), "-o", "out"], ref, ["out"])
        monkeypatch.chdir(ours)
        code = main(["generate-backend", "-s", str(source), "-o", "out", "--native-functions", str(native),
                     "--templates", str(templates)])
        if (done.returncode == 0) != (code == 0):
            disagreements.append(f"{source.name}: torchgen {done.returncode}, opgen {code}")
        elif code == 0:
            accepted += 1
            expected, got = files_under(ref / "out"), files_under(ours / "out")
            if got != expected:
                disagreements.append(f"{source.name}: files differ ({sorted(set(got) ^ set(expected))})")
    print(f"torch {version}: {accepted} of {len(CORPUS_YAMLS)} corpus yamls accepted")
    assert disagreements == [], "\n".join(disagreements)
    assert accepted >= 4, "the corpus should hold yamls every release accepts"


# ---------------------------------------------------------------- gen_lazy_tensor on torch_xla's yaml

@pytest.mark.parametrize("version", [not_yet(r.version, generation_not_verified(r.version))
                                     for r in RELEASES if r.version != "2.13.0"])
def test_lazy_xla_is_byte_identical(version: str, tmp_path: Path, monkeypatch, capsys) -> None:
    folder = release_folder(version)
    xla = CORPUS_DIR / "pytorch-xla__xla_native_functions.yaml"
    if not xla.exists():
        pytest.skip(f"the shared corpus is not at {CORPUS_DIR}")
    source = tmp_path / "xla_native_functions.yaml"
    fitted = fit_to(xla.read_text(), release(version))
    source.write_text(fitted)
    header = folder / "torch" / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    # gen_lazy_tensor finds native_functions.yaml and the templates at <its file>/../../aten/src/ATen.
    oracle = _pytorch_shaped(folder, tmp_path / "oracle")
    args = ["-s", str(source), "-o", "out", "--gen-ts-lowerings", "--node-base", "TsNode",
            "--node-base-hdr", "torch/csrc/lazy/ts_backend/ts_node.h", "--shape-inference-hdr", str(header)]
    native = _aten(folder) / "native" / "native_functions.yaml"
    opgen_args = [*args, "--native-functions", str(native), "--templates", str(_aten(folder) / "templates")]
    args = spelled(args, release(version))  # gen_lazy_tensor 1.13: --gen_ts_lowerings, ...
    ours = tmp_path / "opgen"
    ours.mkdir()
    monkeypatch.chdir(ours)
    # Ops whose out= wrapper the release's torchgen cannot write (a variant returning nothing, before 2.1): opgen
    # refuses the yaml naming each (OPG514), and torchgen fails on each, one run at a time; then both go without.
    capsys.readouterr()
    code = main(["generate-lazy", *opgen_args])
    said = capsys.readouterr()
    # ... and (before 2.0: embedding, select.int) ops under symint whose schema has no SymInt in this release.
    found = refusals(said.out + said.err)
    refused, refused_symint = found.wrappers, found.symint
    assert code == (1 if refused or refused_symint else 0)
    assert not code or not (ours / "out").exists(), "opgen wrote files for a yaml it refuses"
    failed: set[str] = set()
    failed_symint: set[str] = set()
    for attempt in range(len(refused) + len(refused_symint) + 1):
        ref = tmp_path / f"torchgen{attempt}"  # (a failed run's files left behind)
        ref.mkdir()
        done = _torchgen(oracle, "torchgen.gen_lazy_tensor", args, ref, ["out"])
        if done.returncode == 0:
            break
        at = FAILED_AT.findall(done.stderr)
        if "attempted to define symint kernel" in done.stderr:
            assert at and at[0] in refused_symint and at[0] not in failed_symint, done.stderr[-2000:]
            failed_symint.add(at[0])
        else:
            assert at and at[-1] in refused.values() and at[-1] not in failed, done.stderr[-2000:]
            failed.add(at[-1])
        source.write_text(without_refused(fitted, Refusals(
            {listed: variant for listed, variant in refused.items() if variant in failed}, frozenset(failed_symint))))
    assert done.returncode == 0, done.stderr[-2000:]
    assert failed == set(refused.values()), "opgen refuses ops the release's gen_lazy_tensor takes"
    assert failed_symint == refused_symint, "opgen refuses symint kernels the release's gen_lazy_tensor takes"
    print(f"torch {version}: without {sorted(refused)} (their out= wrappers fail in its torchgen) and "
          f"{sorted(refused_symint)} under symint (no SymInt in its schemas)")
    assert main(["generate-lazy", *opgen_args]) == 0
    expected, got = files_under(ref / "out"), files_under(ours / "out")
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], f"{name} differs at {first_difference(expected[name], got[name])}"
