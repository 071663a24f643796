-- Glob patterns as the Language Server Protocol writes them (`**`, `*`, `?`, `{a,b}`, `[…]`,
-- `[!…]`), matched against a path relative to a folder, with `/` between segments.
local M = {}

-- A Vim regular expression in very-nomagic mode (`\V`: only a backslash is special), so every
-- character of the glob that is not an operator can be copied as it is, but for `\`.
local function literal(char)
  return char == "\\" and "\\\\" or char
end

-- Translates `glob` from byte `i` up to the end, or to the `}` or `,` closing the group being read
-- (`in_group`). Returns the regular expression and the index of the character it stopped at.
local function translate(glob, i, in_group)
  local out = {}
  while i <= #glob do
    local char = glob:sub(i, i)
    if in_group and (char == "}" or char == ",") then
      return table.concat(out), i
    elseif char == "*" and glob:sub(i + 1, i + 1) == "*" then
      -- `**` is any number of whole segments: `**/` may match nothing, `**` at the end anything.
      if glob:sub(i + 2, i + 2) == "/" then
        out[#out + 1] = [[\%(\.\*/\)\=]]
        i = i + 3
      else
        out[#out + 1] = [[\.\*]]
        i = i + 2
      end
    elseif char == "*" then
      out[#out + 1] = [=[\[^/]\*]=]
      i = i + 1
    elseif char == "?" then
      out[#out + 1] = [=[\[^/]]=]
      i = i + 1
    elseif char == "[" and glob:find("]", i + 2, true) then
      -- A class: `[!…]` negates it; `]` right after the opening (or `[!`) is a member.
      local j = i + 1
      local negate = glob:sub(j, j) == "!" or glob:sub(j, j) == "^"
      if negate then j = j + 1 end
      local close = glob:find("]", j + 1, true)
      local members = glob:sub(j, close - 1):gsub("\\", "\\\\")
      out[#out + 1] = "\\[" .. (negate and "^" or "") .. members .. "]"
      i = close + 1
    elseif char == "{" then
      local alternatives = {}
      local j = i + 1
      while true do
        local part
        part, j = translate(glob, j, true)
        alternatives[#alternatives + 1] = part
        local stop = glob:sub(j, j)
        j = j + 1
        if stop ~= "," then break end
      end
      out[#out + 1] = [[\%(]] .. table.concat(alternatives, [[\|]]) .. [[\)]]
      i = j
    else
      out[#out + 1] = literal(char)
      i = i + 1
    end
  end
  return table.concat(out), i
end

-- The Vim regular expression that matches exactly the paths `glob` matches (case-sensitive).
function M.to_regex(glob)
  return [[\V\C\^]] .. translate(glob, 1, false) .. [[\$]]
end

-- A function(path) -> boolean telling whether `path` (relative, `/`-separated) matches `glob`;
-- or nil and why, when Vim cannot compile it.
function M.compile(glob)
  local ok, regex = pcall(vim.regex, M.to_regex(glob))
  if not ok then return nil, "the glob " .. vim.inspect(glob) .. " could not be read: " .. tostring(regex) end
  return function(path)
    return regex:match_str(path) ~= nil
  end
end

return M
