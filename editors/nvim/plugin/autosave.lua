-- autosave: Neovim buffers edited through a running autosave agent (:help autosave).
if vim.g.loaded_autosave then return end
vim.g.loaded_autosave = true
if vim.fn.has("nvim-0.7") == 0 then
  vim.api.nvim_err_writeln("autosave: needs Neovim 0.7 or later")
  return
end
-- Works with no setup() call; setup() later changes the options.
require("autosave").enable()
