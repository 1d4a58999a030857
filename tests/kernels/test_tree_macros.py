"""Macros the way a real PyTorch tree writes them (issue 18), on trees of our own C++.

Each pattern is one PyTorch's own sources use (see benchmarks/kernel_accuracy.py for the
measurement on real trees): an X-macro whose list lives in a c10 header, `static` before
a macro that defines several functions, a macro from a header of another folder, a macro
giving the head of a definition whose body follows, a comment over several lines inside a
#define, and kernels outside native/. Each is found, and reported once taken out.
"""

from __future__ import annotations

from pathlib import Path

from opgen_lsp.analysis.kernels import Requirement, is_met
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.syntax.cpp_scan import DEFINITION, STATIC, scan

LIST_HEADER = """\
#pragma once
#define FORALL_PLAIN_KINDS(_) \\
  _(uint8_t, Small)           \\
  _(int64_t, Large)
#define FORALL_KINDS_AND(EXTRA, _) \\
  FORALL_PLAIN_KINDS(_)            \\
  _(decltype(::c10::impl::KindToType<::c10::Kind::EXTRA>::t), EXTRA)
"""
CAST_OPS = """\
#include <c10/core/Kinds.h>
namespace at {
namespace native {
#define DEFINE_RECAST(_1, n)                               \\
  Tensor _recast_##n(const Tensor& self, bool exact) {     \\
    return self.to(Kind::n, exact);                        \\
  }

FORALL_KINDS_AND(Half, DEFINE_RECAST)
#undef DEFINE_RECAST
} // namespace native
} // namespace at
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def checkout(root: Path, files: dict[str, str]) -> Path:
    """A PyTorch-shaped tree: aten/src/ATen and c10 (the files are given relative to the tree)."""
    (root / "aten" / "src" / "ATen" / "native").mkdir(parents=True, exist_ok=True)
    (root / "c10" / "core").mkdir(parents=True, exist_ok=True)
    return write(root, files)


def met(index: KernelIndex, name: str, namespace: str = "at::native") -> bool:
    return is_met(index, Requirement(op=None, kind=DEFINITION, name=name, namespace=namespace))  # type: ignore[arg-type]


TREE = {"c10/core/Kinds.h": LIST_HEADER, "aten/src/ATen/native/TensorFactories.cpp": CAST_OPS}


def test_an_x_macro_list_from_a_c10_header(tmp_path: Path) -> None:
    root = checkout(tmp_path / "a", TREE)
    index = KernelIndex.build([str(root)], workers=1)
    assert index.roots == [str(root / "aten" / "src" / "ATen")]  # the checkout's root stands for its ATen
    assert all(met(index, f"_recast_{n}") for n in ("Small", "Large", "Half"))
    hits = index.find("_recast_Large", (DEFINITION,))
    assert [(h.path.endswith("TensorFactories.cpp"), h.symbol.line) for h in hits] == [(True, 8)]  # the invocation
    # an item gone from the list, in c10, is reported; and the list invoked no more
    shorter = checkout(tmp_path / "b", {**TREE, "c10/core/Kinds.h": LIST_HEADER.replace("  _(int64_t, Large)", "")})
    index = KernelIndex.build([str(shorter)], workers=1)
    assert not met(index, "_recast_Large") and met(index, "_recast_Small")
    gone = checkout(tmp_path / "c", {**TREE, "aten/src/ATen/native/TensorFactories.cpp":
                                     CAST_OPS.replace("FORALL_KINDS_AND(Half, DEFINE_RECAST)", "")})
    assert not met(KernelIndex.build([str(gone)], workers=1), "_recast_Half")


def test_the_index_follows_an_edit_of_the_list_in_c10(tmp_path: Path) -> None:
    root = checkout(tmp_path, TREE)
    index = KernelIndex.build([str(root)], workers=1)
    header = root / "c10/core/Kinds.h"
    assert index.covers(str(header))
    header.write_text(LIST_HEADER.replace("_(int64_t, Large)", "_(int64_t, Huge)"))
    index.update(str(header))
    assert met(index, "_recast_Huge") and not met(index, "_recast_Large")


def test_the_list_is_not_found_when_only_native_is_indexed_outside_a_tree(tmp_path: Path) -> None:
    # Without c10 beside it, the list macro is unknown: the kernels are not found (nothing is guessed).
    root = write(tmp_path, {"native/TensorFactories.cpp": CAST_OPS})
    assert not met(KernelIndex.build([str(root / "native")], workers=1), "_recast_Small")


SPARSE = """\
namespace at::native {
#define CREATE_OUT(op) \\
  Tensor& op##_sparse_grid_out(const Tensor& self, Tensor& result) { return result; }
#define CREATE_FUNCTIONAL(op) \\
  Tensor op##_sparse_grid(const Tensor& self) { return self; }
#define CREATE_INPLACE(op) \\
  Tensor& op##_sparse_grid_(Tensor& self) { return self; }
#define CREATE_UFUNC(op) \\
  CREATE_OUT(op)         \\
  CREATE_FUNCTIONAL(op)  \\
  CREATE_INPLACE(op)

CREATE_UFUNC(abs)
CREATE_UFUNC(neg)

C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED("-Wunused-function")
static CREATE_UFUNC(relu)
C10_DIAGNOSTIC_POP()

Tensor& round_sparse_grid_out(const Tensor& self, Tensor& result) {
  return result;
}
}
"""


def test_static_before_a_macro_binds_to_its_first_function_only(tmp_path: Path) -> None:
    symbols = {(s.name, s.namespace) for s in scan(SPARSE) if s.kind == DEFINITION}
    assert ("relu_sparse_grid_out", f"at::native::{STATIC}") in symbols
    assert {("relu_sparse_grid", "at::native"), ("relu_sparse_grid_", "at::native"),
            ("round_sparse_grid_out", "at::native"), ("neg_sparse_grid_", "at::native")} <= symbols
    index = KernelIndex.build([str(write(tmp_path / "a", {"Sparse.cpp": SPARSE}))], workers=1)
    assert met(index, "relu_sparse_grid") and met(index, "round_sparse_grid_out")
    assert not met(index, "relu_sparse_grid_out")  # static: internal linkage
    deleted = SPARSE.replace("static CREATE_UFUNC(relu)", "")
    index = KernelIndex.build([str(write(tmp_path / "b", {"Sparse.cpp": deleted}))], workers=1)
    assert not met(index, "relu_sparse_grid_") and met(index, "round_sparse_grid_out")


def test_each_function_of_a_macro_sequence_is_located_at_its_own_invocation() -> None:
    lines = {s.name: s.line for s in scan(SPARSE) if s.kind == DEFINITION}
    assert lines["abs_sparse_grid_"] == 12 and lines["neg_sparse_grid"] == 13 and lines["relu_sparse_grid"] == 16
    assert lines["round_sparse_grid_out"] == 19


def test_a_macro_from_a_header_of_another_folder(tmp_path: Path) -> None:
    header = "#pragma once\n#define DEFINE_GRID_KERNEL(name) \\\n  Tensor name##_grid(const Tensor& self) { return self; }\n"
    user = "#include <ATen/core/GridMacros.h>\nnamespace at::native {\nDEFINE_GRID_KERNEL(lattice)\n}\n"
    root = checkout(tmp_path / "a", {"aten/src/ATen/core/GridMacros.h": header,
                                     "aten/src/ATen/native/sparse/Grid.cpp": user})
    assert met(KernelIndex.build([str(root)], workers=1), "lattice_grid")
    # Indexing native/ alone still reads the headers of the tree around it for macros.
    assert met(KernelIndex.build([str(root / "aten/src/ATen/native")], workers=1), "lattice_grid")


def test_the_nearest_header_wins_when_two_define_a_macro(tmp_path: Path) -> None:
    cpu = "#define KERNEL_NAME(n) Tensor n##_cpu_variant(const Tensor& s) { return s; }\n"
    cuda = "#define KERNEL_NAME(n) Tensor n##_cuda_variant(const Tensor& s) { return s; }\n"
    user = "namespace at::native {\nKERNEL_NAME(spin)\n}\n"
    root = checkout(tmp_path, {"aten/src/ATen/native/cpu/Names.h": cpu, "aten/src/ATen/native/cuda/Names.h": cuda,
                               "aten/src/ATen/native/cuda/Spin.cu": user})
    index = KernelIndex.build([str(root)], workers=1)
    assert met(index, "spin_cuda_variant") and not met(index, "spin_cpu_variant")


def test_a_macro_giving_the_head_of_a_definition_whose_body_follows() -> None:
    text = ("namespace at::native {\n#define KERNEL_HEAD(name) Tensor name(const Tensor& self)\n"
            "KERNEL_HEAD(headed) {\n  return self;\n}\nKERNEL_HEAD(only_declared);\n}\n")
    kinds = {s.name: s.kind for s in scan(text) if s.name in ("headed", "only_declared")}
    assert kinds == {"headed": DEFINITION, "only_declared": "declaration"}


def test_a_comment_over_several_lines_inside_a_define_does_not_end_it() -> None:
    text = """\
namespace at {
namespace native {
namespace {
#define DISPATCH_THING(QUERY, FUNC)          \\
  {                                          \\
    /* a comment over two lines, inside      \\
    the macro */                             \\
    FUNC();                                  \\
  }
} // namespace
Tensor attention_kernel(const Tensor& q) { return q; }
} // namespace native
} // namespace at
"""
    assert [(s.name, s.namespace) for s in scan(text) if s.kind == DEFINITION] == [("attention_kernel", "at::native")]


def test_kernels_outside_native_count_in_a_checkout(tmp_path: Path) -> None:
    context = "namespace at {\nnamespace native {\nbool is_grid_available() { return true; }\n}\n}\n"
    pinned = "namespace at::native {\nbool is_pinned_grid(const Tensor& self) { return false; }\n}\n"
    root = checkout(tmp_path, {"aten/src/ATen/grid/Context.cpp": context, "aten/src/ATen/grid/Pinned.cpp": pinned})
    index = KernelIndex.build([str(root)], workers=1)
    assert met(index, "is_grid_available") and met(index, "is_pinned_grid")
    # what counts is still at::native: the same name elsewhere does not
    assert not met(index, "is_grid_available", "at::grid")


def test_a_macro_that_expands_to_itself_stops() -> None:
    text = ("namespace at::native {\n#define LOOP(x) LOOP(x) Tensor x##_k(const Tensor& s) { return s; }\n"
            "#define PING(x) PONG(x)\n#define PONG(x) PING(x)\nLOOP(spun)\nPING(a)\n"
            "Tensor after_loops(const Tensor& s) { return s; }\n}\n")
    assert {s.name for s in scan(text) if s.kind == DEFINITION} == {"spun_k", "after_loops"}


def test_a_pasted_name_of_an_object_like_macro_is_replaced() -> None:
    # A vendor tree's pattern: `mod EXTRA_##N` pastes EXTRA_0 (nothing) or EXTRA_1 (one more parameter); the
    # parameter types are the expanded ones, and object-like macros outside a macro's expansion stay as written.
    text = ("namespace at::native {\n#define EXTRA_0\n#define EXTRA_1 , const Tensor& mu\n#define KIND Tensor\n"
            "#define DEFINE_MOD(NAME, N) \\\n  Tensor NAME##_mod(const Tensor& a, const Tensor& mod EXTRA_##N, \\\n"
            "      int64_t limbs) { return a; }\n"
            "DEFINE_MOD(add, 0)\nDEFINE_MOD(mul, 1)\nKIND plain(const Tensor& a) { return a; }\n}\n")
    found = {s.name: s.params for s in scan(text) if s.kind == DEFINITION}
    assert found == {"add_mod": "const Tensor&,const Tensor&,int64_t",
                     "mul_mod": "const Tensor&,const Tensor&,const Tensor&,int64_t", "plain": "const Tensor&"}


def test_object_like_macros_are_rescanned_and_a_cycle_stops() -> None:
    text = ("namespace at::native {\n#define A B\n#define B , int x\n#define C D\n#define D C\n"
            "#define DEFINE(N, E) Tensor N##_k(const Tensor& s E) { return s; }\nDEFINE(chain, A)\nDEFINE(cycle, C)\n}\n")
    found = {s.name: s.params for s in scan(text) if s.kind == DEFINITION}
    assert found["chain_k"] == "const Tensor&,int"  # A -> B -> the parameter
    assert set(found) == {"chain_k", "cycle_k"}  # C -> D -> C, left as the preprocessor leaves it


def test_an_exponential_macro_is_cut_off(tmp_path: Path) -> None:
    # Each level doubles the text: 2**40 copies are never built; the kernel after it is still found.
    levels = "".join(f"#define L{i}(x) L{i - 1}(x) L{i - 1}(x)\n" for i in range(1, 41))
    text = ("namespace at::native {\n#define L0(x) Tensor x(const Tensor& s);\n" + levels + "L40(grown)\n"
            "Tensor after_growth(const Tensor& s) { return s; }\n}\n")
    assert "after_growth" in {s.name for s in scan(text) if s.kind == DEFINITION}


def test_a_warm_start_reuses_the_files_scanned_again_until_a_header_changes(tmp_path: Path, monkeypatch) -> None:
    import json
    import os

    from opgen_lsp.index import kernels

    root = checkout(tmp_path / "tree", TREE)
    cache = tmp_path / "cache.json"
    KernelIndex.build([str(root)], cache=cache, workers=1)
    assert [Path(p).name for p in json.loads(cache.read_text())["linked"]] == ["TensorFactories.cpp"]

    def no_scan(*_args, **_kwargs):
        raise AssertionError("scanned again on a warm start")

    with monkeypatch.context() as m:
        m.setattr(kernels, "scan", no_scan)
        assert met(KernelIndex.build([str(root)], cache=cache, workers=1), "_recast_Large")
    header = root / "c10/core/Kinds.h"
    header.write_text(LIST_HEADER.replace("  _(int64_t, Large)", ""))
    os.utime(header, ns=(header.stat().st_atime_ns, header.stat().st_mtime_ns + 10**9))
    index = KernelIndex.build([str(root)], cache=cache, workers=1)
    assert not met(index, "_recast_Large") and met(index, "_recast_Small")


def test_the_server_re_reads_the_trees_headers_and_its_sources_only(tmp_path: Path) -> None:
    from opgen_lsp.index.kernels import tree_header_roots
    from opgen_lsp.lsp.kernels import KernelState, kernel_roots

    root = checkout(tmp_path, TREE)
    roots = kernel_roots((), str(root))
    state = KernelState(roots=roots, header_roots=tree_header_roots(list(roots)))
    assert state.covers(str(root / "c10/core/Kinds.h")) and state.covers(str(root / "aten/src/ATen/cuda/Pin.cpp"))
    assert not state.covers(str(root / "c10/core/Kinds.cpp"))  # c10 gives macros, not kernels
    assert not state.covers(str(root / "torch/csrc/Module.cpp"))


def test_opgen_check_takes_a_checkout_root_and_refuses_a_missing_folder(tmp_path: Path, capsys, monkeypatch) -> None:
    from opgen_lsp.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = checkout(tmp_path / "tree", TREE)
    native = root / "aten/src/ATen/native"
    (native / "tags.yaml").write_text("- tag: pt2_compliant_tag\n  desc: compliant\n")
    (native / "native_functions.yaml").write_text(
        "- func: _recast_Half(Tensor self, bool exact=False) -> Tensor\n  variants: function\n"
        "- func: _recast_Gone(Tensor self, bool exact=False) -> Tensor\n  variants: function\n")
    assert main(["check", "--kernels", str(root), str(native / "native_functions.yaml")]) == 0
    out = capsys.readouterr().out
    assert "_recast_Gone" in out and "_recast_Half" not in out and out.count("[OPG600]") == 1
    assert f"not defined in {root / 'aten/src/ATen'}" in out
    assert main(["check", "--kernels", str(tmp_path / "nowhere"), str(native / "native_functions.yaml")]) == 2
    assert "--kernels: no such folder" in capsys.readouterr().err


def test_the_server_leaves_out_a_kernel_folder_that_does_not_exist_and_says_so(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from opgen_lsp.lsp.kernels import KernelState, configure

    warnings: list[str] = []
    server = SimpleNamespace(model=SimpleNamespace(kernels=KernelState(), root=str(tmp_path)),
                             settings=SimpleNamespace(kernel_severity="warning", kernel_dirs=("nowhere", ".")),
                             configured=SimpleNamespace(is_set=lambda: False), warn=warnings.append)
    configure(server)  # type: ignore[arg-type]
    assert server.model.kernels.roots == (str(tmp_path),)
    assert warnings == [f"opgen: kernelDirs: no such folder: {tmp_path / 'nowhere'}; left out"]
