-- autosave for Neovim: file buffers edited through a running autosave agent. See :help autosave.
local connection = require("autosave.connection")
local session = require("autosave.session")
local text = require("autosave.text")

local M = {}

local defaults = {
  -- "buffer": when the disk and your unsaved text change the same lines, your text stays and the
  -- disk's version goes to a conflict copy. "agent": the agent's `conflicts.keep` decides.
  keep = "buffer",
  -- How often to look for an agent that went away (or was not there yet), in milliseconds.
  reconnect_ms = 1000,
  -- How long :w waits for the agent to say the file is durable, in milliseconds.
  write_timeout_ms = 10000,
  -- Attach every file buffer under a folder with a running agent as it is read.
  auto_attach = true,
  -- Language servers' file watchers under an agent's folder get their changes from the agent.
  lsp_watch = true,
}

M.options = vim.deepcopy(defaults)

local agents = {} -- by socket path
local sessions = {} -- by buffer number
local waiting = {} -- buffers waiting for an agent: [buf] = true
local reasons = {} -- why a buffer is not attached, for :AutosaveStatus
local conflicts = {} -- conflicts seen since Neovim started, for :AutosaveConflicts
local told = {}
local timer

local function say(message, level)
  vim.notify("autosave: " .. message, level or vim.log.levels.INFO)
end

local function say_once(key, message, level)
  if told[key] then return end
  told[key] = true
  say(message, level)
end

local function directory_of(buf)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":p:h")
end

-- :w goes through the agent while the buffer is attached; Neovim's own write otherwise.
local function take_writes(buf)
  local group = vim.api.nvim_create_augroup("autosave_write_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group, buffer = buf,
    callback = function(args) M.write(buf, args.file) end,
  })
  -- The agent saves the file and brings disk changes in: Neovim's own "changed on disk" prompt
  -- would only offer to load an older text over what is in the buffer.
  vim.api.nvim_create_autocmd("FileChangedShell", {
    group = group, buffer = buf,
    callback = function() vim.v.fcs_choice = "" end,
  })
end

local function give_back_writes(buf)
  pcall(vim.api.nvim_del_augroup_by_name, "autosave_write_" .. buf)
  if vim.api.nvim_buf_is_valid(buf) and vim.b[buf].autosave_acwrite then
    vim.b[buf].autosave_acwrite = nil
    vim.bo[buf].buftype = ""
  end
end

local function start_timer()
  if timer then return end
  timer = vim.loop.new_timer()
  timer:start(M.options.reconnect_ms, M.options.reconnect_ms, vim.schedule_wrap(function() M.look_for_agents() end))
end

-- An agent: one connection, the buffers attached through it.
local Agent = {}
Agent.__index = Agent

function Agent:is_connected()
  return self.is_ready and self.conn ~= nil and not self.conn.is_closed
end

function Agent:connect()
  self.is_ready = false
  self.conn = connection.open(self.socket, {
    on_event = function(event) self:event(event) end,
    on_close = function(reason) self:lost(reason) end,
  }, function(err)
    if err then
      -- Another user's agent: said once, and the buffers stay with Neovim's own writing.
      if self.conn.refused then say_once("refused:" .. self.socket, self.conn.refused, vim.log.levels.WARN) end
      return
    end
    self.conn:request("status", vim.empty_dict(), function(_, result)
      if type(result) == "table" then self.root = result.root end
    end)
    self.conn:request("subscribe", vim.empty_dict(), function(failure)
      if failure then return end
      self.is_ready = true
      if self.was_lost then
        self.was_lost = false
        say("the agent is back at " .. self.socket .. "; following your buffers again")
      end
      for buf, s in pairs(self.sessions) do
        take_writes(buf)
        s:resync()
      end
    end)
  end)
end

function Agent:lost(reason)
  local was_ready = self.is_ready
  self.is_ready = false
  local count = 0
  for buf, s in pairs(self.sessions) do
    count = count + 1
    s.in_flight, s.resyncing, s.needs_resync, s.batch = false, false, true, nil
    give_back_writes(buf)
    waiting[buf] = true
  end
  if was_ready and count > 0 then
    self.was_lost = true
    say(string.format("lost the agent (%s); Neovim writes your %d buffer(s) itself until it is back", reason, count),
      vim.log.levels.WARN)
  end
  if count > 0 then start_timer() end
end

function Agent:session_at(path)
  for _, s in pairs(self.sessions) do
    if s.path == path then return s end
  end
end

function Agent:absolute(path)
  if path:sub(1, 1) == "/" or not self.root then return path end
  return self.root .. "/" .. path
end

function Agent:event(event)
  local kind = event.event
  if kind == "moved" then
    local s = self:session_at(event.from)
    if s then
      s.path = event.to
      s.file = self:absolute(event.to)
      pcall(vim.api.nvim_buf_set_name, s.buf, s.file)
      -- A renamed buffer counts as "not edited" to Neovim, whose :w would then refuse the file
      -- that exists (E13) before asking us: written through autocommands only, it does not.
      if vim.bo[s.buf].buftype == "" then
        vim.bo[s.buf].buftype = "acwrite"
        vim.b[s.buf].autosave_acwrite = true
      end
      say(event.from .. " was renamed to " .. event.to .. "; the buffer follows it")
    end
    return
  end
  local s = event.path and self:session_at(event.path)
  if not s then return end
  if kind == "edited" then
    -- Another client (a coding agent, the CLI, another Neovim) changed the buffer.
    if event.client ~= session.client and event.revision ~= s.revision then
      s.needs_resync = true
      s:flush()
    end
  elseif kind == "reloaded" or kind == "merged" then
    if event.revision ~= s.revision then
      s.needs_resync = true
      s:flush()
    end
  elseif kind == "conflict" then
    if event.kind == "removed" then
      say(event.path .. " was removed on disk under unsaved edits; the agent writes it again")
    elseif event.kind == "replaced" then
      self:conflict(event)
      s:give_up("another file was renamed over it")
    else
      self:conflict(event)
      if event.kept ~= "buffer" then
        -- The agent took the disk's version; the buffer's text is in the copy.
        s.takes_theirs = true
        s.needs_resync = true
        s:flush()
      end
    end
  elseif kind == "removed" then
    s:give_up("it was removed on disk; the buffer keeps its text and :w writes it again")
  elseif kind == "saved" then
    -- Options asking for other bytes than the agent's (`text.unkept`) keep 'modified' until :w.
    if event.revision == s.revision and s:is_settled() and vim.api.nvim_buf_is_valid(s.buf)
      and not text.unkept(s.buf) then
      if s:agrees_in_size(event.bytes) then
        vim.bo[s.buf].modified = false
      else
        s.needs_resync = true
        s:flush()
      end
    end
  end
end

-- One warning per conflict, naming the copy; :AutosaveConflicts lists them.
function Agent:conflict(event)
  local copy = event.copy ~= vim.NIL and event.copy or nil
  copy = copy and self:absolute(copy)
  conflicts[#conflicts + 1] = {
    path = self:absolute(event.path), copy = copy, kind = event.kind, kept = event.kept, time = os.date("%H:%M:%S"),
  }
  local where
  if event.kept == "buffer" then
    where = "your text stays here; the disk's version is in " .. (copy or "?")
  else
    where = "the buffer shows the disk's version; your text is in " .. (copy or "?")
  end
  say(event.path .. " changed on disk where you were editing too (" .. event.kind .. "): " .. where, vim.log.levels.WARN)
end

-- Writes the agent's text aside when it and the buffer changed the same lines at once (the edit
-- that would have carried the buffer's change was on its way). Returns the copy's path.
function Agent:keep_aside(path, content)
  local folder = self.state and (self.state .. "/conflicts") or (vim.fn.stdpath("data") .. "/autosave-conflicts")
  local name = folder .. "/" .. path:gsub("^/", "") .. "." .. os.date("!%Y%m%d-%H%M%S") .. ".nvim"
  vim.fn.mkdir(vim.fn.fnamemodify(name, ":h"), "p")
  local file = io.open(name, "wb")
  if file then
    file:write(content)
    file:close()
  end
  return name
end

-- A session stopped for good (too large, not text, refused, removed): Neovim has the buffer back.
function Agent:forget(s, why, level)
  self.sessions[s.buf] = nil
  if sessions[s.buf] == s then sessions[s.buf] = nil end
  give_back_writes(s.buf)
  local name = vim.api.nvim_buf_is_valid(s.buf) and vim.fn.fnamemodify(vim.api.nvim_buf_get_name(s.buf), ":~:.") or s.path
  reasons[s.buf] = why
  say(name .. ": " .. why, level == "info" and vim.log.levels.INFO or vim.log.levels.WARN)
end

local function agent_for(socket, state)
  local agent = agents[socket]
  if not agent then
    agent = setmetatable({ socket = socket, state = state, sessions = {} }, Agent)
    agents[socket] = agent
  end
  if not agent.conn or agent.conn.is_closed then agent:connect() end
  return agent
end

-- Follows `buf` through the agent of its folder, if one runs; otherwise waits for one.
function M.attach(buf, explicit, renamed)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    if explicit then say("this buffer has no file to follow", vim.log.levels.WARN) end
    return
  end
  local existing = sessions[buf]
  if existing then
    if explicit and not existing.agent:is_connected() then M.look_for_agents() end
    return
  end
  local socket, state, refused = connection.find(directory_of(buf))
  if not socket then
    waiting[buf] = true
    reasons[buf] = refused or ("no agent runs for " .. directory_of(buf))
    if refused then
      local message = refused .. "; Neovim writes files itself"
      if explicit then say(message, vim.log.levels.WARN) else say_once("refused:" .. refused, message, vim.log.levels.WARN) end
    else
      local message = "no agent runs for " .. directory_of(buf) .. "; Neovim writes files itself (it attaches once one runs)"
      if explicit then say(message, vim.log.levels.WARN) else say_once("no-agent", message) end
    end
    start_timer()
    return
  end
  waiting[buf] = nil
  local unkept = text.unkept(buf)
  if unkept then
    reasons[buf] = unkept .. "; Neovim writes it"
    say(vim.fn.fnamemodify(name, ":~:.") .. ": " .. unkept .. "; Neovim writes it itself", vim.log.levels.INFO)
    return
  end
  reasons[buf] = nil
  local agent = agent_for(socket, state)
  local s = session.new(agent, buf, vim.fn.fnamemodify(name, ":p"), M.options)
  s.takes_ours = renamed
  sessions[buf] = s
  agent.sessions[buf] = s
  vim.api.nvim_buf_attach(buf, false, {
    on_bytes = function(_, _, _, sr, sc, _, oer, oec, _, ner, nec)
      return s:changed(sr, sc, oer, oec, ner, nec)
    end,
    -- A change with no bytes to report (`J` in an empty buffer gives it a line break to write):
    -- the texts are compared at the end of the turn.
    on_lines = function()
      if s.is_stopped then return true end
      if not s.applying then s:schedule() end
    end,
    on_reload = function()
      s.needs_resync = true
      s:schedule()
    end,
  })
  if agent:is_connected() then
    take_writes(buf)
    s:resync()
  end
end

-- Stops following `buf` once what was typed has reached the agent.
function M.detach(buf, why)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  waiting[buf] = nil
  local s = sessions[buf]
  if not s then return end
  s:flush()
  vim.wait(2000, function() return s:is_settled() or not s.agent:is_connected() end, 5)
  s:stop()
  s.agent.sessions[buf] = nil
  sessions[buf] = nil
  reasons[buf] = why or "detached (:AutosaveDetach)"
  give_back_writes(buf)
end

-- Tries again to reach an agent for every buffer waiting for one.
function M.look_for_agents()
  for buf in pairs(waiting) do
    if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
      waiting[buf] = nil
    else
      local socket, state = connection.find(directory_of(buf))
      if socket then
        local s = sessions[buf]
        if s then
          waiting[buf] = nil
          local agent = agent_for(socket, state)
          if s.agent ~= agent then
            s.agent.sessions[buf] = nil
            s.agent = agent
            agent.sessions[buf] = s
          end
          -- Connected already (another buffer's agent): catch up now; else once it is ready.
          if agent:is_connected() then
            take_writes(buf)
            s:resync()
          end
        else
          waiting[buf] = nil
          M.attach(buf)
        end
      end
    end
  end
  if next(waiting) == nil and timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

-- Neovim's own write of `buf` to `file`.
local function neovim_write(buf, file)
  vim.api.nvim_buf_call(buf, function() vim.cmd("noautocmd keepalt write! " .. vim.fn.fnameescape(file)) end)
end

-- Sends what was typed and has the agent save it durably. Returns nil, or why it did not.
local function save_through_agent(s)
  local buf = s.buf
  s:flush()
  local limit = M.options.write_timeout_ms
  local function settle()
    return vim.wait(limit, function() return s:is_settled() or s.is_stopped or not s.agent:is_connected() end, 2)
  end
  local settled = settle()
  if settled and s.mode == "bytes" and text.of_buffer(buf) ~= s:base_text() then
    -- What is saved is what the buffer shows: a report of Neovim's that did not add up is mended first.
    s.needs_resync = true
    s:flush()
    settled = settle()
  end
  if not settled or s.is_stopped or not s.agent:is_connected() then
    return "the agent did not take the edits in time"
  end
  local done, failure = false, nil
  s.agent.conn:request("save", { paths = { s.path } }, function(err)
    done, failure = true, err
  end)
  vim.wait(limit, function() return done end, 2)
  if not done or failure then
    return tostring(failure and failure.message or "no answer in " .. limit .. " ms")
  end
end

-- BufWriteCmd: :w saves through the agent and returns once the file is durable. A buffer whose
-- options ask for bytes the agent does not keep (`text.unkept`: another 'fileencoding', say) is
-- handed to Neovim instead, which writes it now and from then on, as without the plugin.
function M.write(buf, file)
  local s = sessions[buf]
  local target = vim.fn.fnamemodify(file, ":p")
  local is_own = s ~= nil and (target == s.file or target == s.agent:absolute(s.path))
  local unkept = is_own and text.unkept(buf)
  if not is_own or not (unkept or s.agent:is_connected()) then
    -- Another file (:w other.txt), or no agent right now: Neovim writes it.
    return neovim_write(buf, file)
  end
  pcall(vim.api.nvim_exec_autocmds, "BufWritePre", { buffer = buf, modeline = false })
  if s.agent:is_connected() then
    -- Handed over or not, what was typed is saved first. Neovim's write then reaches a clean buffer
    -- in the agent, which reloads it; a dirty one would merge it, or keep its own text at the path
    -- in a conflict (this buffer asked the agent to keep its side).
    local failure = save_through_agent(s)
    if failure then
      vim.api.nvim_err_writeln("autosave: " .. s.path .. " was not saved: " .. failure)
      return
    end
  end
  if unkept then
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":~:.")
    M.detach(buf, unkept .. "; Neovim writes it")
    say(name .. ": " .. unkept .. "; Neovim writes it itself from now on", vim.log.levels.WARN)
    neovim_write(buf, file)
  elseif s:is_settled() then
    vim.bo[buf].modified = false
  end
  pcall(vim.api.nvim_exec_autocmds, "BufWritePost", { buffer = buf, modeline = false })
  if not unkept then
    vim.api.nvim_echo({ { string.format('"%s" saved by autosave (durable)', s.path) } }, false, {})
  end
end

-- The session following `buf` (nil when none): its state, for tests and for looking into a bug.
function M.session(buf)
  return sessions[(buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf]
end

-- What :AutosaveStatus shows, as a table: attached or not, why, the agent's view of the buffer.
function M.status(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local s = sessions[buf]
  if not s then
    return { attached = false, reason = reasons[buf] or "not a file buffer under a running agent" }
  end
  local info = {
    attached = true, connected = s.agent:is_connected(), socket = s.agent.socket, path = s.path,
    revision = s.revision, mode = s.mode, settled = s:is_settled(),
  }
  if not info.connected then return info end
  local done
  s.agent.conn:request("open", { path = s.path }, function(err, result)
    done = true
    if not err and type(result) == "table" then
      info.dirty = result.dirty
      info.pending_save_ms = result.pendingSaveMs ~= vim.NIL and result.pendingSaveMs or nil
      info.agent_revision = result.revision
    end
  end)
  vim.wait(2000, function() return done end, 2)
  return info
end

function M.show_status()
  local info = M.status(0)
  if not info.attached then
    return vim.api.nvim_echo({ { "autosave: not attached: " .. info.reason } }, false, {})
  end
  if not info.connected then
    return vim.api.nvim_echo({ { "autosave: " .. info.path .. ": waiting for the agent at " .. info.socket ..
      " (Neovim writes the buffer itself meanwhile)" } }, false, {})
  end
  local state
  if info.dirty then
    state = info.pending_save_ms and ("saving in " .. info.pending_save_ms .. " ms") or "unsaved"
  else
    state = "saved"
  end
  vim.api.nvim_echo({ { string.format("autosave: %s · revision %s · %s%s", info.path,
    tostring(info.agent_revision or info.revision), state, info.settled and "" or " · edits on their way") } },
    false, {})
end

-- The conflicts seen since Neovim started, in the quickfix list.
function M.show_conflicts()
  local items = {}
  for _, c in ipairs(conflicts) do
    items[#items + 1] = {
      filename = c.copy or c.path, lnum = 1,
      text = string.format("%s %s conflict on %s: kept %s", c.time, c.kind, c.path, c.kept),
    }
  end
  vim.fn.setqflist({}, " ", { title = "autosave conflicts", items = items })
  if #items == 0 then
    say("no conflicts since Neovim started")
  else
    vim.cmd("copen")
  end
end

-- The current buffer's session with a connected agent; nil (said why) when there is none.
local function connected_session(what)
  local s = sessions[vim.api.nvim_get_current_buf()]
  if not s or not s.agent:is_connected() then
    say(what .. ": this buffer is not attached to a running agent (:AutosaveStatus says why)", vim.log.levels.WARN)
    return nil
  end
  return s
end

-- :AutosaveHistory: the current file's versions, newest first (<CR>: its diff, r: restore it).
function M.show_history()
  local s = connected_session("AutosaveHistory")
  if s then require("autosave.history").history(s, say) end
end

-- :AutosaveUndo {writer}: `writer`'s changes taken back, after a preview (with !, at once).
function M.undo(writer, now)
  local s = connected_session("AutosaveUndo")
  if s then require("autosave.history").undo(s, writer, now, say) end
end

-- Everything typed reaches the agent before Neovim exits.
function M.flush_all()
  for _, s in pairs(sessions) do s:flush() end
  vim.wait(2000, function()
    for _, s in pairs(sessions) do
      if s.agent:is_connected() and not s:is_settled() then return false end
    end
    return true
  end, 5)
end

-- Sets the options (see :help autosave-options) and starts following file buffers.
function M.setup(options)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(defaults), options or {})
  if M.options.keep ~= "buffer" and M.options.keep ~= "agent" then
    say('setup: `keep` must be "buffer" or "agent", not ' .. vim.inspect(M.options.keep) .. '; using "buffer"',
      vim.log.levels.ERROR)
    M.options.keep = "buffer"
  end
  M.enable()
end

function M.enable()
  if M.is_enabled then return end
  M.is_enabled = true
  local group = vim.api.nvim_create_augroup("autosave", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      if M.options.auto_attach then M.attach(args.buf) end
    end,
  })
  vim.api.nvim_create_autocmd("BufUnload", {
    group = group,
    callback = function(args) M.detach(args.buf, "unloaded") end,
  })
  -- :saveas, :file: the buffer is another file now.
  vim.api.nvim_create_autocmd("BufFilePost", {
    group = group,
    callback = function(args)
      local s = sessions[args.buf]
      if not s or vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ":p") == s.file then return end
      M.detach(args.buf, "renamed")
      if M.options.auto_attach then M.attach(args.buf, false, true) end
    end,
  })
  -- Options that change the bytes Neovim writes, which no `on_bytes` reports: they reach the agent
  -- as a typed change does, not only at the next :w.
  vim.api.nvim_create_autocmd("OptionSet", {
    group = group, pattern = { "bomb", "fileformat", "endofline", "binary" },
    callback = function()
      local s = sessions[vim.api.nvim_get_current_buf()]
      if s and not s.applying then
        s.needs_resync = true
        s:schedule()
      end
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = M.flush_all })
  require("autosave.watchfiles").install_when_loaded()
  vim.api.nvim_create_user_command("AutosaveAttach", function() M.attach(0, true) end, {})
  vim.api.nvim_create_user_command("AutosaveDetach", function() M.detach(0) end, {})
  vim.api.nvim_create_user_command("AutosaveStatus", M.show_status, {})
  vim.api.nvim_create_user_command("AutosaveConflicts", M.show_conflicts, {})
  vim.api.nvim_create_user_command("AutosaveHistory", M.show_history, {})
  vim.api.nvim_create_user_command("AutosaveUndo", function(args) M.undo(args.args, args.bang) end, { nargs = 1, bang = true })
  if M.options.auto_attach then
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) then M.attach(buf) end
    end
  end
end

return M
