vim9script
# A second Vim for run.vim: it edits $CHILD_FILE with the plugin, types $CHILD_KEYS as a person
# would, writes "settled" to $CHILD_MARK once every edit it typed is in the agent, and, when
# $CHILD_AWAIT is set, writes "saw" to $CHILD_MARK once its buffer holds that line too (another
# client's edit arriving). Then it idles until it is killed (run.vim's kill -9) or stopped.
set encoding=utf-8 noswapfile
&runtimepath = $PLUGIN .. ',' .. &runtimepath
runtime plugin/autosave.vim

def Until(Condition: func)
  var start = reltime()
  while !Condition() && reltimefloat(reltime(start)) < 30
    sleep 10m
  endwhile
enddef

try
  execute 'edit' fnameescape($CHILD_FILE)
  Until(() => get(autosave#Status(), 'revision', null) != null)
  feedkeys($CHILD_KEYS, 'xt')
  redraw
  Until(() => autosave#Status().settled)
  writefile(['settled'], $CHILD_MARK)
  if $CHILD_AWAIT != ''
    Until(() => index(getline(1, '$'), $CHILD_AWAIT) >= 0)
    writefile(['saw'], $CHILD_MARK)
  endif
catch
  # What went wrong, for run.vim's assertion on this file to show.
  writefile(['error: ' .. v:exception .. ' at ' .. v:throwpoint], $CHILD_MARK)
endtry
while true
  sleep 100m
endwhile
