"""A `Tensor?` return (Release.optional_tensor_returns): gen.py from 2.2 gives it a C++ type
(::std::optional<at::Tensor>), gen.py 2.1 fails on it (unrecognized return type) after its parse, which the oracle of
the matrix does not run, so each release's whole gen.py runs here, on its own yaml with one such op added; opgen
errs (OPG208, on the return) exactly where that gen.py fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import reference

from opgen_lsp.index.native import NativeParser, TagsParser

from .test_release_matrix import _aten, release, release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

ENTRY = "\n- func: opgen_optional_return(Tensor self) -> Tensor?\n  dispatch:\n    CPU: opgen_optional_return\n"


@pytest.mark.parametrize("version", ["2.1.2", "2.2.2"])
def test_an_optional_tensor_return_as_the_release_generates_it(version: str, tmp_path: Path) -> None:
    folder = release_folder(version)
    aten = tmp_path / "ATen"
    shutil.copytree(_aten(folder) / "templates", aten / "templates")
    (aten / "native").mkdir()
    shutil.copy(_aten(folder) / "native" / "tags.yaml", aten / "native" / "tags.yaml")
    text = (_aten(folder) / "native" / "native_functions.yaml").read_text() + ENTRY
    (aten / "native" / "native_functions.yaml").write_text(text)
    done = reference.run(["-m", "torchgen.gen", "-s", str(aten), "-d", "out", "--generate", "headers"],
                         cwd=tmp_path, outputs=[Path("out")], pythonpath=[folder])
    tags = TagsParser().parse((aten / "native" / "tags.yaml").read_text()).names
    r = release(version)
    errors = [d for d in NativeParser(release=r).parse(text, tags).diagnostics if d.is_error]
    line = text.count("\n", 0, text.index("- func: opgen_optional_return"))
    if r.optional_tensor_returns:
        assert done.returncode == 0 and errors == [], (done.stderr[-500:], [d.message for d in errors])
    else:
        assert done.returncode != 0 and "unrecognized return type Tensor?" in done.stderr, done.stderr[-500:]
        assert [(d.code, d.span.start_line) for d in errors] == [("OPG208", line)]
