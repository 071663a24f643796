#!/bin/sh
# A shell client of the autosave agent with socat (or `nc -U`): one JSON-RPC message per line.
#   ./autosave-client.sh status
#   ./autosave-client.sh write notes.txt 'new content'
set -eu
socket=${AUTOSAVE_SOCKET:-.autosave/agent.sock}
send() {
    if command -v socat >/dev/null 2>&1; then
        printf '%s\n' "$1" | socat - "UNIX-CONNECT:$socket"
    else
        printf '%s\n' "$1" | nc -U -q 1 "$socket"
    fi
}
case "${1:-}" in
    status) send '{"jsonrpc":"2.0","id":1,"method":"status"}' ;;
    write)
        path=$(realpath -m "$2")
        content=$(printf '%s' "$3" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')
        send "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"write\",\"params\":{\"path\":\"$path\",\"content\":$content}}" ;;
    *) echo "usage: $0 status | write PATH CONTENT" >&2; exit 2 ;;
esac
