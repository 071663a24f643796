-- One connection to an agent's control socket: JSON-RPC 2.0, one message per line. Requests made
-- in one turn of the event loop go out in one write; answers and event notifications come back
-- in order, on Neovim's main loop.
local uv = vim.loop

local M = {}

-- The user with `uid`, for messages: "user alice" from /etc/passwd, else "uid 1234".
local function user_name(uid)
  local passwd = io.open("/etc/passwd", "r")
  if passwd then
    for line in passwd:lines() do
      local name, id = line:match("^([^:]*):[^:]*:(%d+):")
      if id and tonumber(id) == uid then
        passwd:close()
        return "user " .. name
      end
    end
    passwd:close()
  end
  return "uid " .. uid
end

-- Whether a socket or an agent of `uid` may be talked to: our own, or root's (who could act as
-- anyone anyway).
local function trusted(uid)
  return uid == uv.getuid() or uid == 0
end

-- `socket` when its file is ours (or root's); else nil and why it is refused. A socket path can
-- come from anywhere ($AUTOSAVE_SOCKET, a pointer file a cloned repository shipped).
local function checked(socket, state, named_by)
  local stat = uv.fs_stat(socket)
  if stat and not trusted(stat.uid) then
    return nil, nil, "refused the socket " .. socket .. " (named by " .. named_by .. "): it belongs to "
      .. user_name(stat.uid) .. ", not to you (" .. user_name(uv.getuid()) .. "), so nothing was sent to it"
  end
  return socket, state
end

-- The agent's socket for `directory`, found as the CLI finds it: $AUTOSAVE_SOCKET, else walking
-- up to a `.autosave` folder with `agent.sock` (or `agent.sock.path`, naming a socket elsewhere).
-- Returns the socket and the state folder (nil when only the variable says where); or nil, nil
-- and why not, when the socket, or the folder's agent, is another user's.
function M.find(directory)
  local forced = vim.env.AUTOSAVE_SOCKET
  if forced and forced ~= "" then return checked(forced, nil, "AUTOSAVE_SOCKET") end
  local dir = directory
  while dir and dir ~= "" do
    local state = dir .. "/.autosave"
    local folder = uv.fs_lstat(state)
    if folder and folder.type == "directory" and folder.uid ~= uv.getuid() then
      return nil, nil, "the agent for " .. dir .. " is " .. user_name(folder.uid) .. "'s (its state directory " .. state
        .. " is theirs), and serves only them"
    end
    local pointer = io.open(state .. "/agent.sock.path", "r")
    if pointer then
      local path = pointer:read("*l")
      pointer:close()
      if path and path ~= "" then return checked(path, state, state .. "/agent.sock.path") end
    end
    local stat = uv.fs_lstat(state .. "/agent.sock")
    if stat and stat.type == "socket" then return checked(state .. "/agent.sock", state, state) end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then break end
    dir = parent
  end
  return nil, nil
end

-- The uid and pid of the process at the other end of a connected pipe (SO_PEERCRED), through
-- LuaJIT's FFI; nil where there is no FFI (a Neovim built with PUC Lua) or the call fails.
local peer_credentials
do
  local has_ffi, ffi = pcall(require, "ffi")
  if has_ffi then
    pcall(ffi.cdef, "typedef struct { int32_t pid; uint32_t uid; uint32_t gid; } autosave_peer_credentials;")
    pcall(ffi.cdef, "int getsockopt(int fd, int level, int name, void *value, uint32_t *size);")
    -- SOL_SOCKET and SO_PEERCRED on Linux: 1 and 17, except on the architectures below.
    local option = ({ ppc = 21, ppc64 = 21, ppc64le = 21, mips = 18, mipsel = 18, mips64 = 18, mips64el = 18 })[jit.arch] or 17
    peer_credentials = function(pipe)
      local fd = pipe:fileno()
      if type(fd) ~= "number" then return nil end
      local credentials = ffi.new("autosave_peer_credentials")
      local size = ffi.new("uint32_t[1]", ffi.sizeof(credentials))
      local ok, result = pcall(ffi.C.getsockopt, fd, 1, option, credentials, size)
      if not ok or result ~= 0 then return nil end
      return tonumber(credentials.uid), tonumber(credentials.pid)
    end
  else
    peer_credentials = function() return nil end
  end
end

local Connection = {}
Connection.__index = Connection

-- Connects to `socket`; `handlers.on_event(params)` gets each event, `handlers.on_close(reason)`
-- the end of the connection, once, and `handlers.on_notification(method, params)` (optional) any
-- other notification (`changes`, for file watching). `on_ready(err)` says whether the connection is up.
function M.open(socket, handlers, on_ready)
  local self = setmetatable({
    socket = socket, handlers = handlers, pipe = uv.new_pipe(false), next_id = 1,
    waiting = {}, outgoing = {}, partial = "", is_closed = false,
  }, Connection)
  self.pipe:connect(socket, function(err)
    vim.schedule(function()
      if err then
        self:close("cannot connect to " .. socket .. ": " .. err)
        on_ready(err)
        return
      end
      -- Who listens there, before a byte is sent: the socket file's owner said nothing of that.
      local uid, pid = peer_credentials(self.pipe)
      if uid and not trusted(uid) then
        local reason = "refused the socket " .. socket .. ": the process listening there (pid " .. pid .. ") runs as "
          .. user_name(uid) .. ", not as you (" .. user_name(uv.getuid()) .. "), so nothing was sent to it"
        self.refused = reason
        self:close(reason)
        on_ready(reason)
        return
      end
      self.pipe:read_start(function(read_err, chunk)
        if read_err or not chunk then
          vim.schedule(function() self:close(read_err or "the agent closed the connection") end)
          return
        end
        self:take(chunk)
      end)
      on_ready(nil)
    end)
  end)
  return self
end

-- Splits what arrived into lines and hands each message over on the main loop.
function Connection:take(chunk)
  local data = self.partial .. chunk
  local start = 1
  while true do
    local stop = data:find("\n", start, true)
    if not stop then break end
    local line = data:sub(start, stop - 1)
    start = stop + 1
    vim.schedule(function() self:dispatch(line) end)
  end
  self.partial = data:sub(start)
end

function Connection:dispatch(line)
  if self.is_closed then return end
  local ok, message = pcall(vim.json.decode, line)
  if not ok or type(message) ~= "table" then return end
  if message.id ~= nil and message.id ~= vim.NIL then
    local callback = self.waiting[message.id]
    self.waiting[message.id] = nil
    if callback then
      local err = message.error ~= vim.NIL and message.error or nil
      callback(err, message.result)
    end
  elseif message.method == "event" then
    self.handlers.on_event(message.params)
  elseif message.method == "dropped" then
    self:close("the agent dropped this connection: it fell behind its events")
  elseif type(message.method) == "string" and self.handlers.on_notification then
    self.handlers.on_notification(message.method, message.params)
  end
end

-- Sends a request; `callback(err, result)` gets the answer (err: the JSON-RPC error object, or
-- {message = …} when the connection ended first). Sent at the end of this turn of the loop.
function Connection:request(method, params, callback)
  if self.is_closed then
    if callback then callback({ message = "not connected" }) end
    return
  end
  local id = self.next_id
  self.next_id = id + 1
  self.waiting[id] = callback or function() end
  self.outgoing[#self.outgoing + 1] = vim.json.encode({ jsonrpc = "2.0", id = id, method = method, params = params }) .. "\n"
  if #self.outgoing == 1 then vim.schedule(function() self:flush() end) end
end

-- Writes every request made so far in one write.
function Connection:flush()
  if self.is_closed or #self.outgoing == 0 then return end
  local data = table.concat(self.outgoing)
  self.outgoing = {}
  self.pipe:write(data)
end

-- Whether requests are still waiting for their answers.
function Connection:is_busy()
  return next(self.waiting) ~= nil or #self.outgoing > 0
end

function Connection:close(reason)
  if self.is_closed then return end
  self.is_closed = true
  pcall(function()
    self.pipe:read_stop()
    self.pipe:close()
  end)
  local waiting = self.waiting
  self.waiting = {}
  local ids = vim.tbl_keys(waiting)
  table.sort(ids)
  -- In the order they were asked (a resync reads its `open` answer before its `read`), and one
  -- failing callback must not keep the others, or the notice below, from running.
  for _, id in ipairs(ids) do pcall(waiting[id], { message = reason }) end
  self.handlers.on_close(reason)
end

return M
