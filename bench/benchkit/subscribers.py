"""Figure 12, the subscribers' side: one agent (watch.settleMs 0, history off: its cost per change is
the same with or without subscribers, and much larger than theirs) on figure 12's repository serving
8 connections subscribed with globs (`subscribe` with `{"glob": [...]}`, each receiving `changes`
notifications), 4 of which match the files written.

  notice       figure 2's method (stamp, open + write + close an existing file, wait for the line
               naming it; --latency-gap-ms between writes) over --sub-writes writes, timed at the
               eighth subscriber (glob `**/f*`, read in this process), the seven others read by a
               process of their own (subscriber_crowd.py); against the same with the eighth alone
  agent CPU    the agent's utime+stime (/proc/PID/stat) over --sub-writes writes with the 8
               subscribers minus over as many writes with none (waiting on the agent's
               `external-change` log line instead), divided by writes × 8. The writes go in
               BLOCKS blocks of each, alternating (none, 8, none, 8, ...), so that a change in the
               machine's load meets both alike; each block ends once every matching subscriber has
               been sent its last write. Measured twice: with figure 2's writes (the blocks that
               give the notice rows), and with writes made the way `sed -i` makes them (a new file
               renamed over the old), the target's row: a file written in place is still open when
               the agent settles it at settleMs 0, and the agent then looks through every process's
               open files in /proc for its writer, about 1 ms of CPU per change that varies with the
               machine's load by more than what 8 subscribers cost
After 50 writes with none to warm the fresh agent up: the eighth alone, then the two sets of
alternating blocks (which kind goes first alternates from run to run), each block once the agent
has used no CPU for a second.
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
BLOCKS = 4
WARM_UP_WRITES = 50


class SubscriberFigure:
    """Figure 12's subscriber rows: methods of Bench (suite.py); `self` is a Bench."""

    def subscribers_figure(self, run):
        self.git_setup()
        repo = self.git_repository
        writes = self.options.sub_writes
        agent = AgentRun(self, repo, {"watch": {"settleMs": 0}, "history": {"enabled": False}}, f"subscribers-{run}")
        self.configs["12 subscribers"] = (f"watch.settleMs 0, history.enabled false (what history costs per change, "
                                          f"the same with or without subscribers, would drown theirs in noise), on "
                                          f"the repository of the git rows after {WARM_UP_WRITES} writes to warm up; "
                                          f"the eighth's glob {EIGHTH_GLOB}, the others {' '.join(CROWD_GLOBS)} "
                                          f"({CROWD_MATCHING} of them matching); {writes} writes with the eighth alone, "
                                          f"{writes} with none and {writes} with all 8 in {BLOCKS} alternating blocks "
                                          f"each, twice (figure 2's writes, then sed -i's), "
                                          f"{self.options.latency_gap_ms:g} ms apart")
        try:
            agent.start()
            # What a fresh agent does once, after `ready` and at its first changes, is no subscriber's.
            self.writes_without_subscribers(agent, self.subscriber_targets(run, 0, WARM_UP_WRITES))
            self.agent_quiet(agent)
            alone, _ = self.writes_with_subscribers(agent, self.subscriber_targets(run, 1, writes), None)
            self.record_notice("one", alone, "the eighth alone")
            eight, logged, cpu = self.alternating_blocks(agent, run, 2, replace=False)
            self.record_notice("eight", eight, "the eighth of 8")
            self.record_notice("log", logged, "no subscriber, the agent's `external-change` log line")
            self.record_cpu("subs.cpu-us.in-place", cpu, "figure 2's writes")
            _, _, cpu = self.alternating_blocks(agent, run, 2 + 2 * BLOCKS, replace=True)
            self.record_cpu("subs.cpu-us", cpu, "sed -i's writes")
        finally:
            agent.stop()

    def alternating_blocks(self, agent, run, first_block, replace):
        """--sub-writes writes with no subscriber and as many with all 8, in BLOCKS alternating blocks
        of each (which goes first alternates from run to run): (ms per write at the eighth, ms per
        write to the log line with none, {"none": CPU ms, "eight": CPU ms, "writes": per kind})."""
        per_block = max(1, self.options.sub_writes // BLOCKS)
        cpu = {"none": 0.0, "eight": 0.0, "writes": per_block * BLOCKS}
        eight, logged = [], []
        kinds = ["none", "eight"] if run % 2 == 0 else ["eight", "none"]
        for block in range(BLOCKS):
            for kind in kinds:
                targets = self.subscriber_targets(run, first_block + 2 * block + (kind == "eight"), per_block)
                self.agent_quiet(agent)
                if kind == "none":
                    samples, used = self.writes_without_subscribers(agent, targets, replace)
                    logged += samples
                else:
                    samples, used = self.with_crowd(agent, targets, replace)
                    eight += samples
                cpu[kind] += used
        return eight, logged, cpu

    def record_cpu(self, metric, cpu, writes):
        per = (cpu["eight"] - cpu["none"]) * 1000 / (cpu["writes"] * 8)
        self.record(metric, per)
        self.extra[f"{metric}.cpu-ms.none"].append(cpu["none"])
        self.extra[f"{metric}.cpu-ms.eight"].append(cpu["eight"])
        print(f"  agent CPU over {cpu['writes']} {writes}: {cpu['none']:.0f} ms with no subscriber, "
              f"{cpu['eight']:.0f} ms with 8: {per:.2f} µs per change per subscriber", flush=True)

    def record_notice(self, label, samples, name):
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        self.record(f"subs.{label}.p50", p50)
        self.record(f"subs.{label}.p99", p99)
        print(f"  {name}: notice p50 {p50:.2f} ms p99 {p99:.2f} ms ({len(samples)} writes)", flush=True)

    @staticmethod
    def agent_quiet(agent, timeout=60.0):
        """Waits until the agent has used no CPU for a second (what it does after a block, or after
        `ready`, is no block's), up to `timeout` s, then goes on."""
        deadline = time.monotonic() + timeout
        last = cpu_ms(agent.process.pid)
        while time.monotonic() < deadline:
            time.sleep(1)
            now = cpu_ms(agent.process.pid)
            if now == last:
                return
            last = now
        print(f"  the agent was still busy after {timeout:.0f} s; measuring anyway", flush=True)

    def subscriber_targets(self, run, block, count):
        """`count` tracked files, spread over the tree, different from block to block and run to run."""
        offset = (run * 31 + block) * 104729
        return [self.git_names[(offset + index * 7919) % len(self.git_names)] for index in range(count)]

    def subscriber_writes(self, targets, wait, replace=False):
        """Writes each target and calls wait(relative) until it is noticed; ms each. Figure 2's way
        (open with O_TRUNC, write, close), or with `replace` the way `sed -i` does: a new file named
        `sed??????` beside it (a name the agent ignores), written, closed and renamed over it."""
        samples = []
        for index, relative in enumerate(targets):
            path = os.path.join(self.git_repository, relative)
            content = f"subscribers {index} {now_ns()}\n".encode()
            started = now_ns()
            if replace:
                temporary = os.path.join(os.path.dirname(path), f"sed{index % 1_000_000:06d}")
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.write(fd, content)
                os.close(fd)
                os.rename(temporary, path)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
                os.write(fd, content)
                os.close(fd)
            stamp = wait(relative)
            samples.append(ms(stamp - started))
            if self.options.latency_gap_ms:
                time.sleep(self.options.latency_gap_ms / 1000)
        return samples

    def writes_without_subscribers(self, agent, targets, replace=False):
        """(ms per write to the agent's log line, the agent's CPU ms) over the writes, each waited
        for on the agent's log."""
        agent.log.drain()
        before = cpu_ms(agent.process.pid)

        def wait(relative):
            return agent.log.wait_for(log_event("external-change", path=relative), 30,
                                      f"the agent's `external-change` line for {relative}")[1]

        samples = self.subscriber_writes(targets, wait, replace)
        return samples, cpu_ms(agent.process.pid) - before

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

    def writes_with_subscribers(self, agent, targets, crowd, replace=False):
        """(ms per write at the eighth, the agent's CPU ms) with the eighth subscribed, and the crowd
        when given (then waited for until it has been sent the last write)."""
        client, reader = self.eighth(agent)
        try:
            agent.log.drain()
            before = cpu_ms(agent.process.pid)

            def wait(relative):
                return reader.wait_for(self.notification_for(relative), 30,
                                       f"a `changes` notification naming {relative}")[1]

            samples = self.subscriber_writes(targets, wait, replace)
            if crowd is not None:
                crowd.stdin.write(f"seen {targets[-1]} {CROWD_MATCHING}\n")
                crowd.stdin.flush()
                answer = crowd.stdout.readline().strip()
                if answer != "seen":
                    raise BenchError(f"the seven other subscribers were not all sent {targets[-1]}: {answer or 'no answer'}")
            return samples, cpu_ms(agent.process.pid) - before
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

    def with_crowd(self, agent, targets, replace):
        """writes_with_subscribers with the seven others subscribed (subscriber_crowd.py) first."""
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "subscriber_crowd.py")
        crowd = self.children.spawn("the seven other subscribers", [sys.executable, script, agent.socket_path,
                                                                      *CROWD_GLOBS],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            ready = crowd.stdout.readline().strip()
            if ready != "ready":
                raise BenchError(f"the seven other subscribers did not start (exit {crowd.poll()}): {ready!r}")
            return self.writes_with_subscribers(agent, targets, crowd, replace)
        finally:
            crowd.stdin.close()
            self.children.stop(crowd, 10)
