"""The Soak: the state of a run (the work folder, the model, the counters, the agent) and the run
itself, from the generated project through the rounds to the last check after SIGTERM. Its steps,
rounds, checks and report are in scenario.py, kills.py, checks.py and report.py; the power-cut
soak (powercut.py) subclasses it."""

import os
import random
import shutil
import tempfile
import time
from collections import Counter

from agent import Agent
from checks import Checks, Model
from kills import Kills
from options import replay_command
from report import Report
from scenario import Scenario


# MARK: - The soak

class Soak(Scenario, Kills, Checks, Report):
    """A crash soak run: the steps (Scenario), rounds and kills (Kills), checks (Checks) and report
    (Report) on the state made here."""

    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.rng = random.Random(self.seed)
        self.binary = os.path.abspath(args.binary)
        self.workdir = tempfile.mkdtemp(prefix="autosave-soak-")
        self.project = os.path.join(self.workdir, "project")
        self.staging = os.path.join(self.workdir, "staging")
        self.model = Model()
        self.counts = Counter()
        self.tools = Counter()
        self.kinds = Counter()
        self.violations = []
        self.path_locks = {}
        self.path_ids = {}
        self.commits = {}
        self.sequence = 0
        self.round = 0
        self.appended = [0, 0]  # journal bytes a round's client writes may append: this round, the one before
        self.max_journal = 0
        self.notes = Counter()
        self.reported_temps = set()
        # Check (f): versions read from history at earlier checks, read again at later ones; their
        # own random source, so the scenario a seed gives stays what it was before this check.
        self.history_samples = []
        self.history_rng = random.Random(self.seed ^ 0x5EED_4157)
        self.has_vim = shutil.which("vim") is not None
        self.has_rsync = shutil.which("rsync") is not None
        self.extra_tools = []  # the power-cut soak adds "durable-replace"
        self.agent = Agent(self.binary, self.project, self.workdir, random.Random(self.rng.getrandbits(64)))

    def next_tag(self, prefix):
        """A tag no other edit has: every line an edit adds carries it."""
        with self.model.lock:
            self.sequence += 1
            return f"{prefix}{self.sequence:06d}"

    # MARK: Driving

    def run(self):
        args = self.args
        print(f"autosave soak: seed {self.seed} (replay: {replay_command(args, self.seed)})", flush=True)
        print(f"  binary {self.binary}; project {self.project}", flush=True)
        for tool, present in (("vim", self.has_vim), ("rsync", self.has_rsync)):
            if not present:
                print(f"  note: {tool} is not installed; that tool is left out", flush=True)
        started = time.monotonic()
        self.generate_project(args.files)
        self.agent.start()
        deadline = started + args.minutes * 60 if args.minutes else None
        last_report = started
        while True:
            if args.rounds and self.round >= args.rounds:
                break
            if deadline and time.monotonic() >= deadline:
                break
            self.run_round()
            if time.monotonic() - last_report > 30:
                last_report = time.monotonic()
                print(f"  ... round {self.round}, {int(last_report - started)} s, kills {self.counts['kills']}, "
                      f"violations {len(self.violations)}", flush=True)
        status = self.agent.stop()
        if status != 0:
            self.violation("-", "agent shutdown", "exit status 0 after SIGTERM", f"exit status {status}")
        self.round += 1
        self.check(with_buffers=False)  # after the final flush, disk and copies alone hold everything
        return time.monotonic() - started
