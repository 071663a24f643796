vim9script
# The Vim plugin with the real editor and the real agent.
#
#   vim -Nu NONE -i NONE --not-a-term -S editors/vim/test/run.vim   (run.sh does it in a pty)
#
# Each Test_* starts `autosave run` ($AUTOSAVE_BINARY, default .build/debug/autosave) on a fresh
# temporary project, edits a file of it in this Vim with the plugin, types as a person would
# (feedkeys) and looks at the file on disk, the agent's log and the buffer, with Vim's own
# assert_* functions. A second Vim, where a test needs one, is started with job_start() (and
# killed with SIGKILL in one test). Waits are on conditions (10 ms polls, 20 s limits), never a
# bare sleep. The results go to $AUTOSAVE_VIM_RESULTS; Vim exits non-zero when any test failed.
set encoding=utf-8 noswapfile hidden
const HERE = expand('<sfile>:p:h')
const PLUGIN = fnamemodify(HERE, ':h')
&runtimepath = PLUGIN .. ',' .. &runtimepath
runtime plugin/autosave.vim

const BINARY = fnamemodify(empty($AUTOSAVE_BINARY) ? '.build/debug/autosave' : $AUTOSAVE_BINARY, ':p')
const RESULTS = empty($AUTOSAVE_VIM_RESULTS) ? 'vim-test-results.txt' : $AUTOSAVE_VIM_RESULTS
const TIMEOUT = 20.0

var home = ''
var root = ''
var agent_job: job
var children: list<job> = []
var report: list<string> = []

# Waits until `Condition()` holds; a failed assertion naming `what` after `limit` seconds.
def WaitFor(Condition: func, what: string, limit = TIMEOUT): bool
  var start = reltime()
  while !Condition()
    if reltimefloat(reltime(start)) > limit
      assert_report('timed out after ' .. limit .. ' s waiting for ' .. what)
      return false
    endif
    sleep 10m
  endwhile
  return true
enddef

def Path(name: string): string
  return root .. '/' .. name
enddef

# Writes `bytes` (a String, exactly) to the project's `name`.
def Put(name: string, bytes: string)
  writefile(split(bytes, "\n", true), Path(name), 'b')
enddef

# The bytes of the project's `name` on disk ('' when there is none).
def Disk(name: string): string
  return filereadable(Path(name)) ? join(readfile(Path(name), 'b'), "\n") : ''
enddef

# The agent's log, one dictionary per JSON line.
def Log(): list<dict<any>>
  var lines = filereadable(home .. '/agent.log') ? readfile(home .. '/agent.log') : []
  return lines->filter((_, l) => l =~ '^{')->mapnew((_, l) => json_decode(l))
enddef

def Logged(event: string, path = ''): bool
  return Log()->filter((_, e) => get(e, 'event', '') == event && (path == '' || get(e, 'path', '') == path))->len() > 0
enddef

# `autosave run` on the project, with `delay_ms` as its quiet window before a save.
def StartAgent(delay_ms = 300)
  if !executable(BINARY)
    throw 'the agent binary ' .. BINARY .. ' is not there: build it (swift build) or set AUTOSAVE_BINARY'
  endif
  writefile([json_encode({autosave: {delayMs: delay_ms, maxDelayMs: max([delay_ms, 2000])}})], Path('autosave.json'))
  agent_job = job_start([BINARY, 'run', root, '--log-format', 'json'],
    {in_io: 'null', out_io: 'null', err_io: 'file', err_name: home .. '/agent.log'})
  WaitFor(() => Logged('ready'), "the agent's ready line")
enddef

# The CLI, as a coding agent or a person's shell would run it, in the project; stdin `input`.
def Cli(args: string, input = ''): string
  var out = system('cd ' .. shellescape(root) .. ' && ' .. shellescape(BINARY) .. ' ' .. args, input)
  assert_equal(0, v:shell_error, 'autosave ' .. args .. ': ' .. out)
  return out
enddef

# Edits the project's `name` in this Vim and waits for the plugin to attach it.
def Edit(name: string)
  execute 'edit' fnameescape(Path(name))
  WaitFor(() => autosave#Status().attached && autosave#Status().revision != null, name .. ' attached')
enddef

# Types `keys` as a person would, then lets the screen update (which is when Vim reports changes
# to listeners, as it does after each key in a terminal).
def Type(keys: string)
  feedkeys(keys, 'xt')
  redraw
enddef

def Settled(): bool
  return autosave#Status().settled
enddef

# A second Vim editing `name`: types `keys`; with `await`, waits for that line to arrive too.
# Returns the job and the file where it says how far it got.
def StartChild(name: string, keys: string, await = ''): list<any>
  var mark = home .. '/child-' .. len(children)
  var job = job_start(['vim', '-Nu', 'NONE', '-i', 'NONE', '-n', '--not-a-term', '-S', HERE .. '/child.vim'], {
    pty: true, out_io: 'null',
    env: {PLUGIN: PLUGIN, CHILD_FILE: Path(name), CHILD_KEYS: keys, CHILD_MARK: mark, CHILD_AWAIT: await},
  })
  children->add(job)
  return [job, mark]
enddef

def Mark(file: string): string
  return filereadable(file) ? get(readfile(file), 0, '') : ''
enddef

def Setup()
  home = tempname()
  root = home .. '/project'
  mkdir(root, 'p')
  v:errors = []
  messages clear
enddef

def Teardown()
  silent! autosave#FlushAll()
  silent! :%bwipeout!
  for job in children
    if job_status(job) == 'run'
      job_stop(job, 'kill')
    endif
  endfor
  children = []
  if job_status(agent_job) == 'run'
    job_stop(agent_job, 'term')
    WaitFor(() => job_status(agent_job) != 'run', 'the agent to stop')
  endif
  delete(home, 'rf')
enddef

# -- the cases

def g:Test_typing_is_saved_without_w()
  Put('notes.txt', "one\ntwo\nthree\n")
  StartAgent()
  Edit('notes.txt')
  Type("jAxx\<Esc>Go four\<Esc>")
  WaitFor(() => Disk('notes.txt') == "one\ntwoxx\nthree\n four\n", 'the typing on disk')
  WaitFor(() => !&modified, "'modified' to clear once the agent saved")
  assert_equal(['one', 'twoxx', 'three', ' four'], getline(1, '$'))
  assert_true(Logged('saved', 'notes.txt'), 'the agent saved it')
  assert_match('^autosave: notes.txt · revision \d\+ · saved$', trim(execute('AutosaveStatus')))
enddef

def g:Test_an_overlapping_change_keeps_your_text_and_copies_the_disks()
  Put('plan.txt', "a\nb\nc\n")
  StartAgent(60000)
  Edit('plan.txt')
  Type("2GAmine\<Esc>")
  WaitFor(() => Settled(), 'the typing to reach the agent')
  assert_match('· unsaved\|· saving in', execute('AutosaveStatus'))
  system('sed -i "s/^b$/theirs/" ' .. shellescape(Path('plan.txt')))
  WaitFor(() => !empty(autosave#Conflicts()), 'the conflict to be reported')
  var conflict = autosave#Conflicts()[0]
  assert_equal('buffer', conflict.kept)
  assert_equal(['a', 'theirs', 'c'], readfile(conflict.copy))
  assert_equal(['a', 'bmine', 'c'], getline(1, '$'))
  assert_match('plan.txt changed on disk where you were editing too (overlap): your text stays here', execute('messages'))
  AutosaveConflicts
  assert_equal(1, len(getqflist()))
  assert_equal(conflict.copy, fnamemodify(bufname(getqflist()[0].bufnr), ':p'))
  cclose
  write
  assert_equal("a\nbmine\nc\n", Disk('plan.txt'))
enddef

def g:Test_the_agent_killed_and_restarted_loses_nothing_typed()
  Put('log.txt', "start\n")
  StartAgent()
  Edit('log.txt')
  job_stop(agent_job, 'kill')
  WaitFor(() => !autosave#Status().connected, 'the plugin to see the agent gone')
  assert_match('lost the agent', execute('messages'))
  # Typed while no agent runs: in the buffer, sent once one is back.
  Type("GoTyped alone\<Esc>")
  StartAgent()
  WaitFor(() => Disk('log.txt') == "start\nTyped alone\n", 'the text typed meanwhile on disk')
  WaitFor(() => autosave#Status().connected, 'the plugin to follow the buffer again')
  Type("Goand after\<Esc>")
  WaitFor(() => Disk('log.txt') == "start\nTyped alone\nand after\n", 'the typing after on disk')
enddef

def g:Test_a_new_file_is_created_by_the_agent()
  StartAgent()
  execute 'edit' fnameescape(Path('new.txt'))
  WaitFor(() => autosave#Status().revision != null, 'new.txt attached')
  Type("inew text\<CR>second\<Esc>")
  WaitFor(() => Disk('new.txt') == "new text\nsecond\n", 'the new file on disk')
  WaitFor(() => !&modified, "'modified' to clear")
enddef

def g:Test_help_has_clean_tags()
  var copy = home .. '/doc'
  mkdir(copy, 'p')
  writefile(readfile(PLUGIN .. '/doc/autosave.txt', 'b'), copy .. '/autosave.txt', 'b')
  execute 'helptags' fnameescape(copy)
  var tags = readfile(copy .. '/tags')
  assert_true(index(tags->mapnew((_, t) => split(t, "\t")[0]), 'autosave') >= 0, 'the tag autosave')
  assert_equal(len(tags), len(tags->copy()->sort()->uniq()), 'no tag twice')
  &runtimepath ..= ',' .. home
  help autosave
  assert_equal('autosave.txt', expand('%:t'))
  helpclose
enddef

def g:Test_kill_9_of_vim_after_typing_loses_nothing_sent()
  Put('draft.txt', "first\nsecond\n")
  StartAgent(60000)
  var [job, mark] = StartChild('draft.txt', "ggAand more\<Esc>Gothird line ü\<Esc>")
  WaitFor(() => Mark(mark) != '', 'the second Vim to have its typing in the agent')
  assert_equal('settled', Mark(mark))
  job_stop(job, 'kill')
  WaitFor(() => job_status(job) == 'dead', 'the killed Vim to be gone')
  assert_equal('kill', job_info(job).termsig)
  # The agent holds it in its buffer (its save window is a minute: nothing is on disk yet) ...
  assert_equal("first\nsecond\n", Disk('draft.txt'))
  assert_equal("firstand more\nsecond\nthird line ü\n", Cli('cat draft.txt'))
  # ... and saves it, with the editor gone.
  Cli('save draft.txt')
  assert_equal("firstand more\nsecond\nthird line ü\n", Disk('draft.txt'))
enddef

def g:Test_quitting_right_after_typing_loses_nothing()
  Put('quick.txt', "one\n")
  StartAgent(60000)
  var [job, _] = StartChild('quick.txt', "Gotwo\<Esc>:qa!\<CR>")
  WaitFor(() => job_status(job) == 'dead', 'the second Vim to quit')
  assert_equal("one\ntwo\n", Cli('cat quick.txt'))
enddef

def g:Test_sed_on_other_lines_is_merged_with_the_cursor_kept()
  Put('app.py', join(map(range(1, 10), (_, n) => 'line ' .. n), "\n") .. "\n")
  StartAgent(60000)
  Edit('app.py')
  Type("5GA typed\<Esc>")
  WaitFor(() => Settled(), 'the typing to reach the agent')
  var cursor = getcurpos()
  system('sed -i -e "s/^line 2$/LINE 2/" -e "s/^line 9$/LINE 9/" -e "1i header" ' .. shellescape(Path('app.py')))
  var expected = ['header', 'line 1', 'LINE 2', 'line 3', 'line 4', 'line 5 typed', 'line 6', 'line 7', 'line 8', 'LINE 9', 'line 10']
  WaitFor(() => getline(1, '$') == expected, 'the outside change merged into the buffer')
  assert_true(Logged('merged', 'app.py'), 'the agent merged (its buffer was dirty)')
  # The cursor stays on the text it was on: one line down, the line above it being new.
  assert_equal([cursor[1] + 1, cursor[2]], getcurpos()[1 : 2])
  assert_equal('line 5 typed', getline('.'))
  # Vim looking at the file again (focus, :checktime) asks nothing: the plugin has it in hand.
  checktime
  assert_notmatch('W11\|W12\|changed', execute('messages'))
  # One undo takes back the outside change only.
  normal! u
  assert_equal('line 5 typed', getline(5))
  assert_equal('line 2', getline(2))
  normal! u
  assert_equal('line 5', getline(5))
  redo
  redo
  # :w saves through the agent and returns once durable.
  write
  assert_equal(join(expected, "\n") .. "\n", Disk('app.py'))
  assert_false(&modified)
enddef

def g:Test_a_person_and_a_coding_agent_edit_one_file()
  Put('main.c', "int main(void) {\n  return 0;\n}\n")
  StartAgent()
  Edit('main.c')
  Type("ggO#include <stdio.h>\<Esc>")
  WaitFor(() => Settled(), 'the typing to reach the agent')
  # The coding agent (the CLI standing in) patches another line of the same buffer.
  var patch = "--- a/main.c\n+++ b/main.c\n@@ -2,3 +2,4 @@\n int main(void) {\n+  puts(\"hi\");\n   return 0;\n }\n"
  Cli('patch', patch)
  WaitFor(() => getline(1, '$') == ['#include <stdio.h>', 'int main(void) {', '  puts("hi");', '  return 0;', '}'],
    "the coding agent's patch in the buffer")
  # The person goes on typing; then the agent writes the whole file.
  Type("4GA // done\<Esc>")
  WaitFor(() => Disk('main.c') == "#include <stdio.h>\nint main(void) {\n  puts(\"hi\");\n  return 0; // done\n}\n",
    'both edits on disk')
  Cli('write main.c', "// rewritten\nint main(void) { return 1; }\n")
  WaitFor(() => getline(1, '$') == ['// rewritten', 'int main(void) { return 1; }'], "the agent's write in the buffer")
  Type("Go// end\<Esc>")
  WaitFor(() => Disk('main.c') == "// rewritten\nint main(void) { return 1; }\n// end\n", 'the last typing on disk')
  WaitFor(() => !&modified, "'modified' to clear")
enddef

def g:Test_multibyte_text_and_crlf_round_trip_byte_for_byte()
  Put('crlf.txt', "héllo wörld\r\nñandú ✓\r\nlast\r\n")
  StartAgent()
  Edit('crlf.txt')
  assert_equal('dos', &fileformat)
  Type("2G$a 😀 añadido\<Esc>ggwiçé\<Esc>")
  var expected = "héllo çéwörld\r\nñandú ✓ 😀 añadido\r\nlast\r\n"
  WaitFor(() => Disk('crlf.txt') == expected, 'the multibyte typing on disk, with CRLF kept')
  # An outside change in a multibyte, CRLF file arrives line for line; the format stays dos.
  system('sed -i "s/^last\r$/último\r/" ' .. shellescape(Path('crlf.txt')))
  WaitFor(() => getline(3) == 'último', 'the outside change in the buffer')
  assert_equal('dos', &fileformat)
  Type("ggA ß\<Esc>")
  WaitFor(() => Disk('crlf.txt') == "héllo çéwörld ß\r\nñandú ✓ 😀 añadido\r\núltimo\r\n", 'the last typing on disk')
enddef

def g:Test_two_windows_and_a_second_vim_on_one_file()
  Put('shared.txt', "alpha\nbeta\ngamma\n")
  StartAgent()
  Edit('shared.txt')
  split
  Type("ggAtop\<Esc>")
  wincmd w
  Type("GAbottom\<Esc>")
  WaitFor(() => Disk('shared.txt') == "alphatop\nbeta\ngammabottom\n", 'both windows typing on disk')
  # A second Vim on the same file: its typing arrives here, and ours there.
  var [job, mark] = StartChild('shared.txt', "2GAfrom the other vim\<Esc>", 'gammabottom and more')
  WaitFor(() => Mark(mark) != '', 'the second Vim to have its typing in the agent')
  assert_equal('settled', Mark(mark))
  WaitFor(() => getline(2) == 'betafrom the other vim', "the other Vim's typing in this buffer")
  Type("GA and more\<Esc>")
  WaitFor(() => Mark(mark) == 'saw', 'this typing in the other Vim')
  WaitFor(() => Disk('shared.txt') == "alphatop\nbetafrom the other vim\ngammabottom and more\n", 'all of it on disk')
  job_stop(job, 'term')
enddef

# -- the runner

var failed = 0
var tests = getcompletion('Test_', 'function')->filter((_, f) => f =~ '^Test_')->map((_, f) => substitute(f, '()$', '', ''))
var only = $AUTOSAVE_VIM_TEST
for name in sort(tests)
  if only != '' && name !~ only
    continue
  endif
  Setup()
  var start = reltime()
  try
    call('g:' .. name, [])
  catch
    v:errors->add('exception: ' .. v:exception .. ' at ' .. v:throwpoint)
  endtry
  var errors = copy(v:errors)
  try
    Teardown()
  catch
    errors->add('teardown: ' .. v:exception)
  endtry
  var took = printf('%.1f s', reltimefloat(reltime(start)))
  if empty(errors)
    report->add('ok     ' .. name .. ' (' .. took .. ')')
  else
    failed += 1
    report->add('FAILED ' .. name .. ' (' .. took .. ')')
    report += errors->mapnew((_, e) => '    ' .. e)
    report += ['    messages:'] + split(execute('messages'), "\n")->mapnew((_, m) => '      ' .. m)
  endif
endfor
report->add(printf('%d test(s), %d failed', len(report->copy()->filter((_, l) => l =~ '^\(ok\|FAILED\)')), failed))
writefile(report, RESULTS)
if failed > 0
  cquit 1
endif
qall!
