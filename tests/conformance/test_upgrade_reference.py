"""`opgen upgrade` on torch_xla's yaml and torch_npu's npu_native_functions.yaml, held to each release's own
gen_backend_stubs: every declaration the report shows is in that release's <Key>NativeFunctions.h as torchgen writes
it, and every declaration that differs between the two headers is in the report (nothing missed). For torch_npu the
header is gen_backend_stubs' for a backend yaml of the file's upstream ops as torchnpugen registers them (read here
with PyYAML, not opgen): torchnpugen's create_backend_index and gen_dispatchkey_nativefunc_headers declare them the
same way in NPUNativeFunctions. The releases' torchgen runs go through tests/reference.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS
from release_files import release_native
from release_fit import fit_to

from opgen_lsp.analysis.upgrade import declaration, plan_of, upgrade_report
from opgen_lsp.index.inputs import load_release
from opgen_lsp.releases import resolve

from .test_release_matrix import _pytorch_shaped, _torchgen

pytestmark = [pytest.mark.versions, pytest.mark.corpus, pytest.mark.slow]

XLA = CORPUS / "pytorch-xla__xla_native_functions.yaml"


NPU = CORPUS / "torch_npu__npu_native_functions.yaml"
# torchnpugen's parse_backend_yaml registers a `supported` map entry only with one of these keys.
NPU_REGISTERED_WITH = {"op_api", "device_check", "impl_ns"}


def _declarations(version: str, backend_yaml: str, tmp_path: Path) -> set[str]:
    """The kernel declarations of the release's own <Key>NativeFunctions.h for `backend_yaml`."""
    folder = release_native(version).parents[4]
    work = tmp_path / version
    work.mkdir()
    source = work / "backend.yaml"
    source.write_text(backend_yaml)
    oracle = _pytorch_shaped(folder, work / "oracle")  # gen_backend_stubs before 2.12 reads ../aten/src/ATen
    done = _torchgen(oracle, "torchgen.gen_backend_stubs", ["-s", str(source), "-o", "out"], work, ["out"])
    assert done.returncode == 0, done.stderr[-2000:]
    [header] = (work / "out").glob("*NativeFunctions.h")
    return {line.strip() for line in header.read_text().splitlines() if line.strip().startswith("static ")}


def _xla_for(version: str) -> str:
    """torch_xla's yaml less the ops the release lacks (its gen_backend_stubs would refuse the file)."""
    release = resolve(version, "test")
    assert release is not None
    return fit_to(XLA.read_text(), release.release)


def _names(entries: list) -> list[str]:
    return [e if isinstance(e, str) else e["func"].split("(")[0] for e in entries or []]


def _npu_upstream(version: str) -> str:
    """A gen_backend_stubs yaml of torch_npu's upstream ops that the release declares: `supported` as torchnpugen
    registers it, less the file's own new ops (custom:), and `symint` likewise."""
    data = yaml.safe_load(NPU.read_text())
    custom = set(_names(data.get("custom", [])) + _names(data.get("custom_autograd", [])))
    declared = set(re.findall(r"^- func: ([\w.]+)\(", release_native(version).read_text(), re.M))
    registered = [e for e in data["supported"] if isinstance(e, str) or NPU_REGISTERED_WITH & set(e)]
    keep = [n for n in _names(registered) if n not in custom and n in declared]
    symint = [n for n in _names(data.get("symint", [])) if n in keep]
    lines = ["backend: PrivateUse1", f"cpp_namespace: {data['cpp_namespace']}", "supported:",
             *(f"- {n}" for n in keep), "symint:", *(f"- {n}" for n in symint)]
    return "\n".join(lines) + "\n"


def _agrees(report, before: set[str], after: set[str]) -> None:
    for change in report.changes:
        assert change.old_declaration in before, change
        assert not change.new_declaration or change.new_declaration in after, change
    assert before - after <= {c.old_declaration for c in report.changes}
    assert after - before <= {c.new_declaration for c in report.changes}


@pytest.mark.parametrize("old,new,changed", [("2.6.0", "2.7.1", 0), ("2.13.0", "2.15.0", 2)])
def test_every_entry_agrees_with_both_releases_headers(old: str, new: str, changed: int, tmp_path: Path) -> None:
    before, after = _declarations(old, _xla_for(old), tmp_path), _declarations(new, _xla_for(new), tmp_path)
    report = upgrade_report(XLA.read_text(), load_release(old), load_release(new))
    assert len(report.changes) == changed and report.compared > 350
    _agrees(report, before, after)


# 2.3 to 2.15: every optional argument's C++ type goes from c10::optional to ::std::optional (a check with teeth:
# the two pairs the issue names change nothing for torch_npu's 47 upstream ops).
@pytest.mark.parametrize("old,new,changed", [("2.6.0", "2.7.1", 0), ("2.13.0", "2.15.0", 0), ("2.3.1", "2.15.0", 26)])
def test_torch_npu_entries_agree_with_both_releases_headers(old: str, new: str, changed: int, tmp_path: Path) -> None:
    before, after = _declarations(old, _npu_upstream(old), tmp_path), _declarations(new, _npu_upstream(new), tmp_path)
    report = upgrade_report(NPU.read_text(), load_release(old), load_release(new), str(NPU))
    assert not report.problem
    assert (len(report.changes), report.compared, len(report.left_out)) == (changed, 47, 14)
    assert {c.kind.name for c in report.changes} <= {"SIGNATURE"}
    assert all(c.old_declaration and c.new_declaration for c in report.changes)
    _agrees(report, before, after)
    # Not only the changes: every compared op's declaration, in each release, is the header's, and no other.
    for version, header in ((old, before), (new, after)):
        native = load_release(version)
        plan = plan_of(NPU.read_text(), native, str(NPU))
        functions = {op.function.func.name: op.function for op in native.functions.ops}
        assert {declaration(functions[i.name], i, plan.kernels, native.release) for i in plan.listed} == header
