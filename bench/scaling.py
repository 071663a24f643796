#!/usr/bin/env python3
"""bench/scaling.py — figure 10 of bench/compare: how watch set-up time and memory grow with the tree.

Figure 1 times set-up on one tree of 100,000 files. This figure repeats that on trees of several
sizes (--scaling-sizes, default 10,000, 100,000 and 1,000,000 files, a tenth as many directories,
the shape of figure 1's tree), so that how each watcher's cost grows is visible at a glance:

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
(--tree-cache) and reused by later runs (TreeCache). Before a reused tree's runs every entry of it is
stat'ed: that checks it against its manifest and loads its inodes into the kernel's caches, so that
no tool pays alone for reading the tree from disk (a tree just made is in the caches already).

Results: rows in bench/compare's figures table at the largest size measured, a "Scaling
(figure 10)" section in results.md (one line per size), and a two-panel log-log plot, scaling.png
beside results.md. The plot is drawn by this file run as a script (`scaling.py plot PNG`, data as
JSON on stdin) under Debian's /usr/bin/python3, which gets matplotlib from apt: the python3 that
runs the benchmark need not have it.

bench/compare imports this module (it puts its own directory on sys.path) and hands it its own
module, whose watchers (AgentRun, Inotifywait, Watchman), rss_kib and errors (BenchError,
PeerUnavailable) the figure uses: the script has no .py name to import it by.
"""
import collections
import datetime
import fcntl
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

from scan_floor import ScanFloor

# Bump when write_tree's shape or contents change: cached trees of an older version are made again.
GENERATOR_VERSION = 1

TOOLS = ("agent", "inotifywait", "watchman", "floor")
TOOL_LABELS = {"agent": "autosave agent", "inotifywait": "inotifywait -r", "watchman": "watchman (watch + first query)",
               "floor": "system-call floor (C)"}
TOOL_COLOURS = {"agent": "tab:blue", "inotifywait": "tab:orange", "watchman": "tab:green", "floor": "tab:gray"}

# The agent's RSS target at the largest size (the figures table judges the agent's median against it).
RSS_TARGET_MB = 64

# Debian's python3, which `make bench` gives python3-matplotlib; the plot is drawn there.
PLOT_PYTHON = "/usr/bin/python3"
# The exit status of `scaling.py plot` when matplotlib cannot be imported: the plot is skipped, not failed.
EXIT_NO_MATPLOTLIB = 3


class TreeCacheError(Exception):
    """A cached tree could not be made or checked: the message names the tree and what to do."""


class PlotFailed(Exception):
    """Drawing the plot failed for another reason than a missing matplotlib (a bug to fix)."""


def count_text(count):
    """A file count as the plot's axis says it: 10k, 1M, 2.5k."""
    for unit, suffix in ((1_000_000, "M"), (1000, "k")):
        if count >= unit:
            return f"{count / unit:g}{suffix}"
    return str(count)


# ---------------------------------------------------------------------------------------------
# The trees


class TreeSize(collections.namedtuple("TreeSize", "files dirs")):
    """One tree size: `files` files in `dirs` directories (a tenth as many, as in figure 1's tree)."""

    @classmethod
    def for_files(cls, files):
        return cls(files, max(1, files // 10))

    @property
    def name(self):
        """The tree's name in the cache: `tree-<dirs>d-<files>f`."""
        return f"tree-{self.dirs}d-{self.files}f"


def directory_names(dirs):
    """The tree's directories relative to its root, parents first: about sqrt(dirs) at the top
    (`t000`, `t001`, ...), the rest one level below them in turn (`t000/s000`, `t001/s000`, ...)."""
    top = max(1, round(math.sqrt(dirs)))
    names = [f"t{index:03d}" for index in range(min(top, dirs))]
    index = 0
    while len(names) < dirs:
        names.append(f"t{index % top:03d}/s{index // top:03d}")
        index += 1
    return names


def write_tree(root, size):
    """Makes `root` and the tree in it: `directory_names(size.dirs)`, and `size.files` files spread
    evenly over them (the first `files % dirs` hold one more), `f0`, `f1`, ... each holding its own
    relative path and a newline (`t003/s001/f7\\n`). The shape and contents of the tree that
    Bench.make_tree in bench/compare makes for figures 1-9."""
    os.makedirs(root)
    names = directory_names(size.dirs)
    for name in names:
        os.mkdir(os.path.join(root, name))
    per_dir, extra = divmod(size.files, size.dirs)
    for position, name in enumerate(names):
        for number in range(per_dir + (1 if position < extra else 0)):
            fd = os.open(os.path.join(root, name, f"f{number}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, f"{name}/f{number}\n".encode())
            finally:
                os.close(fd)


def census(root):
    """(directories, files) under `root`, the root itself not counted, with every entry stat'ed:
    that loads the tree's inodes into the kernel's caches, so the first tool to start does not pay
    alone for reading them from disk."""
    directories, files = 0, 0
    pending = [root]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    directories += 1
                    pending.append(entry.path)
                else:
                    files += 1
    return directories, files


def clear_state_dir(tree, state_dir):
    """Removes the agent's state directory (`stateDir`, `.autosave` by default) from the tree, so that
    every run of every tool starts on the same tree: an agent finding an earlier run's journal would
    start differently, and a peer would watch one more directory. Only ever inside the tree."""
    path = os.path.realpath(os.path.join(tree, state_dir))
    root = os.path.realpath(tree)
    if path != root and path.startswith(root + os.sep):
        shutil.rmtree(path, ignore_errors=True)


class TreeCache:
    """Generated trees kept between benchmark runs in one directory.

    Each size's tree is `<cache>/tree-<dirs>d-<files>f/`, next to its manifest
    `<cache>/tree-<dirs>d-<files>f.json` (dirs, files, generator version), which is written only
    once the tree is complete and on disk: a tree without a matching manifest is a tree whose
    making was cut short (or made by an older generator), so it is removed and made again. A tree
    whose manifest matches is reused after its entries are counted (census): one that no longer
    holds what its manifest says is made again too.
    """

    def __init__(self, directory, say=print):
        self.directory = os.path.abspath(directory)
        self.say = say

    def tree_path(self, size):
        return os.path.join(self.directory, size.name)

    def manifest_path(self, size):
        return os.path.join(self.directory, size.name + ".json")

    def manifest(self, size):
        """What a complete tree of `size` has written beside it."""
        return {"dirs": size.dirs, "files": size.files, "generator": GENERATOR_VERSION}

    def tree(self, size, state_dir):
        """The path of a complete tree of `size`, made if need be, with the agent's `state_dir` removed
        from it; and how it came to be ("reused", "made in 412 s"). TreeCacheError when it cannot be
        made."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            # Two benchmark runs at once would each remove the other's half-made tree: one at a time.
            with open(os.path.join(self.directory, ".lock"), "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self.say(f"    waiting for another benchmark run using the tree cache {self.directory}", flush=True)
                    fcntl.flock(lock, fcntl.LOCK_EX)
                return self._tree(size, state_dir)
        except OSError as error:
            raise TreeCacheError(f"cannot make or check the {size.files:,}-file tree in {self.directory}: {error}; "
                                 f"this size is not measured (pass --tree-cache DIR for another place)") from error

    def _tree(self, size, state_dir):
        path, manifest_path = self.tree_path(size), self.manifest_path(size)
        try:
            with open(manifest_path) as file:
                written = json.load(file)
        except (OSError, ValueError):
            written = None
        if written is not None and all(written.get(key) == value for key, value in self.manifest(size).items()) \
                and os.path.isdir(path):
            clear_state_dir(path, state_dir)
            started = time.monotonic()
            found = census(path)
            if found == (size.dirs, size.files):
                return path, f"reused ({time.monotonic() - started:.1f} s to stat its {size.dirs + size.files:,} entries)"
            self.say(f"    {path} holds {found[0]:,} directories and {found[1]:,} files, its manifest says "
                     f"{size.dirs:,} and {size.files:,}: making it again", flush=True)
        elif os.path.lexists(path):
            self.say(f"    {path} has no manifest matching {self.manifest(size)} (its making was cut short, or an "
                     f"older generator made it): removing it and making it again", flush=True)
        self._remove(size)
        self._check_room(size)
        self.say(f"    making {path}: {size.dirs:,} directories, {size.files:,} files", flush=True)
        started = time.monotonic()
        write_tree(path, size)
        # The manifest must not reach the disk before the tree does (it says the tree is complete).
        os.sync()
        made = time.monotonic() - started
        temporary = manifest_path + ".tmp"
        with open(temporary, "w") as file:
            json.dump({**self.manifest(size), "made": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"), "seconds": round(made, 1)}, file, indent=2)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, manifest_path)
        return path, f"made in {made:.0f} s" if made >= 10 else f"made in {made:.1f} s"

    def _remove(self, size):
        # The manifest first: a removal cut short must not leave a manifest vouching for half a tree.
        for leftover in (self.manifest_path(size), self.manifest_path(size) + ".tmp"):
            if os.path.lexists(leftover):
                os.unlink(leftover)
        path = self.tree_path(size)
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)

    def _check_room(self, size):
        """Fails before making a tree the file system has no room for: each file takes an inode and a block."""
        stats = os.statvfs(self.directory)
        inodes, blocks = size.dirs + size.files, (size.dirs + size.files) * 4096
        if stats.f_favail < inodes or stats.f_bavail * stats.f_frsize < blocks:
            raise TreeCacheError(
                f"the {size.files:,}-file tree needs about {inodes:,} inodes and {blocks / 1e9:.1f} GB in "
                f"{self.directory}, whose file system has {stats.f_favail:,} inodes and "
                f"{stats.f_bavail * stats.f_frsize / 1e9:.1f} GB free; this size is not measured (remove old "
                f"trees there, or pass --tree-cache DIR on another file system)")


# ---------------------------------------------------------------------------------------------
# inotify's limit on watches


def inotify_watches_held(uid):
    """Watches the processes of user `uid` hold now (the `inotify wd:` lines of their inotify fds):
    max_user_watches counts every watch of the user, not only this script's."""
    held = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                    with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                        held += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # the process exited while it was looked at, or is not ours to read
    return held


def watch_shortfall(size):
    """Why inotify cannot give a watcher one watch per directory of `size`'s tree, or None when it can.

    Each tool runs alone, so one tool's watches must fit: the tree's directories and its root, and a
    margin for what else the agent may watch and for other processes' counts moving meanwhile.
    """
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as file:
            limit = int(file.read())
    except (OSError, ValueError) as error:
        return f"cannot read /proc/sys/fs/inotify/max_user_watches ({error})"
    needed = size.dirs + 1 + 1000 + size.dirs // 20
    raise_it = f"raise it: sysctl fs.inotify.max_user_watches={max(2 * needed, limit + needed):,}"
    if limit < needed:
        return f"needs about {needed:,} inotify watches, and max_user_watches is {limit:,} ({raise_it})"
    held = inotify_watches_held(os.getuid())
    if limit - held < needed:
        return (f"needs about {needed:,} inotify watches, and of max_user_watches {limit:,} other processes of this "
                f"user hold {held:,} (stop them, or {raise_it})")
    return None


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

    def __init__(self, bench, compare):
        self.bench = bench
        self.compare = compare
        self.options = bench.options
        self.cache = TreeCache(self.options.tree_cache)
        self.sizes = [TreeSize.for_files(files) for files in self.options.scaling_sizes]
        self.trees = {}  # files -> how its tree came to be
        self.skipped = {}  # files -> why it was not measured
        self.state_dir = ".autosave"  # the agent's, until its effective config says otherwise
        self.plot_skipped = None  # why the plot was not drawn, once it was not
        self.floor = None  # the compiled ScanFloor, once the floor is first measured

    def key(self, size, quantity, tool):
        return f"scaling.{size.files}.{quantity}.{tool}"

    def samples(self, size, quantity, tool):
        return self.bench.samples.get(self.key(size, quantity, tool), [])

    # -- measuring ----------------------------------------------------------------------------------

    def run(self):
        self.bench.configs["10"] = (f"sizes {', '.join(f'{size.files:,}' for size in self.sizes)} files (a tenth as "
                                    f"many directories), agent defaults, RSS after {self.options.idle_quiet:g} s of "
                                    f"quiet, trees cached in {self.cache.directory}")
        for size in self.sizes:
            self.measure_size(size)
        self.draw()

    def measure_size(self, size):
        print(f"  figure 10: {size.files:,} files in {size.dirs:,} directories", flush=True)
        shortfall = watch_shortfall(size)
        if shortfall:
            self.skipped[size.files] = shortfall
            print(f"    skipped for every tool: {shortfall}", flush=True)
            return
        try:
            tree, how = self.cache.tree(size, self.state_dir)
        except TreeCacheError as error:
            self.skipped[size.files] = "its tree could not be made"
            print(f"    FAILED: {error}", flush=True)
            self.bench.failures.append((f"10 ({size.files:,} files)", str(error)))
            return
        self.trees[size.files] = how
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
        except self.compare.PeerUnavailable as reason:
            self.bench.unavailable[tool] = str(reason)
            print(f"    {tool}: unavailable: {reason}", flush=True)
        except self.compare.BenchError as error:
            print(f"    {tool} FAILED: {error}", flush=True)
            self.bench.failures.append((f"10 {tool} ({size.files:,} files, run {run + 1})", str(error)))

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
            raise self.compare.BenchError(f"{name} (pid {process.pid}) exited with status {process.returncode} "
                                          f"in the {self.options.idle_quiet:g} s before its RSS was read{tail}")
        return self.compare.rss_kib(process.pid) / 1024

    def measure_agent(self, size, tree, run):
        agent = self.compare.AgentRun(self.bench, tree, {}, f"scaling-{size.files}-{run}")
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
        watcher = self.compare.Inotifywait(self.bench)
        try:
            setup = watcher.start(tree, setup_timeout(size))
            rss = self.settled_rss_mb(watcher.process, "inotifywait")
            self.record(size, "inotifywait", setup, rss, watcher.setup_cpu_ms)
            print(f"    inotifywait set-up {setup:.0f} ms, CPU {watcher.setup_cpu_ms:.0f} ms, RSS {rss:.1f} MB", flush=True)
        finally:
            watcher.stop()

    def measure_watchman(self, size, tree, run):
        watcher = self.compare.Watchman(self.bench)
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
            self.floor = ScanFloor(self.bench, self.compare)
        setup, cpu, files = self.floor.run(tree, setup_timeout(size))
        if files != size.files:
            raise self.compare.BenchError(f"the set-up floor counted {files:,} files in {tree}, not {size.files:,}")
        self.record(size, "floor", setup, None, cpu)
        print(f"    floor set-up {setup:.0f} ms, CPU {cpu:.0f} ms", flush=True)

    # -- reporting ----------------------------------------------------------------------------------

    def largest_measured(self):
        """The largest size any tool was measured at (the largest asked for when none was)."""
        measured = [size for size in self.sizes
                    if any(self.samples(size, quantity, tool) for quantity in ("setup", "rss") for tool in TOOLS)]
        return max(measured) if measured else max(self.sizes)

    def table_rows(self):
        """bench/compare's figures-table rows for the largest size measured (see its table_rows)."""
        size = self.largest_measured()
        files = f"{size.files:,} files"
        setup, rss = (lambda tool: self.key(size, "setup", tool)), (lambda tool: self.key(size, "rss", tool))
        return [
            ("10", f"set-up, {files}", "ms", setup("agent"), setup("inotifywait"), "inotifywait -r",
             "≤ 0.30 × peer", lambda a, r: r <= 0.30),
            ("10", f"set-up, {files}", "ms", setup("agent"), setup("watchman"), "watchman watch+query",
             "≤ 0.10 × peer", lambda a, r: r <= 0.10),
            ("10", f"set-up, {files}", "ms", setup("agent"), setup("floor"), "system-call floor (C)", "(info)", None),
            ("10", f"RSS, {files} watched", "MB", rss("agent"), rss("inotifywait"), "inotifywait",
             f"≤ {RSS_TARGET_MB} MB", lambda a, r: a <= RSS_TARGET_MB),
            ("10", f"RSS, {files} watched", "MB", rss("agent"), rss("watchman"), "watchman",
             f"≤ {RSS_TARGET_MB} MB", lambda a, r: a <= RSS_TARGET_MB),
        ]

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

        lines = ["| files | dirs | agent set-up ms | inotifywait ms | ratio | watchman ms | ratio | floor ms | ratio | "
                 "agent RSS MB | inotifywait MB | watchman MB |",
                 "|------:|-----:|----------------:|---------------:|------:|------------:|------:|---------:|------:|"
                 "-------------:|---------------:|------------:|"]
        for size in self.sizes:
            if size.files in self.skipped:
                lines.append(f"| {size.files:,} | {size.dirs:,} | skipped | | | | | | | | | |")
                continue
            setup = {tool: self.median(size, "setup", tool) for tool in TOOLS}
            rss = {tool: self.median(size, "rss", tool) for tool in TOOLS}
            lines.append(f"| {size.files:,} | {size.dirs:,} | {value(setup['agent'])} | {value(setup['inotifywait'])} | "
                         f"{ratio(size, 'inotifywait')} | {value(setup['watchman'])} | {ratio(size, 'watchman')} | "
                         f"{value(setup['floor'])} | {ratio(size, 'floor')} | "
                         f"{value(rss['agent'], 1)} | {value(rss['inotifywait'], 1)} | {value(rss['watchman'], 1)} |")
        notes = [f"- {size.files:,} files skipped: {self.skipped[size.files]}" for size in self.sizes
                 if size.files in self.skipped]
        notes += [f"- {peer}: n/a, {reason}" for peer, reason in self.bench.unavailable.items() if peer in TOOLS]
        trees = "; ".join(f"{files:,} files {how}" for files, how in self.trees.items()) or "none"
        plot = (f"![Figure 10: watch set-up time and RSS against the number of files watched, log-log, one line "
                f"per tool](scaling.png)" if self.plot_skipped is None else f"Plot skipped: {self.plot_skipped}.")
        return "\n".join([
            "## Scaling (figure 10)",
            "",
            f"Watch set-up and RSS on trees of {', '.join(f'{size.files:,}' for size in self.sizes)} files (a tenth as "
            f"many directories, the shape of the tree of figures 1-9), median of {self.options.runs} run(s), the tools "
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
            f"Trees: `{self.cache.directory}` ({self.compare.filesystem_of(self.cache.directory)}), made once and "
            f"reused (a reused tree has every entry stat'ed first: checked against its manifest, and in the caches, so no "
            f"tool reads it from disk alone). This run: "
            f"{trees}.",
            "",
        ])

    def plot_data(self):
        tools = []
        for tool in TOOLS:
            points = {quantity: [[size.files, self.median(size, quantity, tool)] for size in self.sizes
                                 if self.median(size, quantity, tool) is not None] for quantity in ("setup", "rss")}
            if points["setup"] or points["rss"]:
                tools.append({"tool": tool, "label": TOOL_LABELS[tool], "colour": TOOL_COLOURS[tool], **points})
        return {"title": f"Figure 10: cost against tree size (median of {self.options.runs} run(s); "
                         f"a tenth as many directories as files)",
                "sizes": [size.files for size in self.sizes if size.files not in self.skipped],
                "quiet_s": self.options.idle_quiet, "rss_target_mb": RSS_TARGET_MB, "tools": tools}

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


# ---------------------------------------------------------------------------------------------
# The plot, drawn in a python3 that has matplotlib


def draw_plot_in_subprocess(data, path, python=PLOT_PYTHON):
    """Runs this file as `PYTHON scaling.py plot PATH` with `data` as JSON on stdin. Returns None when
    the plot was drawn, or why it was skipped (no such python, no matplotlib); PlotFailed when the
    drawing itself failed."""
    if not os.path.exists(python):
        return f"{python} does not exist (Debian's python3, with python3-matplotlib, draws the plot)"
    # -E: pyenv's PYTHON* variables must not steer Debian's interpreter.
    argv = [python, "-E", os.path.abspath(__file__), "plot", path]
    try:
        result = subprocess.run(argv, input=json.dumps(data), capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise PlotFailed(f"{python} took over 120 s to draw {path}; stopped it") from None
    except OSError as error:
        return f"cannot run {python}: {error}"
    if result.returncode == EXIT_NO_MATPLOTLIB:
        return result.stderr.strip()
    if result.returncode != 0:
        raise PlotFailed(f"drawing {path} with {shlex.join(argv)} failed (status {result.returncode}): "
                         f"{result.stderr.strip()[-800:]}")
    return None


def plot(data, path):
    """Two panels side by side, log-log, one labelled line per tool: set-up time against files, and
    RSS against files (with the agent's RSS target). Written to a temporary file, then renamed."""
    import matplotlib
    matplotlib.use("Agg")  # no display: draw to a file
    import matplotlib.pyplot as pyplot
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, NullLocator

    figure, (setup_axes, rss_axes) = pyplot.subplots(1, 2, figsize=(12, 5.2), dpi=110)
    panels = ((setup_axes, "setup", "watch set-up", "ms (log)",
               lambda v: f"{v / 1000:.3g} s" if v >= 1000 else f"{v:.3g} ms"),
              (rss_axes, "rss", f"RSS after set-up and {data['quiet_s']:g} s of quiet", "MB (log)",
               lambda v: f"{v:.3g} MB"))
    for axes, quantity, title, unit, text in panels:
        for tool in data["tools"]:
            points = tool[quantity]
            if not points:
                continue
            files, values = zip(*points)
            axes.plot(files, values, marker="o", color=tool["colour"], label=tool["label"])
            for x, y in points:
                # Where another tool's value at the same size is within 30 %, the higher label goes
                # above its point and the lower below, so that the two do not print over each other.
                near = [other for peer in data["tools"] for size, other in peer[quantity]
                        if size == x and peer is not tool and y / 1.3 < other < y * 1.3]
                label_y = -4 if not near else (-1 if y >= max(near) else -15)
                axes.annotate(text(y), (x, y), textcoords="offset points", xytext=(6, label_y), fontsize=8,
                              color=tool["colour"])
        if quantity == "rss":
            axes.axhline(data["rss_target_mb"], color="tab:blue", linestyle=":", linewidth=1,
                         label=f"agent target ≤ {data['rss_target_mb']} MB")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.margins(y=0.1)  # room for a label set below the lowest point
        # Plain numbers (40, 200, 1000), not 4×10¹; minor ticks labelled only where the axis spans little.
        axes.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        axes.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))
        axes.xaxis.set_major_locator(FixedLocator(data["sizes"]))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: count_text(int(round(x)))))
        axes.xaxis.set_minor_locator(NullLocator())
        if data["sizes"]:
            # Room on the right for the last points' values.
            axes.set_xlim(min(data["sizes"]) / 1.5, max(data["sizes"]) * 2.5)
        axes.set_title(title)
        axes.set_xlabel("files watched (log)")
        axes.set_ylabel(unit)
        axes.grid(True, which="major", alpha=0.4)
        axes.grid(True, which="minor", alpha=0.15)
    # One legend for both panels (the same tools), below them, where it hides no point or value;
    # tight_layout leaves it and the title their strips (matplotlib 3.6, Debian 12's, has no "outside").
    # The set-up panel has every tool (the floor has no RSS); the RSS panel adds the target line.
    handles, labels = setup_axes.get_legend_handles_labels()
    for handle, label in zip(*rss_axes.get_legend_handles_labels()):
        if label not in labels:
            handles.append(handle)
            labels.append(label)
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    figure.suptitle(data["title"], fontsize=11)
    figure.tight_layout(rect=(0, 0.06, 1, 0.96))
    temporary = path + ".tmp.png"
    figure.savefig(temporary)
    os.replace(temporary, path)


def main(argv):
    """`scaling.py plot PNG`: draws figure 10's plot from the JSON on stdin (see ScalingFigure.plot_data)."""
    if len(argv) != 2 or argv[0] != "plot":
        print("usage: scaling.py plot PNG < data.json (bench/compare runs it; the figure itself runs from there)",
              file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401 (only whether it is there)
    except ImportError as error:
        print(f"matplotlib is not installed for {sys.executable} ({error}); `make bench` installs it "
              f"(Debian package python3-matplotlib)", file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    plot(json.load(sys.stdin), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
