"""keep_balanced_branches sees directives spelled with blanks after '#' ('# if 0', '#  else'), as the
preprocessor does: its quick exit must not take them for code without such branches."""

from __future__ import annotations

import pytest

from opgen_lsp.syntax.cpp_scan import DEFINITION, scan


def _defined(text: str) -> list[str]:
    return [s.name for s in scan(text) if s.kind == DEFINITION]


@pytest.mark.parametrize("directive", ["#if 0", "# if 0", "#  if 0", "#\tif 0"])
def test_code_under_if_0_defines_nothing(directive: str) -> None:
    text = (f"namespace at::native {{\n{directive}\nTensor foo_kernel(const Tensor& x) {{ return x; }}\n#endif\n"
            "Tensor bar_kernel(const Tensor& x) { return x; }\n}\n")
    assert _defined(text) == ["bar_kernel"]


@pytest.mark.parametrize("hash_else", ["#else", "# else", "#  else"])
def test_unbalanced_branches_with_a_spaced_else(hash_else: str) -> None:
    # Each branch opens the body: only the first is kept, so the kernel after the group is still found.
    text = ("namespace at::native {\n#ifdef USE_LONG\nTensor foo_kernel(long a) {\n"
            f"{hash_else}\nTensor foo_kernel(int a) {{\n#endif\n  return Tensor();\n}}\n"
            "Tensor after_kernel(const Tensor& x) { return x; }\n}\n")
    assert _defined(text) == ["foo_kernel", "after_kernel"]
