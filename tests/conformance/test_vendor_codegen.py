"""The vendors' own codegens against opgen, on each vendor format's real file and on each of its mutations in
tests/analysis/test_vendor_formats.py, applied one at a time.

Each codegen's reading of the file runs in a subprocess (a driver beside this file), against the torchgen of the
release the vendor builds against (tools/torchgen_release.py's cache): torch_npu's torchnpugen and op-plugin's
generators (npu_codegen_oracle.py, torch 2.13), torch_mlu's gen_mlu_stubs (mlu_codegen_oracle.py, 2.4.1),
torch_musa's gen_torch_musa (musa_codegen_oracle.py, 2.7.1 with torch_musa's patch). The codegens are taken from
git mirrors of the vendors' repositories named by $OPGEN_VENDOR_REPOS (owner+name/repo, as test_vendor_formats.py
finds op-plugin's), never from the project: skipped with one reason without them. Their verdicts go through the
reference cache (tests/reference.py), keyed by the codegens' bytes. Where a codegen rejects a file, opgen has an
error on the mutated line with the code of the same fault; where it accepts it, opgen has no error (and a warning
on the line saying what the codegen lets pass, but for edits that are harmless).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import reference
from analysis.test_vendor_formats import MIRRORS, NO_MIRROR, SOURCES, _ops, mutations, real_text
from release_files import release_native

from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.model.vendor_formats import CUSTOM, OP_PLUGIN, TORCH_MLU, TORCH_MUSA, TORCH_NPU
from opgen_lsp.releases import release_at

pytestmark = [pytest.mark.slow, pytest.mark.corpus]

ORACLE = Path(__file__).with_name("npu_codegen_oracle.py")
MLU_ORACLE = Path(__file__).with_name("mlu_codegen_oracle.py")
TORCH = "2.13.0"  # Ascend/pytorch master's oldest line (version.txt: 2.13.0-2.15.0)
MLU_TORCH = "2.4.1"  # torch_mlu's r2.4_develop line, whose mlu_functions.yaml is the corpus file
MUSA_ORACLE = Path(__file__).with_name("musa_codegen_oracle.py")
MUSA_TORCH = "2.7.1"  # torch_musa builds against it, patched with its own ops
MUSA_PATCH = "torch_patches/aten_src_ATen_native_native_functions.yaml.patch"
# (mirror, branch, the codegen's files in it) of each codegen run
PACKAGES = {TORCH_NPU: ("Ascend+pytorch", "HEAD", ("torchnpugen",)),
            OP_PLUGIN: ("Ascend+op-plugin", "HEAD", ("torchnpugen", "op_plugin/config/deprecated.yaml")),
            TORCH_MLU: ("Cambricon+torch_mlu", "r2.4_develop", ("codegen",)),
            TORCH_MUSA: ("MooreThreads+torch_musa", "HEAD", ("tools/codegen", MUSA_PATCH))}
FORMATS = (TORCH_NPU, OP_PLUGIN, TORCH_MLU, TORCH_MUSA)


def _fetch(repo: str, ref: str, paths: tuple[str, ...], into: Path) -> Path:
    """The codegen's files from the mirror, extracted into `into` (an input of the batch: their bytes key the
    cache)."""
    if not MIRRORS:
        pytest.skip(NO_MIRROR)
    git_dir = Path(MIRRORS) / repo / "repo"
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", ref, *paths],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        pytest.skip(f"{NO_MIRROR} (no {repo} with {', '.join(paths)} there)")
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


@pytest.fixture(scope="module")
def release() -> Path:
    """torch 2.13's release folder (torchgen and its packaged yaml)."""
    return release_native(TORCH).parents[4]


def _snapshot(native_yaml: Path, tags_yaml: Path, version: str) -> NativeSnapshot:
    tags = TagsParser().parse(tags_yaml.read_text())
    return NativeParser(release=release_at(version)).parse(native_yaml.read_text(), tags.names)


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> dict[str, Path]:
    """Each codegen's files, from the mirrors."""
    folder = tmp_path_factory.mktemp("vendor_codegens")
    return {fmt: _fetch(repo, ref, paths, folder / fmt) for fmt, (repo, ref, paths) in PACKAGES.items()}


@pytest.fixture(scope="module")
def musa_native(packages) -> Path:
    """torch 2.7.1's native_functions.yaml with torch_musa's patch applied (its build applies it to PyTorch's)."""
    release = release_native(MUSA_TORCH)
    if shutil.which("patch") is None:
        pytest.skip("no `patch` program to apply torch_musa's patch to torch's native_functions.yaml")
    patched = packages[TORCH_MUSA] / "native_functions.yaml"
    done = subprocess.run(["patch", "--no-backup-if-mismatch", "-o", str(patched), str(release),
                           str(packages[TORCH_MUSA] / MUSA_PATCH)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"torch_musa's patch does not apply to torch {MUSA_TORCH}'s native_functions.yaml:\n{done.stdout}")
    return patched


@pytest.fixture(scope="module")
def natives(release: Path, musa_native: Path) -> dict[str, NativeSnapshot]:
    """What opgen checks each format against: torch 2.13 (torch_mlu's too, as test_vendor_formats.py does: its
    codegen reads only names of aten entries, never a verdict), torch_musa's patched 2.7.1."""
    packaged = release / "torchgen" / "packaged" / "ATen" / "native"
    at_2_13 = _snapshot(packaged / "native_functions.yaml", packaged / "tags.yaml", TORCH)
    musa = _snapshot(musa_native, release_native(MUSA_TORCH).with_name("tags.yaml"), MUSA_TORCH)
    return {TORCH_NPU: at_2_13, OP_PLUGIN: at_2_13, TORCH_MLU: at_2_13, TORCH_MUSA: musa}


def _opgen(fmt: str, text: str, native: NativeSnapshot, *, errors: bool = True) -> dict[int, set[str]]:
    """opgen's errors (or warnings) by line; op-plugin's file against torch 2.13 only, as its build for 2.13 reads
    it."""
    out: dict[int, set[str]] = {}
    for d in check_backend(text, native, SOURCES[fmt][0]).diagnostics:
        if d.is_error == errors:
            out.setdefault(d.span.start_line, set()).add(d.code)
    return out


# (name, the mutated line or None for the real file, the file's text, whether the line is an upstream op's entry)
Case = tuple[str, int | None, str, bool]


@pytest.fixture(scope="module")
def cases(natives: dict[str, NativeSnapshot]) -> dict[str, list[Case]]:
    """Per format: the real file, then each mutation alone."""
    out: dict[str, list[Case]] = {}
    for fmt in FORMATS:
        native = natives[fmt]
        text = real_text(fmt)
        lines = text.split("\n")
        upstream = {op.span.start_line for op in _ops(fmt, text) if op.role != CUSTOM}
        out[fmt] = [("real", None, text, False)]
        made = mutations(fmt, text, set(_opgen(fmt, text, native)))
        for old, replaced in QUIET[fmt]:
            at = next(i for i, line in enumerate(lines) if line.startswith(old))
            made.append((f"quiet-{old.strip()}", at, replaced + lines[at][len(old):], ""))
        for name, line, new, _ in made:
            out[fmt].append((name, line, "\n".join([*lines[:line], new, *lines[line + 1:]]), line in upstream))
    return out


# Edits both must let pass without a word: op-plugin's own names and defaults in an official schema (its kernel
# declaration keeps its parameter types; torch_npu calls it from upstream's schema).
QUIET: dict[str, list[tuple[str, str]]] = {
    TORCH_NPU: [],
    TORCH_MLU: [],
    TORCH_MUSA: [],
    OP_PLUGIN: [("  - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)",
                 "  - func: add.Tensor(Tensor input, Tensor other2, *, Scalar alpha=2)"),
                ("  - func: addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)",
                 "  - func: addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, Scalar beta=1, Scalar alpha=3)")],
}


@pytest.fixture(scope="module")
def verdicts(cases, packages, musa_native: Path, release: Path, tmp_path_factory) -> dict[str, dict[str, dict]]:
    """Per format, name -> {"rejection": None when the codegen accepts the file, else what it raised,
    "changed_declarations": op-plugin's kernel declarations that differ from the real file's}. One process per
    codegen (torch_npu's and op-plugin's together). op-plugin's cases: its gen_op_plugin_functions and
    gen_op_backend make torch 2.13's file and kernel declarations from the case, and torchnpugen reads that file
    with torch_npu's real one, as the two build scripts do."""
    pytest.importorskip("torch")  # torchnpugen asks the installed torch's dispatcher which ops are composite
    folder = tmp_path_factory.mktemp("vendor_cases")
    batches: dict[str, list[dict[str, object]]] = {"npu": [], TORCH_MLU: [], TORCH_MUSA: []}
    npu_real = folder / "npu" / "npu_native_functions.yaml"
    npu_real.parent.mkdir()
    npu_real.write_text(real_text(TORCH_NPU))
    for fmt in FORMATS:
        batch = fmt if fmt in batches else "npu"
        for i, (name, line, text, _) in enumerate(cases[fmt]):
            path = folder / batch / fmt / f"{i}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if fmt == OP_PLUGIN:
                batches[batch].append({"name": f"{fmt}/{name}", "path": str(npu_real), "op_plugin": str(path),
                                       "baseline": line is None})
            else:
                batches[batch].append({"name": f"{fmt}/{name}", "path": str(path)})
    job = {"torchnpugen": str(packages[TORCH_NPU] / "torchnpugen"), "op_plugin_root": str(packages[OP_PLUGIN]),
           "torch": TORCH, "cases": batches["npu"]}
    found: dict[str, dict] = reference.run_json(ORACLE, job, folder / "npu", pythonpath=[release],
                                                inputs=[packages[TORCH_NPU], packages[OP_PLUGIN]], timeout=1800)
    mlu = reference.run_json(MLU_ORACLE, {"root": str(packages[TORCH_MLU]), "cases": batches[TORCH_MLU]},
                             folder / TORCH_MLU, pythonpath=[release_native(MLU_TORCH).parents[4]],
                             inputs=[packages[TORCH_MLU]], timeout=900)
    musa_tags = release_native(MUSA_TORCH).with_name("tags.yaml")
    musa = reference.run_json(MUSA_ORACLE, {"tools": str(packages[TORCH_MUSA] / "tools"), "native": str(musa_native),
                                            "tags": str(musa_tags), "cases": batches[TORCH_MUSA]},
                              folder / TORCH_MUSA, pythonpath=[release_native(MUSA_TORCH).parents[4]],
                              inputs=[packages[TORCH_MUSA], musa_tags], timeout=900)
    for name, verdict in [*mlu.items(), *musa.items()]:
        found[name] = {"rejection": verdict, "changed_declarations": []}
    out: dict[str, dict[str, dict]] = {fmt: {} for fmt in FORMATS}
    for name, verdict in found.items():
        fmt, case = name.split("/", 1)
        out[fmt][case] = verdict
    return out


def rejection(verdict: dict, upstream_line: bool) -> str | None:
    """What the build says of a case: the codegen's error, or, for an upstream op's entry, op-plugin's kernel
    declared with other parameter or return types than torch_npu calls it with (torch_npu's call is made from
    upstream's schema: the C++ does not compile)."""
    if verdict["rejection"] is not None:
        return str(verdict["rejection"])
    if upstream_line and verdict["changed_declarations"]:
        return f"declaration changed: {verdict['changed_declarations'][0]}"
    return None


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_file_accepted_by_both(fmt: str, cases, verdicts, natives) -> None:
    assert verdicts[fmt]["real"]["rejection"] is None
    assert _opgen(fmt, cases[fmt][0][2], natives[fmt]) == {}


@pytest.mark.parametrize("fmt", FORMATS)
def test_at_least_20_mutations_compared(fmt: str, cases, verdicts) -> None:
    assert len(cases[fmt]) - 1 >= 20
    rejected = [name for name, _, _, up in cases[fmt][1:] if rejection(verdicts[fmt][name], up) is not None]
    # gen_mlu_stubs reads only the names of aten entries and leaves out those it does not know: most edits pass it
    # (opgen warns on each), the 6 it rejects are compared with opgen's errors.
    assert len(rejected) >= (6 if fmt == TORCH_MLU else 20), rejected


# What the codegen says (the start of its message) and the codes opgen gives the same fault.
SAME_FAULT = {
    "ValueError: You must provide a value for 'backend'": ("OPG501", "OPG507"),
    "TypeError: expected an operator name or a dict": ("OPG553",),
    'RuntimeError: expected "symint" to be a list': ("OPG506",),
    "KeyError: 'Found an invalid operator name": ("OPG508", "OPG509", "OPG550"),
    "RuntimeError: unrecognized type": ("OPG2",),
    "AssertionError: Invalid function schema": ("OPG552",),
    "AssertionError: non-mutable argument": ("OPG2", "OPG550"),
    "ValueError: Invalid function schema": ("OPG552",),  # op-plugin's own model (gen_op_backend)
    "TypeError: arguments_acc is not out": ("OPG2", "OPG550"),
    # op-plugin's generators: a version all_version does not list, a bad range, a section missing
    "gen_op_plugin_functions: ValueError:": ("OPG551",),
    "gen_op_plugin_functions: IndexError:": ("OPG551",),
    "gen_op_plugin_functions: KeyError:": ("OPG507",),
    "declaration changed:": ("OPG550",),
    # torch_mlu's gen_mlu_stubs: its asserts, and two crashes (a `func:` with no value; torch 2.4's torchgen
    # context() given a string, which fails only when a new op's schema does not parse)
    "AssertionError: expected op msg to be a dict": ("OPG553",),
    "AttributeError: 'NoneType' object has no attribute 'split'": ("OPG553",),
    "AssertionError: derived_type support": ("OPG554",),
    "AssertionError: You must provide concrete function schema": ("OPG552",),
    "TypeError: 'str' object is not callable": ("OPG2",),
    # torch_musa's gen_torch_musa (parse_native_yaml_struct) and torchgen's asserts under it
    "AssertionError: musa func `": ("OPG550",),
    "AssertionError: musa newly added kernel": ("OPG509", "OPG508"),
    "AssertionError: not a str:": ("OPG553",),
    "AttributeError: 'int' object has no attribute 'get'": ("OPG553",),
    "AssertionError: at gen_torch_musa.py: assert musa_structured is None or isinstance(": ("OPG554",),
}

def _operator_name(message: str) -> str:
    """`base.overload` from torchgen's OperatorName repr in a KeyError."""
    base = re.search(r"base='([^']*)'", message)
    overload = re.search(r"overload_name='([^']*)'", message)
    assert base is not None and overload is not None, message
    return base.group(1) + (f".{overload.group(1)}" if overload.group(1) else "")


N_MUTATIONS = 40  # more than a file has (test_vendor_formats.MAX_MUTATIONS)


@pytest.mark.parametrize("n", range(1, N_MUTATIONS + 1))
@pytest.mark.parametrize("fmt", FORMATS)
def test_verdicts_agree(fmt: str, n: int, cases, verdicts, natives) -> None:
    native = natives[fmt]
    if n >= len(cases[fmt]):
        pytest.skip(f"{fmt}: {len(cases[fmt]) - 1} mutations")
    name, line, text, upstream_line = cases[fmt][n]
    assert line is not None
    theirs = rejection(verdicts[fmt][name], upstream_line)
    ours = _opgen(fmt, text, native)
    if theirs is None:
        assert ours == {}, (name, "the codegen accepts it")
        warned = _opgen(fmt, text, native, errors=False).get(line)
        if name.startswith("quiet-"):
            assert not warned, name
        else:  # what it lets pass is still said on the line (a schema it never compares, an op it leaves out)
            assert warned, (name, "no warning")
    elif theirs.startswith("KeyError: OperatorName("):
        # gen_mlu_stubs looks a structured group's out variant up among the listed ops, and the mutation took it
        # away: opgen says so on the group's listed entries (OPG556, naming it), and nowhere else but the line.
        missing = _operator_name(theirs)
        grouped = [d for d in check_backend(text, native, SOURCES[fmt][0]).diagnostics if d.code == "OPG556"]
        assert grouped and all(f"'{missing}'" in d.message for d in grouped), (name, theirs, grouped)
        assert set(ours) <= {line} | {d.span.start_line for d in grouped}, (name, theirs, ours)
    else:
        assert set(ours) == {line}, (name, theirs, ours)
        message = theirs.removeprefix("gen_op_backend: ")  # op-plugin's generator of its kernel declarations
        same = next((codes for said, codes in SAME_FAULT.items() if message.startswith(said)), None)
        assert same is not None, f"{name}: the codegen says {theirs!r}, which SAME_FAULT does not know"
        assert any(code.startswith(same) for code in ours[line]), (name, theirs, ours)
        where = re.search(r"\(at [^()]*:(\d+)\)", message)  # gen_torch_musa names the entry's first line
        assert where is None or int(where.group(1)) - 1 == line, (name, theirs, line)
