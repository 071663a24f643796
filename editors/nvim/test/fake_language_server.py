#!/usr/bin/env python3
"""A small language server for the tests of file watching: stdio, JSON-RPC with Content-Length framing.

    fake_language_server.py RECORD WATCHER...

Each WATCHER is a glob (`**/*.py`), optionally `@KIND` (the WatchKind bitmask: 1 create, 2 change,
4 delete), and `rel:` before it makes it a RelativePattern on the first workspace folder. On
`initialized` the server registers them all, in one `client/registerCapability`, for
`workspace/didChangeWatchedFiles`. It appends one JSON line to RECORD for each thing a test looks
at: the client's capabilities (`initialize`), the answer to the registration (`registered`) and
every `workspace/didChangeWatchedFiles` notification (`changes`), as it arrives. When one names a
file `unregister-NAME.py` (NAME: RECORD's name without its extension) it unregisters its
watchers, and records the answer (`unregistered`).
"""
import json
import os
import sys


def read_message(stream):
    """One message from `stream`, or None at its end."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length is None:
        raise ValueError("a message without Content-Length")
    return json.loads(stream.read(length))


def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def watcher(spec, workspace_uri):
    """The FileSystemWatcher a command-line WATCHER names."""
    pattern, _, kind = spec.partition("@")
    if pattern.startswith("rel:"):
        pattern = {"baseUri": workspace_uri, "pattern": pattern[len("rel:"):]}
    result = {"globPattern": pattern}
    if kind:
        result["kind"] = int(kind)
    return result


def main():
    record_path, specs = sys.argv[1], sys.argv[2:]
    workspace_uri = None
    unregister_name = "unregister-" + os.path.splitext(os.path.basename(record_path))[0] + ".py"

    def record(entry):
        with open(record_path, "a") as record_file:
            record_file.write(json.dumps(entry) + "\n")

    while True:
        message = read_message(sys.stdin.buffer)
        if message is None:
            return
        method = message.get("method")
        if method == "initialize":
            params = message["params"]
            folders = params.get("workspaceFolders") or []
            workspace_uri = folders[0]["uri"] if folders else params.get("rootUri")
            record({"event": "initialize", "capabilities": params.get("capabilities")})
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {}}})
        elif method == "initialized":
            send({"jsonrpc": "2.0", "id": "register-1", "method": "client/registerCapability", "params": {
                "registrations": [{"id": "watch-1", "method": "workspace/didChangeWatchedFiles",
                                   "registerOptions": {"watchers": [watcher(s, workspace_uri) for s in specs]}}]}})
        elif method == "workspace/didChangeWatchedFiles":
            changes = message["params"]["changes"]
            record({"event": "changes", "changes": changes})
            if any(change["uri"].endswith("/" + unregister_name) for change in changes):
                send({"jsonrpc": "2.0", "id": "unregister-1", "method": "client/unregisterCapability", "params": {
                    "unregisterations": [{"id": "watch-1", "method": "workspace/didChangeWatchedFiles"}]}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return
        elif method is None and message.get("id") == "register-1":
            record({"event": "registered", "response": message})
        elif method is None and message.get("id") == "unregister-1":
            record({"event": "unregistered", "response": message})
        elif "id" in message and method is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not here: " + method}})


if __name__ == "__main__":
    main()
