vim9script
# autosave: Vim buffers edited through a running autosave agent (:help autosave).
if exists('g:loaded_autosave')
  finish
endif
g:loaded_autosave = 1
if v:version < 900 || !has('channel') || !exists('*listener_add')
  echomsg 'autosave: needs Vim 9.0 or later with +channel; this Vim leaves files to itself'
  finish
endif

command! -bar AutosaveAttach autosave#Attach(0, true)
command! -bar AutosaveDetach autosave#Detach(0)
command! -bar AutosaveStatus autosave#ShowStatus()
command! -bar AutosaveConflicts autosave#ShowConflicts()

autosave#Enable()
