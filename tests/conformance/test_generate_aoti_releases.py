"""The AOTInductor C shims of torch 2.4 to 2.7 (the older shim form: fallback ops as a set) and of 2.3 (a shim for
every op), against each release's own gen.py on its own packaged ATen, in one test each, with the same flags.

Only the shim files are compared (c_shim_<device>.cpp, and the headers with --update-aoti-c-shim): opgen's side
renders just the aoti/ files of its plan, so this holds whatever the rest of the release's files do (the release
matrix compares every file of the releases whose generation is verified). The header check (without
--update-aoti-c-shim) runs both tools' CLIs with --dry-run on opgen's side, which checks the headers before
writing anything. Marked `versions` and `slow`: each case runs the release's gen.py (`--generate sources`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli.generate import options_from_args
from opgen_lsp.cli.main import build_parser
from opgen_lsp.codegen.generate import load_context, plan
from opgen_lsp.codegen.plan import Manager, render
from opgen_lsp.releases import RELEASES, Release

from .test_release_matrix import release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

OLDER_FORM = [r.version for r in RELEASES if not r.aoti_shim_form.fallback_ops_versioned and not r.aoti_shim_form.every_op]
EVERY_OP_FORM = [r.version for r in RELEASES if r.aoti_shim_form.every_op and r.writes_aoti_c_shims]
NO_SHIMS = [r.version for r in RELEASES if not r.writes_aoti_c_shims]  # gen.py before 2.3 has no shim generator
# Where gen.py before 2.4 writes them (it has no --aoti-install-dir), under the folder it runs in.
FIXED_AOTI = Path("torch/csrc/inductor/aoti_torch/generated")
# gen.py's flags that change which shims are written or what they say.
FLAGS = {
    "plain": [],
    "xpu": ["--xpu"],  # c_shim_xpu.cpp too
    "update": ["--update-aoti-c-shim"],  # the headers too; before 2.8 no MPS or XPU shims come with it
    "whitelist-mps": ["--backend-whitelist", "CPU", "--mps"],  # before 2.8 the CPU shims alone, and no MPS ones
    "extend": ["--update-aoti-c-shim", "--extend-aoti-c-shim"],
}


def release(version: str) -> Release:
    return next(r for r in RELEASES if r.version == version)


def _aten(version: str) -> Path:
    return release_folder(version) / "torchgen" / "packaged" / "ATen"


def torchgen(version: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return reference.run(["-m", "torchgen.gen", "-s", str(_aten(version)), "-d", "out/aten",
                          "--aoti-install-dir", "out/aoti", "--generate", "sources", *args],
                         cwd=cwd, outputs=[Path("out")], pythonpath=[release_folder(version)])


def opgen_shims(version: str, *args: str) -> dict[str, bytes]:
    """The aoti/ files of opgen's plan for gen.py's command line, rendered (nothing written)."""
    every_op = release(version).aoti_shim_form.every_op
    aoti = [] if every_op else ["--aoti-install-dir", "out/aoti"]
    parsed = build_parser().parse_args(["generate", "-s", str(_aten(version)), "-d", "out/aten", *aoti,
                                        "--generate", "sources", *args])
    ctx = load_context(options_from_args(parsed, release(version)))
    assert every_op or ctx.fallback_ops is not None, ctx.fallback_ops_missing
    return {p.path: render(p.template, ctx.templates, p.build(), ctx.options.release).encode("utf-8")
            for p in plan(ctx) if p.manager is Manager.aoti and p.build is not None}


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def _takes(version: str, flags: str) -> bool:
    """Whether the release's gen.py has the flags (--xpu and --extend-aoti-c-shim come in 2.6)."""
    r = release(version)
    return (r.gen_py_takes_xpu or "--xpu" not in FLAGS[flags]) and \
        (r.gen_py_takes_extend_aoti_c_shim or "--extend-aoti-c-shim" not in FLAGS[flags])


@pytest.mark.parametrize("version,flags", [(v, f) for v in OLDER_FORM for f in sorted(FLAGS) if _takes(v, f)])
def test_shims_are_byte_identical(version: str, flags: str, tmp_path: Path) -> None:
    done = torchgen(version, tmp_path, *FLAGS[flags])
    assert done.returncode == 0, done.stderr[-2000:]
    expected, got = files_of(tmp_path / "out" / "aoti"), opgen_shims(version, *FLAGS[flags])
    assert expected, "gen.py wrote no shims"
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if got[name] != expected[name]] == []
    # What the older form looks like, so that a test of nothing cannot pass: one version per op, `;;` after a
    # Tensor return, a bare #endif.
    cpu = expected["c_shim_cpu.cpp"].decode()
    assert "_v2(" not in cpu and "new_tensor_handle(std::move(tmp_result));;" in cpu and "\n#endif\n" in cpu


@pytest.mark.parametrize("version,flags", [(v, f) for v in EVERY_OP_FORM for f in ("plain", "whitelist-mps")])
def test_every_op_shims_are_byte_identical(version: str, flags: str, tmp_path: Path) -> None:
    """Before 2.4: a shim for every op with a kernel to call but the pointwise ones, header and source each run,
    under torch/csrc/inductor/aoti_torch/generated of the working folder (gen.py has no AOTI flags)."""
    done = reference.run(["-m", "torchgen.gen", "-s", str(_aten(version)), "-d", "out/aten", "--generate", "sources",
                          *FLAGS[flags]], cwd=tmp_path, outputs=[Path("out"), Path("torch")],
                         pythonpath=[release_folder(version)])
    assert done.returncode == 0, done.stderr[-2000:]
    expected, got = files_of(tmp_path / FIXED_AOTI), opgen_shims(version, *FLAGS[flags])
    assert sorted(expected) == (["c_shim_cpu.cpp", "c_shim_cpu.h"] if flags == "whitelist-mps" else
                                ["c_shim_cpu.cpp", "c_shim_cpu.h", "c_shim_cuda.cpp", "c_shim_cuda.h"])
    assert sorted(got) == sorted(expected)
    assert [name for name in expected if got[name] != expected[name]] == []
    # What the every-op form looks like: ops of no fallback list (addmm.out, addr_), no pointwise op (add.Tensor,
    # add.out), an in-place op's self returned as ret0.
    header = expected["c_shim_cpu.h"].decode()
    assert "aoti_torch_cpu_addmm_out(" in header and "aoti_torch_cpu_add_Tensor(" not in header
    assert "aoti_torch_cpu_add_out(" not in header and "aoti_torch_cpu_abs_(AtenTensorHandle self, AtenTensorHandle* ret0);" in header


@pytest.mark.parametrize("version", NO_SHIMS)
def test_no_shims_where_gen_py_writes_none(version: str, tmp_path: Path) -> None:
    """Before 2.3 gen.py writes no AOTI shim, anywhere; opgen plans none."""
    done = reference.run(["-m", "torchgen.gen", "-s", str(_aten(version)), "-d", "out/aten", "--generate", "sources"],
                         cwd=tmp_path, outputs=[Path("out"), Path("torch")], pythonpath=[release_folder(version)])
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "torch").exists()
    assert not any("c_shim" in p.name for p in (tmp_path / "out").rglob("*"))
    assert (tmp_path / "out" / "aten" / "RegisterCPU.cpp").is_file()  # (gen.py did write its sources)
    assert opgen_shims(version) == {}


def test_the_two_releases_differ_in_their_tensor_arguments() -> None:
    """2.6 passes every Tensor through its handle's pointer; 2.7 resolves the dispatch flags of those it reads."""
    by_release = {v: opgen_shims(v)["c_shim_cpu.cpp"].decode() for v in OLDER_FORM}
    assert "resolve_tensor_dispatch_flags(" not in by_release["2.6.0"]
    assert "resolve_tensor_dispatch_flags(" in by_release["2.7.1"]


def _opgen_cli(version: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opgen_lsp.cli", "generate", "--torch-version", version,
                           "-s", str(_aten(version)), "-d", "out/aten", "--aoti-install-dir", "out/aoti",
                           "--generate", "sources", "--dry-run", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("version", OLDER_FORM)
def test_the_header_check_agrees(version: str, tmp_path: Path) -> None:
    """Without --update-aoti-c-shim gen.py compares the header it would write with the checked-in one: a missing
    one is printed, an equal one passes, an edited one stops it (an AssertionError before 2.8)."""
    update = tmp_path / "update"
    update.mkdir()
    assert torchgen(version, update, "--update-aoti-c-shim", "--backend-whitelist", "CPU").returncode == 0
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    for root in (theirs, ours):
        (root / "out" / "aoti").mkdir(parents=True)
        shutil.copy(update / "out" / "aoti" / "c_shim_cpu.h", root / "out" / "aoti")
    xpu = ["--xpu"] if release(version).gen_py_takes_xpu else []  # (gen.py before 2.6 has no --xpu)
    t = torchgen(version, theirs, "--backend-whitelist", "CPU", *xpu)
    o = _opgen_cli(version, ours, "--backend-whitelist", "CPU", *xpu)
    assert t.returncode == 0 and o.returncode == 0, (t.stderr[-2000:], o.stderr)
    # Before 2.8 the whitelist leaves the CUDA and XPU shims out, and their headers are not looked for either.
    assert t.stdout == o.stdout == ""
    for root in (theirs, ours):
        header = root / "out" / "aoti" / "c_shim_cpu.h"
        edited = header.read_text().replace("aoti_torch_cpu_angle(", "aoti_torch_cpu_angle_renamed(", 1)
        assert edited != header.read_text()
        header.write_text(edited)
    t = torchgen(version, theirs, "--backend-whitelist", "CPU")
    o = _opgen_cli(version, ours, "--backend-whitelist", "CPU")
    assert t.returncode != 0 and "AssertionError" in t.stderr and "unexpectedly changed" in t.stderr
    assert o.returncode == 1 and "Traceback" not in o.stderr
    assert "out/aoti/c_shim_cpu.h: the generated AOTInductor C shim header differs" in o.stderr
    assert "+AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_angle(AtenTensorHandle self, AtenTensorHandle* ret0);" in o.stderr
    # No versions before 2.8: the advice is gen.py's of then (a copy of the old shim kept by hand).
    assert "keep a copy of the op's old shim by hand" in o.stderr and "new_args" not in o.stderr
    # None checked in: printed, not an error.
    for root in (theirs, ours):
        (root / "out" / "aoti" / "c_shim_cpu.h").unlink()
    t = torchgen(version, theirs, "--backend-whitelist", "CPU")
    o = _opgen_cli(version, ours, "--backend-whitelist", "CPU")
    assert t.returncode == 0 and o.returncode == 0, (t.stderr[-2000:], o.stderr)
    assert t.stdout == o.stdout == "out/aoti/c_shim_cpu.h not found\n"


# ---------------------------------------------------------------- OPG960: what the shim generator fails on

RULE_RELEASES = [*OLDER_FORM, "2.13.0"]  # every release's generator has it; 2.13 stands for the newer form
# (2.3's every-op form has the rule too, every_op_shim_failures; the fallback-op edits below do not reach it)
_ANGLE = "- func: angle(Tensor self) -> Tensor"
_ANGLE_OUT = "- func: angle.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
_PROBE = "\n- func: opgen_probe(Tensor self, *, Device[] devices) -> Tensor\n  dispatch:\n    CPU: opgen_probe\n"
# name -> (edits of the release's native_functions.yaml, the text gen.py fails at (None: it does not fail)).
# angle is a fallback op with a CPU kernel in every release (its out= variant gets the same arguments, to keep
# the two grouped).
SHIM_EDITS: dict[str, tuple[tuple[tuple[str, str], ...], str | None]] = {
    "device-list": (((_ANGLE, _ANGLE.replace("self)", "self, *, Device[] devices)")),
                     (_ANGLE_OUT, _ANGLE_OUT.replace("*,", "*, Device[] devices,"))), "Device[] devices) ->"),
    "optional-device-list": (((_ANGLE, _ANGLE.replace("self)", "self, Device?[] devices)")),
                              (_ANGLE_OUT, _ANGLE_OUT.replace("self,", "self, Device?[] devices,"))),
                             "Device?[] devices) ->"),
    # An argument before it without a C form (a Stream) leaves the op without a shim first.
    "no-c-form-first": (((_ANGLE, _ANGLE.replace("self)", "self, Stream s, Device[] devices)")),
                         (_ANGLE_OUT, _ANGLE_OUT.replace("self,", "self, Stream s, Device[] devices,"))), None),
    # An op that is no fallback op gets no shim at all.
    "not-listed": (((_ANGLE, _PROBE.lstrip("\n") + "\n" + _ANGLE),), None),
}


def _edited_tree(version: str, root: Path, edits: tuple[tuple[str, str], ...]) -> Path:
    """A copy of the release's ATen with native_functions.yaml edited, and its fallback_ops.py in aoti/ (where
    opgen looks first; the release's gen.py reads its own, the same file)."""
    aten = root / "ATen"
    shutil.copytree(_aten(version), aten)
    shutil.copytree(release_folder(version) / "torchgen" / "aoti", aten / "aoti")
    native = aten / "native" / "native_functions.yaml"
    text = native.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    native.write_text(text)
    return aten


@pytest.mark.parametrize("case", sorted(SHIM_EDITS))
@pytest.mark.parametrize("version", RULE_RELEASES)
def test_opg960_agrees_with_the_release(version: str, case: str, tmp_path: Path) -> None:
    edits, marker = SHIM_EDITS[case]
    aten = _edited_tree(version, tmp_path, edits)
    done = reference.run(["-m", "torchgen.gen", "-s", str(aten), "-d", "t/aten", "--aoti-install-dir", "t/aoti",
                          "--generate", "sources", "--backend-whitelist", "CPU"],
                         cwd=tmp_path, outputs=[Path("t")], pythonpath=[release_folder(version)])
    native = aten / "native" / "native_functions.yaml"
    checked = subprocess.run([sys.executable, "-m", "opgen_lsp.cli", "check", "--torch-version", version, str(native),
                              "--format", "json"], capture_output=True, text=True)
    generated = subprocess.run([sys.executable, "-m", "opgen_lsp.cli", "generate", "--torch-version", version, "-s",
                                str(aten), "-d", "o/aten", "--aoti-install-dir", "o/aoti", "--generate", "sources",
                                "--backend-whitelist", "CPU", "--implemented-only", "--dry-run"],
                               cwd=tmp_path, capture_output=True, text=True)
    assert "Traceback" not in checked.stderr + generated.stderr
    found = [d for d in json.loads(checked.stdout) if d["severity"] == "error"]
    if marker is None:
        assert done.returncode == 0, done.stderr[-2000:]
        assert found == [] and checked.returncode == 0
        assert generated.returncode == 0, generated.stderr
        return
    assert done.returncode != 0 and "AssertionError: ListType with unsupported element type" in done.stderr
    assert "gen_aoti_c_shim.py" in done.stderr  # where gen.py fails: its shim generator
    text = native.read_text()
    offset = text.index(marker)
    line, col = text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1
    assert [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in found] == [
        ("OPG960", line, col)]
    assert "'aten.angle.default' is an AOTI fallback op" in found[0]["message"]
    assert checked.returncode == 1
    assert generated.returncode == 1 and f"{native}:{line + 1}:{col + 1}: error: " in generated.stderr
