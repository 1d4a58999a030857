"""torch_npu's own codegen (torchnpugen, Ascend/pytorch) against opgen, on the real npu_native_functions.yaml and
on each of its mutations in tests/analysis/test_vendor_formats.py, applied one at a time.

torchnpugen's reading of the file (npu_codegen_oracle.py: op-plugin's merge, native_functions.yaml parsed with the
file's custom ops, parse_backend_yaml) runs in a subprocess against torch 2.13's torchgen (the release torch_npu's
master builds against, from tools/torchgen_release.py's cache), with the package taken from a git mirror of
Ascend/pytorch named by $OPGEN_VENDOR_REPOS (owner+name/repo, as test_vendor_formats.py finds op-plugin's), never
from the project: skipped with one reason without it. Its verdicts go through the reference cache (tests/
reference.py), keyed by the package's bytes. Where torchnpugen rejects a file, opgen has an error on the mutated
line; where torchnpugen accepts it, opgen has no error (a warning may say what torchnpugen lets pass).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from analysis.test_vendor_formats import MIRRORS, NO_MIRROR, SOURCES, mutations, real_text
from release_files import release_native

from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, NativeSnapshot, TagsParser
from opgen_lsp.model.vendor_formats import TORCH_NPU

pytestmark = [pytest.mark.slow, pytest.mark.corpus]

ORACLE = Path(__file__).with_name("npu_codegen_oracle.py")
TORCH = "2.13.0"  # Ascend/pytorch master's oldest line (version.txt: 2.13.0-2.15.0)
REPO = "Ascend+pytorch"


def _fetch_package(into: Path) -> Path:
    """torchnpugen/ from the mirror's HEAD, extracted under `into` (an input of the batch: its bytes key the
    cache)."""
    if not MIRRORS:
        pytest.skip(NO_MIRROR)
    git_dir = Path(MIRRORS) / REPO / "repo"
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", "torchnpugen"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        pytest.skip(f"{NO_MIRROR} (no {REPO} with torchnpugen/ there)")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "torchnpugen"


@pytest.fixture(scope="module")
def release() -> Path:
    """torch 2.13's release folder (torchgen and its packaged yaml)."""
    return release_native(TORCH).parents[4]


@pytest.fixture(scope="module")
def native(release: Path) -> NativeSnapshot:
    folder = release / "torchgen" / "packaged" / "ATen" / "native"
    tags = TagsParser().parse((folder / "tags.yaml").read_text())
    return NativeParser().parse((folder / "native_functions.yaml").read_text(), tags.names)


def _opgen_errors(text: str, native: NativeSnapshot) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for d in check_backend(text, native, SOURCES[TORCH_NPU][0]).diagnostics:
        if d.is_error:
            out.setdefault(d.span.start_line, set()).add(d.code)
    return out


def _opgen_warnings(text: str, native: NativeSnapshot) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for d in check_backend(text, native, SOURCES[TORCH_NPU][0]).diagnostics:
        if not d.is_error:
            out.setdefault(d.span.start_line, set()).add(d.code)
    return out


@pytest.fixture(scope="module")
def cases(native: NativeSnapshot) -> list[tuple[str, int | None, str]]:
    """(name, the mutated line or None for the real file, the file's text): each mutation alone."""
    text = real_text(TORCH_NPU)
    lines = text.split("\n")
    out: list[tuple[str, int | None, str]] = [("real", None, text)]
    for name, line, new, _ in mutations(TORCH_NPU, text, set(_opgen_errors(text, native))):
        out.append((name, line, "\n".join([*lines[:line], new, *lines[line + 1:]])))
    return out


@pytest.fixture(scope="module")
def torchnpugen(cases, release: Path, tmp_path_factory) -> dict[str, str | None]:
    """name -> None when torchnpugen accepts the file, else what it raised: every case in one process."""
    pytest.importorskip("torch")  # torchnpugen asks the installed torch's dispatcher which ops are composite
    folder = tmp_path_factory.mktemp("npu_codegen")
    package = _fetch_package(folder)
    job_cases = []
    for i, (name, _, text) in enumerate(cases):
        path = folder / "cases" / f"{i}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        job_cases.append({"name": name, "path": str(path)})
    job = {"torchnpugen": str(package), "torch": TORCH, "cases": job_cases}
    found: dict[str, str | None] = reference.run_json(ORACLE, job, folder, pythonpath=[release], timeout=900)
    return found


def test_real_file_accepted_by_both(cases, torchnpugen, native: NativeSnapshot) -> None:
    assert torchnpugen["real"] is None
    assert _opgen_errors(cases[0][2], native) == {}


def test_at_least_20_mutations_compared(cases, torchnpugen) -> None:
    assert len(cases) - 1 >= 20
    rejected = [name for name, _, _ in cases[1:] if torchnpugen[name] is not None]
    assert len(rejected) >= 20, rejected


# What torchnpugen says (the start of its message) and the codes opgen gives the same fault.
SAME_FAULT = {
    "ValueError: You must provide a value for 'backend'": ("OPG501", "OPG507"),
    "TypeError: expected an operator name or a dict": ("OPG553",),
    'RuntimeError: expected "symint" to be a list': ("OPG506",),
    "KeyError: 'Found an invalid operator name": ("OPG508", "OPG509", "OPG550"),
    "RuntimeError: unrecognized type": ("OPG2",),
    "AssertionError: Invalid function schema": ("OPG552",),
}

N_MUTATIONS = 40  # more than the file has (test_vendor_formats.MAX_MUTATIONS)


@pytest.mark.parametrize("n", range(1, N_MUTATIONS + 1))
def test_verdicts_agree(n: int, cases, torchnpugen, native: NativeSnapshot) -> None:
    if n >= len(cases):
        pytest.skip(f"{len(cases) - 1} mutations")
    name, line, text = cases[n]
    assert line is not None
    theirs = torchnpugen[name]
    ours = _opgen_errors(text, native)
    if theirs is None:
        assert ours == {}, (name, "torchnpugen accepts it")
        # What it lets pass is still said on the line (a schema it never compares, an op it leaves out).
        assert _opgen_warnings(text, native).get(line), (name, "no warning")
    else:
        assert set(ours) == {line}, (name, theirs, ours)
        same = next((codes for said, codes in SAME_FAULT.items() if theirs.startswith(said)), None)
        assert same is not None, f"{name}: torchnpugen says {theirs!r}, which SAME_FAULT does not know"
        assert any(code.startswith(same) for code in ours[line]), (name, theirs, ours)
