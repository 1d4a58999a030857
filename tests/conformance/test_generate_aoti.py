"""The AOTInductor C shim headers of `opgen generate`, against `python -m torchgen.gen` run with the same flags.

gen.py writes c_shim_<device>.h only with --update-aoti-c-shim (which also keeps the MPS and XPU kernels);
without it, it compares the header it would write with the one in the aoti install dir: a missing one is
printed ("<path> not found"), a different one is an error with a unified diff. Each test runs both tools
in one temporary folder, with relative paths, so that what they print can be compared as is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import reference

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

# Sources only (the shims are written with them); the CPU registrations only, to keep each run short.
FAST = ("--generate", "sources", "--backend-whitelist", "CPU")
DEVICES = ("aten", "cpu", "cuda", "mps", "xpu")


def run_tool(tool: str, aten: Path, cwd: Path, out: str, *flags: str) -> subprocess.CompletedProcess:
    args = ["-s", str(aten), "-d", f"{out}/aten", "--headeronly-install-dir", f"{out}/headeronly",
            "--aoti-install-dir", f"{out}/aoti", *flags]
    if tool == "torchgen":
        return reference.run(["-m", "torchgen.gen", *args], cwd=cwd, outputs=[Path(out)])
    return subprocess.run([sys.executable, "-m", "opgen_lsp.cli", "generate", *args], cwd=cwd, capture_output=True,
                          text=True)


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same_tree(ours: Path, theirs: Path) -> None:
    mine, reference = files_of(ours), files_of(theirs)
    assert sorted(mine) == sorted(reference)
    assert [name for name in reference if mine[name] != reference[name]] == []


@pytest.fixture(scope="module")
def updated(aten: Path, tmp_path_factory) -> Path:
    """torchgen --update-aoti-c-shim (sources): the folder holding its aten/ and aoti/."""
    root = tmp_path_factory.mktemp("torchgen_update_aoti")
    proc = run_tool("torchgen", aten, root, "out", "--generate", "sources", "--update-aoti-c-shim")
    assert proc.returncode == 0, proc.stderr
    return root / "out"


def test_update_writes_byte_identical_headers(aten: Path, updated: Path, tmp_path: Path) -> None:
    proc = run_tool("opgen", aten, tmp_path, "out", "--generate", "sources", "--update-aoti-c-shim")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (updated / "aoti").iterdir()) == sorted(
        f"c_shim_{d}.{ext}" for d in DEVICES for ext in ("h", "cpp"))
    assert_same_tree(tmp_path / "out" / "aoti", updated / "aoti")
    # The flag also keeps the MPS and XPU kernels: their registrations are written, as gen.py's.
    assert (updated / "aten" / "RegisterMPS_0.cpp").exists() and (updated / "aten" / "RegisterXPU_0.cpp").exists()
    assert_same_tree(tmp_path / "out" / "aten", updated / "aten")


def test_extend_writes_byte_identical_shims(aten: Path, tmp_path: Path) -> None:
    flags = (*FAST, "--update-aoti-c-shim", "--extend-aoti-c-shim")
    theirs = run_tool("torchgen", aten, tmp_path, "theirs", *flags)
    ours = run_tool("opgen", aten, tmp_path, "ours", *flags)
    assert theirs.returncode == 0 and ours.returncode == 0, (theirs.stderr, ours.stderr)
    assert "extend/c_shim_cpu.h" in (tmp_path / "ours" / "aoti" / "c_shim_cpu.cpp").read_text()
    assert_same_tree(tmp_path / "ours" / "aoti", tmp_path / "theirs" / "aoti")


def _checked_in(updated: Path, folder: Path, devices: tuple[str, ...]) -> None:
    folder.mkdir(parents=True)
    for device in devices:
        shutil.copy(updated / "aoti" / f"c_shim_{device}.h", folder)


def test_matching_headers_pass_and_missing_ones_are_printed(aten: Path, updated: Path, tmp_path: Path) -> None:
    # Without the flag the devices are CPU, CUDA and aten; the aten header is left out of one folder.
    for out in ("theirs", "ours"):
        _checked_in(updated, tmp_path / out / "aoti", ("cpu", "cuda"))
    theirs = run_tool("torchgen", aten, tmp_path, "theirs", *FAST)
    ours = run_tool("opgen", aten, tmp_path, "ours", *FAST)
    assert theirs.returncode == 0 and ours.returncode == 0, (theirs.stderr, ours.stderr)
    assert theirs.stdout == "theirs/aoti/c_shim_aten.h not found\n"
    assert ours.stdout == "ours/aoti/c_shim_aten.h not found\n"
    assert_same_tree(tmp_path / "ours" / "aoti", tmp_path / "theirs" / "aoti")
    assert (tmp_path / "ours" / "aoti" / "c_shim_cpu.cpp").exists()


def _diff_of(text: str) -> list[str]:
    """The unified diff lines inside a message (from '--- expected' to the last hunk line)."""
    lines = text.splitlines()
    start = lines.index("--- expected")
    body = [line.rstrip() for line in lines[start:] if line[:1] in ("-", "+", " ", "@")]
    while body and not body[-1]:  # gen.py's message ends in an indented blank line
        body.pop()
    return body


def test_an_edited_header_fails_both_with_the_same_diff(aten: Path, updated: Path, tmp_path: Path) -> None:
    for out in ("theirs", "ours"):
        _checked_in(updated, tmp_path / out / "aoti", ("aten", "cpu", "cuda"))
        header = tmp_path / out / "aoti" / "c_shim_cpu.h"
        edited = header.read_text().replace("aoti_torch_cpu_abs(", "aoti_torch_cpu_abs_renamed(", 1)
        assert edited != header.read_text()
        header.write_text(edited)
    theirs = run_tool("torchgen", aten, tmp_path, "theirs", *FAST)
    ours = run_tool("opgen", aten, tmp_path, "ours", *FAST)
    assert theirs.returncode != 0 and "RuntimeError" in theirs.stderr
    assert "indicates an AOTInductor fallback operator ABI backward compatibility breakage" in theirs.stderr
    assert ours.returncode == 1
    assert "opgen: ours/aoti/c_shim_cpu.h: the generated AOTInductor C shim header differs" in ours.stderr
    assert "Traceback" not in ours.stderr
    assert _diff_of(ours.stderr) == _diff_of(theirs.stderr)
    assert "+AOTI_TORCH_EXPORT AOTITorchError aoti_torch_cpu_abs(AtenTensorHandle self, " \
           "AtenTensorHandle* ret0);" in ours.stderr
    # Neither rewrote the header; opgen stops before writing anything.
    for out in ("theirs", "ours"):
        assert "aoti_torch_cpu_abs_renamed(" in (tmp_path / out / "aoti" / "c_shim_cpu.h").read_text()
    assert not (tmp_path / "ours" / "aten").exists() or not any((tmp_path / "ours" / "aten").rglob("*.cpp"))
