vim9script
# autosave for Vim: file buffers edited through a running autosave agent. See :help autosave.
#
# An agent is one connection (channel.vim) and the buffers followed through it (session.vim). This
# file finds agents, attaches buffers, turns the agent's events into resyncs, saves on :w through
# the agent, and answers :AutosaveStatus and :AutosaveConflicts.

import autoload 'autosave/channel.vim'
import autoload 'autosave/session.vim'
import autoload 'autosave/text.vim'

var agents: dict<dict<any>> = {}      # by socket path
var sessions: dict<dict<any>> = {}    # by buffer number
var waiting: dict<bool> = {}          # buffers waiting for an agent
var reasons: dict<string> = {}        # why a buffer is not attached, for :AutosaveStatus
var conflicts: list<dict<any>> = []   # conflicts seen since Vim started, for :AutosaveConflicts
var told: dict<bool> = {}
var timer = -1

def Say(message: string, level = 'info')
  if level == 'warning'
    echohl WarningMsg
  endif
  echomsg 'autosave: ' .. message
  echohl None
enddef

def SayOnce(key: string, message: string, level = 'info')
  if !has_key(told, key)
    told[key] = true
    Say(message, level)
  endif
enddef

def DirectoryOf(buf: number): string
  return fnamemodify(bufname(buf), ':p:h')
enddef

# :w goes through the agent while the buffer is attached; Vim's own write otherwise. The agent
# saves the file and brings disk changes in, so Vim's "changed on disk" prompt ('autoread' or not)
# would only offer to load an older text over what is in the buffer: it is answered here.
def TakeWrites(buf: number)
  execute 'augroup autosave_write_' .. buf
  autocmd!
  execute 'autocmd BufWriteCmd <buffer=' .. buf .. '> autosave#Write(' .. buf .. ', expand("<afile>"))'
  execute 'autocmd FileChangedShell <buffer=' .. buf .. '> v:fcs_choice = ""'
  augroup END
enddef

def GiveBackWrites(buf: number)
  if exists('#autosave_write_' .. buf)
    execute 'augroup autosave_write_' .. buf
    autocmd!
    augroup END
    execute 'augroup! autosave_write_' .. buf
  endif
enddef

def StartTimer()
  if timer == -1
    var every = Option('reconnect_ms', 1000)
    timer = timer_start(every, (_) => LookForAgents(), {repeat: -1})
  endif
enddef

# Whether `agent` is connected and subscribed.
export def Connected(agent: dict<any>): bool
  return agent.ready && has_key(agent, 'conn') && !agent.conn.closed
enddef

def Connect(agent: dict<any>)
  agent.ready = false
  agent.conn = channel.Open(agent.socket, (event) => Event(agent, event), (reason) => Lost(agent, reason))
  if agent.conn.closed
    return
  endif
  channel.Request(agent.conn, 'status', {}, (_, result) => Rooted(agent, result))
  channel.Request(agent.conn, 'subscribe', {}, (failure, _) => Subscribed(agent, failure))
enddef

def Rooted(agent: dict<any>, result: any)
  if type(result) == v:t_dict
    agent.root = result.root
  endif
enddef

def Subscribed(agent: dict<any>, failure: any)
  if failure != null
    return
  endif
  agent.ready = true
  if agent.was_lost
    agent.was_lost = false
    Say('the agent is back at ' .. agent.socket .. '; following your buffers again')
  endif
  for [buf, s] in items(agent.sessions)
    TakeWrites(str2nr(buf))
    session.Resync(s)
  endfor
enddef

def Lost(agent: dict<any>, reason: string)
  var was_ready = agent.ready
  agent.ready = false
  var count = 0
  for [buf, s] in items(agent.sessions)
    count += 1
    s.in_flight = false
    s.resyncing = false
    s.needs_resync = true
    s.batch = {}
    GiveBackWrites(str2nr(buf))
    waiting[buf] = true
  endfor
  if was_ready && count > 0
    agent.was_lost = true
    Say(printf('lost the agent (%s); Vim writes your %d buffer(s) itself until it is back', reason, count), 'warning')
  endif
  if count > 0
    StartTimer()
  endif
enddef

def SessionAt(agent: dict<any>, path: string): any
  for s in values(agent.sessions)
    if s.path == path
      return s
    endif
  endfor
  return null
enddef

def Absolute(agent: dict<any>, path: string): string
  if path =~ '^/' || !has_key(agent, 'root')
    return path
  endif
  return agent.root .. '/' .. path
enddef

# Resyncs `s` unless the agent's text is already at `revision` (its own edit, say).
def Behind(s: dict<any>, revision: any)
  if revision != s.revision
    s.needs_resync = true
    session.Flush(s)
  endif
enddef

def Event(agent: dict<any>, event: dict<any>)
  var kind = get(event, 'event', '')
  if kind == 'moved'
    var moved = SessionAt(agent, event.from)
    if moved != null
      moved.path = event.to
      moved.file = Absolute(agent, event.to)
      var win = bufwinid(moved.buf)
      if win != -1
        # A renamed buffer counts as "not edited" to Vim, whose :w would then refuse the file that
        # exists (E13) before asking the plugin: written through autocommands only, it does not.
        win_execute(win, 'keepalt file ' .. fnameescape(moved.file))
        setbufvar(moved.buf, '&buftype', 'acwrite')
      endif
      Say(event.from .. ' was renamed to ' .. event.to .. '; the buffer follows it')
    endif
    return
  endif
  var s = SessionAt(agent, get(event, 'path', ''))
  if s == null
    return
  endif
  if kind == 'edited'
    # Another client (a coding agent, the CLI, another Vim or Neovim) changed the buffer.
    if event.client != session.CLIENT
      Behind(s, event.revision)
    endif
  elseif kind == 'reloaded' || kind == 'merged'
    Behind(s, event.revision)
  elseif kind == 'conflict'
    if event.kind == 'removed'
      Say(event.path .. ' was removed on disk under unsaved edits; the agent writes it again')
    elseif event.kind == 'replaced'
      Conflict(agent, event)
      session.GiveUp(s, 'another file was renamed over it')
    else
      Conflict(agent, event)
      if event.kept != 'buffer'
        # The agent took the disk's version; the buffer's text is in the copy.
        s.takes_theirs = true
        s.needs_resync = true
        session.Flush(s)
      endif
    endif
  elseif kind == 'removed'
    session.GiveUp(s, 'it was removed on disk; the buffer keeps its text and :w writes it again')
  elseif kind == 'saved'
    if event.revision == s.revision && session.Settled(s) && text.Unkept(s.buf) == ''
      # A cheap check that what the agent saved is what the buffer shows.
      if strlen(text.Bytes(s.shadow)) == event.bytes
        setbufvar(s.buf, '&modified', 0)
      else
        s.needs_resync = true
        session.Flush(s)
      endif
    endif
  endif
enddef

# One warning per conflict, naming the copy; :AutosaveConflicts lists them.
export def Conflict(agent: dict<any>, event: dict<any>)
  var copy = get(event, 'copy', null)
  copy = copy == null ? '' : Absolute(agent, copy)
  conflicts->add({path: Absolute(agent, event.path), copy: copy, kind: event.kind, kept: event.kept,
    time: strftime('%H:%M:%S')})
  var where = event.kept == 'buffer'
    ? "your text stays here; the disk's version is in " .. (copy == '' ? '?' : copy)
    : "the buffer shows the disk's version; your text is in " .. (copy == '' ? '?' : copy)
  Say(event.path .. ' changed on disk where you were editing too (' .. event.kind .. '): ' .. where, 'warning')
enddef

# Writes the agent's text aside when it and the buffer changed the same lines at once (the edit
# that would have carried the buffer's change was on its way). Returns the copy's path.
export def KeepAside(agent: dict<any>, path: string, content: string): string
  var folder = agent.state != '' ? agent.state .. '/conflicts' : expand('~/.vim/autosave-conflicts')
  var name = folder .. '/' .. substitute(path, '^/', '', '') .. '.' .. strftime('%Y%m%d-%H%M%S') .. '.vim'
  mkdir(fnamemodify(name, ':h'), 'p')
  writefile(split(content, "\n", true), name, 'b')
  return name
enddef

# A session stopped for good (too large, not text, refused, removed): Vim has the buffer back.
export def Forget(s: dict<any>, why: string, level: string)
  var key = string(s.buf)
  if has_key(s.agent.sessions, key)
    remove(s.agent.sessions, key)
  endif
  if has_key(sessions, key) && sessions[key] is s
    remove(sessions, key)
  endif
  GiveBackWrites(s.buf)
  reasons[key] = why
  Say(fnamemodify(bufname(s.buf), ':~:.') .. ': ' .. why, level)
enddef

def AgentFor(socket: string, state: string): dict<any>
  if !has_key(agents, socket)
    agents[socket] = {socket: socket, state: state, sessions: {}, ready: false, was_lost: false}
  endif
  var agent = agents[socket]
  if !has_key(agent, 'conn') || agent.conn.closed
    Connect(agent)
  endif
  return agent
enddef

# Follows `buf` through the agent of its folder, if one runs; otherwise waits for one.
export def Attach(given: number, explicit = false)
  var buf = given == 0 ? bufnr() : given
  var key = string(buf)
  if bufname(buf) == '' || getbufvar(buf, '&buftype') != ''
    if explicit
      Say('this buffer has no file to follow', 'warning')
    endif
    return
  endif
  if has_key(sessions, key)
    if explicit && !Connected(sessions[key].agent)
      LookForAgents()
    endif
    return
  endif
  var found = channel.Find(DirectoryOf(buf))
  if !has_key(found, 'socket')
    waiting[key] = true
    var refused = get(found, 'refused', '')
    reasons[key] = refused != '' ? refused : 'no agent runs for ' .. DirectoryOf(buf)
    var message = refused != '' ? refused .. '; Vim writes files itself'
      : 'no agent runs for ' .. DirectoryOf(buf) .. '; Vim writes files itself (it attaches once one runs)'
    if explicit
      Say(message, 'warning')
    else
      SayOnce(refused != '' ? 'refused:' .. refused : 'no-agent', message, refused != '' ? 'warning' : 'info')
    endif
    StartTimer()
    return
  endif
  if has_key(waiting, key)
    remove(waiting, key)
  endif
  var unkept = text.Unkept(buf)
  if unkept != ''
    reasons[key] = unkept .. '; Vim writes it'
    Say(fnamemodify(bufname(buf), ':~:.') .. ': ' .. unkept .. '; Vim writes it itself')
    return
  endif
  if has_key(reasons, key)
    remove(reasons, key)
  endif
  var agent = AgentFor(found.socket, found.state)
  var s = session.New(agent, buf, fnamemodify(bufname(buf), ':p'))
  sessions[key] = s
  agent.sessions[key] = s
  if Connected(agent)
    TakeWrites(buf)
    session.Resync(s)
  endif
enddef

# Stops following `buf` once what was typed has reached the agent.
export def Detach(given: number, why = 'detached (:AutosaveDetach)')
  var buf = given == 0 ? bufnr() : given
  var key = string(buf)
  if has_key(waiting, key)
    remove(waiting, key)
  endif
  if !has_key(sessions, key)
    return
  endif
  var s = sessions[key]
  session.Flush(s)
  WaitFor(() => !bufloaded(buf) || session.Settled(s) || !Connected(s.agent), 2000)
  session.Stop(s)
  remove(sessions, key)
  if has_key(s.agent.sessions, key)
    remove(s.agent.sessions, key)
  endif
  reasons[key] = why
  GiveBackWrites(buf)
enddef

# Waits, handling channel messages and timers, until `Condition()` holds or `limit_ms` passed.
# Returns whether it holds.
def WaitFor(Condition: func(): bool, limit_ms: number): bool
  var start = reltime()
  while !Condition()
    if reltimefloat(reltime(start)) * 1000 > limit_ms
      return false
    endif
    sleep 2m
  endwhile
  return true
enddef

# Tries again to reach an agent for every buffer waiting for one.
def LookForAgents()
  for key in keys(waiting)
    var buf = str2nr(key)
    if !bufloaded(buf)
      remove(waiting, key)
      continue
    endif
    var found = channel.Find(DirectoryOf(buf))
    if !has_key(found, 'socket')
      continue
    endif
    remove(waiting, key)
    if has_key(sessions, key)
      var s = sessions[key]
      var agent = AgentFor(found.socket, found.state)
      if !(s.agent is agent)
        remove(s.agent.sessions, key)
        s.agent = agent
        agent.sessions[key] = s
      endif
      # Connected already (another buffer's agent): catch up now; else once it is subscribed.
      if Connected(agent)
        TakeWrites(buf)
        session.Resync(s)
      endif
    else
      Attach(buf)
    endif
  endfor
  if empty(waiting) && timer != -1
    timer_stop(timer)
    timer = -1
  endif
enddef

# Sends what was typed and has the agent save it durably. Returns '' or why it did not.
def SaveThroughAgent(s: dict<any>): string
  var limit = Option('write_timeout_ms', 10000)
  session.Flush(s)
  if !WaitFor(() => session.Settled(s) || s.stopped || !Connected(s.agent), limit)
      || s.stopped || !Connected(s.agent)
    return 'the agent did not take the edits in time'
  endif
  var answer: dict<any> = {}
  channel.Request(s.agent.conn, 'save', {paths: [s.path]}, (err, _) => extend(answer, {done: true, err: err}))
  if !WaitFor(() => has_key(answer, 'done'), limit)
    return 'no answer in ' .. limit .. ' ms'
  endif
  return answer.err == null ? '' : get(answer.err, 'message', '?')
enddef

# BufWriteCmd: :w saves through the agent and returns once the file is durable. Another file
# (:w other.txt), or no agent right now: Vim writes it.
export def Write(buf: number, file: string)
  var key = string(buf)
  var target = fnamemodify(file, ':p')
  var s = get(sessions, key, {})
  if empty(s) || (target != s.file && target != Absolute(s.agent, s.path)) || !Connected(s.agent)
    execute 'noautocmd keepalt write!' fnameescape(file)
    return
  endif
  silent! doautocmd <nomodeline> BufWritePre
  var failure = SaveThroughAgent(s)
  if failure != ''
    echohl ErrorMsg
    echomsg 'autosave: ' .. s.path .. ' was not saved: ' .. failure
    echohl None
    return
  endif
  if session.Settled(s)
    setbufvar(buf, '&modified', 0)
  endif
  silent! doautocmd <nomodeline> BufWritePost
  echo printf('"%s" saved by autosave (durable)', s.path)
enddef

# What :AutosaveStatus shows, as a dictionary: attached or not, why, the agent's view of the buffer.
export def Status(given = 0): dict<any>
  var buf = given == 0 ? bufnr() : given
  var key = string(buf)
  if !has_key(sessions, key)
    return {attached: false, reason: get(reasons, key, 'not a file buffer under a running agent')}
  endif
  var s = sessions[key]
  var info: dict<any> = {attached: true, connected: Connected(s.agent), socket: s.agent.socket, path: s.path,
    revision: s.revision, settled: session.Settled(s)}
  if !info.connected
    return info
  endif
  var answer: dict<any> = {}
  channel.Request(s.agent.conn, 'open', {path: s.path}, (err, result) => extend(answer, {done: true, err: err, result: result}))
  if WaitFor(() => has_key(answer, 'done'), 2000) && answer.err == null && type(answer.result) == v:t_dict
    info.dirty = answer.result.dirty
    info.pending_save_ms = answer.result.pendingSaveMs
    info.agent_revision = answer.result.revision
  endif
  return info
enddef

export def ShowStatus()
  var info = Status()
  if !info.attached
    echo 'autosave: not attached: ' .. info.reason
    return
  endif
  if !info.connected
    echo 'autosave: ' .. info.path .. ': waiting for the agent at ' .. info.socket
      .. ' (Vim writes the buffer itself meanwhile)'
    return
  endif
  var state = 'saved'
  if get(info, 'dirty', false)
    var due = get(info, 'pending_save_ms', null)
    state = due != null ? 'saving in ' .. due .. ' ms' : 'unsaved'
  endif
  echo printf('autosave: %s · revision %s · %s%s', info.path, get(info, 'agent_revision', info.revision), state,
    info.settled ? '' : ' · edits on their way')
enddef

# The conflicts seen since Vim started, in the quickfix list.
export def ShowConflicts()
  var found = conflicts->mapnew((_, c) => ({
    filename: c.copy != '' ? c.copy : c.path, lnum: 1,
    text: printf('%s %s conflict on %s: kept %s', c.time, c.kind, c.path, c.kept)}))
  setqflist([], ' ', {title: 'autosave conflicts', items: found})
  if empty(found)
    Say('no conflicts since Vim started')
  else
    copen
  endif
enddef

# The conflicts seen since Vim started: [{path, copy, kind, kept, time}].
export def Conflicts(): list<dict<any>>
  return deepcopy(conflicts)
enddef

# Everything typed reaches the agent before Vim exits.
export def FlushAll()
  for s in values(sessions)
    session.Flush(s)
  endfor
  WaitFor(() => AllSettled(), 2000)
enddef

def AllSettled(): bool
  for s in values(sessions)
    if Connected(s.agent) && bufloaded(s.buf) && !session.Settled(s)
      return false
    endif
  endfor
  return true
enddef

# BufReadPost, BufNewFile: a file buffer to follow, unless g:autosave_auto_attach is 0.
export def Read(buf: number)
  if Option('auto_attach', 1)
    Attach(buf)
  endif
enddef

# :saveas, :file: the buffer is another file now.
export def Renamed(buf: number)
  var key = string(buf)
  if !has_key(sessions, key) || fnamemodify(bufname(buf), ':p') == sessions[key].file
    return
  endif
  Detach(buf, 'renamed')
  if Option('auto_attach', 1)
    Attach(buf)
  endif
enddef

# An option that changes the bytes Vim writes, which no listener reports: sent as a typed change is.
export def OptionChanged()
  var s = get(sessions, string(bufnr()), {})
  if !empty(s) && !s.applying
    session.Schedule(s)
  endif
enddef

# Starts following file buffers (the plugin calls it when Vim starts).
export def Enable()
  augroup autosave
    autocmd!
    autocmd BufReadPost,BufNewFile * autosave#Read(str2nr(expand('<abuf>')))
    autocmd BufUnload * autosave#Detach(str2nr(expand('<abuf>')), 'unloaded')
    autocmd BufFilePost * autosave#Renamed(str2nr(expand('<abuf>')))
    autocmd OptionSet bomb,fileformat,endofline,binary,fileencoding autosave#OptionChanged()
    autocmd VimLeavePre * autosave#FlushAll()
  augroup END
  if Option('auto_attach', 1)
    for info in getbufinfo({bufloaded: 1})
      Attach(info.bufnr)
    endfor
  endif
enddef

# g:autosave_{name}, or `default`.
export def Option(name: string, default: any): any
  return get(g:, 'autosave_' .. name, default)
enddef
