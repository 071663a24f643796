#!/usr/bin/env python3
"""A dependency-free client of the autosave agent: JSON-RPC 2.0, one message per line.

Usage, from inside a folder the agent watches (or with AUTOSAVE_SOCKET set):
    python3 autosave_client.py write notes.txt "new content"
    python3 autosave_client.py read notes.txt
    python3 autosave_client.py edit notes.txt 0:0-0:5 "Hello"   # line:character-line:character, UTF-16 as in LSP
    python3 autosave_client.py status
    python3 autosave_client.py events        # prints every event until Ctrl-C
"""
import json
import os
import socket
import sys
import uuid


def find_socket():
    if os.environ.get("AUTOSAVE_SOCKET"):
        return os.environ["AUTOSAVE_SOCKET"]
    directory = os.getcwd()
    while True:
        state = os.path.join(directory, ".autosave")
        pointer = os.path.join(state, "agent.sock.path")
        if os.path.exists(pointer):
            return open(pointer).read().strip()
        if os.path.exists(os.path.join(state, "agent.sock")):
            return os.path.join(state, "agent.sock")
        parent = os.path.dirname(directory)
        if parent == directory:
            sys.exit("no agent is running here; start one with `autosave run`")
        directory = parent


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lines = self.sock.makefile("r", encoding="utf-8")
        self.next_id = 1

    def call(self, method, **params):
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.sock.sendall((json.dumps(message) + "\n").encode())
        for line in self.lines:
            reply = json.loads(line)
            if reply.get("id") != request_id:
                continue  # an event notification
            if "error" in reply:
                raise RuntimeError(reply["error"]["message"])
            return reply["result"]
        raise RuntimeError("the agent closed the connection")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    client = Client(find_socket())
    command, args = argv[1], argv[2:]
    absolute = lambda path: os.path.abspath(path)
    if command == "write":
        print(json.dumps(client.call("write", path=absolute(args[0]), content=args[1], changeId=str(uuid.uuid4()))))
    elif command == "edit":
        # One ranged edit per RANGE TEXT pair, all applied together as one revision.
        edits = []
        for where, text in zip(args[1::2], args[2::2]):
            start, end = (dict(zip(("line", "character"), map(int, point.split(":")))) for point in where.split("-"))
            edits.append({"start": start, "end": end, "text": text})
        print(json.dumps(client.call("edit", path=absolute(args[0]), edits=edits, changeId=str(uuid.uuid4()))))
    elif command == "read":
        print(client.call("read", path=absolute(args[0])).get("content", ""), end="")
    elif command == "status":
        print(json.dumps(client.call("status"), indent=2))
    elif command == "events":
        client.call("subscribe")
        for line in client.lines:
            print(line, end="", flush=True)
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
