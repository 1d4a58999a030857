"""Native-AOT declarations on a real torch 2.15 install: the wheel's torchgen/packaged/ATen with torch/_native
beside it (tools/torchgen_release.py keeps it), where gen.py 2.15 reads torch/_native/ops/topk/aot.py.

opgen generate is byte-identical with the release's gen.py in both layouts and exits 0; declarations opgen
cannot read without running them leave the files that depend on them named (exit 3) and, with
--implemented-only, out. Marked `versions` (the release's folder); the runs of gen.py over the whole real file
`slow` as well.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference
from file_trees import files_under, first_difference

from opgen_lsp.cli import main

from .test_release_matrix import release_folder

pytestmark = pytest.mark.versions

VERSION = "2.15.0"


def gen_py(folder: Path, args: list[str], cwd: Path, outputs: list[str]) -> subprocess.CompletedProcess:
    """The release's own gen.py (python -m torchgen.gen with its folder first on the path), run in cwd through the
    reference cache; `outputs`: the folders it writes there."""
    return reference.run(["-m", "torchgen.gen", *args], cwd=cwd, outputs=[Path(o) for o in outputs],
                         pythonpath=[folder])


def _installed(version: str) -> Path:
    """The release's folder, laid out as an install: torchgen/ and torch/_native/ side by side."""
    folder = release_folder(version)
    if not (folder / "torch" / "_native" / "ops").is_dir():
        pytest.skip(f"{folder} has no torch/_native (an older cache layout): python3 tools/torchgen_release.py "
                    f"{version} extracts it again")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("layout", [[], ["--per-operator-headers"]], ids=["plain", "per-operator"])
def test_generate_on_an_install_is_byte_identical_and_exits_0(layout: list[str], tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    folder = _installed(VERSION)
    args = ["-s", str(folder / "torchgen" / "packaged" / "ATen"), "-d", "aten", "--aoti-install-dir", "aoti", *layout]
    (tmp_path / "torchgen").mkdir()
    done = gen_py(folder, args, tmp_path / "torchgen", ["aten", "aoti"])
    assert done.returncode == 0, done.stderr[-2000:]
    (tmp_path / "opgen").mkdir()
    monkeypatch.chdir(tmp_path / "opgen")
    assert main(["generate", *args]) == 0, capsys.readouterr().err  # without --implemented-only: every file
    expected, got = files_under(tmp_path / "torchgen"), files_under(tmp_path / "opgen")
    assert "DECLARE_DISPATCH(topk_aot_fn, topk_aot_stub)" in expected["aten/NativeAotStubs.h"].decode()
    assert sorted(set(expected) ^ set(got)) == []
    different = [name for name in expected if got[name] != expected[name]]
    assert different == [], f"{len(different)} differ; {different[0]}: " \
                            f"{first_difference(expected[different[0]], got[different[0]])}"


FAMILY = "def declarations():\n    return []\n"


def test_declarations_opgen_cannot_read_name_what_depends_on_them(tmp_path: Path, capsys) -> None:
    """A family module (declarations() builds them): NativeAotStubs and every Register<Key>.cpp named, exit 3;
    with --implemented-only, left out, and nothing written differs from what gen.py would write."""
    folder = _installed(VERSION)
    (tmp_path / "ops" / "fused").mkdir(parents=True)
    (tmp_path / "ops" / "fused" / "aot.py").write_text(FAMILY)
    args = ["generate", "-s", str(folder / "torchgen" / "packaged" / "ATen"), "-d", str(tmp_path / "out"),
            "--aoti-install-dir", str(tmp_path / "aoti"), "--native-aot-ops-dir", str(tmp_path / "ops"), "--dry-run"]
    assert main(args) == 3
    err = capsys.readouterr().err
    named = {line.split(":")[0].strip() for line in err.splitlines() if line.startswith("  ")}
    assert {"NativeAotStubs.h", "NativeAotStubs.cpp", "RegisterCPU_0.cpp", "RegisterCUDAEverything.cpp",
            "RegisterCompositeImplicitAutogradEverything.cpp"} <= named
    assert "a family module" in err and str(tmp_path / "ops" / "fused" / "aot.py") in err
    assert main([*args, "--implemented-only"]) == 0


def test_a_declaration_gen_py_refuses_fails_check_and_generate_alike(tmp_path: Path, capsys) -> None:
    """An install whose aot.py declares an op that is not structured: gen.py fails; opgen check and generate both
    give the error (OPG967), naming the declaration."""
    folder = _installed(VERSION)
    site = tmp_path / "site"
    (site / "torch" / "_native" / "ops" / "relu").mkdir(parents=True)
    (site / "torchgen").symlink_to(folder / "torchgen", target_is_directory=True)
    (site / "torch" / "version.py").write_text((folder / "torch" / "version.py").read_text())
    declaration = (folder / "torch" / "_native" / "ops" / "topk" / "aot.py").read_text()
    aot = site / "torch" / "_native" / "ops" / "relu" / "aot.py"
    aot.write_text(declaration.replace('ATEN_OP = "topk"', 'ATEN_OP = "relu"'))
    aten = site / "torchgen" / "packaged" / "ATen"
    said = f"{aot}:1: native-aot declaration for relu@CUDA: relu is not a structured op"
    assert main(["check", str(aten / "native" / "native_functions.yaml")]) == 1
    assert said in capsys.readouterr().out
    assert main(["generate", "-s", str(aten), "-d", str(tmp_path / "out"), "--dry-run"]) == 1
    assert f"{aot}:1:1: error: {said.split(': ', 1)[1]}" in capsys.readouterr().err
