-- :AutosaveHistory and :AutosaveUndo: the current file's versions (who wrote each, when), one of
-- them shown against the version before or restored, and one writer's changes taken back with a
-- preview first. Everything is asked of the agent (its `history`, `show`, `restore`, `undo`).
local M = {}

local WARN = vim.log.levels.WARN

-- A read-only scratch window below, holding `lines`.
local function scratch(name, lines, filetype)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if filetype then vim.bo[buf].filetype = filetype end
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true })
  return buf
end

local function split(text)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then lines[#lines] = nil end
  return lines
end

-- A version's text (nil for a removal or a binary), then `done(text, err)`.
local function show(s, id, done)
  s.agent.conn:request("show", { path = s.path, version = tostring(id) }, function(err, result)
    if err then return done(nil, err.message) end
    local content = result.content
    if content == vim.NIL or type(content) ~= "string" then return done(nil, nil) end
    done(content, nil)
  end)
end

-- The diff of version `versions[index]` against the one before it (the next line: newest first).
local function show_diff(s, versions, index, say)
  local version, before = versions[index], versions[index + 1]
  if not version then return end
  show(s, version.version, function(after_text, err)
    if err then return say("show: " .. err, WARN) end
    local function open(before_text)
      local label = before and (s.path .. "@" .. before.version) or "/dev/null"
      local lines = { "--- " .. label, "+++ " .. s.path .. "@" .. version.version .. "  (" .. version.who .. ", " .. version.kind .. ")" }
      local diff = vim.diff(before_text or "", after_text or "", { result_type = "unified" })
      if diff == "" then lines[#lines + 1] = "(the same bytes as the version before)" end
      vim.list_extend(lines, split(diff))
      scratch("autosave://diff/" .. s.path .. "@" .. version.version, lines, "diff")
    end
    if not before then return open(nil) end
    show(s, before.version, function(before_text, before_err)
      if before_err then return say("show: " .. before_err, WARN) end
      open(before_text)
    end)
  end)
end

-- The versions of the file in session `s`, one a line; <CR> shows one's diff, r restores it.
function M.history(s, say)
  s.agent.conn:request("history", { path = s.path, limit = 1000 }, function(err, result)
    if err then return say("history of " .. s.path .. ": " .. err.message, WARN) end
    local versions = result.versions
    local lines = {}
    for _, v in ipairs(versions) do
      local size = (type(v.size) == "number") and (v.size .. " B") or "-"
      local counts = (type(v.added) == "number") and string.format("  +%d -%d", v.added, v.removed) or ""
      lines[#lines + 1] = string.format("%d  %s  %s  %s  %s%s", v.version, v.time, v.who, v.kind, size, counts)
    end
    local buf = scratch("autosave://history/" .. s.path, lines)
    vim.keymap.set("n", "<CR>", function() show_diff(s, versions, vim.fn.line("."), say) end, { buffer = buf, nowait = true })
    vim.keymap.set("n", "r", function()
      local v = versions[vim.fn.line(".")]
      if not v then return end
      s.agent.conn:request("restore", { path = s.path, version = tostring(v.version) }, function(restore_err, answer)
        if restore_err then return say("restore: " .. restore_err.message, WARN) end
        say(string.format("%s holds version %d again (revision %d); `:AutosaveUndo restore` takes it back", s.path, v.version, answer.revision))
      end)
    end, { buffer = buf, nowait = true })
  end)
end

-- Every file's changes by `writer` taken back (the whole tree), after a preview: the diff of what
-- would change, where U carries it out. With `now`, no preview.
function M.undo(s, writer, now, say)
  local function carry_out()
    s.agent.conn:request("undo", { who = writer }, function(err, result)
      if err then return say("undo --who " .. writer .. ": " .. err.message, WARN) end
      local done, collided = 0, {}
      for _, file in ipairs(result.files) do
        if file.action == "collided" then collided[#collided + 1] = file.path .. " (" .. (file.copy or "") .. ")" else done = done + 1 end
      end
      if #collided > 0 then
        say(string.format("undid %s's changes in %d file(s); left as they are, a later edit overlapping: %s",
          writer, done, table.concat(collided, ", ")), WARN)
      else
        say(string.format("undid %s's changes in %d file(s)", writer, done))
      end
    end)
  end
  if now then return carry_out() end
  s.agent.conn:request("undo", { who = writer, dryRun = true }, function(err, result)
    if err then return say("undo --who " .. writer .. ": " .. err.message, WARN) end
    if #result.files == 0 then return say("nothing to undo: history has no change by " .. writer) end
    local lines = { "Undo the changes by " .. writer .. "? U: undo them, q: close. Nothing is changed yet.", "" }
    for _, file in ipairs(result.files) do
      if file.action == "collided" then
        lines[#lines + 1] = "# " .. file.path .. ": left as it is (a later edit overlaps " .. writer .. "'s change)"
      else
        vim.list_extend(lines, split(file.diff or ""))
      end
    end
    local buf = scratch("autosave://undo/" .. writer, lines, "diff")
    vim.keymap.set("n", "U", function()
      vim.cmd("close")
      carry_out()
    end, { buffer = buf, nowait = true })
  end)
end

return M
