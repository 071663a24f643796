"""bench/benchkit/scaling.py — figure 10 of bench/compare: how watch set-up time and memory grow with the tree.

Figure 1 times set-up on one tree of 100,000 files. This figure repeats that on trees of several
sizes (--scaling-sizes, default 10,000, 100,000 and 1,000,000 files) in two shapes
(--scaling-shapes): shallow, figure 1's (a tenth as many directories, two levels, short names), and
deep, drawn like a real project's (fan-out 10 over five levels at 1,000,000 files, names
`f<N>.txt`; scaling_trees.TreeSize), so that how each watcher's cost grows with the number of files,
and whether it depends on how the tree is drawn, is visible at a glance:

  agent        `autosave run` with default settings; set-up = spawn -> its `ready` log line
  inotifywait  `inotifywait -r -m`; set-up = spawn -> "Watches established."
  watchman     a private daemon; set-up = `watch` + the first query (every file's name) answered
  floor        bench/scan-floor.c: only the system calls a recursive watch needs, on the agent's
               threads; set-up = spawn -> the end of its walk (see scan_floor.py). No RSS.

and the RSS (VmRSS) of each (watchman's: its daemon's) after --idle-quiet seconds of quiet after
set-up: the agent gives start-up's memory back right after `ready`, so RSS read at `ready` would
overstate what it holds while it watches. Every size is measured --runs times, the tools
one after another in an order that rotates from run to run; figures are medians.

A tree of 1,000,000 files takes minutes to make, so trees are made once into a cache directory
(--tree-cache) and reused by later runs (scaling_trees.py).

Results: rows in bench/compare's figures table at the largest size measured, a "Scaling
(figure 10)" section in results.md (one line per size), and a two-panel log-log plot, scaling.png
beside results.md, drawn by scaling_plot.py under Debian's /usr/bin/python3, which gets matplotlib
from apt: the python3 that runs the benchmark need not have it.

The suite (suite.py) makes a ScalingFigure when figure 10 is wanted. The figure uses the watchers
of figures 1-9 (AgentRun from agent.py, Inotifywait and Watchman from peers.py), rss_kib
(processes.py), filesystem_of (machine.py) and the errors (BenchError, PeerUnavailable) of common.py.
"""

import os
import statistics
import time

from .agent import AgentRun
from .common import BenchError, PeerUnavailable
from .machine import filesystem_of
from .peers import Inotifywait, Watchman
from .processes import rss_kib
from .scaling_plot import PlotFailed, draw_plot_in_subprocess
from .scaling_trees import TreeCache, TreeCacheError, TreeSize, clear_state_dir, watch_shortfall
from .scan_floor import ScanFloor

TOOLS = ("agent", "inotifywait", "watchman", "floor")
TOOL_LABELS = {"agent": "autosave agent", "inotifywait": "inotifywait -r", "watchman": "watchman (watch + first query)",
               "floor": "system-call floor (C)"}
TOOL_COLOURS = {"agent": "tab:blue", "inotifywait": "tab:orange", "watchman": "tab:green", "floor": "tab:gray"}

# The agent's RSS targets at the largest size (the figures table judges the agent's median against
# them): the shallow tree's, and the deep tree's, whose names and paths are longer.
RSS_TARGET_MB = 64
DEEP_RSS_TARGET_MB = 48


# ---------------------------------------------------------------------------------------------
# The figure


def setup_timeout(size):
    """Seconds to wait for one tool's set-up: generous, since watchman's first query at 1,000,000
    files can take a minute on a loaded machine."""
    return max(300.0, size.files / 1000)


def paired_ratio(agent_values, peer_values):
    """The median of the per-run ratios agent/peer when every run measured both (as bench/compare's
    table has it: steadier on a shared machine), else the ratio of the medians; None without both."""
    if not agent_values or not peer_values or not all(peer_values):
        return None
    if len(agent_values) == len(peer_values):
        return statistics.median(a / p for a, p in zip(agent_values, peer_values))
    return statistics.median(agent_values) / statistics.median(peer_values)


class ScalingFigure:
    """Figure 10 within one bench/compare run: measures every size, then draws the plot; its results
    are read by bench/compare through table_rows() and results_section().

    Samples go into the bench's samples as `scaling.<files>.setup.<tool>` (ms) and
    `scaling.<files>.rss.<tool>` (MB), one per run; set-up CPU time into its extra values.
    """

    def __init__(self, bench):
        self.bench = bench
        self.options = bench.options
        self.cache = TreeCache(self.options.tree_cache)
        self.sizes = [TreeSize.for_files(files, shape) for shape in self.options.scaling_shapes
                      for files in self.options.scaling_sizes]
        self.trees = {}  # TreeSize -> how its tree came to be
        self.skipped = {}  # TreeSize -> why it was not measured
        self.state_dir = ".autosave"  # the agent's, until its effective config says otherwise
        self.plot_skipped = None  # why the plot was not drawn, once it was not
        self.floor = None  # the compiled ScanFloor, once the floor is first measured

    def key(self, size, quantity, tool):
        shape = "deep." if size.shape == "deep" else ""
        return f"scaling.{shape}{size.files}.{quantity}.{tool}"

    def samples(self, size, quantity, tool):
        return self.bench.samples.get(self.key(size, quantity, tool), [])

    # -- measuring ----------------------------------------------------------------------------------

    def run(self):
        self.bench.configs["10"] = (f"sizes {', '.join(f'{files:,}' for files in self.options.scaling_sizes)} files, "
                                    f"shapes {', '.join(self.options.scaling_shapes)}, agent defaults, RSS after {self.options.idle_quiet:g} s of "
                                    f"quiet, trees cached in {self.cache.directory}")
        for size in self.sizes:
            self.measure_size(size)
        self.draw()

    def measure_size(self, size):
        print(f"  figure 10: {size.label} in {size.dirs:,} directories", flush=True)
        shortfall = watch_shortfall(size)
        if shortfall:
            self.skipped[size] = shortfall
            print(f"    skipped for every tool: {shortfall}", flush=True)
            return
        try:
            tree, how = self.cache.tree(size, self.state_dir)
        except TreeCacheError as error:
            self.skipped[size] = "its tree could not be made"
            print(f"    FAILED: {error}", flush=True)
            self.bench.failures.append((f"10 ({size.label})", str(error)))
            return
        self.trees[size] = how
        print(f"    tree {tree}: {how}", flush=True)
        for run in range(self.options.runs):
            shift = run % len(TOOLS)
            for tool in TOOLS[shift:] + TOOLS[:shift]:
                self.measure_tool(tool, size, tree, run)

    def measure_tool(self, tool, size, tree, run):
        """One tool's set-up and RSS on the tree; a failure is recorded and the figure goes on."""
        if tool in self.bench.unavailable:
            return
        clear_state_dir(tree, self.state_dir)
        try:
            getattr(self, f"measure_{tool}")(size, tree, run)
        except PeerUnavailable as reason:
            self.bench.unavailable[tool] = str(reason)
            print(f"    {tool}: unavailable: {reason}", flush=True)
        except BenchError as error:
            print(f"    {tool} FAILED: {error}", flush=True)
            self.bench.failures.append((f"10 {tool} ({size.label}, run {run + 1})", str(error)))

    def record(self, size, tool, setup, rss, cpu):
        self.bench.record(self.key(size, "setup", tool), setup)
        if rss is not None:
            self.bench.record(self.key(size, "rss", tool), rss)
        self.bench.extra[self.key(size, "setup.cpu", tool)].append(round(cpu))

    def settled_rss_mb(self, process, name, log=None):
        """VmRSS after --idle-quiet seconds of quiet: what the tool holds while it watches."""
        time.sleep(self.options.idle_quiet)
        if process.poll() is not None:
            tail = f"; last lines:\n    {log.recent()}" if log else ""
            raise BenchError(f"{name} (pid {process.pid}) exited with status {process.returncode} "
                             f"in the {self.options.idle_quiet:g} s before its RSS was read{tail}")
        return rss_kib(process.pid) / 1024

    def measure_agent(self, size, tree, run):
        agent = AgentRun(self.bench, tree, {}, f"scaling-{size.shape}-{size.files}-{run}")
        # The agent makes its state directory inside the root: the effective config names it.
        self.state_dir = agent.effective.get("stateDir", self.state_dir)
        clear_state_dir(tree, self.state_dir)
        try:
            setup = agent.start(setup_timeout(size))
            rss = self.settled_rss_mb(agent.process, "the agent", agent.log)
            self.record(size, "agent", setup, rss, agent.setup_cpu_ms)
            self.bench.extra[self.key(size, "setup.agent", "own-ms")].append(agent.ready.get("ms"))
            print(f"    agent set-up {setup:.0f} ms, CPU {agent.setup_cpu_ms:.0f} ms (its own ms={agent.ready.get('ms')}, "
                  f"dirs={agent.ready.get('dirs')}, files={agent.ready.get('files')}, "
                  f"watches={agent.ready.get('watches')}), RSS {rss:.1f} MB", flush=True)
        finally:
            agent.stop()

    def measure_inotifywait(self, size, tree, run):
        watcher = Inotifywait(self.bench)
        try:
            setup = watcher.start(tree, setup_timeout(size))
            rss = self.settled_rss_mb(watcher.process, "inotifywait")
            self.record(size, "inotifywait", setup, rss, watcher.setup_cpu_ms)
            print(f"    inotifywait set-up {setup:.0f} ms, CPU {watcher.setup_cpu_ms:.0f} ms, RSS {rss:.1f} MB", flush=True)
        finally:
            watcher.stop()

    def measure_watchman(self, size, tree, run):
        watcher = Watchman(self.bench)
        try:
            watcher.start_daemon()
            self.bench.versions["watchman"] = watcher.version
            setup = watcher.setup(tree, size.files, setup_timeout(size))
            rss = self.settled_rss_mb(watcher.process, "the watchman daemon")
            self.record(size, "watchman", setup, rss, watcher.setup_cpu_ms)
            print(f"    watchman set-up {setup:.0f} ms (watch + first query), CPU {watcher.setup_cpu_ms:.0f} ms, "
                  f"RSS {rss:.1f} MB", flush=True)
        finally:
            if watcher.process is not None:
                watcher.stop()

    def measure_floor(self, size, tree, run):
        if self.floor is None:
            self.floor = ScanFloor(self.bench)
        setup, cpu, files = self.floor.run(tree, setup_timeout(size))
        if files != size.files:
            raise BenchError(f"the set-up floor counted {files:,} files in {tree}, not {size.files:,}")
        self.record(size, "floor", setup, None, cpu)
        print(f"    floor set-up {setup:.0f} ms, CPU {cpu:.0f} ms", flush=True)

    # -- reporting ----------------------------------------------------------------------------------

    def largest_measured(self, shape="shallow"):
        """The largest size of `shape` any tool was measured at (the largest asked for when none
        was; None when the shape was not asked for)."""
        sizes = [size for size in self.sizes if size.shape == shape]
        measured = [size for size in sizes
                    if any(self.samples(size, quantity, tool) for quantity in ("setup", "rss") for tool in TOOLS)]
        return max(measured or sizes, key=lambda size: size.files, default=None)

    def table_rows(self):
        """bench/compare's figures-table rows for the largest size measured of each shape (see its
        table_rows)."""
        rows = []
        for shape, target in (("shallow", RSS_TARGET_MB), ("deep", DEEP_RSS_TARGET_MB)):
            size = self.largest_measured(shape)
            if size is None:
                continue
            files = size.label
            setup, rss = (lambda tool, size=size: self.key(size, "setup", tool)), \
                (lambda tool, size=size: self.key(size, "rss", tool))
            rows += [
                ("10", f"set-up, {files}", "ms", setup("agent"), setup("inotifywait"), "inotifywait -r",
                 "≤ 0.30 × peer", lambda a, r: r <= 0.30),
                ("10", f"set-up, {files}", "ms", setup("agent"), setup("watchman"), "watchman watch+query",
                 "≤ 0.10 × peer", lambda a, r: r <= 0.10),
                ("10", f"set-up, {files}", "ms", setup("agent"), setup("floor"), "system-call floor (C)",
                 "≤ 1.15 × peer", lambda a, r: r <= 1.15),
                ("10", f"RSS, {files} watched", "MB", rss("agent"), rss("inotifywait"), "inotifywait",
                 f"≤ {target} MB", lambda a, r, target=target: a <= target),
                ("10", f"RSS, {files} watched", "MB", rss("agent"), rss("watchman"), "watchman",
                 f"≤ {target} MB", lambda a, r, target=target: a <= target),
            ]
        return rows

    def median(self, size, quantity, tool):
        values = self.samples(size, quantity, tool)
        return statistics.median(values) if values else None

    def results_section(self):
        """The "Scaling (figure 10)" section of results.md: one line per size, the plot, the trees."""

        def value(number, digits=0):
            return "n/a" if number is None else f"{number:,.{digits}f}"

        def ratio(size, peer):
            found = paired_ratio(self.samples(size, "setup", "agent"), self.samples(size, "setup", peer))
            return "—" if found is None else f"{found:.2f}"

        lines = ["| shape | files | dirs | agent set-up ms | inotifywait ms | ratio | watchman ms | ratio | floor ms | ratio | "
                 "agent RSS MB | inotifywait MB | watchman MB |",
                 "|-------|------:|-----:|----------------:|---------------:|------:|------------:|------:|---------:|------:|"
                 "-------------:|---------------:|------------:|"]
        for size in self.sizes:
            if size in self.skipped:
                lines.append(f"| {size.shape} | {size.files:,} | {size.dirs:,} | skipped | | | | | | | | | |")
                continue
            setup = {tool: self.median(size, "setup", tool) for tool in TOOLS}
            rss = {tool: self.median(size, "rss", tool) for tool in TOOLS}
            lines.append(f"| {size.shape} | {size.files:,} | {size.dirs:,} | {value(setup['agent'])} | {value(setup['inotifywait'])} | "
                         f"{ratio(size, 'inotifywait')} | {value(setup['watchman'])} | {ratio(size, 'watchman')} | "
                         f"{value(setup['floor'])} | {ratio(size, 'floor')} | "
                         f"{value(rss['agent'], 1)} | {value(rss['inotifywait'], 1)} | {value(rss['watchman'], 1)} |")
        notes = [f"- {size.label} skipped: {self.skipped[size]}" for size in self.sizes if size in self.skipped]
        notes += [f"- {peer}: n/a, {reason}" for peer, reason in self.bench.unavailable.items() if peer in TOOLS]
        trees = "; ".join(f"{size.label} {how}" for size, how in self.trees.items()) or "none"
        plot = (f"![Figure 10: watch set-up time and RSS against the number of files watched, log-log, one line "
                f"per tool](scaling.png)" if self.plot_skipped is None else f"Plot skipped: {self.plot_skipped}.")
        return "\n".join([
            "## Scaling (figure 10)",
            "",
            f"Watch set-up and RSS on trees of {', '.join(f'{files:,}' for files in self.options.scaling_sizes)} files "
            f"in two shapes: shallow, the tree of figures 1-9 (a tenth as many directories, two levels, files `f0`, "
            f"`f1`, ... in each), and deep, drawn like a real project's (fan-out 10 over as many levels as give a "
            f"tenth as many leaf directories as files: `d1/d12/d123/d1234/d12345` at 1,000,000 files, 111,110 "
            f"directories; files `f<N>.txt` numbered over the whole tree, spread over every directory), median of {self.options.runs} run(s), the tools "
            f"one after another in an order rotating from run to run. Set-up: the agent's spawn to its `ready` line "
            f"(default settings), `inotifywait -r` spawn to \"Watches established.\", watchman `watch` + first query; "
            f"`ratio` is agent/peer (the median of the per-run ratios). The floor (bench/scan-floor.c) walks the "
            f"tree as the agent does with only open, inotify_add_watch, getdents64 and close, on the agent's 16 probe "
            f"threads: what the agent takes beyond it is its own work. RSS: VmRSS after {self.options.idle_quiet:g} s "
            f"of quiet after set-up (watchman: its daemon's).",
            "",
            *lines,
            "",
            *(notes + [""] if notes else []),
            plot,
            "",
            f"Trees: `{self.cache.directory}` ({filesystem_of(self.cache.directory)}), made once and "
            f"reused (a reused tree has every entry stat'ed first: checked against its manifest, and in the caches, so no "
            f"tool reads it from disk alone). This run: "
            f"{trees}.",
            "",
        ])

    def plot_data(self):
        tools = []
        for shape in self.options.scaling_shapes:
            sizes = [size for size in self.sizes if size.shape == shape]
            for tool in TOOLS:
                points = {quantity: [[size.files, self.median(size, quantity, tool)] for size in sizes
                                     if self.median(size, quantity, tool) is not None] for quantity in ("setup", "rss")}
                if points["setup"] or points["rss"]:
                    label = TOOL_LABELS[tool] + (", deep tree" if shape == "deep" else "")
                    tools.append({"tool": tool, "label": label, "colour": TOOL_COLOURS[tool],
                                  "linestyle": "--" if shape == "deep" else "-", **points})
        return {"title": f"Figure 10: cost against tree size (median of {self.options.runs} run(s); "
                         f"solid: shallow tree, dashed: deep tree)",
                "sizes": sorted({size.files for size in self.sizes if size not in self.skipped}),
                "quiet_s": self.options.idle_quiet, "rss_target_mb": RSS_TARGET_MB,
                "deep_rss_target_mb": DEEP_RSS_TARGET_MB if "deep" in self.options.scaling_shapes else None,
                "tools": tools}

    def draw(self):
        """Draws scaling.png beside the results file (in smoke mode, in the temp dir: smoke writes no
        results); a missing matplotlib skips the plot, saying why."""
        if self.options.smoke:
            path = os.path.join(self.bench.work, "scaling.png")
        else:
            path = os.path.join(os.path.dirname(os.path.abspath(self.options.results)), "scaling.png")
            os.makedirs(os.path.dirname(path), exist_ok=True)
        data = self.plot_data()
        try:
            self.plot_skipped = draw_plot_in_subprocess(data, path) if data["tools"] else "no size was measured"
        except PlotFailed as error:
            self.plot_skipped = f"drawing it failed: {error}"
            self.bench.failures.append(("10 plot", str(error)))
        if self.plot_skipped is None:
            print(f"  figure 10: plot drawn: {path}" + (" (smoke: in the temp dir)" if self.options.smoke else ""),
                  flush=True)
        else:
            print(f"  figure 10: plot skipped: {self.plot_skipped}", flush=True)
