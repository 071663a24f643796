"""The suite: Bench, one run of bench/compare. It holds the options, the temp directory, the child
processes and every value measured; makes the generated tree of figures 1-9; and `run` runs each
wanted figure (the figure classes it is made of, one module per figure, and figure 10's
ScalingFigure), recording a failure and going on when one fails.
"""
import collections
import json
import os
import shutil
import subprocess
import tempfile
import time

from .coalescing import CoalescingFigure
from .common import BenchError, PeerUnavailable
from .flush import FlushFigure
from .git_status import GitFigure
from .history import HistoryFigure
from .large_content import LargeContentFigure
from .machine import describe_machine
from .peers import Floors
from .processes import Children
from .ranged_edits import RangedEditsFigure
from .save_cost import SaveCostFigure
from .scaling import ScalingFigure
from .scaling_trees import directory_names
from .subscribers import SubscriberFigure
from .throughput import ThroughputFigure
from .watchers import WatcherFigures


# ---------------------------------------------------------------------------------------------
# The suite


class Bench(WatcherFigures, SaveCostFigure, CoalescingFigure, FlushFigure, ThroughputFigure,
            LargeContentFigure, RangedEditsFigure, HistoryFigure, GitFigure, SubscriberFigure):
    """One run of bench/compare: its options, temp directory, children and every value measured.

    The figures' measurements are methods of the classes it is made of, one module each
    (watchers.py, save_cost.py, ...); `run` calls them in turn."""

    def __init__(self, options):
        self.options = options
        self.binary = os.path.abspath(options.binary)
        self.children = Children()
        self.work = tempfile.mkdtemp(prefix="bench-compare-", dir=options.tmpdir)
        self.samples = collections.defaultdict(list)  # metric -> one value per run
        self.failures = []  # (figure, message)
        self.unavailable = {}  # peer -> reason
        self.extra = collections.defaultdict(list)  # metric -> informational values per run
        self.configs = {}  # figure -> effective config summary
        self.not_measured = {}  # metric -> why its row shows n/a (figure 11's baseline and RSS rows)
        self.file_count = None  # files in the tree of figures 1-9, once made
        self.scaling = None  # figure 10, when it runs (scaling.ScalingFigure)

    # -- helpers --------------------------------------------------------------------------------

    def effective_config(self, root, path):
        """`autosave config ROOT --config FILE`: validates the file the script wrote."""
        result = subprocess.run([self.binary, "config", root, "--config", path], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise BenchError(f"the agent rejected the benchmark's config {path}: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def fresh_dir(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def record(self, metric, value):
        self.samples[metric].append(value)

    def figure(self, number, name, body):
        """Runs one figure's measurement; a failure is recorded and the suite goes on."""
        if not self.wanted(*(number if isinstance(number, tuple) else (number,))):
            return
        label = "/".join(map(str, number)) if isinstance(number, tuple) else str(number)
        try:
            body()
        except PeerUnavailable as reason:
            print(f"  figure {label} ({name}): a peer is unavailable: {reason}", flush=True)
        except BenchError as error:
            print(f"  figure {label} ({name}) FAILED: {error}", flush=True)
            self.failures.append((label, str(error)))

    def wanted(self, *figures):
        return not self.options.only or any(figure in self.options.only for figure in figures)

    def cli(self, agent, arguments, stdout=subprocess.DEVNULL):
        """One CLI command against the agent's root; fails the figure when it does."""
        result = subprocess.run([self.binary] + arguments, cwd=agent.root, stdout=stdout, stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise BenchError(f"autosave {' '.join(arguments)} exited {result.returncode}: {result.stderr.decode()[-300:]}")

    # -- the tree -------------------------------------------------------------------------------

    def make_tree(self):
        """`dirs` directories (about sqrt(dirs) at the top, the rest one level below), `files` files."""
        self.tree = os.path.join(self.work, "tree")
        os.makedirs(self.tree)
        dirs, files = self.options.dirs, self.options.files
        names = directory_names(dirs)  # figure 10's trees have the same shape
        for name in names:
            os.mkdir(os.path.join(self.tree, name))
        self.dirs = names
        per_dir, extra = divmod(files, dirs)
        self.files_per_dir = per_dir
        made = 0
        for position, name in enumerate(names):
            for number in range(per_dir + (1 if position < extra else 0)):
                fd = os.open(os.path.join(self.tree, name, f"f{number}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.write(fd, f"{name}/f{number}\n".encode())
                os.close(fd)
                made += 1
        self.file_count = made
        if per_dir == 0:
            raise BenchError(f"--files ({files}) must be at least --dirs ({dirs}): the latency writes need a file per directory")

    # -- the run ------------------------------------------------------------------------------------

    def run(self):
        options = self.options
        if not os.access(self.binary, os.X_OK):
            raise BenchError(f"the agent binary {self.binary} does not exist or is not executable (build it: "
                             f"swift build -c release)")
        # Run a private copy: a rebuild of the original during the run must not change what is measured.
        # (Named so that someone else's `pkill -f autosave` on a shared machine does not hit it.)
        self.source_binary = self.binary
        self.binary = os.path.join(self.work, "agent-under-test")
        shutil.copy2(self.source_binary, self.binary)
        self.versions = {}
        self.floors = Floors(self)
        self.machine = describe_machine(self)
        print(self.machine_text(), flush=True)
        # Figures 1-9 and 11 share one generated tree and one loop of runs; figure 10 makes (or reuses)
        # its own trees, and figure 11's RSS row reuses figure 10's largest.
        one_tree = self.wanted(*range(1, 10), 11)
        if one_tree:
            print(f"generating the tree: {options.dirs} directories, {options.files} files under {self.work}/tree", flush=True)
            started = time.monotonic()
            self.make_tree()
            print(f"  done in {time.monotonic() - started:.1f} s", flush=True)
        for run in range(options.runs if one_tree else 0):
            print(f"run {run + 1} of {options.runs}", flush=True)
            if self.wanted(1, 2, 6):
                self.watchers(run)
            self.figure(3, "save cost", lambda: (self.save_cost(run, True), self.save_cost(run, False)))
            self.figure(4, "coalescing", lambda: self.coalescing(run))
            self.figure(5, "flush", lambda: self.flush(run))
            self.figure(7, "socket throughput", lambda: self.throughput(run))
            self.figure(8, "large content", lambda: self.large_content(run))
            self.figure(9, "ranged edit latency", lambda: self.ranged_latency(run))
            self.figure(9, "ranged edits' journal and RSS", lambda: self.ranged_journal(run))
            self.figure(9, "patch", lambda: self.ranged_patch(run))
            self.figure(11, "history: save cost, history on and off", lambda: self.history_save_cost(run))
            self.figure(11, "history: versions of a 1 MB file (store, show, history)", lambda: self.history_versions(run))
            self.figure(11, "history: the baseline of the tree", lambda: self.history_baseline(run))
        if self.wanted(10):
            print("figure 10: scaling, every run of each size in turn", flush=True)
            self.scaling = ScalingFigure(self)
            self.figure(10, "scaling", self.scaling.run)
        self.figure(11, "history: RSS at figure 10's largest tree, history on and off", self.history_rss)
        # Figure 12 has its own tree, a committed repository (git_repo.py), and its own loop of runs.
        for run in range(options.runs if self.wanted(12) else 0):
            print(f"figure 12: git and subscribers, run {run + 1} of {options.runs}", flush=True)
            self.figure(12, "git status, the hooks alone and the watches", lambda: self.git_status_figure(run))
            self.figure(12, "subscribers", lambda: self.subscribers_figure(run))
        self.machine["load after"] = open("/proc/loadavg").read().split()[:3]

    def machine_text(self):
        return "machine:\n" + "\n".join(f"  {key}: {value if not isinstance(value, list) else ' '.join(value)}"
                                        for key, value in self.machine.items())
