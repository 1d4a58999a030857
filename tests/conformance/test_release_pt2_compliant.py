"""pt2_compliant_tag (Release.aten_ops_get_pt2_compliant_tag): from 2.2 every aten op gets it when tags.yaml
defines it, and generated variants keep it; gen.py 2.1 adds it to no op. 2.1's tags.yaml does not define the tag, so
here it does (as a tree that backported it would): RegisterSchema.cpp of each release's gen.py against opgen's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main

from .test_release_matrix import _aten, release, release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

TAG = "- tag: pt2_compliant_tag\n  desc: |\n    This tag indicates that the operator is guaranteed to work with the PT2 compilation APIs.\n"


@pytest.mark.parametrize("version", ["2.1.2", "2.2.2"])
def test_register_schema_tags_as_the_release_writes_them(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    aten = tmp_path / "ATen"
    shutil.copytree(_aten(folder) / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(_aten(folder) / "native" / "native_functions.yaml", aten / "native" / "native_functions.yaml")
    tags = (_aten(folder) / "native" / "tags.yaml").read_text()
    (aten / "native" / "tags.yaml").write_text(tags if "pt2_compliant_tag" in tags else tags + TAG)
    done = reference.run(["-m", "torchgen.gen", "-s", str(aten), "-d", "theirs", "--generate", "sources"],
                         cwd=tmp_path, outputs=[Path("theirs")], pythonpath=[folder])
    assert done.returncode == 0, done.stderr[-2000:]
    assert main(["generate", "-s", str(aten), "-d", str(tmp_path / "ours"), "--generate", "sources",
                 "--torch-version", version]) == 0
    expected = (tmp_path / "theirs" / "RegisterSchema.cpp").read_text()
    assert (tmp_path / "ours" / "RegisterSchema.cpp").read_text() == expected
    assert ("at::Tag::pt2_compliant_tag" in expected) == release(version).aten_ops_get_pt2_compliant_tag
