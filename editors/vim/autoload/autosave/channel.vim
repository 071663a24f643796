vim9script
# One connection to an agent's control socket: JSON-RPC 2.0, one message per line, over Vim's
# channels on the Unix socket (mode "nl"). Answers and event notifications arrive in order, as
# callbacks on Vim's main loop.

# The uid this Vim runs as, from /proc/self/status.
def OwnUid(): number
  for line in readfile('/proc/self/status')
    if line =~ '^Uid:'
      return str2nr(split(line)[1])
    endif
  endfor
  return -1
enddef

# The uid owning `path` (not following a symbolic link), or -1 when it cannot be told.
def OwnerOf(path: string): number
  var answer = system('stat -c %u -- ' .. shellescape(path))
  return v:shell_error == 0 ? str2nr(answer) : -1
enddef

# Whether a socket or state folder of `uid` may be talked to: our own, or root's.
def Trusted(uid: number): bool
  return uid == OwnUid() || uid == 0
enddef

# `socket` when its file is ours (or root's); else why it is refused. A socket path can come from
# anywhere ($AUTOSAVE_SOCKET, a pointer file a cloned repository shipped). Vim cannot ask the
# kernel who listens (SO_PEERCRED), so the file's owner is what is checked.
def Checked(socket: string, state: string, named_by: string): dict<string>
  var uid = OwnerOf(socket)
  if uid != -1 && !Trusted(uid)
    return {refused: 'refused the socket ' .. socket .. ' (named by ' .. named_by .. '): it belongs to uid '
      .. uid .. ', not to you (uid ' .. OwnUid() .. '), so nothing was sent to it'}
  endif
  return {socket: socket, state: state}
enddef

# The agent's socket for `directory`, found as the `autosave` command finds it: $AUTOSAVE_SOCKET,
# else walking up to a `.autosave` folder with `agent.sock` (or `agent.sock.path`, naming a socket
# elsewhere). Returns {socket, state} ('' state when only the variable says where), {refused} when
# the socket or the folder's agent is another user's, or {} when no agent runs there.
export def Find(directory: string): dict<string>
  var forced = getenv('AUTOSAVE_SOCKET')
  if forced != null && forced != ''
    return Checked(forced, '', 'AUTOSAVE_SOCKET')
  endif
  var dir = directory
  while dir != ''
    var state = dir .. '/.autosave'
    if getftype(state) == 'dir'
      var uid = OwnerOf(state)
      if uid != -1 && uid != OwnUid()
        return {refused: 'the agent for ' .. dir .. ' is uid ' .. uid .. "'s (its state directory " .. state
          .. ' is theirs), and serves only them'}
      endif
      if filereadable(state .. '/agent.sock.path')
        var named = readfile(state .. '/agent.sock.path', '', 1)
        if !empty(named) && named[0] != ''
          return Checked(named[0], state, state .. '/agent.sock.path')
        endif
      endif
      if getftype(state .. '/agent.sock') == 'socket'
        return Checked(state .. '/agent.sock', state, state)
      endif
    endif
    var parent = fnamemodify(dir, ':h')
    if parent == dir
      break
    endif
    dir = parent
  endwhile
  return {}
enddef

# Connects to `socket`. `OnEvent(params)` gets each event notification, `OnClose(reason)` the end of
# the connection, once. Returns the connection; its `closed` says whether it failed at once.
export def Open(socket: string, OnEvent: func, OnClose: func): dict<any>
  var conn: dict<any> = {socket: socket, next_id: 1, waiting: {}, closed: false, OnEvent: OnEvent, OnClose: OnClose}
  try
    conn.channel = ch_open('unix:' .. socket, {
      mode: 'nl',
      callback: (_, line) => Dispatch(conn, line),
      close_cb: (_) => Close(conn, 'the agent closed the connection'),
    })
  catch
    conn.closed = true
    conn.reason = 'cannot connect to ' .. socket .. ': ' .. v:exception
    return conn
  endtry
  if ch_status(conn.channel) != 'open'
    conn.closed = true
    conn.reason = 'cannot connect to ' .. socket
  endif
  return conn
enddef

def Dispatch(conn: dict<any>, line: string)
  if conn.closed
    return
  endif
  var message: any
  try
    message = json_decode(line)
  catch
    return
  endtry
  if type(message) != v:t_dict
    return
  endif
  if has_key(message, 'id') && message.id != null
    var key = string(message.id)
    if !has_key(conn.waiting, key)
      return
    endif
    var Callback = remove(conn.waiting, key)
    Callback(get(message, 'error', null), get(message, 'result', null))
  elseif get(message, 'method', '') == 'event'
    conn.OnEvent(message.params)
  elseif get(message, 'method', '') == 'dropped'
    Close(conn, 'the agent dropped this connection: it fell behind its events')
  endif
enddef

# Sends a request; `Callback(error, result)` gets the answer (error: the JSON-RPC error object, or
# {message} when the connection ended first; null when none).
export def Request(conn: dict<any>, method: string, params: dict<any>, Callback: func = null_function)
  if conn.closed
    if Callback != null_function
      Callback({message: 'not connected'}, null)
    endif
    return
  endif
  var id = conn.next_id
  conn.next_id += 1
  conn.waiting[string(id)] = Callback == null_function ? (_, _) => 0 : Callback
  try
    ch_sendraw(conn.channel, json_encode({jsonrpc: '2.0', id: id, method: method, params: params}) .. "\n")
  catch
    Close(conn, 'cannot write to the agent: ' .. v:exception)
  endtry
enddef

# Whether requests are still waiting for their answers.
export def Busy(conn: dict<any>): bool
  return !empty(conn.waiting)
enddef

# Ends the connection; every request still waiting gets an error, in the order they were asked.
export def Close(conn: dict<any>, reason: string)
  if conn.closed
    return
  endif
  conn.closed = true
  if ch_status(conn.channel) == 'open'
    ch_close(conn.channel)
  endif
  var waiting = conn.waiting
  conn.waiting = {}
  for key in sort(keys(waiting), 'N')
    try
      waiting[key]({message: reason}, null)
    catch
    endtry
  endfor
  conn.OnClose(reason)
enddef
