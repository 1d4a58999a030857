-- Run by tests/editors/test_neovim.py: nvim --headless -u <docs' config> -c "luafile nvim_e2e.lua",
-- in the workspace folder. Writes what it saw as JSON to $OUT and quits.
local out = { errors = {}, notifications = {} }
local function finish()
  local f = assert(io.open(os.getenv("OUT"), "w"))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd("qall!")
end

local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(out.notifications, msg)
  return notify(msg, level, opts)
end

local function client_of(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = "opgen" })[1]
end

local ok, err = pcall(function()
  -- Diagnostics of native_functions.yaml and tags.yaml, pushed by the server.
  -- (Neovim 0.11 pulls a buffer's diagnostics when it is opened once the client runs: a buffer
  -- opened while the server initialises gets them only at its first change.)
  vim.cmd("edit native_functions.yaml")
  local native = vim.api.nvim_get_current_buf()
  out.filetype = vim.bo[native].filetype
  assert(vim.wait(30000, function() return client_of(native) ~= nil end, 100), "opgen-lsp did not attach")
  local client = client_of(native)
  assert(vim.wait(30000, function() return client.initialized end, 100), "opgen-lsp did not initialise")
  out.root_dir = client.root_dir
  out.server_name = client.server_info and client.server_info.name
  assert(vim.wait(60000, function() return #vim.diagnostic.get(native) >= 11 end, 100), "no diagnostics")
  vim.cmd("edit tags.yaml")
  local tags = vim.api.nvim_get_current_buf()
  assert(vim.wait(60000, function() return #vim.diagnostic.get(tags) >= 1 end, 100), "no diagnostics for tags.yaml")
  vim.cmd("edit native_functions.yaml")
  vim.wait(500)
  out.diagnostics = {}
  for name, bufnr in pairs({ ["native_functions.yaml"] = native, ["tags.yaml"] = tags }) do
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      table.insert(out.diagnostics, { file = name, line = d.lnum + 1, code = d.code, message = d.message,
                                      severity = d.severity, source = d.source })
    end
  end

  -- Hover (K): the floating window's text.
  vim.api.nvim_win_set_cursor(0, { tonumber(os.getenv("HOVER_LINE")), tonumber(os.getenv("HOVER_COLUMN")) - 1 })
  vim.lsp.buf.hover()
  local float
  assert(vim.wait(20000, function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        float = win
        return true
      end
    end
    return false
  end, 50), "no hover window")
  out.hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), "\n")
  vim.api.nvim_win_close(float, true)

  -- :OpgenShowGenerated on the func: line.
  vim.cmd("OpgenShowGenerated")
  assert(vim.wait(20000, function() return vim.bo.filetype == "cpp" end, 50), "no generated-code buffer")
  out.shown = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("close")

  -- :OpgenGenerate on the copy without mistakes.
  vim.cmd("edit clean/native_functions.yaml")
  local clean = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function() return client_of(clean) ~= nil end, 100), "opgen-lsp did not attach to clean/")
  out.clean_root_dir = client_of(clean).root_dir
  local before = #out.notifications
  vim.cmd("OpgenGenerate")
  assert(vim.wait(300000, function() return #out.notifications > before end, 100), "Generate did not finish")
  out.generate = out.notifications[#out.notifications]
end)
if not ok then
  table.insert(out.errors, tostring(err))
end
finish()
