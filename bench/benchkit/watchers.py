"""Figures 1, 2 and 6: watch set-up, notice latency and idle cost, measured in one pass per
watcher (the agent, inotifywait, watchman) on the generated tree, in an order rotating from run to
run: each watcher is started (figure 1), left idle (figure 6), then timed noticing external writes
(figure 2).
"""
import json
import os
import time

from .agent import AgentRun
from .common import BenchError, PeerUnavailable, ms, now_ns, percentile
from .peers import Inotifywait, Watchman
from .processes import idle_cost, log_event


class WatcherFigures:
    """Figures 1, 2 and 6: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figures 1, 2, 6: the watchers ------------------------------------------------------------

    def watchers(self, run):
        tools = ["agent", "inotifywait", "watchman"]
        shift = run % len(tools)
        for tool in tools[shift:] + tools[:shift]:
            getattr(self, f"watch_{tool}")(run)

    def watch_agent(self, run):
        def default():
            agent = AgentRun(self, self.tree, {}, f"watch-default-{run}")
            self.configs["2 default"] = f"watch.settleMs {json.dumps(agent.effective['watch']['settleMs'])}"
            try:
                setup = agent.start()
                self.record("setup.agent", setup)
                self.record("setup.cpu.agent", agent.setup_cpu_ms)
                self.extra["setup.agent.own-ms"].append(agent.ready.get("ms"))
                print(f"  agent set-up {setup:.0f} ms, CPU {agent.setup_cpu_ms:.0f} ms (its own ms={agent.ready.get('ms')}, dirs={agent.ready.get('dirs')}, "
                      f"files={agent.ready.get('files')}, watches={agent.ready.get('watches')})", flush=True)
                if self.wanted(6):
                    self.measure_idle(agent.process, "agent", "the agent", "agent", agent.log, shows_window=True)
                if self.wanted(2):
                    self.agent_latency(agent, "default", run)
            finally:
                agent.stop()

        def settle_zero():
            agent = AgentRun(self, self.tree, {"watch": {"settleMs": 0}}, f"watch-settle0-{run}")
            try:
                agent.start()
                if self.wanted(6):
                    # Every watcher's latency is measured after the same idle window (a wake-up after
                    # a long idle is slower on this machine, for inotifywait too), which adds samples.
                    self.measure_idle(agent.process, "agent", "the agent", "agent (settle0)", agent.log, shows_window=True)
                self.agent_latency(agent, "settle0", run)
            finally:
                agent.stop()

        self.figure((1, 2, 6), "agent set-up, idle cost and notice latency at the default settleMs", default)
        self.figure(2, "agent notice latency, settleMs 0", settle_zero)

    def measure_idle(self, process, metric, name, label, log=None, shows_window=False):
        """Figure 6 for one watcher: CPU ticks, wake-ups and CPU time over the idle window, and RSS,
        recorded as idle.ticks.METRIC, idle.wakeups.METRIC (idle.wakeups-own.METRIC without
        libdispatch's manager thread), idle.cpu-us.METRIC and idle.rss.METRIC, printed under LABEL."""
        idle = idle_cost(process, self.options.idle_quiet, self.options.idle_seconds, name, log)
        self.record(f"idle.ticks.{metric}", idle["ticks"])
        self.record(f"idle.wakeups.{metric}", idle["wakeups"])
        self.record(f"idle.wakeups-own.{metric}", idle["wakeups_own"])
        self.record(f"idle.cpu-us.{metric}", idle["cpu_us"])
        self.record(f"idle.rss.{metric}", idle["rss_mb"])
        window = f" / {self.options.idle_seconds:.0f} s" if shows_window else ""
        threads = ", ".join(f"{thread} {count}" for thread, (count, _) in sorted(idle["woken"].items())) or "none"
        print(f"  {label} idle {idle['ticks']} ticks{window}, {idle['wakeups']} wake-ups ({threads}), "
              f"{idle['cpu_us']:.0f} µs on a CPU, RSS {idle['rss_mb']:.1f} MB", flush=True)

    def agent_latency(self, agent, label, run):
        def matcher(relative, path):
            return log_event("external-change", path=relative)

        targets = self.latency_targets(7 + run * 3 + (1 if label == "default" else 0))
        samples = self.notice_latency(targets, agent.log, matcher, "the agent's `external-change` line")
        self.record_latency(f"latency.{label}.agent", samples, f"agent ({label})")

    def record_latency(self, metric, samples, name):
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        self.record(metric + ".p50", p50)
        self.record(metric + ".p99", p99)
        print(f"  {name} notice latency p50 {p50:.2f} ms p99 {p99:.2f} ms ({len(samples)} writes)", flush=True)

    def watch_inotifywait(self, run):
        def body():
            watcher = Inotifywait(self)
            try:
                setup = watcher.start(self.tree)
                self.record("setup.inotifywait", setup)
                self.record("setup.cpu.inotifywait", watcher.setup_cpu_ms)
                print(f"  inotifywait set-up {setup:.0f} ms, CPU {watcher.setup_cpu_ms:.0f} ms", flush=True)
                if self.wanted(6):
                    self.measure_idle(watcher.process, "inotifywait", "inotifywait", "inotifywait")
                if self.wanted(2):
                    def matcher(relative, path):
                        return lambda line: True if line.startswith(path + " ") else None

                    samples = self.notice_latency(self.latency_targets(11 + run), watcher.events, matcher,
                                                  "inotifywait's event line")
                    self.record_latency("latency.inotifywait", samples, "inotifywait")
            finally:
                watcher.stop()

        if self.wanted(1, 2, 6):
            self.peer_figure("inotifywait", body)

    def watch_watchman(self, run):
        def body():
            watcher = Watchman(self)
            try:
                watcher.start_daemon()
                self.versions["watchman"] = watcher.version
                setup = watcher.setup(self.tree, self.file_count)
                self.record("setup.watchman", setup)
                self.record("setup.cpu.watchman", watcher.setup_cpu_ms)
                print(f"  watchman set-up {setup:.0f} ms (watch + first query), CPU {watcher.setup_cpu_ms:.0f} ms", flush=True)
                if self.wanted(6):
                    self.measure_idle(watcher.process, "watchman", "watchman", "watchman")
                if self.wanted(2):
                    watcher.subscribe(self.tree)

                    def matcher(relative, path):
                        def match(line):
                            message = json.loads(line)
                            return True if message.get("subscription") == "bench" and relative in message.get("files", []) else None
                        return match

                    samples = self.notice_latency(self.latency_targets(13 + run), watcher.replies, matcher,
                                                  "watchman's subscription message")
                    self.record_latency("latency.watchman", samples, "watchman")
            finally:
                watcher.stop()

        if self.wanted(1, 2, 6):
            self.peer_figure("watchman", body)

    def peer_figure(self, peer, body):
        if peer in self.unavailable:
            return
        try:
            body()
        except PeerUnavailable as reason:
            self.unavailable[peer] = str(reason)
            print(f"  {peer}: unavailable: {reason}", flush=True)
        except BenchError as error:
            print(f"  {peer} FAILED: {error}", flush=True)
            self.failures.append((f"1/2/6 {peer}", str(error)))

    def latency_targets(self, offset):
        """Distinct existing files spread over the tree, one per latency write."""
        count = self.options.latency_writes
        step = max(1, len(self.dirs) // count)
        chosen = []
        for index in range(count):
            directory = self.dirs[(offset + index * step) % len(self.dirs)]
            chosen.append(f"{directory}/f{(offset + index) % self.files_per_dir}")
        return chosen

    def notice_latency(self, targets, reader, matcher, what):
        """For each target: stamp, write it, wait for the line naming it; ms per write."""
        samples = []
        for index, relative in enumerate(targets):
            reader.drain()
            path = os.path.join(self.tree, relative)
            content = f"edit {index} {time.time_ns()}\n".encode()
            started = now_ns()
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, content)
            os.close(fd)
            _, stamp = reader.wait_for(matcher(relative, path), 30, f"{what} for {relative}")
            samples.append(ms(stamp - started))
            time.sleep(self.options.latency_gap_ms / 1000)
        return samples
