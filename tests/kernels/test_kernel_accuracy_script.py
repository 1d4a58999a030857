"""benchmarks/kernel_accuracy.py on a tree of our own: what it deletes, and what it reports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from opgen_lsp.index.kernels import KernelIndex

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "kernel_accuracy.py"
SPEC = importlib.util.spec_from_file_location("kernel_accuracy", SCRIPT)
accuracy = sys.modules.setdefault("kernel_accuracy", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(accuracy)  # type: ignore[union-attr]

SOURCE = """\
namespace at::native {
#define MAKE(n) Tensor n##_made(const Tensor& s) { return s; }
MAKE(first)
MAKE(second)
Tensor
plain_kernel(const Tensor& s, IntArrayRef pad = {}) {
  return s;
}
TORCH_IMPL_FUNC(shaped_out) (const Tensor& s, const Tensor& out) {
  out.copy_(s);
}
Tensor after(const Tensor& s) { return s; }
}
"""


def deleted(name: str, tmp_path: Path) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "Ops.cpp"
    path.write_text(SOURCE)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    hit = index.by_name[name][0]
    start, end = accuracy.deletion_span(SOURCE, accuracy.Site(str(path), hit.symbol.line, hit.symbol.col), name)
    return accuracy.blank(SOURCE, start, end)


def test_a_definition_is_deleted_with_its_return_type_and_body(tmp_path: Path) -> None:
    text = deleted("plain_kernel", tmp_path)
    assert "plain_kernel" not in text and "return s;\n}" not in text.split("TORCH_IMPL_FUNC")[0]
    assert "MAKE(second)" in text and "TORCH_IMPL_FUNC(shaped_out)" in text
    assert text.count("\n") == SOURCE.count("\n")  # line numbers kept


def test_a_macro_invocation_and_a_structured_kernel_are_deleted_alone(tmp_path: Path) -> None:
    text = deleted("first_made", tmp_path / "a")
    assert "MAKE(first)" not in text and "MAKE(second)" in text
    text = deleted("shaped_out", tmp_path / "b")
    assert "shaped_out" not in text and "out.copy_" not in text and "Tensor after(" in text


def test_a_macro_invocation_is_deleted_with_the_static_before_it(tmp_path: Path) -> None:
    source = "namespace at::native {\n#define MAKE(n) Tensor n##_made(const Tensor& s) { return s; }\n" \
             "static MAKE(hidden)\nTensor after(const Tensor& s) { return s; }\n}\n"
    path = tmp_path / "Ops.cpp"
    path.write_text(source)
    hit = KernelIndex.build([str(tmp_path)], workers=1).by_name["hidden_made"][0]
    start, end = accuracy.deletion_span(source, accuracy.Site(str(path), hit.symbol.line, hit.symbol.col),
                                        "hidden_made")
    assert source[start:end] == "static MAKE(hidden)"  # else `static` would bind to after()
