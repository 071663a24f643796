#!/bin/sh
# Runs the Vim plugin's tests (run.vim) in Debian's Vim, in a pseudo-terminal (`script`), as
#   AUTOSAVE_BINARY=.build/debug/autosave editors/vim/test/run.sh
# prints each test's result and exits non-zero when one failed. AUTOSAVE_VIM_TEST=REGEX runs
# only the tests whose names match.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ! vim --version 2>/dev/null | grep -q '+channel'; then
	echo "editors/vim/test: \`vim\` is missing or has no +channel (vim-tiny?): install Debian's vim package" >&2
	exit 1
fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT
export AUTOSAVE_VIM_RESULTS="$results"
export AUTOSAVE_BINARY="${AUTOSAVE_BINARY:-.build/debug/autosave}"
unset AUTOSAVE_SOCKET
# The whole run is bounded: a prompt the plugin failed to prevent would otherwise wait forever.
timeout 300 script -qefc "vim -Nu NONE -i NONE -n --not-a-term -S '$here/run.vim'" /dev/null </dev/null >/dev/null
status=$?
if [ "$status" -eq 124 ]; then
	echo "editors/vim/test: Vim did not finish in 300 s (a prompt waiting for an answer?)"
elif [ -s "$results" ]; then cat "$results"; else echo "editors/vim/test: Vim gave no results (exit status $status)"; fi
[ "$status" -eq 0 ] && [ -s "$results" ] && ! grep -q '^FAILED' "$results"
