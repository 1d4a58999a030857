"""`opgen upgrade` on torch_xla's yaml, held to each release's own gen_backend_stubs: every declaration the report
shows is in that release's XLANativeFunctions.h as torchgen writes it, and every declaration that differs between
the two headers is in the report (nothing missed). The releases' torchgen runs go through tests/reference.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS
from release_files import release_native

from opgen_lsp.analysis.upgrade import upgrade_report
from opgen_lsp.index.inputs import load_release
from opgen_lsp.releases import resolve

from .test_release_matrix import _fit_to, _pytorch_shaped, _torchgen

pytestmark = [pytest.mark.versions, pytest.mark.corpus, pytest.mark.slow]

XLA = CORPUS / "pytorch-xla__xla_native_functions.yaml"


def _declarations(version: str, tmp_path: Path) -> set[str]:
    """The kernel declarations of the release's own XLANativeFunctions.h for torch_xla's yaml (less the ops the
    release lacks: its gen_backend_stubs would refuse the file)."""
    folder = release_native(version).parents[4]
    release = resolve(version, "test")
    assert release is not None
    work = tmp_path / version
    work.mkdir()
    source = work / "xla_native_functions.yaml"
    source.write_text(_fit_to(XLA.read_text(), release.release))
    oracle = _pytorch_shaped(folder, work / "oracle")  # gen_backend_stubs before 2.12 reads ../aten/src/ATen
    done = _torchgen(oracle, "torchgen.gen_backend_stubs", ["-s", str(source), "-o", "out"], work, ["out"])
    assert done.returncode == 0, done.stderr[-2000:]
    header = (work / "out" / "XLANativeFunctions.h").read_text()
    return {line.strip() for line in header.splitlines() if line.strip().startswith("static ")}


@pytest.mark.parametrize("old,new,changed", [("2.6.0", "2.7.1", 0), ("2.13.0", "2.15.0", 2)])
def test_every_entry_agrees_with_both_releases_headers(old: str, new: str, changed: int, tmp_path: Path) -> None:
    before, after = _declarations(old, tmp_path), _declarations(new, tmp_path)
    report = upgrade_report(XLA.read_text(), load_release(old), load_release(new))
    assert len(report.changes) == changed and report.compared > 350
    for change in report.changes:
        assert change.old_declaration in before, change
        assert not change.new_declaration or change.new_declaration in after, change
    assert before - after <= {c.old_declaration for c in report.changes}
    assert after - before <= {c.new_declaration for c in report.changes}
