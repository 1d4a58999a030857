"""`opgen generate --generate KIND` for one kind alone, against `python -m torchgen.gen` with the same flags.

Both run in one temporary folder with relative paths; the whole output trees (aten/, headeronly/, aoti/)
must hold the same files with the same bytes, and both must print the same lines on stdout (gen.py's
"<aoti header> not found", in its set order, so compared sorted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_generate_aoti import assert_same_tree, run_tool

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@pytest.mark.parametrize("kind, expected, unexpected", [
    ("headers", {"aten/Functions.h", "aten/core/TensorBody.h", "headeronly/enum_tag.h", "aten/CPUFunctions_inl.h"},
     {"aten/Functions.cpp", "aten/Declarations.yaml", "aoti/c_shim_cpu.cpp"}),
    ("sources", {"aten/RegisterCPU_0.cpp", "aten/Functions.cpp", "aten/core/TensorMethods.cpp",
                 "aoti/c_shim_cpu.cpp"},
     {"aten/Functions.h", "headeronly/enum_tag.h", "aten/Declarations.yaml"}),
    ("declarations_yaml", {"aten/Declarations.yaml"}, {"aten/Functions.h", "aten/Functions.cpp"}),
])
def test_one_kind_alone_is_byte_identical(aten: Path, tmp_path: Path, kind: str, expected: set[str],
                                          unexpected: set[str]) -> None:
    theirs = run_tool("torchgen", aten, tmp_path, "theirs", "--generate", kind)
    ours = run_tool("opgen", aten, tmp_path, "ours", "--generate", kind)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert_same_tree(tmp_path / "ours", tmp_path / "theirs")
    written = {str(p.relative_to(tmp_path / "ours")) for p in (tmp_path / "ours").rglob("*") if p.is_file()}
    assert expected <= written and not unexpected & written
    assert sorted(ours.stdout.replace("ours/", "").splitlines()) == \
        sorted(theirs.stdout.replace("theirs/", "").splitlines())
