"""The peers the agent is measured against: Inotifywait (`inotifywait -r -m`), Watchman (a private
watchman daemon, spoken to in JSON), and Floors (the C floors of bench/floor.c: a durable
temp+write+fsync+rename+dir-fsync, the socket clients of figure 7 and a do-nothing echo server).
"""
import json
import os
import shlex
import shutil
import socket
import subprocess
import time

from .common import BenchError, PeerUnavailable, compile_c, ms, now_ns
from .processes import LineReader, cpu_ms


# ---------------------------------------------------------------------------------------------
# The two watchers


class Inotifywait:
    """`inotifywait -r -m` on the tree, printing `PATH EVENTS` per event."""

    EVENTS = ["modify", "close_write", "create", "delete", "moved_to", "moved_from"]

    def __init__(self, bench):
        if not shutil.which("inotifywait"):
            raise PeerUnavailable("inotifywait is not installed (Debian package inotify-tools)")
        self.bench = bench

    def start(self, tree, timeout=600.0):
        argv = ["inotifywait", "-r", "-m", "--format", "%w%f %e"]
        for event in self.EVENTS:
            argv += ["-e", event]
        argv.append(tree)
        started = now_ns()
        self.process = self.bench.children.spawn("inotifywait", argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.errors = LineReader(self.process.stderr.fileno(), f"inotifywait (pid {self.process.pid}) stderr")
        self.events = LineReader(self.process.stdout.fileno(), f"inotifywait (pid {self.process.pid}) stdout")
        _, stamp = self.errors.wait_for(lambda line: True if "Watches established" in line else None, timeout,
                                        "inotifywait's \"Watches established.\" line")
        self.setup_cpu_ms = cpu_ms(self.process.pid)
        return ms(stamp - started)

    def stop(self):
        self.bench.children.stop(self.process, 10)


class Watchman:
    """A private watchman daemon (own socket, state and log under the temp dir), spoken to in JSON."""

    def __init__(self, bench):
        if not shutil.which("watchman"):
            raise PeerUnavailable("watchman is not installed (Debian package watchman)")
        self.bench = bench
        self.process = None

    def start_daemon(self, timeout=60.0):
        base = os.path.join(self.bench.work, "watchman")
        os.makedirs(base, exist_ok=True)
        self.sockname = os.path.join(base, "sock")
        self.logfile = os.path.join(base, "log")
        argv = ["watchman", "--foreground", "--no-save-state", "--sockname", self.sockname, "--logfile", self.logfile,
                "--statefile", os.path.join(base, "state"), "--pidfile", os.path.join(base, "pid"), "--log-level", "1"]
        self.process = self.bench.children.spawn("watchman", argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise BenchError(f"the watchman daemon exited with status {self.process.returncode} at start; "
                                 f"its log:\n    {self.log_tail()}")
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(self.sockname)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise BenchError(f"timed out after {timeout:.0f} s waiting for watchman's socket {self.sockname}; "
                                     f"its log:\n    {self.log_tail()}") from None
                time.sleep(0.02)
        self.replies = LineReader(self.sock.fileno(), f"watchman (pid {self.process.pid})")
        self.version = self.command(["version"], 30)["version"]

    def log_tail(self):
        try:
            with open(self.logfile, errors="replace") as log:
                return "\n    ".join(log.read().splitlines()[-8:]) or "(empty)"
        except OSError:
            return "(no log file)"

    def send(self, pdu):
        self.sock.sendall((json.dumps(pdu) + "\n").encode())

    def command(self, pdu, timeout):
        """Sends one command and returns its (non-unilateral) reply, with the time it was read."""
        self.send(pdu)
        reply, self.last_stamp = self.replies.wait_for(self._reply, timeout, f"watchman's reply to {pdu[0]}")
        if "error" in reply:
            raise BenchError(f"watchman refused {json.dumps(pdu)[:200]}: {reply['error']}")
        return reply

    @staticmethod
    def _reply(line):
        message = json.loads(line)
        return None if message.get("unilateral") or "subscription" in message else message

    def setup(self, tree, expected_files, timeout=900.0):
        """`watch` + the first query (every file's name); ms from sending `watch` to the answer being read."""
        cpu_before = cpu_ms(self.process.pid)
        started = now_ns()
        self.send(["watch", tree])
        self.replies.wait_for(self._reply, timeout, "watchman's reply to watch")
        self.send(["query", tree, {"expression": ["type", "f"], "fields": ["name"]}])
        reply, stamp = self.replies.wait_for(self._reply, timeout, "watchman's reply to the first query")
        if "error" in reply:
            raise BenchError(f"watchman's first query failed: {reply['error']}")
        self.setup_cpu_ms = cpu_ms(self.process.pid) - cpu_before
        found = len(reply.get("files", []))
        if found < expected_files:
            raise BenchError(f"watchman's first query listed {found} files, the tree has {expected_files}")
        return ms(stamp - started)

    def subscribe(self, tree):
        clock = self.command(["clock", tree], 60)["clock"]
        self.command(["subscribe", tree, "bench", {"expression": ["type", "f"], "fields": ["name"], "since": clock}], 60)

    def stop(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        except OSError:
            pass
        self.bench.children.stop(self.process, 20)


# ---------------------------------------------------------------------------------------------
# The floors (bench/floor.c)


class Floors:
    def __init__(self, bench):
        self.bench = bench
        self.binary = compile_c(bench, "floor", BenchError)

    def save(self, directory, size, count, files):
        """Per-iteration ms and the total ms of COUNT durable writes of SIZE bytes."""
        os.makedirs(directory, exist_ok=True)
        argv = [self.binary, "save", directory, str(size), str(count), str(files)]
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise BenchError(f"timed out after 600 s waiting for the durable-write floor ({shlex.join(argv)})") from None
        if result.returncode != 0:
            raise BenchError(f"the durable-write floor failed ({shlex.join(argv)}): {result.stderr.strip()}")
        iterations = [ms(int(line.split()[1])) for line in result.stdout.splitlines() if line.startswith("iter ")]
        total = [ms(int(line.split()[1])) for line in result.stdout.splitlines() if line.startswith("total ")]
        if len(iterations) != count or not total:
            raise BenchError(f"the durable-write floor printed {len(iterations)} of {count} iterations")
        return iterations, total[0]

    def serve(self, directory, size):
        """A long-lived floor process; `sample()` on the result times one durable write."""
        os.makedirs(directory, exist_ok=True)
        process = self.bench.children.spawn("the durable-write floor", [self.binary, "serve", directory, str(size)],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = LineReader(process.stdout.fileno(), "the durable-write floor")
        lines.wait_for(lambda line: True if line == "ready" else None, 60, "the durable-write floor's `ready` line")

        def sample():
            """(ms from the request to the floor's answer being read, ms the floor itself timed)."""
            started = now_ns()
            process.stdin.write(b"save\n")
            process.stdin.flush()
            value, stamp = lines.wait_for(lambda line: int(line.split()[1]) if line.startswith("iter ") else None, 60,
                                          "one durable write by the floor")
            return ms(stamp - started), ms(value)

        return process, sample

    def clients(self, socket_path, targets, window, size, seconds):
        """`floor clients`: one C client process per target; requests/s and p50/p99 ms over all."""
        argv = [self.binary, "clients", socket_path, str(seconds), str(window), str(size), *targets]
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
        except subprocess.TimeoutExpired:
            raise BenchError(f"timed out after {seconds + 120:.0f} s waiting for the socket clients ({shlex.join(argv)})") from None
        if result.returncode != 0:
            raise BenchError(f"the socket clients failed ({shlex.join(argv)}): {result.stderr.strip()}")
        values = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
        if "error" in values:
            raise BenchError(f"the server refused writes during the throughput test: {values['error'][:300]}")
        if int(values.get("completed", "0")) == 0:
            raise BenchError("no write completed during the throughput test")
        return {"rate": int(values["completed"]) / seconds, "p50": ms(int(values["p50"])), "p99": ms(int(values["p99"]))}

    def echo(self, path):
        process = self.bench.children.spawn("the echo floor", [self.binary, "echo", path], stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE)
        LineReader(process.stdout.fileno(), "the echo floor").wait_for(
            lambda line: True if line == "listening" else None, 30, "the echo floor's `listening` line")
        return process
