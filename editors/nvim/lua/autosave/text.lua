-- Texts as the agent holds them (byte strings), and the smallest changes between them: what the
-- Neovim buffer is as a file, the lines that differ, a three-way merge, and LSP positions.
local M = {}

-- The buffer's text as a file: its lines joined by the file format's line break, with one at the
-- end when 'endofline' says the file has it. An empty buffer (read from an empty file, or emptied
-- by deleting every line) is an empty file, which one empty line is not: only the byte count
-- Neovim would write tells them apart.
function M.of_buffer(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines == 1 and lines[1] == "" and vim.api.nvim_buf_call(buf, function()
    return vim.fn.wordcount().bytes
  end) == 0 then
    return ""
  end
  local format = vim.bo[buf].fileformat
  local nl = format == "dos" and "\r\n" or (format == "mac" and "\r" or "\n")
  local text = table.concat(lines, nl)
  if vim.bo[buf].endofline then text = text .. nl end
  return text
end

-- A UTF-8 byte order mark. Neovim keeps it out of the first line: reading a file that starts with
-- one sets 'bomb' (with "ucs-bom" in 'fileencodings', as by default), and writing puts it back.
M.BOM = "\239\187\191"

-- The bytes Neovim writes before a UTF-8 buffer's first line: the mark when 'bomb' asks for it
-- ('binary' writes none).
function M.bom_of(buf)
  return (vim.bo[buf].bomb and not vim.bo[buf].binary) and M.BOM or ""
end

-- Splits the agent's text into the mark Neovim shows as 'bomb' and the text of the lines. With
-- `as_character` (a buffer that shows a mark as a character of its first line: 'binary', or read
-- without "ucs-bom") the mark stays in the text.
function M.split_bom(content, as_character)
  if not as_character and content:sub(1, #M.BOM) == M.BOM then return M.BOM, content:sub(#M.BOM + 1) end
  return "", content
end

-- Why the agent cannot keep the bytes Neovim writes for this buffer, or nil when it can: the agent
-- keeps UTF-8 text, edited in UTF-8 positions, with the line break 'fileformat' names.
function M.unkept(buf)
  local options = vim.bo[buf]
  if options.binary then
    if options.fileformat == "unix" then return nil end
    return string.format("'binary' is set, so Neovim ends its lines in \"\\n\" whatever 'fileformat' (%s) says, "
      .. "which the plugin does not follow", options.fileformat)
  end
  local encoding = options.fileencoding ~= "" and options.fileencoding or vim.o.encoding
  if encoding ~= "utf-8" then
    return "its 'fileencoding' is " .. encoding .. " and the agent keeps UTF-8 text"
  end
end

-- Lines of `text`, each with its "\n" (the last one without, when the text does not end in one).
function M.lines(text)
  local lines, start = {}, 1
  while start <= #text do
    local stop = text:find("\n", start, true)
    if not stop then
      lines[#lines + 1] = text:sub(start)
      break
    end
    lines[#lines + 1] = text:sub(start, stop)
    start = stop + 1
  end
  return lines
end

-- The hunks that turn `a` into `b`, line by line: {first, last, lines}, the 0-based range
-- [first, last) of a's lines replaced by b's `lines` (with their line breaks).
function M.hunks(a, b)
  if a == b then return {} end
  local b_lines = M.lines(b)
  local found = {}
  for _, h in ipairs(vim.diff(a, b, { result_type = "indices" })) do
    local start_a, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    local first = count_a == 0 and start_a or start_a - 1
    local replacement = {}
    local from = count_b == 0 and start_b or start_b - 1
    for i = 1, count_b do replacement[i] = b_lines[from + i] end
    found[#found + 1] = { first = first, last = first + count_a, lines = replacement }
  end
  return found
end

local function same(x, y)
  if x.first ~= y.first or x.last ~= y.last or #x.lines ~= #y.lines then return false end
  for i = 1, #x.lines do
    if x.lines[i] ~= y.lines[i] then return false end
  end
  return true
end

-- Merges two texts made from `base`, line by line. Returns the merged text, or nil when their
-- changes touch the same lines (or lines next to each other) differently.
function M.merge(base, ours, theirs)
  if ours == base then return theirs end
  if theirs == base or theirs == ours then return ours end
  local all = {}
  for _, h in ipairs(M.hunks(base, ours)) do all[#all + 1] = h end
  for _, h in ipairs(M.hunks(base, theirs)) do all[#all + 1] = h end
  table.sort(all, function(x, y)
    if x.first ~= y.first then return x.first < y.first end
    return x.last < y.last
  end)
  local kept = {}
  for _, h in ipairs(all) do
    local previous = kept[#kept]
    if previous and h.first <= previous.last then
      if not same(previous, h) then return nil end
    else
      kept[#kept + 1] = h
    end
  end
  local base_lines, out, at = M.lines(base), {}, 0
  for _, h in ipairs(kept) do
    for i = at + 1, h.first do out[#out + 1] = base_lines[i] end
    for _, line in ipairs(h.lines) do out[#out + 1] = line end
    at = h.last
  end
  for i = at + 1, #base_lines do out[#out + 1] = base_lines[i] end
  return table.concat(out)
end

-- The LSP position (line, UTF-8 character) of byte `offset` (0-based) in `text`, counting line
-- breaks as the agent does: "\n", "\r\n" and a bare "\r".
function M.position(text, offset)
  local line, line_start, i = 0, 0, 1
  while i <= offset do
    local byte = text:byte(i)
    if byte == 10 or (byte == 13 and text:byte(i + 1) ~= 10) then
      line, line_start = line + 1, i
    end
    i = i + 1
  end
  return { line = line, character = offset - line_start }
end

-- The one edit that turns `a` into `b`: the bytes between their common start and common end,
-- never splitting a "\r\n" or a UTF-8 character. Nil when they are equal.
function M.edit(a, b)
  if a == b then return nil end
  local limit = math.min(#a, #b)
  local prefix = 0
  while prefix < limit and a:byte(prefix + 1) == b:byte(prefix + 1) do prefix = prefix + 1 end
  local suffix = 0
  while suffix < limit - prefix and a:byte(#a - suffix) == b:byte(#b - suffix) do suffix = suffix + 1 end
  local function inside(text, at)
    local byte = text:byte(at + 1)
    return byte and (byte >= 0x80 and byte < 0xC0 or (byte == 10 and text:byte(at) == 13))
  end
  while prefix > 0 and (inside(a, prefix) or inside(b, prefix)) do prefix = prefix - 1 end
  while suffix > 0 and (inside(a, #a - suffix) or inside(b, #b - suffix)) do suffix = suffix - 1 end
  return {
    start = M.position(a, prefix),
    ["end"] = M.position(a, #a - suffix),
    text = b:sub(prefix + 1, #b - suffix),
  }
end

return M
