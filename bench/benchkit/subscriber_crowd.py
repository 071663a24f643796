"""The other subscribers of figure 12, in a process of their own: `python3 subscriber_crowd.py SOCKET
GLOB...` opens one connection to the agent per GLOB, subscribes it (`subscribe` with `{"glob":
[GLOB]}`), prints `ready`, then reads every connection (one thread, `selectors`) and counts the
`changes` notifications each receives.

A process of its own so that reading these connections never holds the measuring process's
interpreter while the subscriber it times is being read: what the figure measures is the agent
serving them all, not Python's threads taking turns.

Commands, one per line on stdin, each answered with one line on stdout:
  seen PATH N   waits (up to 60 s) until N connections have received a notification naming PATH;
                answers `seen` or `timeout COUNTS`
  counts        answers the notifications each connection received, as JSON
Exits when stdin closes.
"""
import json
import selectors
import socket
import sys
import threading
import time


class Subscriber:
    def __init__(self, path, glob):
        self.glob = glob
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.notifications = 0
        self.paths = set()  # every path named to this connection

    def subscribe(self):
        request = {"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": {"glob": [self.glob]}}
        self.sock.sendall((json.dumps(request) + "\n").encode())
        while True:
            for message in self.messages(self.sock.recv(1 << 16)):
                if message.get("id") == 1:
                    if "error" in message:
                        raise SystemExit(f"subscriber_crowd: the agent refused `subscribe` with glob {self.glob!r}: "
                                         f"{message['error']}")
                    self.sock.setblocking(False)
                    return

    def messages(self, chunk):
        if not chunk:
            raise SystemExit(f"subscriber_crowd: the agent closed the connection subscribed with {self.glob!r}")
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        found = []
        for line in lines:
            message = json.loads(line)
            if message.get("method") == "changes":
                self.notifications += 1
                self.paths.update(change["path"] for change in message["params"].get("changes", []))
            found.append(message)
        return found


def main(arguments):
    if len(arguments) < 2:
        raise SystemExit("usage: subscriber_crowd.py SOCKET GLOB...")
    crowd = [Subscriber(arguments[0], glob) for glob in arguments[1:]]
    for subscriber in crowd:
        subscriber.subscribe()
    lock = threading.Condition()
    selector = selectors.DefaultSelector()
    for subscriber in crowd:
        selector.register(subscriber.sock, selectors.EVENT_READ, subscriber)

    def read():
        while True:
            for key, _ in selector.select():
                with lock:
                    key.data.messages(key.data.sock.recv(1 << 16))
                    lock.notify_all()

    threading.Thread(target=read, daemon=True).start()
    print("ready", flush=True)
    for line in sys.stdin:
        command = line.split()
        if command[:1] == ["seen"]:
            path, wanted = command[1], int(command[2])
            deadline = time.monotonic() + 60
            with lock:
                while sum(path in subscriber.paths for subscriber in crowd) < wanted and time.monotonic() < deadline:
                    lock.wait(timeout=1)
                done = sum(path in subscriber.paths for subscriber in crowd) >= wanted
            print("seen" if done else "timeout " + json.dumps([s.notifications for s in crowd]), flush=True)
        elif command[:1] == ["counts"]:
            with lock:
                print(json.dumps({s.glob: s.notifications for s in crowd}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
