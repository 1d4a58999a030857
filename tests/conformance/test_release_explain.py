"""`opgen explain` (and the hover, which shows its pieces) held to each release: every piece it shows for the ops
of samples/aten is found verbatim in the file it names, as that release's own gen.py writes it; and for
representative ops of the release's own native_functions.yaml (structured, in-place, out=, views, composites, named
tensors while the release has them), every piece explain shows and every line of the hover's code, in that
release's gen.py output, plain and --per-operator-headers (the release matrix's cached runs).

Affordable: gen.py runs once per release on the small sample yaml (with the release's own templates and
tags.yaml, no AOTI fallback ops, and --mps: explain shows every key), not on the whole real file. Marked `versions` (each release's torchgen
from the cache of tools/torchgen_release.py; skipped, with the command, for one not there).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import reference
from release_fit import tags_sorted

from opgen_lsp.analysis.hover import hover
from opgen_lsp.codegen.options import CodegenOptions
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import RELEASES, Release

from .test_release_matrix import generation_not_verified, release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]  # every release, both layouts: seconds, as the matrix

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "aten" / "native" / "native_functions.yaml"

# gen.py with empty AOTI fallback op lists (the sample's ops are none of torch's), emptied where they are defined.
GEN_PY_WITHOUT_FALLBACKS = """
import runpy, sys
import torchgen.aoti.fallback_ops as fallback_ops
for name in ("inductor_fallback_ops", "aten_shimified_ops"):
    getattr(fallback_ops, name, set()).clear()
sys.argv = ["gen.py", *sys.argv[1:]]
runpy.run_module("torchgen.gen", run_name="__main__", alter_sys=True)
"""
# Before 2.4 there are no fallback ops: every op with a kernel gets a shim, under torch/ (no --aoti-install-dir).
GEN_PY = """
import runpy, sys
sys.argv = ["gen.py", *sys.argv[1:]]
runpy.run_module("torchgen.gen", run_name="__main__", alter_sys=True)
"""


def gen_py(folder: Path, args: list[str], cwd: Path, outputs: list[str], release: Release
           ) -> subprocess.CompletedProcess:
    """The release's own gen.py (its folder first on the path), with no AOTI fallback ops, run in cwd through the
    reference cache; `outputs`: the folders it writes there."""
    script = GEN_PY if release.aoti_shim_form.every_op else GEN_PY_WITHOUT_FALLBACKS
    return reference.run(["-c", script, *args], cwd=cwd, outputs=[Path(o) for o in outputs], pythonpath=[folder])


def _sample_aten(folder: Path, root: Path, release: Release) -> Path:
    """An ATen folder of the sample yaml with the release's own templates and tags.yaml."""
    packaged = folder / "torchgen" / "packaged" / "ATen"
    aten = root / "ATen"
    shutil.copytree(packaged / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(packaged / "native" / "tags.yaml", aten / "native" / "tags.yaml")
    (aten / "native" / "native_functions.yaml").write_text(_sample_text(folder, release) + _cuda_kernels_in_torch_cpu(release))
    return aten


def _cuda_kernels_in_torch_cpu(release: Release) -> str:
    """Entries registering the CUDA kernels gen.py 2.15 knows are defined in torch_cpu (it fails without)."""
    return "".join(f"\n- func: torch_cpu_probe_{i}(Tensor self) -> Tensor\n  dispatch:\n    CUDA: {kernel}\n"
                   for i, kernel in enumerate(sorted(release.cuda_kernels_in_torch_cpu)))


def _sample_text(folder: Path, release: Release) -> str:
    """The sample yaml less the tags the release's tags.yaml lacks (tags.yaml grew from 2.6 to 2.15), its tags
    as one comma-separated string where the release reads them so (1.13)."""
    tags_yaml = folder / "torchgen" / "packaged" / "ATen" / "native" / "tags.yaml"
    known = TagsParser().parse(tags_yaml.read_text()).names
    lines = []
    for line in SAMPLE.read_text().splitlines(keepends=True):
        if line.startswith("  tags:"):
            names = [t.strip() for t in line.split(":", 1)[1].strip().strip("[]").split(",")]
            kept = [t for t in names if t in known]
            listed = ", ".join(kept) if release.tags_as_comma_separated_string else f"[{', '.join(kept)}]"
            line = f"  tags: {listed}\n" if kept else ""
        lines.append(line)
    return "".join(lines)



# Every release; one whose generation is not yet gen.py's is expected to fail (strictly).
EXPLAINED = [pytest.param(r, id=r.version, marks=[pytest.mark.xfail(strict=True, reason=why)] if why else [])
             for r in RELEASES for why in [generation_not_verified(r.version)]]

def _stripped(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _as_compared(file: str, data: bytes, release: Release) -> str:
    """A generated file's text, RegisterSchema.cpp's tags sorted where gen.py writes a set's order (before 2.1:
    opgen writes them sorted; Release.schema_tags_sorted)."""
    if file.endswith("RegisterSchema.cpp") and not release.schema_tags_sorted:
        data = tags_sorted(data)
    return _stripped(data.decode())


@pytest.mark.parametrize("release", EXPLAINED)
def test_every_piece_explained_is_in_the_release_output(release: Release, tmp_path: Path) -> None:
    folder = release_folder(release.version)
    aten = _sample_aten(folder, tmp_path, release)
    aoti = ["--aoti-install-dir", "aoti"] if release.gen_py_takes_aoti_flags else []
    done = gen_py(folder, ["-s", str(aten), "-d", "out", *aoti, "--mps"], tmp_path,
                  ["out", "aoti" if aoti else "torch"], release)
    assert done.returncode == 0, done.stderr[-2000:]
    tags = TagsParser().parse((aten / "native" / "tags.yaml").read_text()).names
    snapshot = NativeParser(release=release).parse((aten / "native" / "native_functions.yaml").read_text(), tags)
    assert [d for d in snapshot.diagnostics if d.is_error] == []
    explainer = Explainer(snapshot.functions, release)
    shown = 0
    for name in explainer.names:
        for snippet in explainer.explain(name):
            # (explain strips the blanks that end a line, as in its docstring; some templates indent empty lines)
            text = _as_compared(snippet.file, (tmp_path / "out" / snippet.file).read_bytes(), release)
            assert _stripped(snippet.code) in text, f"{name}: {snippet.title} is not in {snippet.file}:\n{snippet.code}"
            shown += 1
    assert shown > 100


# ---------------------------------------------------------------- the release's own file, explain and hover

# Ops of each kind, as each release's own native_functions.yaml has them (a kind's ops absent from a release are
# left out; named tensors are there until 2.12).
REPRESENTATIVE = {
    "structured out=": ("add.out",),
    "structured functional": ("add.Tensor",),
    "in-place": ("add_.Tensor",),
    "multi-output out=": ("max.dim_max",),
    "view": ("transpose.int", "view"),
    "in-place view": ("transpose_",),
    "CompositeImplicitAutograd": ("linear",),
    "CompositeExplicitAutograd": ("zeros_like",),
    "DimnameList": ("sum.dim_DimnameList", "logsumexp.names"),
}


def _code_lines(markdown: str) -> list[tuple[str, str]]:
    """(the heading above it, line) for every line of the hover's C++ blocks."""
    out, heading, inside = [], "", False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            inside = not inside
        elif inside:
            out.append((heading, line))
        elif line:
            heading = line
    return out


# Where --per-operator-headers puts what the plain layout's aggregate headers hold: one header per operator name.
PER_OPERATOR = {"Functions.h": "{}.h", "NativeFunctions.h": "{}_native.h", "Operators.h": "{}_ops.h",
                "MethodOperators.h": "{}_ops.h", "NativeMetaFunctions.h": "{}_meta.h"}


def _in_layout(file: str, base: str, layout: str) -> str:
    """The output holding what explain places in `file` (named as in the plain layout) for an op named `base`."""
    return f"ops/{PER_OPERATOR[file].format(base)}" if layout == "per-operator" and file in PER_OPERATOR else file


def _code_blocks(markdown: str) -> list[tuple[str, str]]:
    """(the heading above it, its code) of each whole C++ block of a hover (one cut short to fit is left out)."""
    out, heading, code, inside = [], "", [], False
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if inside and not (i + 1 < len(lines) and lines[i + 1].endswith("more lines)")):
                out.append((heading, "\n".join(code)))
            inside, code = not inside, []
        elif inside:
            code.append(line)
        elif line:
            heading = line
    return out


@pytest.fixture(scope="module")
def release_outputs(tmp_path_factory):
    """Per release: its own native_functions.yaml read by opgen as that release; per layout, its gen.py's files
    (from the reference cache: the release matrix's run of the same command)."""
    from .test_release_matrix import gen_py_digests

    snapshots, outputs = {}, {}

    def of(release: Release, layout: str):
        folder = release_folder(release.version)
        if release.version not in snapshots:
            native = folder / "torchgen" / "packaged" / "ATen" / "native"
            tags = TagsParser().parse((native / "tags.yaml").read_text()).names
            parser = NativeParser(CodegenOptions(release).ignore_keys, release=release)
            text = (native / "native_functions.yaml").read_text()
            snapshots[release.version] = parser.parse(text, tags), text.split("\n")
        if (release.version, layout) not in outputs:
            cwd = tmp_path_factory.mktemp(f"gen_{release.version}_{layout}")
            outputs[release.version, layout] = gen_py_digests(folder, layout, cwd).files
        return (*snapshots[release.version], outputs[release.version, layout])
    return of


@pytest.mark.parametrize("layout", ["plain", "per-operator"])
@pytest.mark.parametrize("release", EXPLAINED)
def test_explain_and_hover_of_the_release_file_are_in_its_gen_py_output(release: Release, layout: str,
                                                                       release_outputs) -> None:
    """`opgen explain` and the hover of representative ops of the release's own native_functions.yaml: every piece
    explain shows is verbatim in the file it names (with --per-operator-headers: the op's own header that takes
    that file's part), every line of the hover's code in the file it comes from."""
    snapshot, yaml_lines, files = release_outputs(release, layout)
    assert [d for d in snapshot.diagnostics if d.is_error] == []
    texts: dict[str, str] = {}

    def text(file: str) -> str:
        if file not in texts:
            texts[file] = _as_compared(file, files[f"aten/{file}"].read(), release)
        return texts[file]

    def lines_of(file: str) -> set[str]:
        return set(text(file).split("\n"))

    kinds, missing = set(), []
    for kind, names in REPRESENTATIVE.items():
        for name in names:
            op = snapshot.ops_by_name.get(name)
            if op is None:
                continue
            kinds.add(kind)
            base = op.function.func.name.name.base
            pieces = snapshot.explainer.explain(name)
            assert len(pieces) >= 3, name
            missing += [f"{name}: {p.title} ({p.file})" for p in pieces
                        if _stripped(p.code) not in text(_in_layout(p.file, base, layout))]
            shown = hover(snapshot, None, op.line, len("- func: ") + 1)
            assert shown is not None and f"read as {release}" in shown.markdown
            lines = _code_lines(shown.markdown)
            assert lines, name
            for heading, line in lines:
                if heading.startswith("at::"):
                    found = f"inline {line.removesuffix(';')} {{" in lines_of(_in_layout("Functions.h", base, layout))
                else:
                    found = line.startswith("// ") or line in lines_of(_in_layout("NativeFunctions.h", base, layout))
                if not found:
                    missing.append(f"{name}: hover line {line!r} ({heading})")
            # The hover on the first dispatch key of the entry: its pieces, each under "title (file)".
            end = next((i for i in range(op.line + 1, len(yaml_lines)) if yaml_lines[i].startswith("- ")),
                       len(yaml_lines))
            table = next((i for i in range(op.line + 1, end) if yaml_lines[i] == "  dispatch:"), end)
            key_line = next((i for i in range(table + 1, end) if yaml_lines[i].startswith("    ")
                             and not yaml_lines[i].lstrip().startswith("#")), None)
            if key_line is not None:
                shown = hover(snapshot, None, key_line, 5)
                assert shown is not None and "(dispatch key)" in shown.markdown
                blocks = _code_blocks(shown.markdown)
                assert blocks, name
                missing += [f"{name}: key hover {heading}" for heading, code in blocks
                            if code not in text(_in_layout(heading.rsplit("(", 1)[1].rstrip(")"), base, layout))]
    assert missing == []
    assert kinds == set(REPRESENTATIVE) - ({"DimnameList"} if not release.named_tensor_types else set())
