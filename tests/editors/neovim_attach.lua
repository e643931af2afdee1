-- Neovim (0.7+) as a user has it: its own LSP client attached to a buffer,
-- the diagnostics it shows, the code actions it offers, the first applied.
-- Arguments come as globals (set with -c before this file is run).
local python, file, out = _G.arg_python, _G.arg_file, _G.arg_out
vim.cmd('edit ' .. file)
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  cmd = { python, '-m', 'vllm_spec_lint', 'server' },
  root_dir = vim.fn.fnamemodify(file, ':h'),
  name = 'vllm-spec-lint',
})
vim.lsp.buf_attach_client(bufnr, client_id)
local report = {}
local ok = vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(report, string.format('%d:%d %s %s', d.lnum + 1, d.col + 1, d.code or d.user_data and d.user_data.lsp.code or '?', d.message))
end
local client = vim.lsp.get_client_by_id(client_id)
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
vim.lsp.stop_client(client_id)
vim.cmd('qa!')
