"""The folders generate makes before writing, as each release's gen.py makes them: core/ and ops/ always, the AOTI
folder from 2.4 and the header-only one from 2.12 (before, gen.py makes neither, and so no empty
torch/csrc/inductor/... under the working folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.codegen.generate import make_folders
from opgen_lsp.codegen.plan import Dirs
from opgen_lsp.releases import release_at

AOTI = "torch/csrc/inductor/aoti_torch/generated"


@pytest.mark.parametrize("version,made", [
    ("2.0", {"out/core", "out/ops"}), ("2.3", {"out/core", "out/ops"}),
    ("2.4", {"out/core", "out/ops", AOTI}), ("2.12", {"out/core", "out/ops", AOTI, "headers"}),
])
def test_the_folders_made_up_front_are_the_release_s(version: str, made: set[str], tmp_path: Path,
                                                     monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert make_folders(Dirs("out", "headers", AOTI), release_at(version)) == ()
    folders = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_dir() and not any(p.iterdir())}
    assert folders == made
