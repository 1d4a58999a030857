"""Rename across the real files of a PyTorch tree (issue 31): native_functions.yaml, the backend yaml beside it,
tools/autograd's derivatives.yaml and deprecated.yaml, and the C++ of aten/src/ATen the kernel index knows.

On a copy of the pytorch-2.6 tree (tests/real_trees.py; skipped, saying how to get it, when absent), the operator
add, its overload Tensor and the kernels add_sparse and mkldnn_clone are renamed at once through the server's
rename, as the language server does it (a workspace with the kernel index of the tree), and every edit is applied
(in C++: the kernels' definitions, declarations and native:: calls, TORCH_META_FUNC2(add, Tensor), at::add calls,
at::_ops::add_Tensor and the #includes of add's generated headers). `opgen check --kernels` of the tree then finds
the same as before: no kernel left without a definition, no meta function without its TORCH_META_FUNC2, no
derivative of an op that is gone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from real_trees import NATIVE, tree_or_skip

from opgen_lsp.cli.main import main
from opgen_lsp.index.kernels import KernelIndex, default_cache_path, tree_header_roots
from opgen_lsp.lsp import rename
from opgen_lsp.lsp.convert import UTF16
from opgen_lsp.lsp.workspace import Workspace

pytestmark = pytest.mark.slow

ATEN = Path("aten") / "src" / "ATen"
AUTOGRAD = Path("tools") / "autograd"
CPP = (".cpp", ".cc", ".cu", ".cuh", ".mm", ".h")
# (where in native_functions.yaml, the offset of the name in it, the new name)
RENAMES = (("- func: add.Tensor(", 8, "plus"),  # the operator: add, add_ and their at:: functions
           ("- func: add.Tensor(", 12, "Tensors"),  # the overload: add.Tensor, add_.Tensor, TORCH_META_FUNC2
           ("SparseCPU, SparseCUDA, SparseMeta: add_sparse\n", 35, "plus_sparse"),  # a kernel defined in a .cpp
           ("MkldnnCPU: mkldnn_clone\n", 11, "mkldnn_duplicate"))  # one declared in a .h, defined in #if and #else


def copy_tree(tree: Path, to: Path) -> Path:
    """What `check --kernels` and the rename read: aten/src/ATen (the yamls and the kernels), c10 (the macros of
    its headers), tools/autograd's yamls and version.txt (the release)."""
    shutil.copytree(tree / ATEN, to / ATEN)
    shutil.copytree(tree / "c10", to / "c10")
    (to / AUTOGRAD).mkdir(parents=True)
    for name in ("derivatives.yaml", "deprecated.yaml"):
        shutil.copy(tree / AUTOGRAD / name, to / AUTOGRAD / name)
    shutil.copy(tree / "version.txt", to / "version.txt")
    return to


def check(tree: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, int, str]]:
    """`opgen check --kernels TREE/aten/src/ATen TREE` (the folder the server indexes: one cache), the backend
    yaml (ts_native_functions.yaml) resolved against the tree's native_functions.yaml: (file, code, line,
    message) of each finding, the paths relative."""
    capsys.readouterr()
    main(["check", "--kernels", str(tree / ATEN), "--native-functions", str(tree / NATIVE / "native_functions.yaml"),
          "--format", "json", str(tree)])
    return sorted((str(Path(d["path"]).relative_to(tree)), d["code"], d["range"]["start"]["line"], d["message"])
                  for d in json.loads(capsys.readouterr().out))


def at(text: str, marker: str, offset: int) -> types.Position:
    where = text.index(marker) + offset
    return types.Position(line=text.count("\n", 0, where), character=where - text.rfind("\n", 0, where) - 1)


def workspace_of(tree: Path) -> Workspace:
    """A workspace on the tree with its kernel index, as the server configures and builds it."""
    workspace = Workspace(root=str(tree))
    roots = [str(tree / ATEN)]
    workspace.kernels.roots, workspace.kernels.header_roots = tuple(roots), tree_header_roots(roots)
    workspace.kernels.index = KernelIndex.build(roots, cache=default_cache_path(roots))
    return workspace


def apply(path: Path, edits: list[types.TextEdit]) -> None:
    """The edits of one file (one line each, UTF-16 columns), applied from the last."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        assert e.range.start.line == e.range.end.line
        line = lines[e.range.start.line].encode("utf-16-le")
        start, end = 2 * e.range.start.character, 2 * e.range.end.character
        lines[e.range.start.line] = (line[:start] + e.new_text.encode("utf-16-le") + line[end:]).decode("utf-16-le")
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_renames_across_yaml_derivatives_and_cpp_leave_check_kernels_with_nothing_new(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = copy_tree(tree_or_skip("pytorch-2.6"), tmp_path / "tree")
    before = check(tree, capsys)
    assert not [f for f in before if f[1].startswith("OPG6")]  # (the tree's own kernels are all there)

    native = tree / NATIVE / "native_functions.yaml"
    text = native.read_text(encoding="utf-8")
    workspace = workspace_of(tree)
    workspace.open(native.as_uri(), str(native), text, 1)
    analysis = workspace.analyse(native.as_uri())
    assert analysis is not None
    edits: dict[Path, list[types.TextEdit]] = {}
    for marker, offset, new in RENAMES:
        found = rename.rename(workspace, analysis, at(text, marker, offset), new, UTF16)
        for uri, changes in (found.changes or {}).items():
            edits.setdefault(Path(uri.removeprefix("file://")), []).extend(changes)
    for path, changes in edits.items():
        apply(path, changes)

    counts = {str(p.relative_to(tree)): len(c) for p, c in edits.items()}
    cpp = {p: n for p, n in counts.items() if p.endswith(CPP)}
    assert counts[str(NATIVE / "native_functions.yaml")] == 8 + 2 + 1 + 1
    assert counts[str(AUTOGRAD / "derivatives.yaml")] == 3 and counts[str(AUTOGRAD / "deprecated.yaml")] == 6
    assert counts[str(NATIVE / "ts_native_functions.yaml")] == 2  # add.Tensor under full_codegen
    # at::add calls, #include <ATen/ops/add.h>, the meta function, at::_ops::add_Tensor, the kernel
    assert len(cpp) >= 15 and sum(cpp.values()) >= 50, cpp

    binary_ops = (tree / NATIVE / "BinaryOps.cpp").read_text(encoding="utf-8")
    assert "TORCH_META_FUNC2(plus, Tensors) (" in binary_ops and "TORCH_META_FUNC2(add, Tensor)" not in binary_ops
    # What torchgen generates from the names: the op's struct and its per-operator headers.
    assert "at::_ops::plus_Tensors::redispatch(" in binary_ops and "_ops::add_Tensor" not in binary_ops
    assert "#include <ATen/ops/plus_native.h>\n#include <ATen/ops/plus_ops.h>\n" in binary_ops
    assert "<ATen/ops/add_native.h>" not in binary_ops
    linear = (tree / NATIVE / "Linear.cpp").read_text(encoding="utf-8")
    assert "#include <ATen/ops/plus.h>\n#include <ATen/ops/addmm.h>\n" in linear  # (addmm's is not add's)
    sparse = (tree / NATIVE / "sparse" / "SparseTensorMath.cpp").read_text(encoding="utf-8")
    assert "\nTensor plus_sparse(const Tensor& self" in sparse  # the definition
    assert "return native::plus_sparse(self, other, -alpha);" in sparse  # a call of it (sub_sparse)
    assert "add_sparse(" not in sparse and "at::add_out(" not in sparse
    mkldnn = tree / NATIVE / "mkldnn"
    assert (mkldnn / "TensorShape.cpp").read_text(encoding="utf-8").count("\nTensor mkldnn_duplicate(const Tensor& self") == 2
    assert "\nTensor mkldnn_duplicate(const Tensor& self);" in (mkldnn / "TensorShape.h").read_text(encoding="utf-8")

    assert check(tree, capsys) == before
