"""Figure 7: socket throughput. Clients writing small edits to the agent's socket, requests/s and
p99, journal.fsync on and off, against the same clients talking to the echo floor. The clients are
C (floor.c's `clients`, in peers.Floors) or, with --client python, the Python clients here.
"""
import json
import multiprocessing
import os
import socket
import time

from .agent import AgentRun
from .common import BenchError, ms, now_ns, percentile


# ---------------------------------------------------------------------------------------------
# Socket throughput clients (figure 7): separate processes, so the clients are not one GIL


def throughput_client(socket_path, target, window, size, connection):
    """One client: `window` writes in flight, each answered before the next takes its slot."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(socket_path)
        sock.settimeout(60)
        connection.send("connected")
        start_at, end_at = connection.recv()
        while now_ns() < start_at:
            time.sleep(0.001)
        filler = "x" * max(0, size - 24)
        sent_at = {}
        latencies = []
        completed = 0
        errors = []
        next_id = 1
        pending = b""
        while True:
            burst = []
            stamp = now_ns()
            while len(sent_at) < window and stamp < end_at:
                content = f"edit {next_id} {filler}\n"
                burst.append(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": "write",
                                         "params": {"path": target, "content": content}}))
                sent_at[next_id] = stamp
                next_id += 1
            if burst:
                sock.sendall(("\n".join(burst) + "\n").encode())
            if not sent_at:
                break
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            stamp = now_ns()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "id" not in message:
                    continue
                started = sent_at.pop(message["id"])
                if "error" in message and len(errors) < 3:
                    errors.append(message["error"].get("message"))
                if stamp <= end_at:
                    completed += 1
                    latencies.append(stamp - started)
        connection.send({"completed": completed, "latencies": latencies, "errors": errors})
    except Exception as error:  # reported by the parent, which names the client
        connection.send({"failure": f"{type(error).__name__}: {error}"})


def run_clients(socket_path, targets, window, size, seconds):
    """Runs one client process per target for `seconds`; requests/s and p99 ms over all of them."""
    context = multiprocessing.get_context("fork")
    pipes, processes = [], []
    try:
        for target in targets:
            parent, child = context.Pipe()
            process = context.Process(target=throughput_client, args=(socket_path, target, window, size, child),
                                      daemon=True)
            process.start()
            pipes.append(parent)
            processes.append(process)
        for index, pipe in enumerate(pipes):
            if not pipe.poll(30):
                raise BenchError(f"timed out after 30 s waiting for throughput client {index + 1} to connect to {socket_path}")
            message = pipe.recv()
            if message != "connected":
                raise BenchError(f"throughput client {index + 1} could not connect to {socket_path}: {message}")
        start_at = now_ns() + 200_000_000
        end_at = start_at + int(seconds * 1e9)
        for pipe in pipes:
            pipe.send((start_at, end_at))
        completed, latencies, errors = 0, [], []
        for index, pipe in enumerate(pipes):
            if not pipe.poll(seconds + 120):
                raise BenchError(f"timed out after {seconds + 120:.0f} s waiting for throughput client {index + 1}'s results")
            result = pipe.recv()
            if "failure" in result:
                raise BenchError(f"throughput client {index + 1} failed: {result['failure']}")
            completed += result["completed"]
            latencies += result["latencies"]
            errors += result["errors"]
        if errors:
            raise BenchError(f"the server refused writes during the throughput test: {errors[0]}")
        if not latencies:
            raise BenchError("no write completed during the throughput test")
        return {"rate": completed / seconds, "p99": ms(percentile(latencies, 0.99)), "p50": ms(percentile(latencies, 0.5))}
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join(5)


# ---------------------------------------------------------------------------------------------
# The figure


class ThroughputFigure:
    """Figure 7: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 7: socket throughput -----------------------------------------------------------------

    def throughput(self, run):
        clients = self.options.clients
        for fsync in (False, True):
            label = "fsync" if fsync else "nofsync"
            root = self.fresh_dir(f"socket-{label}")
            targets = [os.path.join(root, f"client{index}.txt") for index in range(clients)]
            for target in targets:
                with open(target, "w") as file:
                    file.write("start\n")
            agent = AgentRun(self, root, {"journal": {"fsync": fsync}}, f"socket-{label}-{run}")
            self.configs["7"] = (f"{clients} client processes ({self.options.client}), {self.options.window} request(s) in flight each, "
                                 f"{self.options.edit_bytes}-byte edits, {self.options.throughput_seconds:.0f} s; defaults otherwise")
            try:
                agent.start()
                result = self.run_clients(agent.socket_path, targets)
            finally:
                agent.stop()
            self.record(f"socket.{label}.rate.agent", result["rate"])
            self.record(f"socket.{label}.p99.agent", result["p99"])
            print(f"  socket, journal.fsync {str(fsync).lower()}: {result['rate']:.0f} writes/s, p50 {result['p50']:.2f} ms, "
                  f"p99 {result['p99']:.2f} ms", flush=True)
        path = os.path.join(self.work, "echo.sock")
        echo = self.floors.echo(path)
        try:
            result = self.run_clients(path, [f"/client{index}" for index in range(clients)])
        finally:
            self.children.stop(echo, 10)
        for label in ("nofsync", "fsync"):
            self.record(f"socket.{label}.rate.echo", result["rate"])
            self.record(f"socket.{label}.p99.echo", result["p99"])
        print(f"  socket, echo floor: {result['rate']:.0f} lines/s, p99 {result['p99']:.2f} ms", flush=True)

    def run_clients(self, socket_path, targets):
        if self.options.client == "python":
            return run_clients(socket_path, targets, self.options.window, self.options.edit_bytes,
                               self.options.throughput_seconds)
        return self.floors.clients(socket_path, targets, self.options.window, self.options.edit_bytes,
                                   self.options.throughput_seconds)
