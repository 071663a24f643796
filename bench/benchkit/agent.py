"""The agent under test: AgentRun (one `autosave run` process with a config file written for one
figure, started and timed to its `ready` line, and stopped) and RPCClient (one connection to its
control socket: JSON-RPC 2.0, one message per line).
"""
import json
import os
import socket
import subprocess
import threading

from .common import BenchError, ms, now_ns
from .processes import LineReader, cpu_ms, log_event


# ---------------------------------------------------------------------------------------------
# The agent


class AgentRun:
    """One `autosave run` process with a config file written for one figure."""

    def __init__(self, bench, root, settings, label):
        self.bench = bench
        self.root = root
        self.label = label
        config = {"log": {"format": "json", "level": "info"}}
        for key, value in settings.items():
            if isinstance(value, dict):
                config.setdefault(key, {}).update(value)
            else:
                config[key] = value
        self.config_path = os.path.join(bench.work, f"agent-{label}.json")
        with open(self.config_path, "w") as file:
            json.dump(config, file, indent=2)
        self.effective = bench.effective_config(root, self.config_path)
        self.process = None
        self.log = None
        self.socket_path = None

    def start(self, timeout=300.0):
        """Starts the agent; returns ms from spawn to its `ready` line being read."""
        argv = [self.bench.binary, "run", self.root, "--config", self.config_path]
        started = now_ns()
        self.process = self.bench.children.spawn(f"the agent ({self.label})", argv, stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.PIPE)
        self.log = LineReader(self.process.stderr.fileno(), f"the agent ({self.label}, pid {self.process.pid})")
        self.ready, stamp = self.log.wait_for(log_event("ready"), timeout, "the agent's `ready` log line")
        self.setup_cpu_ms = cpu_ms(self.process.pid)
        setup = ms(stamp - started)
        # `ready` comes once the control socket listens, and names it.
        self.socket_path = self.ready.get("socket")
        return setup

    def client(self, timeout=120.0):
        return RPCClient(self.socket_path, timeout)

    def stop(self, timeout=120.0):
        status = self.bench.children.stop(self.process, timeout)
        if status != 0:
            raise BenchError(f"the agent ({self.label}) exited with status {status} after SIGTERM; last lines:\n    "
                             f"{self.log.recent()}")


# ---------------------------------------------------------------------------------------------
# The JSON-RPC client of the agent's control socket


class RPCClient:
    """One connection to the agent: JSON-RPC 2.0, one message per line."""

    def __init__(self, path, timeout=60.0):
        self.path = path
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as error:
            raise BenchError(f"cannot connect to the agent's socket {path}: {error}") from error
        self.buffer = b""
        self.next_id = 1

    def line(self, method, params, request_id):
        return (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode()

    def send(self, method, **params):
        request_id = self.next_id
        self.next_id += 1
        self.sock.sendall(self.line(method, params, request_id))
        return request_id

    def receive(self, what):
        """The next response (notifications skipped)."""
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
                message = json.loads(line)
                if "id" in message:
                    return message
                continue
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                raise BenchError(f"timed out after {self.timeout:.0f} s waiting for the agent's answer to {what}") from None
            if not chunk:
                raise BenchError(f"the agent closed the control connection while {what} was outstanding")
            self.buffer += chunk

    def call(self, method, **params):
        request_id = self.send(method, **params)
        reply = self.receive(f"`{method}` (id {request_id})")
        if reply.get("id") != request_id:
            raise BenchError(f"answer for id {reply.get('id')} while waiting for `{method}` id {request_id}")
        if "error" in reply:
            raise BenchError(f"the agent refused `{method}`: {reply['error'].get('message')}")
        return reply["result"]

    def request(self, method, params):
        """A request line with the next id, not sent: (id, line), so it can be built before timing."""
        request_id = self.next_id
        self.next_id += 1
        return request_id, self.line(method, params, request_id)

    def round_trip(self, request_id, line, what):
        """Sends one pre-built request and waits for its answer; ns from sending to the answer parsed."""
        started = now_ns()
        self.sock.sendall(line)
        reply = self.receive(f"{what} (id {request_id})")
        elapsed = now_ns() - started
        if reply.get("id") != request_id:
            raise BenchError(f"answer for id {reply.get('id')} while waiting for {what} id {request_id}")
        if "error" in reply:
            raise BenchError(f"the agent refused {what}: {reply['error'].get('message')}")
        return elapsed

    def read_raw(self, path):
        """The buffer's bytes: `read` with `raw: true`, whose answer line the bytes follow."""
        result = self.call("read", path=path, raw=True)
        count = result.get("contentBytes")
        if count is None:
            raise BenchError(f"`read` of {path} answered no contentBytes (the buffer holds no file): {result}")
        parts, held = [self.buffer[:count]], len(self.buffer[:count])
        self.buffer = self.buffer[count:]
        while held < count:
            try:
                chunk = self.sock.recv(min(1 << 20, count - held))
            except socket.timeout:
                raise BenchError(f"timed out after {self.timeout:.0f} s reading {path}'s {count} raw bytes "
                                 f"({held} arrived)") from None
            if not chunk:
                raise BenchError(f"the agent closed the connection {held} bytes into {path}'s {count} raw bytes")
            parts.append(chunk)
            held += len(chunk)
        return b"".join(parts)

    def pipeline(self, requests, what):
        """Sends pre-built request lines from a thread while reading every answer; returns them."""
        blob = b"".join(requests)
        failure = []

        def send():
            try:
                self.sock.sendall(blob)
            except OSError as error:
                failure.append(error)

        sender = threading.Thread(target=send, name="pipeline sender", daemon=True)
        sender.start()
        answers = [self.receive(f"{what} (answer {index + 1} of {len(requests)})") for index in range(len(requests))]
        sender.join(timeout=self.timeout)
        if failure:
            raise BenchError(f"sending {what} failed: {failure[0]}")
        return answers

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
