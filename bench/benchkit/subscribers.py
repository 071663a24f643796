"""Figure 12, the subscribers' side: one agent (watch.settleMs 0, history off: its cost per change is
the same with or without subscribers, and much larger than theirs) on figure 12's repository serving
8 connections subscribed with globs (`subscribe` with `{"glob": [...]}`, each receiving `changes`
notifications), 4 of which match the files written.

  notice       figure 2's method (stamp, open + write + close an existing file, wait for the line
               naming it; --latency-gap-ms between writes) over --sub-writes writes, timed at the
               eighth subscriber (glob `**/f*`, read in this process), the seven others read by a
               process of their own (subscriber_crowd.py); against the same with the eighth alone
  agent CPU    the agent's utime+stime (/proc/PID/stat) over the writes with the 8 subscribers
               minus over as many writes with none (waiting on the agent's `external-change` log
               line instead), divided by writes × 8; each phase ends once every matching
               subscriber has been sent the last write
The three phases (none, the eighth alone, all 8) run in an order that rotates from run to run,
after 50 writes with none to warm the fresh agent up, each once the agent has used no CPU for a
second.
"""
import json
import os
import socket
import subprocess
import sys
import time

from .agent import AgentRun
from .common import BenchError, ms, now_ns, percentile
from .processes import LineReader, cpu_ms, log_event

# The seven others: four that match no file written (other languages' sources), three that do.
CROWD_GLOBS = ["**/*.py", "**/*.txt", "**/*.{ts,tsx}", "**/*.md", "t*/**", "**/f[0-9]*", "**/*[0-9]"]
CROWD_MATCHING = 3
EIGHTH_GLOB = "**/f*"
PHASES = ("none", "one", "eight")


class SubscriberFigure:
    """Figure 12's subscriber rows: methods of Bench (suite.py); `self` is a Bench."""

    def subscribers_figure(self, run):
        self.git_setup()
        repo = self.git_repository
        agent = AgentRun(self, repo, {"watch": {"settleMs": 0}, "history": {"enabled": False}}, f"subscribers-{run}")
        self.configs["12 subscribers"] = (f"watch.settleMs 0, history.enabled false (what history costs per change, "
                                          f"the same with or without subscribers, would drown theirs in noise), on "
                                          f"the repository of the git rows after 50 writes to warm up; the eighth's glob "
                                          f"{EIGHTH_GLOB}, the others {' '.join(CROWD_GLOBS)} ({CROWD_MATCHING} of them "
                                          f"matching); {self.options.sub_writes} writes a phase, "
                                          f"{self.options.latency_gap_ms:g} ms apart")
        try:
            agent.start()
            # What a fresh agent does once, after `ready` and at its first changes, is no subscriber's.
            self.subscribers_none(agent, run, warm_up=True)
            shift = run % len(PHASES)
            for phase in PHASES[shift:] + PHASES[:shift]:
                self.agent_quiet(agent)
                getattr(self, f"subscribers_{phase}")(agent, run)
            cpu = self.samples_this_run
            per = (cpu["eight"] - cpu["none"]) * 1000 / (self.options.sub_writes * 8)
            self.record("subs.cpu-us", per)
            self.extra["subs.cpu-ms.none"].append(cpu["none"])
            self.extra["subs.cpu-ms.eight"].append(cpu["eight"])
            print(f"  agent CPU over {self.options.sub_writes} writes: {cpu['none']:.0f} ms with no subscriber, "
                  f"{cpu['eight']:.0f} ms with 8: {per:.2f} µs per change per subscriber", flush=True)
        finally:
            agent.stop()

    @staticmethod
    def agent_quiet(agent, timeout=60.0):
        """Waits until the agent has used no CPU for a second (what it does after a phase, or after
        `ready`, is no phase's), up to `timeout` s, then goes on."""
        deadline = time.monotonic() + timeout
        last = cpu_ms(agent.process.pid)
        while time.monotonic() < deadline:
            time.sleep(1)
            now = cpu_ms(agent.process.pid)
            if now == last:
                return
            last = now
        print(f"  the agent was still busy after {timeout:.0f} s; measuring anyway", flush=True)

    @property
    def samples_this_run(self):
        if not hasattr(self, "_subscriber_cpu"):
            self._subscriber_cpu = {}
        return self._subscriber_cpu

    def subscriber_targets(self, offset):
        count = self.options.sub_writes
        return [self.git_names[(offset * 104729 + index * 7919) % len(self.git_names)] for index in range(count)]

    def subscriber_writes(self, agent, targets, wait):
        """Writes each target (figure 2's way) and calls wait(relative) until it is noticed; ms each."""
        samples = []
        for index, relative in enumerate(targets):
            path = os.path.join(self.git_repository, relative)
            content = f"subscribers {index} {now_ns()}\n".encode()
            started = now_ns()
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, content)
            os.close(fd)
            stamp = wait(relative)
            samples.append(ms(stamp - started))
            if self.options.latency_gap_ms:
                time.sleep(self.options.latency_gap_ms / 1000)
        return samples

    def subscribers_none(self, agent, run, warm_up=False):
        targets = self.subscriber_targets(3 * run + 1)[:50 if warm_up else None]
        agent.log.drain()
        before = cpu_ms(agent.process.pid)

        def wait(relative):
            return agent.log.wait_for(log_event("external-change", path=relative), 30,
                                      f"the agent's `external-change` line for {relative}")[1]

        self.subscriber_writes(agent, targets, wait)
        if not warm_up:
            self.samples_this_run["none"] = cpu_ms(agent.process.pid) - before

    def eighth(self, agent):
        """The timed subscriber: a connection subscribed with EIGHTH_GLOB, read by a LineReader."""
        client = agent.client()
        answer = client.call("subscribe", glob=[EIGHTH_GLOB])
        if not answer.get("subscribed"):
            raise BenchError(f"the agent answered `subscribe` with {answer}")
        if client.buffer.strip():
            raise BenchError(f"the eighth subscriber was sent something before any write: {client.buffer[:200]!r}")
        # From here on the connection's lines are read by a thread that stamps them, blocking (a
        # socket with a timeout is non-blocking underneath, which the reader would take for its end).
        client.sock.settimeout(None)
        return client, LineReader(client.sock.fileno(), "the eighth subscriber")

    @staticmethod
    def notification_for(relative):
        def match(line):
            message = json.loads(line)
            if message.get("method") != "changes":
                return None
            return True if any(change.get("path") == relative for change in message["params"].get("changes", [])) else None
        return match

    def timed_phase(self, agent, run, label, offset, crowd=None):
        client, reader = self.eighth(agent)
        try:
            targets = self.subscriber_targets(offset)
            agent.log.drain()
            before = cpu_ms(agent.process.pid)

            def wait(relative):
                return reader.wait_for(self.notification_for(relative), 30,
                                       f"a `changes` notification naming {relative}")[1]

            samples = self.subscriber_writes(agent, targets, wait)
            if crowd is not None:
                crowd.stdin.write(f"seen {targets[-1]} {CROWD_MATCHING}\n")
                crowd.stdin.flush()
                answer = crowd.stdout.readline().strip()
                if answer != "seen":
                    raise BenchError(f"the seven other subscribers were not all sent {targets[-1]}: {answer or 'no answer'}")
            cpu = cpu_ms(agent.process.pid) - before
            p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
            self.record(f"subs.{label}.p50", p50)
            self.record(f"subs.{label}.p99", p99)
            print(f"  {label} subscriber(s): notice p50 {p50:.2f} ms p99 {p99:.2f} ms ({len(samples)} writes), "
                  f"agent CPU {cpu:.0f} ms", flush=True)
            return cpu
        finally:
            self.close_read(client, reader)

    @staticmethod
    def close_read(client, reader):
        """Ends a connection read by a LineReader: shut down, then closed once the reader has seen its
        end. Closed at once, its descriptor's number would be reused by the next connection while the
        reader's thread still reads it, and would take that connection's lines."""
        try:
            client.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            while True:
                reader.wait_for(lambda line: None, 10, "the end of the connection")
        except BenchError:
            pass
        client.close()

    def subscribers_one(self, agent, run):
        self.timed_phase(agent, run, "one", 3 * run + 2)

    def subscribers_eight(self, agent, run):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subscriber_crowd.py")
        crowd = self.children.spawn("the seven other subscribers", [sys.executable, script, agent.socket_path,
                                                                      *CROWD_GLOBS],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            ready = crowd.stdout.readline().strip()
            if ready != "ready":
                raise BenchError(f"the seven other subscribers did not start (exit {crowd.poll()}): {ready!r}")
            self.samples_this_run["eight"] = self.timed_phase(agent, run, "eight", 3 * run + 3, crowd)
        finally:
            crowd.stdin.close()
            self.children.stop(crowd, 10)
