"""`opgen generate` writes the same bytes as `python -m torchgen.gen`, file by file.

Compared (plain layout, default flags): every file gen.py writes, that is
Register<Key>_N.cpp and Register<Key>Everything.cpp for every dispatch key, RegisterSchema.cpp,
Operators_N.cpp / OperatorsEverything.cpp, Operators.h, MethodOperators.h, Functions.h,
Functions.cpp, NativeFunctions.h, NativeMetaFunctions.h, <Key>Functions.h / _inl.h,
RedispatchFunctions.h, RegistrationDeclarations.h, RegisterBackendSelect.cpp,
RegisterFunctionalization_N.cpp / Everything, FunctionalInverses.h, ViewMetaClasses.h/.cpp,
CompositeViewCopyKernels.cpp, core/TensorBody.h, core/TensorMethods.cpp,
core/ATenOpList.cpp, core/aten_interned_strings.h, enum_tag.h, UfuncCPU_add.cpp,
UfuncCPUKernel_add.cpp, UfuncCUDA_add.cu, VmapGeneratedPlumbing.h and the AOTI shims
c_shim_{cpu,cuda,aten}.cpp (the list is printed), and the -o outputs lists. The generated-by line is compared as is:
opgen writes torchgen's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opgen_lsp.codegen.files.context import GenerateOptions
from opgen_lsp.codegen.generate import generate
from opgen_lsp.codegen.plan import Manager
from opgen_lsp.releases import DEFAULT

from .conftest import TORCHGEN_VARIANT_FLAGS

pytestmark = [pytest.mark.conformance, pytest.mark.slow]

# Files opgen must generate (a regression guard: the set only grows).
MUST_HAVE = {
    "RegisterSchema.cpp", "Operators.h", "MethodOperators.h", "Functions.h", "NativeFunctions.h",
    "NativeMetaFunctions.h", "TensorBody.h", "ATenOpList.cpp", "RegisterCPU_0.cpp", "RegisterCPU_3.cpp",
    "RegisterCPUEverything.cpp", "RegisterCUDA_0.cpp", "RegisterMeta_0.cpp",
    "RegisterCompositeExplicitAutogradNonFunctional_0.cpp", "CPUFunctions.h", "CPUFunctions_inl.h",
    "MetaFunctions_inl.h", "Operators_0.cpp", "Operators_4.cpp", "RedispatchFunctions.h",
    "RegistrationDeclarations.h", "enum_tag.h", "aten_interned_strings.h", "TensorMethods.cpp", "Functions.cpp",
    "RegisterBackendSelect.cpp", "RegisterFunctionalization_0.cpp", "RegisterFunctionalization_3.cpp",
    "RegisterFunctionalizationEverything.cpp", "FunctionalInverses.h", "ViewMetaClasses.h", "ViewMetaClasses.cpp",
    "CompositeViewCopyKernels.cpp", "Declarations.yaml", "UfuncCPU_add.cpp", "UfuncCPUKernel_add.cpp",
    "UfuncCUDA_add.cu", "VmapGeneratedPlumbing.h", "c_shim_cpu.cpp", "c_shim_cuda.cpp", "c_shim_aten.cpp",
}


def _compare(result, dirs: dict[Manager, Path]) -> tuple[list[str], list[str]]:
    same, different = [], []
    for p in result.planned:
        if not p.implemented:
            continue
        ours = Path(dirs[p.manager]) / p.path
        theirs_root = dirs["reference"][p.manager]
        theirs = theirs_root / p.path
        name = str(theirs.relative_to(theirs_root.parent))
        if theirs.exists() and ours.read_bytes() == theirs.read_bytes():
            same.append(name)
        else:
            different.append(name)
    return same, different


def _dirs(root: Path) -> dict:
    aten = root / "aten"
    return {Manager.cpu: aten, Manager.cuda: aten, Manager.cpu_vec: aten, Manager.core: aten / "core",
            Manager.ops: aten / "ops", Manager.headeronly: root / "headeronly", Manager.aoti: root / "aoti"}


def _options(aten: Path, root: Path, **kw) -> GenerateOptions:
    return GenerateOptions(source_path=str(aten), install_dir=str(root / "aten"),
                           headeronly_install_dir=str(root / "headeronly"), aoti_install_dir=str(root / "aoti"),
                           **{"release": DEFAULT, **kw})


def test_every_implemented_file_is_byte_identical(aten: Path, torchgen_gen_output: Path, tmp_path: Path) -> None:
    result = generate(_options(aten, tmp_path))
    assert result.errors == ()
    dirs = _dirs(tmp_path) | {"reference": _dirs(torchgen_gen_output.parent)}
    same, different = _compare(result, dirs)
    print(f"byte-identical ({len(same)}): {' '.join(sorted(same))}")
    print(f"not generated yet ({len(result.missing)}): {' '.join(p.path for p in result.missing)}")
    assert different == []
    assert result.missing == ()
    assert MUST_HAVE <= {Path(n).name for n in same}
    # Every file torchgen wrote is planned: generated, or named as not generated yet.
    planned = {str((dirs["reference"][p.manager] / p.path).resolve()) for p in result.planned}
    written = {str(p.resolve()) for p in torchgen_gen_output.parent.rglob("*") if p.is_file()}
    assert written <= planned


def test_per_operator_headers_are_byte_identical(aten: Path, torchgen_per_operator_output: Path,
                                                 tmp_path: Path) -> None:
    result = generate(_options(aten, tmp_path, per_operator_headers=True))
    assert result.errors == ()
    dirs = _dirs(tmp_path) | {"reference": _dirs(torchgen_per_operator_output.parent)}
    same, different = _compare(result, dirs)
    print(f"--per-operator-headers: byte-identical ({len(same)}), not generated yet ({len(result.missing)}): "
          f"{' '.join(p.path for p in result.missing)}")
    assert different == [] and result.missing == ()
    names = {Path(n).name for n in same}
    assert {"add_ops.h", "add.h", "add_native.h", "add_meta.h", "add_cpu_dispatch.h", "Functions.h",
            "CPUFunctions_inl.h", "RegisterCPU_0.cpp", "MethodOperators.h"} <= names
    assert len([n for n in same if n.startswith("ops/")]) == 7046  # every file of ATen/ops/
    planned = {str((dirs["reference"][p.manager] / p.path).resolve()) for p in result.planned}
    written = {str(p.resolve()) for p in torchgen_per_operator_output.parent.rglob("*") if p.is_file()}
    assert written <= planned and len(written) == 7151


def test_variant_flags_are_byte_identical(aten: Path, torchgen_variant_output: Path, tmp_path: Path) -> None:
    result = generate(_options(aten, tmp_path, generate=frozenset({"sources"}), rocm=True,
                               skip_dispatcher_op_registration=True, backend_whitelist=("CPU", "CUDA")))
    assert result.errors == ()
    dirs = _dirs(tmp_path) | {"reference": _dirs(torchgen_variant_output.parent)}
    same, different = _compare(result, dirs)
    print(f"{' '.join(TORCHGEN_VARIANT_FLAGS)}: byte-identical ({len(same)}): {' '.join(sorted(same))}")
    assert different == []
    assert {"RegisterSchema.cpp", "RegisterCUDA_0.cpp", "RegisterCPU_2.cpp"} <= {Path(n).name for n in same}
    assert not any("Sparse" in n for n in same)


def test_outputs_lists_are_identical(aten: Path, torchgen_outputs_lists: Path, tmp_path: Path) -> None:
    (tmp_path / "lists").mkdir()
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "opgen_lsp.cli", "generate", "-s", str(aten), "-d", "out/aten",
         "--headeronly-install-dir", "out/headeronly", "--aoti-install-dir", "out/aoti", "--dry-run",
         "-o", "lists/deps"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr  # every file is generated
    assert "cannot generate" not in proc.stderr
    names = sorted(p.name for p in torchgen_outputs_lists.iterdir())
    assert names == sorted(p.name for p in (tmp_path / "lists").iterdir())
    for name in names:
        assert (tmp_path / "lists" / name).read_bytes() == (torchgen_outputs_lists / name).read_bytes(), name
    assert not (tmp_path / "out" / "aten" / "Functions.h").exists()  # dry run
