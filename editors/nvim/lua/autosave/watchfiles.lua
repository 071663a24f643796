-- File watching for language servers through the agent: the plugin answers the servers'
-- `client/registerCapability` for `workspace/didChangeWatchedFiles` itself where a watcher's folder
-- is under a running agent, subscribes to that agent's `changes` with the watchers' globs, and
-- sends each settled burst of changes to the server as one `workspace/didChangeWatchedFiles`.
-- Watchers anywhere else go to Neovim's own handler (which, before 0.9, watches nothing).
local connection = require("autosave.connection")
local glob = require("autosave.glob")
local uv = vim.loop

local M = {}

local METHOD = "workspace/didChangeWatchedFiles"

-- WatchKind (what a watcher asks for), as bits.
local CREATE, CHANGE, DELETE = 1, 2, 4
local ALL_KINDS = CREATE + CHANGE + DELETE

-- An agent's change kind as an LSP FileChangeType (`type`) and the WatchKind bit asking for it. A
-- move reaches the server as a create of the new path: the old one comes as its own `removed`.
local change_types = {
  created = { type = 1, bit = CREATE },
  moved = { type = 1, bit = CREATE },
  modified = { type = 2, bit = CHANGE },
  removed = { type = 3, bit = DELETE },
}

local watches = {} -- [client_id][socket] = Watch
local roots = {} -- [socket] = the agent's root folder, as its `status` says
local told = {}

local function options()
  return require("autosave").options
end

local function say_once(key, message, level)
  if told[key] then return end
  told[key] = true
  vim.notify("autosave: " .. message, level or vim.log.levels.WARN)
end

-- `path` without a trailing slash, resolved through symbolic links when it exists (the agent
-- names its root by its real path).
local function normalized(path)
  path = path:gsub("/+$", "")
  if path == "" then path = "/" end
  return uv.fs_realpath(path) or path
end

-- The root of the agent listening at `socket`, asked once (a short wait on its `status`): nil when
-- no agent answers there.
local function agent_root(socket)
  if roots[socket] then return roots[socket] end
  local root, done
  local conn
  conn = connection.open(socket, { on_event = function() end, on_close = function() done = true end }, function(err)
    if err then return end
    conn:request("status", vim.empty_dict(), function(_, result)
      if type(result) == "table" and type(result.root) == "string" then root = normalized(result.root) end
      done = true
    end)
  end)
  vim.wait(2000, function() return done end, 5)
  conn:close("asked for its root")
  roots[socket] = root
  return root
end

-- The agent's socket and root for the folder `dir`, or nil when no agent of ours runs for it.
local function agent_for(dir)
  local socket = connection.find(dir)
  if not socket then return nil end
  local root = agent_root(socket)
  if not root then return nil end
  return socket, root
end

-- `path` relative to `root` ("" for the root itself), or nil when it is not inside it.
local function relative(path, root)
  if path == root then return "" end
  local prefix = root == "/" and "/" or root .. "/"
  if path:sub(1, #prefix) == prefix then return path:sub(#prefix + 1) end
end

-- The folder a URI (or a WorkspaceFolder's, or a RelativePattern's base) names, or nil.
local function folder_of(base)
  if type(base) == "table" then base = base.uri end
  if type(base) ~= "string" then return nil end
  local ok, path = pcall(vim.uri_to_fname, base)
  return ok and normalized(path) or nil
end

-- The folders a string pattern is relative to: the client's workspace folders, else its root.
local function workspace_folders(client)
  local folders = {}
  for _, folder in ipairs(client.workspace_folders or {}) do
    folders[#folders + 1] = folder_of(folder)
  end
  if #folders == 0 and client.config and type(client.config.root_dir) == "string" then
    folders[1] = normalized(client.config.root_dir)
  end
  return folders
end

-- Where the watcher `watcher` points: a list of {socket, root, glob} (the glob relative to the
-- agent's root) for its parts under a running agent, and the watchers to leave to Neovim for the
-- rest. Returns nil and why for a watcher that is not one.
function M.place(watcher, client)
  if type(watcher) ~= "table" then return nil, "a watcher is not an object" end
  local pattern, bases = watcher.globPattern, nil
  if type(pattern) == "table" then
    bases = { folder_of(pattern.baseUri) }
    pattern = pattern.pattern
  end
  if type(pattern) ~= "string" or pattern == "" then
    return nil, "a watcher's globPattern is not a glob or a RelativePattern"
  end
  local placed, left = {}, {}
  if not bases and pattern:sub(1, 1) == "/" then
    -- An absolute glob: its folder is what comes before the first wildcard.
    local fixed = pattern:match("^[^*?%[{]*")
    local socket, root = agent_for(fixed:match("^(.*)/") or "/")
    local inside = socket and relative(pattern, root)
    if inside and inside ~= "" then
      placed[1] = { socket = socket, root = root, glob = inside }
    else
      left[1] = watcher
    end
    return placed, left
  end
  for _, base in ipairs(bases or workspace_folders(client)) do
    local socket, root = agent_for(base)
    local inside = socket and relative(base, root)
    if inside then
      placed[#placed + 1] = { socket = socket, root = root, glob = inside == "" and pattern or inside .. "/" .. pattern }
    else
      left[#left + 1] = { globPattern = { baseUri = vim.uri_from_fname(base), pattern = pattern }, kind = watcher.kind }
    end
  end
  if bases == nil and #placed == 0 then left = { watcher } end -- as the server wrote it
  return placed, left
end

-- Watch: the watchers one language server registered under one agent, and the agent connection
-- subscribed to their globs. One connection per server and agent: the agent sends only what one of
-- its globs matches, and each settled burst becomes one notification to that server.
local Watch = {}
Watch.__index = Watch

local function watch_for(client_id, socket, root)
  watches[client_id] = watches[client_id] or {}
  local watch = watches[client_id][socket]
  if not watch then
    watch = setmetatable({ client_id = client_id, socket = socket, root = root, registrations = {}, generation = 0 }, Watch)
    watches[client_id][socket] = watch
  end
  return watch
end

-- The client still running, or nil (the watch then stops).
function Watch:client()
  local client = vim.lsp.get_client_by_id(self.client_id)
  if client and not client.is_stopped() then return client end
end

-- Every glob of every registration, each once.
function Watch:globs()
  local globs, seen = {}, {}
  for _, watchers in pairs(self.registrations) do
    for _, w in ipairs(watchers) do
      if not seen[w.glob] then
        seen[w.glob] = true
        globs[#globs + 1] = w.glob
      end
    end
  end
  table.sort(globs)
  return globs
end

-- Subscribes anew (at the end of this turn of the loop: one registration request may add many),
-- from the last clock seen, so that nothing between the old subscription and the new one is lost.
function Watch:resubscribe()
  if self.resubscribing then return end
  self.resubscribing = true
  vim.schedule(function()
    self.resubscribing = false
    self:connect()
  end)
end

function Watch:connect()
  self.generation = self.generation + 1
  local generation = self.generation
  if self.conn then
    local old = self.conn
    self.conn = nil
    old:close("subscribing anew")
  end
  if self.is_stopped then return end
  if next(self.registrations) == nil or not self:client() then return self:stop() end
  local conn
  conn = connection.open(self.socket, {
    on_event = function() end,
    on_notification = function(method, params)
      if method == "changes" and generation == self.generation then self:changes(params) end
    end,
    on_close = function(reason)
      if generation == self.generation then self:lost(reason) end
    end,
  }, function(err)
    if err or generation ~= self.generation then return end
    local params = { glob = self:globs(), since = self.clock }
    conn:request("subscribe", params, function(failure, result)
      if generation ~= self.generation then return end
      if failure and self.clock then
        -- The clock is from an agent that is gone: start from now, and say what may be missed.
        self:missed("the agent did not know the last clock (" .. tostring(failure.message) .. ")")
        self.clock = nil
        return self:connect()
      elseif failure then
        say_once("subscribe:" .. self.socket, "the agent at " .. self.socket .. " refused to watch files for language servers ("
          .. tostring(failure.message) .. "); they get no file changes from it")
        return self:stop()
      elseif type(result) ~= "table" or type(result.clock) ~= "string" then
        say_once("old:" .. self.socket, "the agent at " .. self.socket .. " does not send file changes (an older "
          .. "version); language servers get none from it until it is updated")
        return self:stop()
      end
      self.clock = self.clock or result.clock
      self.is_subscribed = true
    end)
  end)
  self.conn = conn
end

-- The connection ended (the agent stopped or restarted): tries again every `reconnect_ms`, from
-- the last clock.
function Watch:lost(reason)
  self.conn, self.is_subscribed = nil, false
  if self.is_stopped then return end
  self.lost_reason = reason
  vim.defer_fn(function()
    if not self.is_stopped and not self.conn then self:connect() end
  end, options().reconnect_ms)
end

-- Changes were lost (the agent restarted, or some folders are not watched): there is no LSP message
-- for "everything may have changed", so the person is told, once until changes are exact again, and
-- may restart the server.
function Watch:missed(why)
  if self.has_warned then return end
  self.has_warned = true
  local client = self:client()
  local name = client and client.name or ("client " .. self.client_id)
  vim.notify(string.format("autosave: the language server %s may have missed file changes under %s (%s); "
    .. ":LspRestart makes it read the files again", name, self.root, why), vim.log.levels.WARN)
end

-- The WatchKind bits the watchers matching `path` ask for. When no watcher's glob matches here (the
-- agent matched it), every watcher's kinds count rather than dropping what the agent sent.
function Watch:kinds(path)
  local wanted, all = 0, 0
  for _, watchers in pairs(self.registrations) do
    for _, w in ipairs(watchers) do
      all = bit.bor(all, w.kind)
      if bit.band(wanted, w.kind) ~= w.kind and w.match(path) then wanted = bit.bor(wanted, w.kind) end
    end
  end
  return wanted ~= 0 and wanted or all
end

-- One `changes` notification of the agent: one `workspace/didChangeWatchedFiles` to the server,
-- with the changes its watchers asked for, each (URI, type) once.
function Watch:changes(params)
  local client = self:client()
  if not client then return self:stop() end
  if type(params) ~= "table" then return end
  if type(params.clock) == "string" then self.clock = params.clock end
  if params.fresh == true then
    self:missed("the agent could not say exactly what changed" .. (self.lost_reason and " after " .. self.lost_reason or ""))
  else
    self.has_warned, self.lost_reason = false, nil
  end
  local out, seen = {}, {}
  for _, change in ipairs(type(params.changes) == "table" and params.changes or {}) do
    -- An `ignored` path (an editor's dropping, a `watch.ignore` pattern) is not the project's.
    local kind = type(change) == "table" and change.ignored ~= true and change_types[change.kind]
    local path = kind and type(change.path) == "string" and change.path:gsub("/$", "")
    if path and path ~= "" and bit.band(self:kinds(path), kind.bit) ~= 0 then
      local uri = vim.uri_from_fname(self.root .. "/" .. path)
      local key = kind.type .. " " .. uri
      if not seen[key] then
        seen[key] = true
        out[#out + 1] = { uri = uri, type = kind.type }
      end
    end
  end
  if #out > 0 then client.notify(METHOD, { changes = out }) end
end

function Watch:stop()
  self.is_stopped = true
  self.generation = self.generation + 1
  if self.conn then
    local conn = self.conn
    self.conn = nil
    conn:close("no more watchers")
  end
  if watches[self.client_id] and watches[self.client_id][self.socket] == self then
    watches[self.client_id][self.socket] = nil
  end
end

-- Takes the registration `registration` of client `client_id`: the watchers under a running agent
-- are watched through it; returns the watchers left to Neovim (a list, maybe empty).
function M.register(registration, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  local watchers = type(registration.registerOptions) == "table" and registration.registerOptions.watchers
  if not client or type(watchers) ~= "table" then return watchers or {} end
  local left, by_socket = {}, {}
  for _, watcher in ipairs(watchers) do
    local placed, others = M.place(watcher, client)
    if not placed then
      say_once("bad:" .. client.name .. others, "the language server " .. client.name .. " registered a file watcher "
        .. "that is not one (" .. others .. "): " .. vim.inspect(watcher, { newline = " ", indent = "" }) .. "; it is skipped")
    else
      vim.list_extend(left, others)
      local kind = type(watcher.kind) == "number" and bit.band(watcher.kind, ALL_KINDS) or ALL_KINDS
      for _, p in ipairs(placed) do
        local match, why = glob.compile(p.glob)
        if not match then
          say_once("glob:" .. p.glob, "the language server " .. client.name .. ": " .. why .. "; that watcher is left to Neovim")
          left[#left + 1] = watcher
        else
          by_socket[p.socket] = by_socket[p.socket] or { root = p.root, watchers = {} }
          table.insert(by_socket[p.socket].watchers, { glob = p.glob, kind = kind, match = match })
        end
      end
    end
  end
  for socket, placed in pairs(by_socket) do
    local watch = watch_for(client_id, socket, placed.root)
    watch.registrations[registration.id] = placed.watchers
    watch:resubscribe()
  end
  return left
end

-- Drops the registration `id` of client `client_id`; whether it was one of ours.
function M.unregister(id, client_id)
  local found = false
  for _, watch in pairs(watches[client_id] or {}) do
    if watch.registrations[id] then
      found = true
      watch.registrations[id] = nil
      watch:resubscribe()
    end
  end
  return found
end

-- Stops every watch of a client that exited.
function M.client_exited(client_id)
  for _, watch in pairs(watches[client_id] or {}) do watch:stop() end
  watches[client_id] = nil
end

-- Whether the plugin watches files for language servers (the `lsp_watch` option, read each time).
local function enabled()
  return options().lsp_watch ~= false
end

-- `capabilities` saying the client takes `didChangeWatchedFiles` registrations, RelativePatterns too.
local function advertise(capabilities)
  capabilities.workspace = capabilities.workspace or {}
  local watched = capabilities.workspace.didChangeWatchedFiles or {}
  watched.dynamicRegistration = true
  watched.relativePatternSupport = true
  capabilities.workspace.didChangeWatchedFiles = watched
  return capabilities
end

-- Hooks the plugin into Neovim's LSP client `lsp` (the `vim.lsp` module), once: the capability
-- advertised (in the defaults, and in the capabilities a config passes to `vim.lsp.start_client`,
-- which `vim.lsp.start` and nvim-lspconfig call), and the registration requests answered here first.
function M.install(lsp)
  if M.is_installed then return end
  M.is_installed = true
  local protocol = require("vim.lsp.protocol")
  local make_client_capabilities = protocol.make_client_capabilities
  protocol.make_client_capabilities = function(...)
    local capabilities = make_client_capabilities(...)
    if enabled() then advertise(capabilities) end
    return capabilities
  end
  local start_client = lsp.start_client
  if start_client then
    lsp.start_client = function(config, ...)
      if enabled() and type(config) == "table" then
        config = vim.tbl_extend("force", {}, config)
        config.capabilities = advertise(vim.deepcopy(config.capabilities or protocol.make_client_capabilities()))
        local on_exit = config.on_exit
        config.on_exit = function(code, signal, client_id)
          -- Called outside the main loop in 0.7.
          vim.schedule(function() M.client_exited(client_id) end)
          if on_exit then return on_exit(code, signal, client_id) end
        end
      end
      return start_client(config, ...)
    end
  end
  local handlers = lsp.handlers
  local register = handlers["client/registerCapability"] or function() return vim.NIL end
  handlers["client/registerCapability"] = function(err, result, ctx, config)
    if not enabled() or type(result) ~= "table" or type(result.registrations) ~= "table" then
      return register(err, result, ctx, config)
    end
    local rest = {}
    for _, registration in ipairs(result.registrations) do
      if type(registration) == "table" and registration.method == METHOD then
        local ok, left = pcall(M.register, registration, ctx.client_id)
        if not ok then
          say_once("failed:" .. tostring(left), "watching files for a language server failed (" .. tostring(left)
            .. "); its watchers are left to Neovim", vim.log.levels.ERROR)
          left = registration.registerOptions and registration.registerOptions.watchers or {}
        end
        if #left > 0 then
          rest[#rest + 1] = vim.tbl_extend("force", registration, {
            registerOptions = vim.tbl_extend("force", registration.registerOptions, { watchers = left }),
          })
        end
      else
        rest[#rest + 1] = registration
      end
    end
    if #rest == 0 then return vim.NIL end
    return register(err, vim.tbl_extend("force", result, { registrations = rest }), ctx, config)
  end
  -- Neovim 0.7 has no handler here: the server would get "method not found".
  local unregister = handlers["client/unregisterCapability"]
  handlers["client/unregisterCapability"] = function(err, result, ctx, config)
    if type(result) == "table" then
      -- The protocol spells the field `unregisterations`.
      for _, item in ipairs(result.unregisterations or result.unregistrations or {}) do
        if type(item) == "table" and item.method == METHOD then M.unregister(item.id, ctx.client_id) end
      end
    end
    if unregister then return unregister(err, result, ctx, config) end
    return vim.NIL
  end
end

-- Hooks into Neovim's LSP client as it is loaded (at once when it is): loading it with the plugin
-- would cost every start of Neovim some milliseconds, for people who use no language server too.
-- A searcher in front of Lua's finds the real loader and installs the hooks after it ran.
function M.install_when_loaded()
  if package.loaded["vim.lsp"] then return M.install(package.loaded["vim.lsp"]) end
  local searchers = package.loaders or package.searchers
  local function searcher(name)
    if name ~= "vim.lsp" then return nil end
    for _, other in ipairs(searchers) do
      if other ~= searcher then
        local loader, extra = other(name)
        if type(loader) == "function" then
          return function(...)
            for i, s in ipairs(searchers) do
              if s == searcher then table.remove(searchers, i) break end
            end
            local lsp = loader(...)
            -- `vim.lsp` is not reachable by name until this loader returns.
            if type(lsp) == "table" then M.install(lsp) end
            return lsp
          end, extra
        end
      end
    end
  end
  table.insert(searchers, 1, searcher)
end

-- The watches, for tests and for looking into a bug: [client_id][socket] = {globs, clock, subscribed}.
function M.state()
  local out = {}
  for client_id, by_socket in pairs(watches) do
    for socket, watch in pairs(by_socket) do
      out[#out + 1] = { client_id = client_id, socket = socket, root = watch.root, globs = watch:globs(),
        clock = watch.clock, subscribed = watch.is_subscribed == true }
    end
  end
  return out
end

return M
