"""Rename on the real files (torchgen's packaged native_functions.yaml, tags.yaml, derivatives.yaml and
deprecated.yaml, as one tree), in-process: the operator add, its overload Tensor and the kernel add_out renamed
at once leave `opgen check` of the tree with nothing to report, as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from opgen_lsp.cli.main import main
from opgen_lsp.lsp import rename
from opgen_lsp.lsp.convert import UTF16
from opgen_lsp.lsp.workspace import Workspace


def at(text: str, marker: str, offset: int) -> types.Position:
    where = text.index(marker) + offset
    return types.Position(line=text.count("\n", 0, where), character=where - text.rfind("\n", 0, where) - 1)


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_renames_leave_the_real_tree_clean(aten: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    tree = tmp_path / "packaged"
    shutil.copytree(aten / "native", tree / "ATen" / "native")
    (tree / "autograd").mkdir()
    for name in ("derivatives.yaml", "deprecated.yaml"):
        shutil.copy(aten.parent / "autograd" / name, tree / "autograd" / name)
    native = tree / "ATen" / "native" / "native_functions.yaml"
    text = native.read_text(encoding="utf-8")
    workspace = Workspace(root=str(tmp_path))
    workspace.open(native.as_uri(), str(native), text, 1)
    analysis = workspace.analyse(native.as_uri())
    assert analysis is not None

    edits: dict[str, list[types.TextEdit]] = {}
    for marker, offset, new in (("- func: add.Tensor(", 9, "plus"), ("- func: add.Tensor(", 13, "Tensors"),
                                ("MPS: add_out_mps", 7, "plus_out_mps")):
        found = rename.rename(workspace, analysis, at(text, marker, offset), new, UTF16)
        for uri, changes in (found.changes or {}).items():
            edits.setdefault(uri, []).extend(changes)
    counts = {Path(uri).name: len(changes) for uri, changes in edits.items()}
    # add: 5 func: names, 2 structured_delegate and 1 autogen; Tensor: add.Tensor and add_.Tensor; the kernel: 1.
    # derivatives.yaml: add.Tensor (twice) and add.Scalar; deprecated.yaml: 3 names and 3 aten: calls (add_out too).
    assert counts == {"native_functions.yaml": 11, "derivatives.yaml": 3, "deprecated.yaml": 6}

    for uri, changes in edits.items():
        path = Path(uri.removeprefix("file://"))
        lines = path.read_text(encoding="utf-8").split("\n")
        for e in sorted(changes, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            line = lines[e.range.start.line]
            lines[e.range.start.line] = line[:e.range.start.character] + e.new_text + line[e.range.end.character:]
        path.write_text("\n".join(lines), encoding="utf-8")
    renamed = native.read_text(encoding="utf-8")
    assert "- func: plus.Tensors(" in renamed and "- func: plus_.Tensors(" in renamed and "\n- func: add.Tensor(" not in renamed
    assert "aten: plus_out(out, self, other, alpha)" in (tree / "autograd" / "deprecated.yaml").read_text()

    capsys.readouterr()
    assert main(["check", "--format", "json", str(tree)]) == 0
    assert capsys.readouterr().out.strip() == "[]"
