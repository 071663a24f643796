vim9script
# Texts as the agent holds them, in the shape Vim shows them, and the smallest changes between
# them: a buffer's "form" (its lines, whether the last one ends in a line break, the line break,
# the byte order mark), line hunks, a three-way merge, and the ranged edit between two forms.
#
# A form is {lines, eol, ff, bom}: the file's bytes are bom . lines joined by ff's line break .
# (a final line break when eol), and an empty file has no lines. Positions in the edits sent are
# utf-8 (bytes), which is what Vim's columns count, and the edits replace whole lines, so a
# multibyte character is never split.

export const BOM = "\xef\xbb\xbf"

# The line break of a 'fileformat'.
export def LineBreak(ff: string): string
  return ff == 'dos' ? "\r\n" : "\n"
enddef

# Whether `buf` holds no text at all (an empty file, or every line deleted), which one empty line
# is not: Vim writes 0 bytes for the first and a line break for the second. Only wordcount() tells
# them apart, in a window of the buffer; a hidden buffer (one nobody types into) is taken as what
# the plugin last knew it to be, `known_empty`.
def IsEmpty(buf: number, known_empty: bool): bool
  if buf == bufnr()
    return wordcount().bytes == 0
  endif
  var win = bufwinid(buf)
  if win == -1
    return known_empty
  endif
  return str2nr(trim(win_execute(win, 'echo wordcount().bytes'))) == 0
enddef

# The buffer's text as the file Vim would write ('fixendofline' aside: a file with no final line
# break keeps none, as the agent keeps files byte for byte).
export def OfBuffer(buf: number, known_empty = false): dict<any>
  var lines = getbufline(buf, 1, '$')
  if len(lines) == 1 && lines[0] == '' && IsEmpty(buf, known_empty)
    lines = []
  endif
  return {
    lines: lines,
    eol: !!getbufvar(buf, '&endofline'),
    ff: getbufvar(buf, '&fileformat'),
    bom: !!getbufvar(buf, '&bomb') && !getbufvar(buf, '&binary'),
  }
enddef

# Why the agent cannot keep the bytes Vim writes for `buf`, or '' when it can: the agent keeps
# UTF-8 text with "\n" or "\r\n" line breaks.
export def Unkept(buf: number): string
  var fenc = getbufvar(buf, '&fileencoding')
  if fenc == ''
    fenc = &encoding
  endif
  if fenc != 'utf-8'
    return "its 'fileencoding' is " .. fenc .. ' and the agent keeps UTF-8 text'
  endif
  var ff = getbufvar(buf, '&fileformat')
  if ff == 'mac'
    return "its 'fileformat' is mac (lines end in a lone \"\\r\"), which the plugin does not follow"
  endif
  if !!getbufvar(buf, '&binary') && ff != 'unix'
    return "'binary' is set with 'fileformat' " .. ff .. ', which the plugin does not follow'
  endif
  return ''
enddef

# The agent's text `content` as a form, its line break taken from the text (`ff` when it has none).
# {} when Vim could not show it line for line: mixed line breaks, a lone "\r", a NUL.
export def Parse(content: string, ff: string): dict<any>
  var bom = strpart(content, 0, 3) == BOM
  var body = bom ? strpart(content, 3) : content
  var format = ff
  if stridx(body, "\r") >= 0
    var rest = substitute(body, "\r\n", '', 'g')
    if stridx(rest, "\r") >= 0 || stridx(rest, "\n") >= 0
      return {}
    endif
    format = 'dos'
  elseif stridx(body, "\n") >= 0
    format = 'unix'
  elseif format == 'mac'
    format = 'unix'
  endif
  var nl = LineBreak(format)
  if body == ''
    return {lines: [], eol: true, ff: format, bom: bom}
  endif
  var eol = strpart(body, strlen(body) - strlen(nl)) == nl
  if eol
    body = strpart(body, 0, strlen(body) - strlen(nl))
  endif
  return {lines: split(body, nl, true), eol: eol, ff: format, bom: bom}
enddef

# The bytes of a form, as the file holds them.
export def Bytes(form: dict<any>): string
  if empty(form.lines)
    return form.bom ? BOM : ''
  endif
  var nl = LineBreak(form.ff)
  return (form.bom ? BOM : '') .. join(form.lines, nl) .. (form.eol ? nl : '')
enddef

# Whether two forms are the same bytes.
export def Same(a: dict<any>, b: dict<any>): bool
  return a.lines == b.lines && a.ff == b.ff && a.bom == b.bom && (empty(a.lines) || a.eol == b.eol)
enddef

# How many lines `a` and `b` share at their start, and then at their end: [prefix, suffix].
export def Common(a: list<string>, b: list<string>): list<number>
  var n = len(a)
  var m = len(b)
  var pre = 0
  while pre < n && pre < m && a[pre] == b[pre]
    pre += 1
  endwhile
  var suf = 0
  while suf < n - pre && suf < m - pre && a[n - 1 - suf] == b[m - 1 - suf]
    suf += 1
  endwhile
  return [pre, suf]
enddef

# Beyond this many differences, the middle of two texts is taken as one hunk (still right, less
# small): Myers' search costs D² memory.
const MAX_DIFFERENCES = 400

# The line pairs [i, j] (a[i] == b[j]) a shortest edit script from `a` to `b` keeps, in order;
# null when they differ in more than MAX_DIFFERENCES lines. Myers' greedy algorithm.
def Matches(a: list<string>, b: list<string>): any
  var n = len(a)
  var m = len(b)
  var most = n + m
  var offset = most + 1
  var v = repeat([0], 2 * most + 3)
  var trace: list<list<number>> = []
  var found = -1
  for d in range(0, min([most, MAX_DIFFERENCES]))
    trace->add(copy(v))
    for k in range(-d, d, 2)
      var x = 0
      if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])
        x = v[offset + k + 1]
      else
        x = v[offset + k - 1] + 1
      endif
      var y = x - k
      while x < n && y < m && a[x] == b[y]
        x += 1
        y += 1
      endwhile
      v[offset + k] = x
      if x >= n && y >= m
        found = d
        break
      endif
    endfor
    if found >= 0
      break
    endif
  endfor
  if found < 0
    return null
  endif
  var pairs: list<list<number>> = []
  var x = n
  var y = m
  for d in range(found, 0, -1)
    var w = trace[d]
    var k = x - y
    var prev_k = (k == -d || (k != d && w[offset + k - 1] < w[offset + k + 1])) ? k + 1 : k - 1
    var prev_x = d == 0 ? 0 : w[offset + prev_k]
    var prev_y = d == 0 ? 0 : prev_x - prev_k
    while x > prev_x && y > prev_y
      x -= 1
      y -= 1
      pairs->add([x, y])
    endwhile
    x = prev_x
    y = prev_y
  endfor
  return reverse(pairs)
enddef

# The hunks that turn lines `a` into lines `b`: [{first, last, lines}], a's 0-based lines
# [first, last) replaced by `lines`, in order and apart from each other.
export def Hunks(a: list<string>, b: list<string>): list<dict<any>>
  if a == b
    return []
  endif
  var [pre, suf] = Common(a, b)
  var middle_a = a[pre : len(a) - suf - 1]
  var middle_b = b[pre : len(b) - suf - 1]
  var whole = [{first: pre, last: len(a) - suf, lines: middle_b}]
  if empty(middle_a) || empty(middle_b)
    return whole
  endif
  var pairs = Matches(middle_a, middle_b)
  if pairs == null
    return whole
  endif
  var hunks: list<dict<any>> = []
  var i = 0
  var j = 0
  for [x, y] in pairs + [[len(middle_a), len(middle_b)]]
    if x > i || y > j
      hunks->add({first: pre + i, last: pre + x, lines: middle_b[j : y - 1]})
    endif
    i = x + 1
    j = y + 1
  endfor
  return hunks
enddef

# Merges two sets of lines made from `base`. null when their changes touch the same lines (or
# lines next to each other) differently.
export def MergeLines(base: list<string>, ours: list<string>, theirs: list<string>): any
  if ours == base
    return theirs
  endif
  if theirs == base || theirs == ours
    return ours
  endif
  var all = Hunks(base, ours) + Hunks(base, theirs)
  sort(all, (x, y) => x.first != y.first ? x.first - y.first : x.last - y.last)
  var kept: list<dict<any>> = []
  for h in all
    if !empty(kept) && h.first <= kept[-1].last
      if h != kept[-1]
        return null
      endif
    else
      kept->add(h)
    endif
  endfor
  var out: list<string> = []
  var at = 0
  for h in kept
    out += base[at : h.first - 1] + h.lines
    at = h.last
  endfor
  return out + base[at :]
enddef

# Merges two forms made from `base`: lines as above, and each of eol, ff and bom taken from the
# side that changed it. null when the lines overlap.
export def Merge(base: dict<any>, ours: dict<any>, theirs: dict<any>): any
  if Same(ours, base)
    return theirs
  endif
  if Same(theirs, base) || Same(theirs, ours)
    return ours
  endif
  var lines = MergeLines(base.lines, ours.lines, theirs.lines)
  if lines == null
    return null
  endif
  var merged = {lines: lines}
  for key in ['eol', 'ff', 'bom']
    merged[key] = ours[key] != base[key] ? ours[key] : theirs[key]
  endfor
  return merged
enddef

# The position where the text of `form` ends.
def EndOf(form: dict<any>): dict<number>
  var shift = form.bom ? strlen(BOM) : 0
  var count = len(form.lines)
  if count == 0
    return {line: 0, character: shift}
  endif
  if form.eol
    return {line: count, character: 0}
  endif
  return {line: count - 1, character: strlen(form.lines[-1]) + (count == 1 ? shift : 0)}
enddef

# The one ranged edit (utf-8 positions) that turns the agent's text `old` into `new`, given that
# their first `prefix` and last `suffix` lines are the same (fewer is fine: the edit is larger).
# {} when they are the same.
export def Edit(old: dict<any>, new: dict<any>, given_prefix: number, given_suffix: number): dict<any>
  if Same(old, new)
    return {}
  endif
  if old.ff != new.ff || old.bom != new.bom
    # Every line's break, or the first line's start, changed: the whole text.
    return {start: {line: 0, character: 0}, end: EndOf(old), text: Bytes(new)}
  endif
  var shift = old.bom ? strlen(BOM) : 0
  var nl = LineBreak(new.ff)
  var count_old = len(old.lines)
  var count_new = len(new.lines)
  var prefix = min([given_prefix, count_old, count_new])
  var suffix = min([given_suffix, count_old - prefix, count_new - prefix])
  if old.eol != new.eol
    suffix = 0
  endif
  if suffix == 0
    # The edit reaches the end of the text. Without a final line break on either side, the line
    # before it loses or gains its break: that line is in the edit too.
    if (!old.eol || !new.eol) && prefix > 0
      prefix -= 1
    endif
    var text = join(new.lines[prefix :], nl)
    if new.eol && count_new > prefix
      text ..= nl
    endif
    return {start: {line: prefix, character: prefix == 0 ? shift : 0}, end: EndOf(old), text: text}
  endif
  var changed = new.lines[prefix : count_new - suffix - 1]
  var end_line = count_old - suffix
  return {
    start: {line: prefix, character: prefix == 0 ? shift : 0},
    end: {line: end_line, character: end_line == 0 ? shift : 0},
    text: empty(changed) ? '' : join(changed, nl) .. nl,
  }
enddef
