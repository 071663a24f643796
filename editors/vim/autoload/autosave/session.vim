vim9script
# One Vim buffer kept in step with its buffer in the agent.
#
# What the person types is reported by listener_add() as ranges of lines; at the end of each turn
# (a timer of 0 ms, which runs once Vim waits again) those lines go to the agent as one ranged
# `edit`, never more than one on its way per buffer, each saying the revision it was made on
# (`ifRevision`), so an edit never lands on a text it was not made for. When the agent's text
# changes otherwise (a reload, a merge, another client's edit, a refused edit), the session
# resyncs: it reads the agent's text, merges it line by line with what the buffer holds, shows the
# difference as the smallest set of line changes, and sends back what the agent lacks.
#
# The shadow is the agent's text at `revision`, as a form (see text.vim): the base of those merges.

import autoload 'autosave/text.vim'
import autoload 'autosave/channel.vim'
import autoload 'autosave.vim' as plugin

# The name this Vim's edits carry in the agent's `edited` events: its own are not news to it.
export const CLIENT = 'vim:' .. getpid()

# A session for `buf`, whose file is `file` (absolute), followed through `agent`.
export def New(agent: dict<any>, buf: number, file: string): dict<any>
  var s: dict<any> = {
    agent: agent, buf: buf, path: file, file: file, revision: null,
    shadow: text.OfBuffer(buf), exists: filereadable(file),
    in_flight: false, batch: {}, needs_resync: true, resyncing: false, applying: false,
    stopped: false, scheduled: false, failures: 0, status: null, takes_theirs: false,
  }
  s.listener = listener_add((_, first, last, added, _) => Changed(s, first, last, added), buf)
  return s
enddef

# listener_add()'s report of changed lines: old lines [first, last) (1-based) are now `added` more.
def Changed(s: dict<any>, first: number, last: number, added: number)
  if s.stopped || s.applying
    return
  endif
  if !plugin.Connected(s.agent)
    # Whatever is typed meanwhile is in the buffer: the resync on reconnecting sends it.
    s.needs_resync = true
    return
  endif
  var batch = s.batch
  if empty(batch)
    batch = {lo: first - 1, hi: last - 1, delta: 0}
    s.batch = batch
  endif
  # Lines before `lo` are where they were; lines after the batch's moved by `delta`.
  batch.lo = min([batch.lo, first - 1])
  batch.hi = max([batch.hi, last - 1 - batch.delta])
  batch.delta += added
  Schedule(s)
enddef

# Sends what changed at the end of this turn (once Vim waits for a key, a message or a timer).
export def Schedule(s: dict<any>)
  if s.scheduled
    return
  endif
  s.scheduled = true
  timer_start(0, (_) => Scheduled(s))
enddef

def Scheduled(s: dict<any>)
  s.scheduled = false
  Flush(s)
enddef

# Sends what changed since the last edit, unless an edit is on its way (its answer sends more).
export def Flush(s: dict<any>)
  if s.stopped || s.in_flight || s.resyncing || !plugin.Connected(s.agent) || !bufloaded(s.buf)
    return
  endif
  if s.needs_resync
    Resync(s)
    return
  endif
  listener_flush(s.buf)
  var batch = s.batch
  s.batch = {}
  var unkept = text.Unkept(s.buf)
  if unkept != ''
    GiveUp(s, unkept .. '; Vim writes it itself')
    return
  endif
  var old = s.shadow
  var now = text.OfBuffer(s.buf, empty(old.lines))
  if text.Same(old, now)
    return
  endif
  if !s.exists
    SendWrite(s, now)
    return
  endif
  var count_old = len(old.lines)
  var count_now = len(now.lines)
  var prefix = 0
  var suffix = 0
  var hinted = false
  if !empty(batch) && count_old + batch.delta == count_now
    # listener_add() said which lines changed; checked (in C, a slice compare) before it is trusted.
    prefix = max([0, min([batch.lo, count_old, count_now])])
    suffix = max([0, min([count_old - max([batch.hi, prefix]), count_now - prefix])])
    hinted = (prefix == 0 || old.lines[: prefix - 1] == now.lines[: prefix - 1])
      && (suffix == 0 || old.lines[count_old - suffix :] == now.lines[count_now - suffix :])
  endif
  if !hinted
    [prefix, suffix] = text.Common(old.lines, now.lines)
  endif
  var edit = text.Edit(old, now, prefix, suffix)
  if now.ff == 'unix' && stridx(edit.text, "\r") >= 0
    # The agent counts a lone "\r" as a line break, Vim shows it inside a line.
    GiveUp(s, 'a line holds a carriage return, which the agent reads as a line break; Vim writes it itself')
    return
  endif
  Send(s, edit, now)
enddef

def Send(s: dict<any>, edit: dict<any>, after: dict<any>)
  s.in_flight = true
  var params = {path: s.path, positionEncoding: 'utf-8', edits: [edit], ifRevision: s.revision, client: CLIENT}
  channel.Request(s.agent.conn, 'edit', params, (err, result) => Answered(s, err, result, after))
enddef

# A new file's first content: a `write` (an edit needs a file to place it in).
def SendWrite(s: dict<any>, after: dict<any>)
  s.in_flight = true
  var params = {path: s.path, content: text.Bytes(after), ifRevision: s.revision, client: CLIENT}
  channel.Request(s.agent.conn, 'write', params, (err, result) => Answered(s, err, result, after))
enddef

def Answered(s: dict<any>, err: any, result: any, after: dict<any>)
  s.in_flight = false
  if s.stopped
    return
  endif
  if err != null
    var reason = type(get(err, 'data', null)) == v:t_dict ? get(err.data, 'reason', '') : ''
    if reason != 'staleRevision'
      s.failures += 1
    endif
    if s.failures >= 3 || !plugin.Connected(s.agent)
      if plugin.Connected(s.agent)
        GiveUp(s, 'the agent refused its edits: ' .. get(err, 'message', '?'))
      endif
      return
    endif
    s.needs_resync = true
  else
    s.failures = 0
    s.exists = true
    s.revision = result.revision
    s.shadow = after
  endif
  Flush(s)
enddef

# Whether nothing typed is waiting to reach the agent.
export def Settled(s: dict<any>): bool
  if s.stopped || !bufloaded(s.buf)
    return false
  endif
  listener_flush(s.buf)
  return !s.in_flight && empty(s.batch) && !s.needs_resync && !s.resyncing
    && text.Same(text.OfBuffer(s.buf, empty(s.shadow.lines)), s.shadow)
enddef

# Reads the agent's text and brings both sides together (see the top of this file).
export def Resync(s: dict<any>)
  if s.resyncing || s.stopped
    return
  endif
  if s.in_flight
    s.needs_resync = true
    return
  endif
  s.needs_resync = false
  s.resyncing = true
  s.batch = {}
  s.status = null
  var conn = s.agent.conn
  # "buffer": the text on screen keeps the path; null: the agent's configuration decides.
  var keep = get(g:, 'autosave_keep', 'buffer') == 'agent' ? null : 'buffer'
  channel.Request(conn, 'open', {path: s.path, keep: keep}, (err, result) => Opened(s, err, result))
  channel.Request(conn, 'read', {path: s.path}, (err, result) => Read(s, err, result))
enddef

def Opened(s: dict<any>, err: any, result: any)
  s.status = {err: err, result: result}
enddef

def Read(s: dict<any>, err: any, result: any)
  s.resyncing = false
  if s.stopped
    return
  endif
  var failure = s.status != null && s.status.err != null ? s.status.err : err
  if failure != null
    Refused(s, failure)
    return
  endif
  Adopt(s, result, s.status == null ? null : s.status.result)
enddef

def Refused(s: dict<any>, err: dict<any>)
  var reason = type(get(err, 'data', null)) == v:t_dict ? get(err.data, 'reason', '') : ''
  if reason == 'tooLarge'
    GiveUp(s, "it is larger than the agent's limits.maxFileBytes; Vim saves it itself", 'info')
    return
  endif
  if plugin.Connected(s.agent)
    GiveUp(s, 'the agent refused to open it: ' .. get(err, 'message', '?'))
  endif
enddef

def Adopt(s: dict<any>, answer: dict<any>, status: any)
  if has_key(answer, 'contentBase64')
    GiveUp(s, 'it is not UTF-8 text; Vim saves it itself', 'info')
    return
  endif
  var content = get(answer, 'content', '')
  s.exists = get(answer, 'exists', true) != false
  s.path = get(answer, 'path', s.path)
  listener_flush(s.buf)
  s.batch = {}
  var base = s.shadow
  var ours = text.OfBuffer(s.buf, empty(base.lines))
  var theirs = text.Parse(content == null ? '' : content, ours.ff)
  if empty(theirs)
    GiveUp(s, 'its lines end in mixed or lone "\r" line breaks, which Vim cannot show line for line; Vim saves it itself')
    return
  endif
  if !s.exists
    theirs = extend(copy(ours), {lines: []})
  endif
  var target = text.Merge(base, ours, theirs)
  var copy = ''
  if s.takes_theirs
    # The agent kept the disk's version (g:autosave_keep "agent"); what the buffer held is in its
    # copy, but not what was typed since the last edit it took: that goes to a copy of ours.
    s.takes_theirs = false
    if !text.Same(ours, base)
      copy = plugin.KeepAside(s.agent, s.path, text.Bytes(ours))
    endif
    target = theirs
  elseif target == null
    # Both changed the same lines while an edit was on its way: the buffer keeps what the person
    # sees, the agent's version is copied aside.
    target = ours
    copy = plugin.KeepAside(s.agent, s.path, content)
  endif
  s.revision = answer.revision
  if !text.Same(target, ours)
    var why = Show(s, ours, target)
    if why != ''
      GiveUp(s, "the agent's change could not be shown (" .. why .. '); Vim saves it itself')
      return
    endif
  endif
  s.shadow = theirs
  if copy != ''
    plugin.Conflict(s.agent, {path: s.path, kind: 'overlap', kept: target is ours ? 'buffer' : 'disk', copy: copy})
  endif
  var agreed = text.Same(target, theirs)
  if agreed && s.exists && type(status) == v:t_dict && !status.dirty && text.Unkept(s.buf) == ''
    setbufvar(s.buf, '&modified', 0)
  endif
  if !agreed && s.exists
    var [prefix, suffix] = text.Common(theirs.lines, target.lines)
    Send(s, text.Edit(theirs, target, prefix, suffix), target)
    return
  endif
  Flush(s)
enddef

# Changes the buffer from `from` to `to` hunk by hunk, bottom up, as an undo step of its own: lines
# nobody changed keep their marks and the cursor. Returns '' or why the buffer would not take it.
def Show(s: dict<any>, from: dict<any>, to: dict<any>): string
  var buf = s.buf
  s.applying = true
  var why = ''
  try
    # Closes the person's undo step: this change gets one of its own.
    &undolevels = &undolevels
    # A tool that changed the line breaks (dos2unix, a formatter) changed the file format too,
    # and one that added or took away the mark changed 'bomb'.
    if to.ff != getbufvar(buf, '&fileformat')
      setbufvar(buf, '&fileformat', to.ff)
    endif
    if to.bom != (!!getbufvar(buf, '&bomb'))
      setbufvar(buf, '&bomb', to.bom ? 1 : 0)
    endif
    if empty(to.lines)
      deletebufline(buf, 1, '$')
    elseif empty(from.lines)
      # An empty buffer is one empty line to Vim: the first lines replace it.
      setbufline(buf, 1, to.lines)
    else
      for h in reverse(text.Hunks(from.lines, to.lines))
        var removed = h.last - h.first
        var kept = min([removed, len(h.lines)])
        if kept > 0
          setbufline(buf, h.first + 1, h.lines[: kept - 1])
        endif
        if len(h.lines) > kept
          appendbufline(buf, h.first + kept, h.lines[kept :])
        elseif removed > kept
          deletebufline(buf, h.first + kept + 1, h.last)
        endif
      endfor
    endif
    if !empty(to.lines) && to.eol != (!!getbufvar(buf, '&endofline'))
      setbufvar(buf, '&endofline', to.eol ? 1 : 0)
    endif
    listener_flush(buf)
  catch
    why = v:exception
  finally
    s.applying = false
  endtry
  return why
enddef

# Stops following this buffer (Vim writes it itself from now on), saying why.
export def GiveUp(s: dict<any>, why: string, level = 'warning')
  Stop(s)
  plugin.Forget(s, why, level)
enddef

export def Stop(s: dict<any>)
  if s.stopped
    return
  endif
  s.stopped = true
  s.batch = {}
  listener_remove(s.listener)
enddef
