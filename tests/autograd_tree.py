"""A small PyTorch-shaped tree for the derivatives.yaml tests of the server and the editors: ops of our own
in aten/src/ATen/native/, their formulas in tools/autograd/derivatives.yaml."""

from __future__ import annotations

from pathlib import Path

NATIVE = """\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method

- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method

- func: sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
  variants: function, method
"""

DERIVATIVES = """\
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
  result: other_t * self_p + self_t * other_p

- name: sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
  self: grad.gather(dim, indices)
  output_differentiability: [True, False]
  values: self_t.gather(dim, indices)
"""

# C++ definitions of the tree's kernels (the CompositeImplicitAutograd ones the entries imply), so that
# `opgen check --kernels` of the tree reports nothing of its own.
KERNELS = """\
namespace at::native {
at::Tensor mul(const at::Tensor & self, const at::Tensor & other) { return self; }
at::Tensor & mul_(at::Tensor & self, const at::Tensor & other) { return self; }
::std::tuple<at::Tensor,at::Tensor> sort(const at::Tensor & self, int64_t dim, bool descending) { return {}; }
} // namespace at::native
"""
KERNELS_PATH = "aten/src/ATen/native/existing.cpp"

TAGS = "- tag: core\n  desc: Core ATen operators.\n"
NATIVE_PATH = "aten/src/ATen/native/native_functions.yaml"
DERIVATIVES_PATH = "tools/autograd/derivatives.yaml"


def write_tree(root: Path, derivatives: str = DERIVATIVES) -> tuple[Path, Path]:
    """(native_functions.yaml, derivatives.yaml) written under root."""
    paths = []
    for relative, text in ((NATIVE_PATH, NATIVE), (DERIVATIVES_PATH, derivatives),
                           ("aten/src/ATen/native/tags.yaml", TAGS)):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]
