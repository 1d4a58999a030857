"""Where opgen.generate writes by default, and what it says of the files it did not write (pure parts)."""

from __future__ import annotations

import os

import pytest

from opgen_lsp.codegen import job as generate_job
from opgen_lsp.lsp.commands import default_output_dir


@pytest.mark.parametrize("source, expected", [
    # PyTorch's own file generates where PyTorch's build puts gen.py's files.
    ("aten/src/ATen/native/native_functions.yaml", "build/aten/src/ATen"),
    ("samples/aten/native/native_functions.yaml", "build/samples/aten"),
    ("native_functions.yaml", "build"),  # at the root, with no native/ folder
    ("samples/native_functions.yaml", "build/samples"),
    ("samples/my_backend/my_backend_functions.yaml", "build/samples/my_backend/my_backend_functions"),
    ("xla_native_functions.yaml", "build/xla_native_functions"),
])
def test_each_yaml_has_a_folder_of_its_own(tmp_path, source, expected):
    assert default_output_dir(str(tmp_path), str(tmp_path / source)) == expected.replace("/", os.sep)


def test_a_yaml_outside_the_workspace(tmp_path):
    one = default_output_dir(str(tmp_path / "ws"), str(tmp_path / "a" / "aten" / "native" / "native_functions.yaml"))
    two = default_output_dir(str(tmp_path / "ws"), str(tmp_path / "b" / "aten" / "native" / "native_functions.yaml"))
    assert one.startswith(os.path.join("build", "outside", "aten-")) and one != two
    assert default_output_dir(None, str(tmp_path / "a" / "aten" / "native" / "native_functions.yaml")) == one


def test_not_generated_files_are_named_with_the_reason():
    result = generate_job.JobResult(written=["a"], missing=["aoti/c_shim_cpu.cpp", "aoti/c_shim_cuda.cpp", "x.h"],
                                    missing_reasons=["needs fallback_ops.py", "needs fallback_ops.py", "not yet"])
    assert result.not_generated() == ["c_shim_cpu.cpp, c_shim_cuda.cpp: needs fallback_ops.py", "x.h: not yet"]
    assert result.summary() == ("1 file(s) written, 0 unchanged, 3 not generated "
                                "(c_shim_cpu.cpp, c_shim_cuda.cpp: needs fallback_ops.py; x.h: not yet)")


def test_the_job_names_the_shims_it_cannot_write(tmp_path, monkeypatch):
    """Without torchgen's fallback ops (none beside the sources, none installed) the shims are named, with why."""
    samples = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "aten", "native", "native_functions.yaml")
    monkeypatch.setattr(generate_job, "load_fallback_ops", lambda source, release: (None, "needs torchgen's aoti/fallback_ops.py"))
    result = generate_job.run(generate_job.NativeJob(os.path.normpath(samples), str(tmp_path / "out")))
    assert result.errors == [] and result.written
    (line,) = result.not_generated()
    names, why = line.split(": ", 1)
    assert why == "needs torchgen's aoti/fallback_ops.py"
    assert {"c_shim_cpu.h", "c_shim_cpu.cpp", "c_shim_cuda.cpp", "c_shim_aten.cpp"} <= set(names.split(", "))
    assert f"{len(result.missing)} not generated (c_shim_cpu.h, c_shim_cpu.cpp" in result.summary()
    assert not (tmp_path / "out" / "aoti" / "c_shim_cpu.cpp").exists()
