"""Hovers sized for a screen, on the real native_functions.yaml: at most MAX_LINES, the answer in the first 15."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.analysis.hover import ANSWER_LINES, MAX_LINES, as_plain_text, explain_command, hover
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT


@pytest.fixture(scope="module")
def real(native_yaml: Path, tags_yaml: Path):
    tags = TagsParser().parse(tags_yaml.read_text(encoding="utf-8"))
    text = native_yaml.read_text(encoding="utf-8")
    snapshot = NativeParser(release=DEFAULT).parse(text, tags.names)
    return snapshot, tags, text.split("\n")


def _hover_at(real, line: int, text: str) -> list[str]:
    snapshot, tags, lines = real
    found = hover(snapshot, tags, line, lines[line].index(text))
    assert found is not None
    return found.markdown.split("\n")


def _line_of(lines: list[str], start: str, after: int = 0) -> int:
    return next(i for i in range(after, len(lines)) if lines[i].startswith(start))


def _within(shown: list[str], wanted: str, limit: int = ANSWER_LINES) -> int:
    at = next((i for i, line in enumerate(shown) if wanted in line), None)
    assert at is not None and at < limit, (wanted, "\n".join(shown))
    return at


def test_add_tensor_func_line(real):
    lines = real[2]
    shown = _hover_at(real, _line_of(lines, "- func: add.Tensor("), "add.Tensor")
    assert len(shown) <= MAX_LINES and len("\n".join(shown)) < 2000  # 21,934 characters before
    assert shown[0].startswith("**aten::add.Tensor** (functional")
    _within(shown, "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha=1);")
    _within(shown, "TORCH_API at::Tensor add_sparse(const at::Tensor & self, const at::Tensor & other")
    _within(shown, "// SparseCPU, SparseCUDA, SparseMPS, SparseMeta")
    assert "command:opgenLsp.showGenerated" in shown[-1]


def test_add_tensor_dispatch_key(real):
    lines = real[2]
    func = _line_of(lines, "- func: add.Tensor(")
    shown = _hover_at(real, _line_of(lines, "    SparseCPU, ", func), "SparseCPU")
    assert len(shown) <= MAX_LINES
    assert shown[0].startswith("**SparseCPU** (dispatch key): A per-backend functionality key")
    declaration = _within(shown, "TORCH_API at::Tensor add_sparse(const at::Tensor & self")
    registration = _within(shown, 'm.impl("add.Tensor",')
    assert declaration < registration


def _fences_balance(shown: list[str]) -> bool:
    return sum(line.startswith("```") for line in shown) % 2 == 0


def test_a_long_registration_wrapper_is_cut_to_the_screen(real):
    """A structured CUDA kernel's wrapper (addmv.out's: 46 lines) is cut: fences balanced, the link kept."""
    lines = real[2]
    out = _line_of(lines, "- func: addmv.out(")
    shown = _hover_at(real, _line_of(lines, "    CUDA: ", out), "CUDA")
    assert len(shown) == MAX_LINES and _fences_balance(shown)
    _within(shown, "struct TORCH_API structured_addmv_out_cuda")
    _within(shown, 'm.impl("addmv.out",')
    assert shown[-2].endswith("more lines)") and "command:opgenLsp.showGenerated" in shown[-1]


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
def test_every_func_line_fits(real):
    snapshot, tags, lines = real
    for i, line in enumerate(lines):
        if line.startswith("- func: "):
            found = hover(snapshot, tags, i, len("- func: "))
            shown = found.markdown.split("\n")
            assert len(shown) <= MAX_LINES and _fences_balance(shown), (i + 1, found.markdown)


def test_plain_text_keeps_the_code_and_drops_the_markup():
    markdown = ("**aten::f** (`x`)\n\nat:: (Functions.h)\n```cpp\nat::Tensor f(const at::Tensor & x);\n```\n"
                "All: [opgen: Show generated code](command:opgenLsp.showGenerated?%5B%22f%22%5D)")
    assert as_plain_text(markdown) == ("aten::f (x)\n\nat:: (Functions.h)\nat::Tensor f(const at::Tensor & x);\n"
                                       "All: opgen: Show generated code")


def test_a_client_without_command_links_gets_the_cli_command(real):
    """Only the VS Code extension runs `command:` links; other clients' hovers name `opgen explain` for the file."""
    snapshot, tags, lines = real
    line = _line_of(lines, "- func: add.Tensor(")
    more = explain_command("/src/aten/native/native_functions.yaml")
    found = hover(snapshot, tags, line, lines[line].index("add.Tensor"), more=more)
    last = found.markdown.split("\n")[-1]
    assert last.endswith(": `opgen explain add.Tensor --native-functions /src/aten/native/native_functions.yaml`")
    assert "command:" not in found.markdown and "Show generated code" not in found.markdown
    assert explain_command("/my dir/native_functions.yaml")("f") == \
        "`opgen explain f --native-functions '/my dir/native_functions.yaml'`"
    assert explain_command(None)("f") == "`opgen explain f`"
