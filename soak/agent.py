"""The agent under test: starting it (config, then `ready` in its JSON log), kill -9, SIGTERM,
freezing it with SIGSTOP around an external edit; reading its log; and talking to it through the
control socket (`rpc`, the requests the CLI makes) and the CLI itself (`run_cli`). SoakError (the
soak itself cannot go on) is defined here, as every other module imports this one."""

import json
import os
import signal
import socket
import subprocess
import time


class SoakError(Exception):
    """The soak itself could not go on (agent would not start, tool missing...)."""


# MARK: - The agent process

class Agent:
    def __init__(self, binary, project, workdir, rng):
        self.binary = binary
        self.project = project
        self.workdir = workdir
        self.rng = rng
        self.process = None
        self.starts = 0
        self.log_paths = []
        self.settings = {}
        self.config_extra = {}  # keys merged into every start's config (the power-cut soak's fsync settings)

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def start(self):
        delay = self.rng.randint(0, 20)
        keep = self.rng.choice(["disk", "disk", "buffer"])
        self.settings = {"delayMs": delay, "keep": keep}
        config = {
            "autosave": {"delayMs": delay, "maxDelayMs": max(50, delay * 10)},
            "conflicts": {"keep": keep},
            "log": {"format": "json"},
            **self.config_extra,
        }
        config_path = os.path.join(self.workdir, "config.json")
        with open(config_path, "w") as handle:
            json.dump(config, handle)
        self.starts += 1
        log_path = os.path.join(self.workdir, "logs", f"agent-{self.starts:04d}.log")
        self.log_paths.append(log_path)
        log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [self.binary, "run", self.project, "--config", config_path, "--log-format", "json"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SoakError(f"the agent exited with status {self.process.returncode} while starting; "
                                f"log {log_path}:\n{tail(log_path)}")
            for event in read_events(log_path):
                if event.get("event") == "ready":
                    return
            time.sleep(0.01)
        raise SoakError(f"the agent did not log `ready` within 60 s; log {log_path}:\n{tail(log_path)}")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()  # one agent per root: the old one must be gone before a restart

    def stop(self):
        if not self.alive():
            return None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise SoakError("the agent did not exit within 60 s of SIGTERM")

    def freeze(self):
        """SIGSTOP, then wait until every thread is stopped (one in a syscall finishes it first)."""
        if not self.alive():
            return False
        os.kill(self.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if all_threads_stopped(self.pid):
                return True
            time.sleep(0.001)
        self.thaw()
        return False

    def thaw(self):
        if self.alive():
            os.kill(self.pid, signal.SIGCONT)


def all_threads_stopped(pid):
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
            if state not in ("T", "t"):
                return False
        return True
    except (FileNotFoundError, ProcessLookupError):
        return True


def read_events(log_path):
    events = []
    try:
        with open(log_path, "rb") as handle:
            for raw in handle:
                try:
                    events.append(json.loads(raw))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return events


def tail(path, lines=20):
    try:
        with open(path, "rb") as handle:
            return b"".join(handle.readlines()[-lines:]).decode(errors="replace")
    except OSError as error:
        return f"(cannot read {path}: {error})"


# MARK: - Talking to the agent

def rpc(project, method, timeout=30, **params):
    """One JSON-RPC request on the control socket (what the CLI sends)."""
    state = os.path.join(project, ".autosave")
    pointer = os.path.join(state, "agent.sock.path")
    path = open(pointer).read().strip() if os.path.exists(pointer) else os.path.join(state, "agent.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(path)
        connection.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}) + "\n").encode())
        reader = connection.makefile("rb")
        for line in reader:
            reply = json.loads(line)
            if reply.get("id") != 1:
                continue
            if "error" in reply:
                raise RuntimeError(reply["error"].get("message", "error"))
            return reply["result"]
    raise ConnectionError("the agent closed the connection")


def run_cli(binary, project, args, stdin=None, timeout=60):
    return subprocess.run([binary] + args, cwd=project, input=stdin, capture_output=True, timeout=timeout)
