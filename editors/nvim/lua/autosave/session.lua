-- One Neovim buffer kept in step with its buffer in the agent.
--
-- What the person types goes to the agent as `edit` requests, one per turn of the event loop and
-- at most one on its way (each says the revision it was made on, `ifRevision`, so an edit never
-- lands on a text it was not made for). When the agent's text changes otherwise (a reload, a
-- merge, a refused edit), the session resyncs: it reads the agent's text, merges it line by line
-- with what the buffer holds, shows the difference as the smallest set of line changes, and
-- sends back what the agent lacks.
--
-- The shadow is the agent's text at `revision`, the last one both sides agree on: the base of
-- those merges. In "bytes" mode (a file whose lines all end in "\n", or all in "\r\n") it is a
-- list of lines and edits are placed from `on_bytes` positions; in "diff" mode (no final line
-- break, a lone "\r", a new file) it is a string and each turn sends the difference of texts.
-- A UTF-8 byte order mark is not in the shadow: Neovim shows it as 'bomb', not in the first line,
-- so `bom` holds the agent's mark at `revision` ("" for none), and the agent's first line is
-- that many bytes longer than the buffer's.
local text = require("autosave.text")

local Session = {}
Session.__index = Session

local M = {}

-- The name this Neovim's edits carry in the agent's `edited` events: its own are not news to it.
M.client = "nvim:" .. vim.fn.getpid()

function M.new(agent, buf, path, options)
  local self = setmetatable({
    agent = agent, buf = buf, path = path, file = path, options = options,
    revision = nil, shadow = text.of_buffer(buf), bom = text.bom_of(buf), mode = "diff", exists = true,
    in_flight = false, batch = nil, needs_resync = true, resyncing = false, applying = false,
    is_stopped = false, failures = 0,
  }, Session)
  return self
end

-- The shadow as one string.
function Session:base_text()
  if type(self.shadow) == "table" then return table.concat(self.shadow, "\n") end
  return self.shadow
end

local function line_break(buf)
  return vim.bo[buf].fileformat == "dos" and "\r\n" or "\n"
end

-- Whether `content` can be followed edit by edit from `on_bytes`: every line ends in the buffer's
-- line break and there is no other "\r" (the agent counts a lone "\r" as a line break too).
function Session:follows_bytes(content)
  -- Neovim reports no line break for the first line typed into an empty buffer, yet writes one.
  if content == "" or not vim.bo[self.buf].endofline or not self.exists then return false end
  if content:sub(-1) ~= "\n" then return false end
  local format = vim.bo[self.buf].fileformat
  if format == "unix" then return not content:find("\r", 1, true) end
  if format == "dos" then
    return not content:gsub("\r\n", ""):find("\r", 1, true) and not content:find("[^\r]\n") and content:sub(1, 1) ~= "\n"
  end
  return false
end

-- The text between two positions of the buffer as it is now; a range that ends past the last
-- line ends after that line's (implicit) line break.
local function range_text(buf, sr, sc, er, ec)
  local count = vim.api.nvim_buf_line_count(buf)
  local tail = ""
  if er >= count then
    tail = string.rep("\n", er - count + 1)
    er = count - 1
    ec = #vim.api.nvim_buf_get_lines(buf, er, er + 1, false)[1]
  end
  if sr > er then return tail end
  return table.concat(vim.api.nvim_buf_get_text(buf, sr, sc, er, ec, {}), "\n") .. tail
end

-- `on_bytes`: one change of the buffer, before the next is made. Returns true to detach.
function Session:changed(sr, sc, oer, oec, ner, nec)
  if self.is_stopped then return true end
  if self.applying then return end
  if not self.agent:is_connected() then
    -- Whatever is typed meanwhile is in the buffer: the resync on reconnecting sends it.
    self.needs_resync = true
    return
  end
  if self.mode == "bytes" and not self.needs_resync and not self.resyncing then
    self:record(sr, sc, oer, oec, ner, nec)
  end
  self:schedule()
end

-- Adds one change to this turn's batch: kept as it is when it stays alone, else as whole lines.
-- Only where it is: the text is read when the batch is sent (`:substitute` reports a change
-- before the line holds it).
function Session:record(sr, sc, oer, oec, ner, nec)
  local er, ec = sr + oer, oer == 0 and sc + oec or oec
  local batch = self.batch
  if not batch then
    -- Not the buffer's line count now: `:substitute` reports its changes on a copy of the line.
    batch = { count = 0, lo = sr, hi = er, delta = 0, lines = self.line_count }
    self.batch = batch
  end
  batch.count = batch.count + 1
  if batch.count == 1 then
    batch.single = { sr = sr, sc = sc, er = er, ec = ec, ner = ner, nec = nec }
  end
  -- Rows before `lo` are where they were; rows after the batch's lines moved by `delta`.
  batch.lo = math.min(batch.lo, sr)
  batch.hi = math.max(batch.hi, er - batch.delta)
  batch.delta = batch.delta + (ner - oer)
end

function Session:schedule()
  if self.is_scheduled then return end
  self.is_scheduled = true
  vim.schedule(function()
    self.is_scheduled = false
    self:flush()
  end)
end

-- Sends what changed since the last edit, unless an edit is on its way (its answer sends more).
function Session:flush()
  if self.is_stopped or self.in_flight or self.resyncing or not self.agent:is_connected() then return end
  if self.needs_resync then return self:resync() end
  if self.mode == "diff" then
    local bom, now = text.bom_of(self.buf), text.of_buffer(self.buf)
    if now == self.shadow and bom == self.bom then return end
    if not self.exists then return self:send_write(bom .. now, { after = now, bom = bom }) end
    return self:send(text.edit(self.bom .. self.shadow, bom .. now), { after = now, bom = bom })
  end
  if vim.api.nvim_buf_line_count(self.buf) == 1 and text.of_buffer(self.buf) == "" then
    -- Emptied (every line deleted, or an undo back to an empty file): Neovim writes no line
    -- break, yet counts one in its bytes, and may not report the change at all.
    self.mode, self.shadow, self.batch = "diff", table.concat(self.shadow, "\n"), nil
    return self:flush()
  end
  -- 'bomb' changed, which no `on_bytes` reports: the texts decide.
  if text.bom_of(self.buf) ~= self.bom then return self:resync() end
  local batch = self.batch
  if not batch then return end
  self.batch = nil
  local expected = batch.lines + batch.delta
  self.line_count = vim.api.nvim_buf_line_count(self.buf)
  if self.line_count ~= expected then
    -- Neovim reported changes it did not make as such (`:s/\n\n/\r/` on the last line says it
    -- joined a line it kept): the texts decide.
    return self:resync()
  end
  local nl = line_break(self.buf)
  local sr, sc, er, ec, new
  if batch.count == 1 then
    local one = batch.single
    sr, sc, er, ec = one.sr, one.sc, one.er, one.ec
    new = ""
    if one.ner > 0 or one.nec > 0 then
      new = range_text(self.buf, sr, sc, sr + one.ner, one.ner == 0 and sc + one.nec or one.nec)
    end
  else
    -- Several changes: the lines they touched, as they are now, replace those lines as they were.
    local hi = math.min(batch.hi, batch.lines - 1)
    local now_hi = batch.hi >= batch.lines and vim.api.nvim_buf_line_count(self.buf) - 1 or hi + batch.delta
    local lines = vim.api.nvim_buf_get_lines(self.buf, batch.lo, now_hi + 1, false)
    if text.of_buffer(self.buf) == "" then lines = {} end
    sr, sc, er, ec = batch.lo, 0, hi + 1, 0
    new = #lines > 0 and table.concat(lines, "\n") .. "\n" or ""
  end
  if nl == "\r\n" then
    new = new:gsub("\n", "\r\n")
  elseif new:find("\r", 1, true) then
    -- A "\r" typed into a "\n" file: the agent sees a line break there; follow by texts.
    return self:resync()
  end
  -- The agent's first line starts with the mark the buffer's does not hold.
  local shift = #self.bom
  local e = {
    start = { line = sr, character = sr == 0 and sc + shift or sc },
    ["end"] = { line = er, character = er == 0 and ec + shift or ec },
    text = new,
  }
  self:send(e, { splice = { sr, sc, er, ec, new } })
end

-- Replaces [start, end) of the shadow's lines (0-based rows, byte columns) with `new`.
local function splice(lines, sr, sc, er, ec, new)
  local first, last = lines[sr + 1] or "", lines[er + 1] or ""
  local added = vim.split(new, "\n", { plain = true })
  added[1] = first:sub(1, sc) .. added[1]
  added[#added] = added[#added] .. last:sub(ec + 1)
  local removed = er - sr + 1
  local shift = #added - removed
  local count = #lines
  if shift > 0 then
    for i = count, er + 2, -1 do lines[i + shift] = lines[i] end
  elseif shift < 0 then
    for i = er + 2, count do lines[i + shift] = lines[i] end
    for i = count + shift + 1, count do lines[i] = nil end
  end
  for i, line in ipairs(added) do lines[sr + i] = line end
end

function Session:send(edit, change)
  self.in_flight = true
  local params = { path = self.path, positionEncoding = "utf-8", edits = { edit }, ifRevision = self.revision, client = M.client }
  self.agent.conn:request("edit", params, function(err, result) self:answered(err, result, change) end)
end

-- A new file's first content: a `write` (an edit needs a file to place it in).
function Session:send_write(content, change)
  self.in_flight = true
  local params = { path = self.path, content = content, ifRevision = self.revision, client = M.client }
  self.agent.conn:request("write", params, function(err, result)
    if not err then self.exists = true end
    self:answered(err, result, change)
  end)
end

function Session:answered(err, result, change)
  self.in_flight = false
  if self.is_stopped then return end
  if err then
    local reason = type(err.data) == "table" and err.data.reason or nil
    if reason ~= "staleRevision" then self.failures = self.failures + 1 end
    if self.failures >= 3 or not self.agent:is_connected() then
      if self.agent:is_connected() then self:give_up("the agent refused its edits: " .. tostring(err.message)) end
      return
    end
    self.needs_resync = true
  else
    self.failures = 0
    self.revision = result.revision
    if change.bom then self.bom = change.bom end
    if change.after then
      self.shadow = change.after
    elseif change.after_lines then
      self.shadow = vim.split(change.after_lines, "\n", { plain = true })
    else
      splice(self.shadow, unpack(change.splice))
    end
    self:choose_mode()
  end
  self:flush()
end

-- Follows edit by edit when the text allows it, by texts otherwise (see the top of this file).
-- Looked at again after each edit: a file emptied, or given its first line, changes what fits.
function Session:choose_mode()
  if self.mode == "bytes" then
    if #self.shadow == 1 and self.shadow[1] == "" then
      self.mode, self.shadow, self.batch = "diff", "", nil
    end
  elseif self.shadow ~= "" and not self.batch and self:follows_bytes(self.shadow)
    and text.of_buffer(self.buf) == self.shadow then
    self.mode = "bytes"
    self.shadow = vim.split(self.shadow, "\n", { plain = true })
    self.line_count = vim.api.nvim_buf_line_count(self.buf)
  end
end

-- Whether the agent's text, `bytes` long at the buffer's revision, can be the buffer's: a cheap
-- check (no copy of the text) that Neovim's reports of its changes added up.
function Session:agrees_in_size(bytes)
  local buf = self.buf
  bytes = bytes - #self.bom
  local count = vim.api.nvim_buf_line_count(buf)
  if count == 1 then return #text.of_buffer(buf) == bytes end
  local size = vim.api.nvim_buf_get_offset(buf, count)
  if vim.bo[buf].fileformat == "dos" then size = size + (vim.bo[buf].endofline and count or count - 1) end
  return size == bytes
end

-- Whether nothing typed is waiting to reach the agent.
function Session:is_settled()
  return not self.in_flight and not self.batch and not self.needs_resync and not self.resyncing
    and text.bom_of(self.buf) == self.bom and (self.mode == "bytes" or text.of_buffer(self.buf) == self.shadow)
end

-- Reads the agent's text and brings both sides together (see the top of this file).
function Session:resync()
  if self.resyncing or self.is_stopped then return end
  if self.in_flight then
    self.needs_resync = true
    return
  end
  self.needs_resync = false
  self.resyncing = true
  self.batch = nil
  local status
  local conn = self.agent.conn
  -- "buffer": the text on screen keeps the path; null: the agent's configuration decides.
  local keep = self.options.keep ~= "agent" and "buffer" or vim.NIL
  conn:request("open", { path = self.path, keep = keep }, function(err, result)
    status = { err = err, result = result }
  end)
  conn:request("read", { path = self.path }, function(err, result)
    self.resyncing = false
    if self.is_stopped then return end
    err = (status or {}).err or err
    if err then return self:refused(err) end
    self:adopt(result, (status or {}).result)
  end)
end

function Session:refused(err)
  local reason = type(err.data) == "table" and err.data.reason or nil
  if reason == "tooLarge" then
    return self:give_up("it is larger than the agent's limits.maxFileBytes; Neovim saves it itself", "info")
  end
  if not self.agent:is_connected() then return end
  self:give_up("the agent refused to open it: " .. tostring(err.message))
end

function Session:adopt(answer, status)
  if answer.contentBase64 then
    return self:give_up("it is not UTF-8 text; Neovim saves it itself", "info")
  end
  local content = answer.content or ""
  self.exists = answer.exists ~= false
  self.path = answer.path or self.path
  local ours, our_bom = text.of_buffer(self.buf), text.bom_of(self.buf)
  local base, base_bom = self:base_text(), self.bom
  -- The agent's mark is read as the buffer shows marks: as 'bomb', or as a character of the first
  -- line when the shadow holds one there ('binary', or read without "ucs-bom" in 'fileencodings').
  local as_character = vim.bo[self.buf].binary or (base_bom == "" and base:sub(1, #text.BOM) == text.BOM)
  local theirs_bom, theirs = text.split_bom(content, as_character)
  -- A buffer given another file's name (:saveas, :file) holds what is to be written there.
  if self.takes_ours then base, base_bom = theirs, theirs_bom end
  self.takes_ours = false
  local target = text.merge(base, ours, theirs)
  -- The mark merges on its own: the side that changed it wins (both sides that did agree).
  local target_bom = our_bom ~= base_bom and our_bom or theirs_bom
  local copy
  if self.takes_theirs then
    -- The agent kept the disk's version (keep = "agent"); what the buffer held is in its copy,
    -- but not what was typed since the last edit it took: that goes to a copy of ours.
    self.takes_theirs = false
    if ours ~= base or our_bom ~= base_bom then copy = self.agent:keep_aside(self.path, our_bom .. ours) end
    target, target_bom = theirs, theirs_bom
  elseif not target then
    -- Both changed the same lines while an edit was on its way: the buffer keeps what the person
    -- sees, the agent's version is copied aside.
    target, target_bom = ours, our_bom
    copy = self.agent:keep_aside(self.path, content)
  end
  self.revision = answer.revision
  if target ~= ours or target_bom ~= our_bom then
    local shown, why = self:show(ours, target, target_bom)
    if not shown then return self:give_up("the agent's change could not be shown (" .. why .. "); Neovim saves it itself") end
  end
  if self:follows_bytes(theirs) and self:follows_bytes(target) then
    self.mode = "bytes"
    self.shadow = vim.split(theirs, "\n", { plain = true })
    self.line_count = vim.api.nvim_buf_line_count(self.buf)
  else
    self.mode = "diff"
    self.shadow = theirs
  end
  self.bom = theirs_bom
  if copy then
    self.agent:conflict({ path = self.path, kind = "overlap", kept = target == ours and "buffer" or "disk", copy = copy })
  end
  local agreed = target == theirs and target_bom == theirs_bom
  if agreed and self.exists and status and not status.dirty and not text.unkept(self.buf) then
    vim.bo[self.buf].modified = false
  end
  if self.mode == "bytes" and not agreed then
    -- Sent first, so nothing else is on its way with it; its answer sends what comes next.
    return self:send(text.edit(theirs_bom .. theirs, target_bom .. target), { after_lines = target, bom = target_bom })
  end
  self:flush()
end

-- The line break a text uses throughout ("dos" when every "\n" follows a "\r"), or nil.
local function format_of(content)
  if not content:find("\n", 1, true) then return nil end
  if content:find("\r\n", 1, true) and not content:find("[^\r]\n") and content:sub(1, 1) ~= "\n" then return "dos" end
  return "unix"
end

-- Changes the buffer from `from` to `to` hunk by hunk, bottom up, as one undo step of its own,
-- with `bom` before its first line: lines nobody changed keep their marks, folds and the cursor.
-- Returns false and why when the buffer would not take it ('nomodifiable', say).
function Session:show(from, to, bom)
  local buf = self.buf
  local format = format_of(to) or vim.bo[buf].fileformat
  local hunks = text.hunks(from, to)
  if format_of(from) ~= format_of(to) then
    -- Every line differs in its break alone: those are no hunks to Neovim, whose lines have none.
    hunks = text.hunks((from:gsub("\r\n", "\n")), (to:gsub("\r\n", "\n")))
  end
  self.applying = true
  local ok, err = pcall(function()
    -- A tool that changed the line breaks (dos2unix, a formatter) changed the file format too,
    -- and one that added or took away the mark changed 'bomb'.
    if format ~= vim.bo[buf].fileformat then vim.bo[buf].fileformat = format end
    if bom ~= text.bom_of(buf) then vim.bo[buf].bomb = bom ~= "" end
    -- Closes the person's undo step: this change gets one of its own.
    vim.bo[buf].undolevels = vim.bo[buf].undolevels
    for i = #hunks, 1, -1 do
      local h = hunks[i]
      local lines = {}
      for j, line in ipairs(h.lines) do
        line = line:gsub("\n$", "")
        if format == "dos" then line = line:gsub("\r$", "") end
        lines[j] = line
      end
      -- An empty file is one empty line to Neovim: its first lines replace that one.
      local last = from == "" and -1 or h.last
      vim.api.nvim_buf_set_lines(buf, h.first, last, false, lines)
    end
    local ends = to == "" or to:sub(-1) == "\n" or to:sub(-1) == "\r"
    if vim.bo[buf].endofline ~= ends then vim.bo[buf].endofline = ends end
  end)
  self.applying = false
  return ok, not ok and tostring(err) or nil
end

-- Stops following this buffer (Neovim writes it itself from now on), saying why.
function Session:give_up(why, level)
  self:stop()
  self.agent:forget(self, why, level)
end

function Session:stop()
  self.is_stopped = true
  self.batch = nil
end

return M
