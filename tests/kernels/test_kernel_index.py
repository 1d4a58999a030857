"""The kernel index on a C++ tree of our own, and missing-kernel diagnostics (no torch needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opgen_lsp.analysis.kernels import missing_kernels
from opgen_lsp.cache.root import KERNEL_INDEX_NAME, KERNEL_INDEXES_KEPT
from opgen_lsp.cli import main
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.cpp_scan import DECLARATION, DEFINITION, IMPL, META, scan

SOURCES = {
    "native/Plain.cpp": """\
#include <ATen/ATen.h>
namespace at { namespace native {
Tensor frobnicate(const Tensor& self) { return self.clone(); }
Tensor& frobnicate_out(const Tensor& self, Tensor& out) { return out.copy_(self); }
// Tensor commented_kernel(const Tensor& self) { return self; }
/* Tensor block_commented_kernel(const Tensor& self) { return self; } */
static const char* text = "Tensor in_a_string(const Tensor& self) {";
}}  // namespace at::native
""",
    "native/Templates.cpp": """\
namespace at::native {
template <typename scalar_t>
static void twiddle_kernel_impl(TensorIterator& iter) {}
template <bool inplace>
Tensor twiddle_impl(const Tensor& self) { return self; }
Tensor twiddle(const Tensor& self) { return twiddle_impl<false>(self); }
} // namespace at::native
""",
    "native/Macros.cpp": """\
namespace at::native {
#define DEFINE_UNARY(name) \\
  Tensor name(const Tensor& self) { return self; }
#define CREATE_IMPL(func_out, stub) TORCH_IMPL_FUNC(func_out) (const Tensor& self, const Tensor& result) { stub(); }
DEFINE_UNARY(wibble)
DEFINE_UNARY(wobble)
CREATE_IMPL(spin_out, spin_stub)
}
""",
    "native/Structured.cpp": """\
namespace at {
namespace meta {
TORCH_META_FUNC(spin) (const Tensor& self) { build_unary_op(maybe_get_output(), self); }
TORCH_META_FUNC2(whirl, Tensor) (const Tensor& self, const Tensor& other) {}
}
namespace native {
TORCH_IMPL_FUNC(whirl_out) (const Tensor& self, const Tensor& other, const Tensor& out) {}
}
}
""",
    "native/cuda/Kernels.cu": """\
namespace at::native {
Tensor frobnicate_cuda(const Tensor& self) { return self; }
}
""",
    "native/Declared.h": """\
namespace at::native {
Tensor split_across_files(const Tensor& self);
Tensor declared_never_defined(const Tensor& self);
}
""",
    "native/Defined.cpp": """\
#include "Declared.h"
namespace at::native {
Tensor split_across_files(const Tensor& self) { return self; }
}
""",
}

TAGS = "- tag: pt2_compliant_tag\n  desc: compliant\n"
OPS = """\
- func: frobnicate(Tensor self) -> Tensor
  dispatch:
    CPU: frobnicate
    CUDA: frobnicate_cuda
- func: frobnicate.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: frobnicate_out
- func: twiddle(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: twiddle
- func: wibble(Tensor self) -> Tensor
- func: wobble(Tensor self) -> Tensor
  dispatch:
    CPU: wobble
    CUDA: commented_kernel
- func: spin(Tensor self) -> Tensor
  structured_delegate: spin.out
- func: spin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: spin_out
- func: whirl.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: whirl.out
- func: whirl.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: whirl_out
    CUDA: whirl_out_cuda
- func: split(Tensor self) -> Tensor
  dispatch:
    CPU: split_across_files
    CUDA: declared_never_defined
- func: gone(Tensor self) -> Tensor
  dispatch:
    CPU: in_a_string
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in SOURCES.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "src"


def symbols(text: str) -> set[tuple[str, str, str]]:
    return {(s.name, s.kind, s.namespace) for s in scan(text)}


def test_plain_definitions_ignore_comments_and_strings() -> None:
    found = symbols(SOURCES["native/Plain.cpp"])
    assert ("frobnicate", DEFINITION, "at::native") in found
    assert ("frobnicate_out", DEFINITION, "at::native") in found
    assert not {n for n, _, _ in found} & {"commented_kernel", "block_commented_kernel", "in_a_string"}


def test_templates_macros_and_structured_macros() -> None:
    assert ("twiddle", DEFINITION, "at::native") in symbols(SOURCES["native/Templates.cpp"])
    found = symbols(SOURCES["native/Macros.cpp"])
    assert {("wibble", DEFINITION, "at::native"), ("wobble", DEFINITION, "at::native"),
            ("spin_out", IMPL, "at::native")} <= found
    found = symbols(SOURCES["native/Structured.cpp"])
    assert {("spin", META, "at::meta"), ("whirl_Tensor", META, "at::meta"), ("whirl_out", IMPL, "at::native")} <= found


def test_declarations_are_not_definitions() -> None:
    assert ("declared_never_defined", DECLARATION, "at::native") in symbols(SOURCES["native/Declared.h"])


def test_missing_kernels_are_reported_on_the_kernel_name(tree: Path) -> None:
    index = KernelIndex.build([str(tree)], workers=1)
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    assert [d.message for d in snapshot.diagnostics] == []
    found = missing_kernels(snapshot, index)
    lines = OPS.splitlines()
    reported = {(lines[d.span.start_line][d.span.start_col:d.span.end_col], d.code) for d in found}
    assert reported == {
        ("commented_kernel", "OPG600"),        # only in a comment
        ("whirl_out_cuda", "OPG600"),           # structured CUDA kernel without TORCH_IMPL_FUNC
        ("declared_never_defined", "OPG600"),   # declared in a header, never defined
        ("in_a_string", "OPG600"),              # only in a string literal
    }
    declared = next(d for d in found if "declared_never_defined" in d.message)
    assert "is declared but never defined" in declared.message


def test_a_missing_meta_function(tree: Path) -> None:
    (tree / "native/Structured.cpp").write_text(SOURCES["native/Structured.cpp"].replace("TORCH_META_FUNC(spin)", "x"))
    index = KernelIndex.build([str(tree)], workers=1)
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    assert [d.message for d in missing_kernels(snapshot, index) if d.code == "OPG601"] == [
        f"no TORCH_META_FUNC(spin) (or TORCH_META_FUNC2) in {tree}: the structured op needs its meta function"]


def test_cache_is_reused_and_updated(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    first = KernelIndex.build([str(tree)], cache=cache, workers=1)
    assert json.loads(cache.read_text())["files"]
    again = KernelIndex.build([str(tree)], cache=cache, workers=1)
    assert again.files == first.files
    path = tree / "native/Plain.cpp"
    path.write_text(path.read_text().replace("frobnicate(", "renamed("))
    os.utime(path, ns=(1, 1))  # a different mtime, whatever the clock resolution
    rebuilt = KernelIndex.build([str(tree)], cache=cache, workers=1)
    assert rebuilt.find("renamed", (DEFINITION,)) and not rebuilt.find("frobnicate", (DEFINITION,))


def test_update_one_file(tree: Path) -> None:
    index = KernelIndex.build([str(tree)], workers=1)
    path = tree / "native/Extra.cpp"
    path.write_text("namespace at::native { Tensor brand_new(const Tensor& self) { return self; } }\n")
    index.update(str(path))
    assert index.find("brand_new", (DEFINITION,))
    path.unlink()
    index.update(str(path))
    assert not index.find("brand_new", (DEFINITION,))


def test_parallel_build_equals_serial(tree: Path) -> None:
    for i in range(70):  # enough files for the process pool
        (tree / f"native/gen{i}.cpp").write_text(f"namespace at::native {{ Tensor k{i}(const Tensor& s) {{ return s; }} }}\n")
    assert KernelIndex.build([str(tree)], workers=2).files == KernelIndex.build([str(tree)], workers=1).files


def test_check_cli_with_kernels(tree: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "tags.yaml").write_text(TAGS)
    native = tmp_path / "native_functions.yaml"
    native.write_text(OPS)
    code = main(["check", str(native), "--kernels", str(tree)])
    out = capsys.readouterr().out
    assert code == 0  # missing kernels are warnings: the yaml itself is valid
    assert out.count("[OPG600]") == 4
    assert "it must be declared as:\nTORCH_API at::Tensor in_a_string(const at::Tensor & self);" in out


def test_a_cache_that_cannot_be_written_leaves_no_temporary_file(tree: Path, tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache" / "kernels.json"

    def disk_full(self, data, *args, **kwargs):  # the file is created, then the disk is full
        with open(self, "w") as f:
            f.write(data[:10])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", disk_full)
    index = KernelIndex.build([str(tree)], cache=cache, workers=1)
    assert index.files and sorted(p.name for p in cache.parent.iterdir()) == []


def test_the_kernel_index_cache_keeps_the_newest_trees_only(tree: Path, tmp_path: Path) -> None:
    """One file per set of roots: the oldest go once more than KERNEL_INDEXES_KEPT are there; nothing else is
    touched (other names, a link's target)."""
    root = tmp_path / "opgen"
    root.mkdir()
    for i in range(KERNEL_INDEXES_KEPT + 5):
        old = root / f"kernels-{i:016x}.json"
        old.write_text("{}")
        os.utime(old, ns=(i * 10**9, i * 10**9))
    (root / "kernels-notes.json").write_text("mine")
    outside = tmp_path / "outside.json"
    outside.write_text("theirs")
    (root / f"kernels-{'f' * 16}.json").symlink_to(outside)  # the newest by its own mtime: kept
    cache = root / f"kernels-{'e' * 16}.json"
    KernelIndex.build([str(tree)], cache=cache, workers=1)
    left = sorted(p.name for p in root.iterdir() if KERNEL_INDEX_NAME.fullmatch(p.name))
    assert len(left) == KERNEL_INDEXES_KEPT and cache.name in left and f"kernels-{'f' * 16}.json" in left
    assert f"kernels-{0:016x}.json" not in left and f"kernels-{KERNEL_INDEXES_KEPT + 4:016x}.json" in left
    assert (root / "kernels-notes.json").read_text() == "mine" and outside.read_text() == "theirs"
    assert json.loads(cache.read_text())["files"]
