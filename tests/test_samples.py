"""samples/: opgen reports each deliberate mistake where it is marked, and nothing else.

A mistake is marked by a comment at column 0 directly above an entry:

    # MISTAKE OPGnnn: <what is wrong>
    - func: ...          <- the entry: this line and the indented lines after it
      key: value

The rule: `opgen check` reports exactly one diagnostic with code OPGnnn (at the
code's severity) whose whole range lies within that entry, and no diagnostic
anywhere else. The tests without the conformance mark need no torch.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main
from opgen_lsp.diagnostics import CODES

SAMPLES = Path(__file__).resolve().parent.parent / "samples"  # as conftest.SAMPLES
NATIVE = SAMPLES / "native_functions.yaml"
TAGS = SAMPLES / "tags.yaml"
README = SAMPLES / "README.md"

MARK = re.compile(r"^# MISTAKE (OPG\d{3}): \S")

# One mistake of each kind; a mistake that is removed or added must be noticed.
EXPECTED_CODES = {
    "native_functions.yaml": ["OPG104", "OPG107", "OPG203", "OPG204", "OPG301", "OPG102",
                              "OPG117", "OPG122", "OPG306", "OPG100", "OPG004"],
    "tags.yaml": ["OPG401"],
}


@dataclass(frozen=True)
class Mistake:
    file: str        # the file's name inside samples/
    code: str
    comment: int     # 1-based line of the MISTAKE comment
    first: int       # 1-based first line of the entry (the one right below the comment)
    last: int        # 1-based last line of the entry

    def contains(self, start: int, end: int) -> bool:
        return self.first <= start <= end <= self.last


def find_mistakes(path: Path) -> list[Mistake]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("# MISTAKE"):
            assert MARK.match(line), f"{path.name}:{i + 1}: malformed marker {line!r}"
        match = MARK.match(line)
        if not match:
            continue
        first = i + 1
        assert first < len(lines) and lines[first].startswith("- "), \
            f"{path.name}:{i + 1}: a MISTAKE comment must sit directly above an entry ('- ...')"
        last = first
        while last + 1 < len(lines) and lines[last + 1].startswith(" "):
            last += 1
        found.append(Mistake(path.name, match.group(1), i + 1, first + 1, last + 1))
    return found


def without_mistakes(path: Path) -> str:
    """The file with every marked entry (its comment and its lines) removed."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    drop: set[int] = set()
    for m in find_mistakes(path):
        drop.update(range(m.comment, m.last + 1))
    return "".join(line for n, line in enumerate(lines, start=1) if n not in drop)


def run_check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    status = main(["check", *argv, "--format", "json"])
    return status, json.loads(capsys.readouterr().out)


def placed(diagnostics: list[dict]) -> list[tuple[str, int, int, str, str]]:
    """(file name, 1-based start line, 1-based end line, code, severity) for each diagnostic."""
    return [(Path(d["path"]).name, d["range"]["start"]["line"] + 1, d["range"]["end"]["line"] + 1,
             d["code"], d["severity"]) for d in diagnostics]


def assert_exactly_the_mistakes(diagnostics: list[dict], mistakes: list[Mistake]) -> None:
    unmatched = list(mistakes)
    unexpected = []
    for name, start, end, code, severity in placed(diagnostics):
        hit = next((m for m in unmatched if m.file == name and m.code == code and m.contains(start, end)), None)
        if hit is None:
            unexpected.append((name, start, code))
            continue
        assert severity == CODES[code].severity.label, (name, start, code, severity)
        unmatched.remove(hit)
    assert unexpected == [], "diagnostics outside the marked entries, or with another code"
    assert [(m.file, m.first, m.code) for m in unmatched] == [], "marked mistakes that opgen did not report"


@pytest.fixture(scope="module")
def native_mistakes() -> list[Mistake]:
    return find_mistakes(NATIVE)


@pytest.fixture(scope="module")
def tags_mistakes() -> list[Mistake]:
    return find_mistakes(TAGS)


def test_one_marked_mistake_of_each_kind(native_mistakes, tags_mistakes):
    assert [m.code for m in native_mistakes] == EXPECTED_CODES["native_functions.yaml"]
    assert [m.code for m in tags_mistakes] == EXPECTED_CODES["tags.yaml"]
    for m in native_mistakes + tags_mistakes:
        assert m.code in CODES, m


def test_check_directory_reports_exactly_the_marked_mistakes(capsys, native_mistakes, tags_mistakes):
    status, diagnostics = run_check(capsys, str(SAMPLES))
    assert status == 1
    assert_exactly_the_mistakes(diagnostics, native_mistakes + tags_mistakes)


def test_check_with_explicit_tags_reports_the_native_mistakes(capsys, native_mistakes):
    # tags.yaml given only as --tags supplies the tag names; its own problems are not reported.
    status, diagnostics = run_check(capsys, str(NATIVE), "--tags", str(TAGS))
    assert status == 1
    assert_exactly_the_mistakes(diagnostics, native_mistakes)


def test_check_by_file_reports_both_files(capsys, native_mistakes, tags_mistakes):
    status, diagnostics = run_check(capsys, str(NATIVE), str(TAGS), "--tags", str(TAGS))
    assert status == 1
    assert_exactly_the_mistakes(diagnostics, native_mistakes + tags_mistakes)


def test_nothing_reported_once_the_mistakes_are_removed(capsys, tmp_path):
    (tmp_path / "native_functions.yaml").write_text(without_mistakes(NATIVE), encoding="utf-8")
    (tmp_path / "tags.yaml").write_text(without_mistakes(TAGS), encoding="utf-8")
    status, diagnostics = run_check(capsys, str(tmp_path))
    assert placed(diagnostics) == []
    assert status == 0


def test_readme_table_lists_each_reported_mistake(capsys):
    row = re.compile(r"^\|\s*([\w.]+\.yaml)\s*\|\s*(\d+)\s*\|\s*(OPG\d{3})\s*\|")
    table = sorted((m.group(1), int(m.group(2)), m.group(3))
                   for m in map(row.match, README.read_text(encoding="utf-8").splitlines()) if m)
    _, diagnostics = run_check(capsys, str(SAMPLES))
    reported = sorted((name, start, code) for name, start, _, code, _ in placed(diagnostics))
    assert table == reported


@pytest.mark.conformance
def test_torchgen_accepts_the_samples_without_the_mistakes(tmp_path):
    pytest.importorskip("torchgen")
    import yaml
    from torchgen import gen

    valid_tags = gen.parse_tags_yaml_struct(yaml.load(without_mistakes(TAGS), Loader=gen.LineLoader))
    assert {"generated", "view_copy", "inplace_view", "nondeterministic_seeded"} <= valid_tags

    clean = without_mistakes(NATIVE)
    parsed = gen.parse_native_yaml_struct(yaml.load(clean, Loader=gen.LineLoader), valid_tags)
    functions = parsed.native_functions
    grouped = gen.get_grouped_native_functions(functions)
    view_grouped = gen.get_grouped_by_view_native_functions(functions)
    assert len([f for f in functions if "generated" not in f.tags]) == 30
    assert any(type(g).__name__ == "NativeFunctionsGroup" and g.structured for g in grouped)
    assert any(type(g).__name__ == "NativeFunctionsViewGroup" and g.view_copy is not None for g in view_grouped)

    # The out-of-tree backend names ops that exist, and its .cpp defines each kernel once.
    from torchgen import gen_backend_stubs

    indices = dict(parsed.backend_indices)
    backend = gen_backend_stubs.parse_backend_yaml(str(SAMPLES / "my_backend.yaml"), grouped, indices)
    assert (str(backend.backend_key), backend.cpp_namespace) == ("PrivateUse1", "my_backend")
    gen_backend_stubs.error_on_missing_kernels(functions, indices, backend.backend_key, backend.autograd_key,
                                               "PrivateUse1NativeFunctions",
                                               str(SAMPLES / "my_backend_kernels.cpp"))


@pytest.mark.conformance
def test_torchgen_rejects_each_mistake(native_mistakes, tags_mistakes):
    pytest.importorskip("torchgen")
    import yaml
    from torchgen import gen

    valid_tags = gen.parse_tags_yaml_struct(yaml.load(without_mistakes(TAGS), Loader=gen.LineLoader))
    clean = without_mistakes(NATIVE)
    lines = NATIVE.read_text(encoding="utf-8").splitlines(keepends=True)
    for m in native_mistakes:
        entry = "".join(lines[m.first - 1:m.last])
        with pytest.raises((AssertionError, RuntimeError)):
            es = yaml.load(clean + "\n" + entry, Loader=gen.LineLoader)
            functions = gen.parse_native_yaml_struct(es, valid_tags).native_functions
            gen.get_grouped_native_functions(functions)
            gen.get_grouped_by_view_native_functions(functions)
    assert tags_mistakes
    with pytest.raises(AssertionError):
        gen.parse_tags_yaml_struct(yaml.load(TAGS.read_text(encoding="utf-8"), Loader=gen.LineLoader))


@pytest.mark.conformance
def test_opgen_models_the_clean_samples_like_torchgen():
    pytest.importorskip("torchgen")
    import yaml
    from conformance import canonical
    from torchgen import gen

    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT

    tags_text, native_text = without_mistakes(TAGS), without_mistakes(NATIVE)
    parsed = gen.parse_native_yaml_struct(yaml.load(native_text, Loader=gen.LineLoader),
                                          gen.parse_tags_yaml_struct(yaml.load(tags_text, Loader=gen.LineLoader)))
    functions = parsed.native_functions
    theirs = {
        "functions": [canonical.native_function(f, f.loc.line) for f in functions],
        "indices": {str(k): canonical.backend_index(v) for k, v in parsed.backend_indices.items()},
        "groups": [canonical.group(g) for g in gen.get_grouped_native_functions(functions)],
        "view_groups": [canonical.group(g) for g in gen.get_grouped_by_view_native_functions(functions)],
    }
    model = NativeParser(release=DEFAULT).parse(native_text, TagsParser().parse(tags_text).names).functions
    ours = {
        "functions": [canonical.native_function(op.function, op.line + 1) for op in model.ops],
        "indices": {str(k): canonical.backend_index(v) for k, v in model.backend_indices.items()},
        "groups": [canonical.group(g) for g in model.groups],
        "view_groups": [canonical.group(g) for g in model.view_groups],
    }
    assert ours == theirs


# ---------------------------------------------------------------- samples/aten: generates without torch

ATEN = SAMPLES / "aten"
# Runs the opgen command line with torch and torchgen made unimportable (as on a machine without them).
WITHOUT_TORCH = """
import importlib.abc, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "torchgen"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoTorch())
for name in ("torch", "torchgen", "torchgen.gen"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        continue
    sys.exit(f"{name} is importable")
from opgen_lsp.cli import main
status = main(sys.argv[1:])
assert not [m for m in sys.modules if m.partition(".")[0] in ("torch", "torchgen")]
sys.exit(status)
"""


def run_without_torch(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", WITHOUT_TORCH, *argv], cwd=cwd, capture_output=True,
                          text=True)


def test_samples_aten_is_clean(capsys):
    status, diagnostics = run_check(capsys, str(ATEN))
    assert (status, diagnostics) == (0, [])
    assert len(re.findall(r"^- func:", (ATEN / "native" / "native_functions.yaml").read_text(), re.M)) == 42


def test_samples_aten_generates_without_torch(tmp_path):
    proc = run_without_torch(tmp_path, "generate", "-s", str(ATEN), "-d", "out/aten", "--aoti-install-dir",
                             "out/aoti", "--update-aoti-c-shim")
    assert proc.returncode == 0, proc.stderr
    assert "cannot generate" not in proc.stderr
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert {"aten/Functions.h", "aten/RegisterCPU_0.cpp", "aten/core/TensorBody.h", "aten/core/enum_tag.h",
            "aten/Declarations.yaml", "aoti/c_shim_cpu.h", "aoti/c_shim_cpu.cpp", "aoti/c_shim_aten.h"} <= written
    functions_h = (tmp_path / "out" / "aten" / "Functions.h").read_text()
    assert "Sample template" in functions_h and "make_ramp" in functions_h
    header = (tmp_path / "out" / "aoti" / "c_shim_cpu.h").read_text()
    assert "aoti_torch_cpu_count_above_v2(" in header and "_foreach_scale" not in header


def test_samples_aten_templates_hold_exactly_what_is_filled():
    """Each template of ours uses every value its file's generator fills, and nothing else."""
    from opgen_lsp.codegen.files.context import GenerateOptions
    from opgen_lsp.codegen.generate import load_context, plan
    from opgen_lsp.pieces.template import Template
    from opgen_lsp.releases import DEFAULT

    ctx = load_context(GenerateOptions(source_path=str(ATEN), release=DEFAULT))
    filled: dict[str, set[str]] = {}
    for p in plan(ctx):
        env = p.build()
        if not isinstance(env, str):
            filled.setdefault(p.template, set()).update(env)
    templates = {name: Template(text).placeholders() for name, text in ctx.templates.items()
                 if not name.endswith(".ini")}
    assert sorted(templates) == sorted(filled)
    for name, keys in filled.items():
        assert templates[name] - {"generated_comment"} == keys, name


# gen.py run on samples/aten with the sample's fallback ops in place of torchgen's own list.
TORCHGEN_WITH_SAMPLE_FALLBACKS = """
import runpy, sys
import torchgen.gen_aoti_c_shim as shim

lists = {}
exec(open(sys.argv[1], encoding="utf-8").read(), lists)
shim.inductor_fallback_ops = lists["inductor_fallback_ops"]
shim.aten_shimified_ops = lists["aten_shimified_ops"]
sys.argv = ["gen.py", *sys.argv[2:]]
runpy.run_module("torchgen.gen", run_name="__main__", alter_sys=True)
"""


@pytest.mark.conformance
@pytest.mark.parametrize("flags", [(), ("--update-aoti-c-shim",)], ids=["default", "update_aoti_c_shim"])
def test_samples_aten_generates_what_torchgen_generates(tmp_path, flags):
    pytest.importorskip("torchgen")
    common = ("-s", str(ATEN), "--aoti-install-dir")
    fallbacks = str(ATEN / "aoti" / "fallback_ops.py")
    theirs = reference.run(["-c", TORCHGEN_WITH_SAMPLE_FALLBACKS, fallbacks, *common, "theirs/aoti", "-d", "theirs/aten",
                            *flags], cwd=tmp_path, outputs=[Path("theirs")])
    assert theirs.returncode == 0, theirs.stderr
    ours = run_without_torch(tmp_path, "generate", *common, "ours/aoti", "-d", "ours/aten", *flags)
    assert ours.returncode == 0, ours.stderr

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    mine, expected = files(tmp_path / "ours"), files(tmp_path / "theirs")
    assert sorted(mine) == sorted(expected)
    assert [name for name in sorted(expected) if mine[name] != expected[name]] == []
    assert len(expected) == (125 if flags else 102)
    assert sorted(ours.stdout.replace("ours/", "").splitlines()) == \
        sorted(theirs.stdout.replace("theirs/", "").splitlines())


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_samples_aten_aoti_headers_are_compared_unless_updated(tmp_path):
    def generate(*flags: str) -> subprocess.CompletedProcess:
        return run_without_torch(tmp_path, "generate", "-s", str(ATEN), "-d", "out/aten", "--aoti-install-dir",
                                 "out/aoti", "--generate", "sources", *flags)

    aoti = tmp_path / "out" / "aoti"
    first = generate()  # no headers yet: each is named, as gen.py does, and nothing fails
    assert first.returncode == 0, first.stderr
    assert sorted(first.stdout.splitlines()) == [f"out/aoti/c_shim_{d}.h not found" for d in ("aten", "cpu", "cuda")]
    assert generate("--update-aoti-c-shim", "--dry-run").returncode == 0
    assert not (aoti / "c_shim_cpu.h").exists()  # a dry run writes no header
    assert generate("--update-aoti-c-shim").returncode == 0
    matching = generate()
    assert (matching.returncode, matching.stdout) == (0, "")

    header = aoti / "c_shim_cpu.h"
    header.write_text(header.read_text().replace("aoti_torch_cpu_halve(", "aoti_torch_cpu_halve_old("))
    source = aoti / "c_shim_cpu.cpp"
    source.write_text("stale\n")
    broken = generate()
    assert broken.returncode == 1
    assert "opgen: out/aoti/c_shim_cpu.h: the generated AOTInductor C shim header differs" in broken.stderr
    assert "-AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_halve_old(" in broken.stderr
    assert "+AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_halve(" in broken.stderr
    assert source.read_text() == "stale\n"  # the check comes before any write
    assert generate("--update-aoti-c-shim").returncode == 0
    assert "aoti_torch_cpu_halve(" in header.read_text() and source.read_text() != "stale\n"
