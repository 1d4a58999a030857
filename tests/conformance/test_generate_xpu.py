"""`opgen generate` on torch-xpu-ops' native_functions.yaml (the XPU overlay), against torchgen.gen.

Flags: --xpu --per-operator-headers --backend-whitelist XPU SparseXPU SparseCsrXPU NestedTensorXPU.
torchgen runs on a tree shaped like PyTorch (ROOT/torchgen -> the installed torchgen,
ROOT/aten/src/ATen/{native/*.yaml, templates}), with PYTHONPATH=ROOT.

torchgen's ufunc keys are a set ({CUDA, CPU}); where no earlier op names CPU or CUDA (as in
this yaml), the order of its backend indices, and so of add_native.h, depends on
PYTHONHASHSEED. opgen keeps one order (CUDA, CPU); torchgen runs with a seed giving that order.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import reference
from conftest import CORPUS

from opgen_lsp.codegen.files.context import GenerateOptions
from opgen_lsp.codegen.generate import generate
from opgen_lsp.codegen.plan import Manager
from opgen_lsp.releases import DEFAULT

pytestmark = [pytest.mark.conformance, pytest.mark.slow, pytest.mark.corpus]

XPU_OPS = CORPUS / "native-torch-xpu-ops"
BACKENDS = ("XPU", "SparseXPU", "SparseCsrXPU", "NestedTensorXPU")


def _seed_with_cuda_first() -> str:
    probe = "from torchgen.model import UFUNC_DISPATCH_KEYS as U; print(','.join(k.name for k in U))"
    for seed in range(50):
        out = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                             capture_output=True, text=True, check=True).stdout.strip()
        if out == "CUDA,CPU":
            return str(seed)
    raise AssertionError("no PYTHONHASHSEED below 50 orders torchgen's ufunc keys CUDA, CPU")


@pytest.fixture(scope="session")
def xpu_tree(tmp_path_factory) -> Path:
    import torchgen

    root = tmp_path_factory.mktemp("xpu_tree")
    aten = root / "aten" / "src" / "ATen"
    (aten / "native").mkdir(parents=True)
    (root / "torchgen").symlink_to(os.path.dirname(torchgen.__file__))
    (aten / "templates").symlink_to(Path(os.path.dirname(torchgen.__file__), "packaged", "ATen", "templates"))
    for name in ("native_functions.yaml", "tags.yaml"):
        (aten / "native" / name).symlink_to(XPU_OPS / name)
    return root


@pytest.fixture(scope="session")
def torchgen_xpu_output(xpu_tree: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("torchgen_xpu")
    reference.run(["-m", "torchgen.gen", "-s", str(xpu_tree / "aten" / "src" / "ATen"),
                   "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                   "--aoti-install-dir", str(out / "aoti"), "--xpu", "--per-operator-headers",
                   "--backend-whitelist", *BACKENDS], cwd=out, outputs=[out / "aten", out / "headeronly", out / "aoti"],
                  pythonpath=[xpu_tree], env={"PYTHONHASHSEED": _seed_with_cuda_first()}, check=True)
    return out


def _folder(root: Path, manager: Manager) -> Path:
    return {Manager.core: root / "aten" / "core", Manager.ops: root / "aten" / "ops",
            Manager.headeronly: root / "headeronly", Manager.aoti: root / "aoti"}.get(manager, root / "aten")


def test_xpu_overlay_is_byte_identical(xpu_tree: Path, torchgen_xpu_output: Path, tmp_path: Path) -> None:
    result = generate(GenerateOptions(
        source_path=str(xpu_tree / "aten" / "src" / "ATen"), install_dir=str(tmp_path / "aten"),
        headeronly_install_dir=str(tmp_path / "headeronly"), aoti_install_dir=str(tmp_path / "aoti"),
        per_operator_headers=True, xpu=True, backend_whitelist=BACKENDS, release=DEFAULT))
    assert result.errors == ()
    same, different, planned = [], [], set()
    for p in result.planned:
        theirs = _folder(torchgen_xpu_output, p.manager) / p.path
        planned.add(theirs)
        if not p.implemented:
            continue
        ours = _folder(tmp_path, p.manager) / p.path
        (same if theirs.exists() and ours.read_bytes() == theirs.read_bytes() else different).append(p.path)
    print(f"XPU overlay: byte-identical ({len(same)}), not generated yet ({len(result.missing)}): "
          f"{' '.join(p.path for p in result.missing)}")
    assert different == []
    assert {"add_native.h", "RegisterXPU_0.cpp", "XPUFunctions_inl.h", "add_xpu_dispatch.h"} <= set(same)
    written = {p for p in torchgen_xpu_output.rglob("*") if p.is_file()}
    assert written <= planned
    assert len(same) + len(result.missing) == len(written)
