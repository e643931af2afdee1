-- Neovim (0.7+) as a user has it: the set-up snippet from docs/editors.md,
-- a Python file opened, the diagnostics its LSP client shows, the code
-- actions it offers, the first applied. Arguments come as globals (set with
-- -c before this file is run).
local setup, file, out = _G.arg_setup, _G.arg_file, _G.arg_out
vim.cmd('luafile ' .. setup)
vim.cmd('edit ' .. file)
local bufnr = vim.api.nvim_get_current_buf()
local function attached()
  if vim.lsp.get_clients then return vim.lsp.get_clients({ bufnr = bufnr }) end
  local found = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do table.insert(found, c) end
  return found
end
local report = {}
vim.wait(20000, function() return #attached() > 0 end, 50)
local client = attached()[1]
if client == nil then
  vim.fn.writefile({ 'no client attached' }, out)
  vim.cmd('qa!')
end
table.insert(report, 'client: ' .. client.name)
vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(report, string.format('%d:%d %s %s', d.lnum + 1, d.col + 1, d.code or d.user_data and d.user_data.lsp.code or '?', d.message))
end
local diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, 4)
local params = vim.lsp.util.make_range_params()
params.range = { start = { line = 4, character = 43 }, ['end'] = { line = 4, character = 59 } }
params.context = { diagnostics = diagnostics }
local response = client.request_sync('textDocument/codeAction', params, 20000, bufnr)
local actions = response and response.result or {}
for _, action in ipairs(actions) do table.insert(report, 'action: ' .. action.title) end
if actions[1] and actions[1].edit then
  vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
  vim.cmd('write')
end
vim.fn.writefile(report, out)
vim.lsp.stop_client(client.id)
vim.cmd('qa!')
