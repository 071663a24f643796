"""Figure 11: history (every version of every file), each row against its peer measured in the same run.

  save cost      figure 3's method (client write -> durable `saved`, minus autosave.delayMs, with
                 the durable-write floor sampled beside it) with history.enabled true and false, two
                 agents side by side sampled in turn; the target is what history adds: the median
                 of the paired differences on - off
  store size     --history-versions versions of a 1,000,000-byte text file, each one 64-byte line
                 different from the one before, made through the agent (an `edit` of that line and
                 a `save`, pipelined; `sync` every few versions so the recording queue stays short),
                 each checked to be recorded (`autosave history --json` counts them): history.sqlite
                 plus its -wal, against the pack `git gc --aggressive` makes of the same versions
                 committed to a scratch repository by `git fast-import` (made in the first run and
                 reused by the others: the same versions pack alike, and the gc takes minutes)
  show           `autosave show doc.txt@V > /dev/null`, start to exit, for --history-picks random
                 versions and the one with the longest delta chain (read from the database), against
                 `git show HEAD~K:doc.txt > /dev/null` of the same versions
  history        `autosave history doc.txt > /dev/null`, start to exit, against
                 `git log --oneline -- doc.txt > /dev/null`
  baseline       the agent's background baseline of the generated tree (history.baseline true): its
                 CPU time from `ready` to the `history-baseline ... state=done` log line, and the
                 store it leaves, against `tar -cf - TREE | zstd -3` (CPU time, archive size); the
                 notice latency (figure 2's method) of outside writes made while the baseline runs.
                 n/a, saying why, when the agent has no history.baseline key or logs no baseline.
  RSS at 1M      only when figure 10 runs a tree of 1,000,000 files or more (--smoke: any): the
                 agent's settled RSS (figure 10's method) with history on against history off, on
                 the largest such tree
"""
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import time

from .agent import AgentRun
from .common import BenchError, ms, now_ns, percentile
from .processes import cpu_ms, log_event

LINE_BYTES = 64  # each line of the versioned file, its newline included
FILE_BYTES = 1_000_000  # under history.maxFileBytes (1 MiB), so every version is kept
PIPELINE_VERSIONS = 32  # versions (edit + save) sent before a `sync` waits for history to write them


def line_text(number, version):
    """Line `number` as version `version` left it (0: the original), LINE_BYTES bytes with its newline."""
    text = f"line {number:05d} of the versioned file, version {version:06d}"
    return (text + "." * (LINE_BYTES - 1 - len(text)) + "\n").encode()


class VersionedFile:
    """The versions of figure 11's 1 MB file: version 0 has every line at version 0; version i
    (1 ... count) changes one line, a different one each time, to say i."""

    def __init__(self, count):
        self.lines = FILE_BYTES // LINE_BYTES
        self.count = count
        self.content = bytearray(b"".join(line_text(number, 0) for number in range(self.lines)))
        self.version = 0

    def changed_line(self, version):
        # A stride prime to the line count visits the lines in a scattered order, each once per lap.
        return (version * 7919) % self.lines

    def advance(self):
        """Makes the next version; returns (line number, its new text)."""
        self.version += 1
        number = self.changed_line(self.version)
        text = line_text(number, self.version)
        self.content[number * LINE_BYTES:(number + 1) * LINE_BYTES] = text
        return number, text


def file_bytes(*paths):
    return sum(os.path.getsize(path) for path in paths if os.path.exists(path))


def timed_run(argv, cwd, what, check=True):
    """ms from spawn to exit of argv, its output to /dev/null."""
    started = now_ns()
    result = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = ms(now_ns() - started)
    if check and result.returncode != 0:
        raise BenchError(f"{what} exited {result.returncode}: {result.stderr.decode()[-300:]}")
    return elapsed


class HistoryFigure:
    """Figure 11: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- results.md --------------------------------------------------------------------------------

    def history_section(self):
        """The "History (figure 11)" section of results.md: how the rows were measured and what took how long."""

        def values(key, unit="", scale=1):
            found = self.extra.get(key) or self.samples.get(key)
            return ", ".join(f"{value:,}{unit}" if isinstance(value, int) and scale == 1
                             else f"{value / scale:,.1f}{unit}" if isinstance(value, (int, float)) else str(value)
                             for value in found) if found else "n/a"

        notes = [f"- {metric}: n/a, {reason}" for metric, reason in sorted(self.not_measured.items())
                 if metric.startswith("history.")]
        return "\n".join([
            "## History (figure 11)",
            "",
            f"Each row against its peer in the same run. Save cost: figure 3's method with history.enabled true "
            f"and false, two agents side by side sampled in turn ({self.options.save_samples} pairs a run, the "
            f"durable-write floor after each pair); the target is the median of the per-pair differences (the "
            f"table: the median of the runs' medians). Versions: "
            f"{self.options.history_versions:,} versions of a {FILE_BYTES:,}-byte text file, one {LINE_BYTES}-byte "
            f"line changed per version, made through the agent (`edit` + `save`) and counted in `autosave history "
            f"--json`; the store is history.sqlite + history.sqlite-wal while the agent runs, the peer the .pack "
            f"`git gc --aggressive` makes of the same versions imported with `git fast-import`. `show` and `history` "
            f"are start to exit of the CLI with output to /dev/null ({self.options.history_picks} random versions "
            f"plus the one whose delta chain is deepest; {self.options.history_calls} calls of `history`).",
            "",
            f"- making the versions through the agent, per run: {values('history.versions.ms', ' s', 1000)}",
            f"- `git gc --aggressive` (once, in the first run; later runs reuse its repository): "
            f"{values('history.git-gc.ms', ' s', 1000)}",
            f"- the deepest delta chain shown, per run: {values('history.show.deepest-chain')}",
            f"- of the store, its -wal (MB), per run: {values('history.store.wal')}",
            f"- the store after the agent stopped (MB), per run: {values('history.store.after-stop')}",
            f"- the baseline, per run: {values('history.baseline.files')}",
            *notes,
            "",
        ])

    # -- row 1: save cost with history on and off ------------------------------------------------------

    def history_save_cost(self, run):
        """Figure 3's method with history on and off, the two agents running side by side and sampled
        in turn (which goes first alternating), the durable-write floor after each pair: every pair
        meets the same disk load, and the target is the median of the per-pair differences."""
        size, delay = self.options.save_bytes, self.options.save_delay_ms
        sides = {}
        for enabled in (True, False):
            label = "on" if enabled else "off"
            root = self.fresh_dir(f"save-history-{label}")
            target = os.path.join(root, "doc.txt")
            with open(target, "w") as file:
                file.write("-" * (size - 1) + "\n")
            sides[label] = (AgentRun(self, root, {"autosave": {"delayMs": delay}, "history": {"enabled": enabled}},
                                     f"save-history-{label}-{run}"), target)
        effective = sides["on"][0].effective
        self.configs["11 save cost"] = (f"autosave.delayMs {delay}, {size} bytes a write, history.enabled true and false "
                                        f"side by side, journal.fsync {json.dumps(effective['journal']['fsync'])}, "
                                        f"write.fsync {json.dumps(effective['write']['fsync'])}")
        costs = {"on": [], "off": []}
        floor, differences, clients = [], [], {}
        floor_process, floor_sample = self.floors.serve(self.fresh_dir("floor-save-history"), size)
        try:
            for label, (agent, _) in sides.items():
                agent.start()
                clients[label] = agent.client()
            for index in range(self.options.save_samples):
                content = chr(ord("a") + index % 26) * (size - 1) + "\n"
                for label in (("on", "off") if index % 2 == 0 else ("off", "on")):
                    agent, target = sides[label]
                    agent.log.drain()
                    started = now_ns()
                    revision = clients[label].call("write", path=target, content=content)["revision"]
                    _, stamp = agent.log.wait_for(log_event("saved", path="doc.txt", revision=revision), delay / 1000 + 30,
                                                  f"the `saved` line for revision {revision} (history {label})")
                    costs[label].append(ms(stamp - started) - delay)
                    # History writes the version just after the save: let it, before the other side's sample.
                    time.sleep(0.02)
                floor.append(floor_sample()[0])
                differences.append(costs["on"][-1] - costs["off"][-1])
        finally:
            for client in clients.values():
                client.close()
            for agent, _ in sides.values():
                if agent.process is not None:
                    agent.stop()
            self.children.stop(floor_process, 10)
        on, off, extra = statistics.median(costs["on"]), statistics.median(costs["off"]), statistics.median(differences)
        self.record("save.history-on.agent", on)
        self.record("save.history-off.agent", off)
        self.record("save.history.floor", statistics.median(floor))
        self.record("history.save.extra", extra)
        print(f"  history save cost: on {on:.2f} ms, off {off:.2f} ms, floor {statistics.median(floor):.2f} ms; "
              f"history adds {extra:+.2f} ms (median of {len(differences)} paired differences)", flush=True)

    # -- rows 2-4: N versions of a 1 MB file --------------------------------------------------------

    def history_versions(self, run):
        count = self.options.history_versions
        root = self.fresh_dir("history-versions")
        target = os.path.join(root, "doc.txt")
        versions = VersionedFile(count)
        with open(target, "wb") as file:
            file.write(versions.content)
        # Only the explicit saves write the file; journal and file fsyncs are off to make the versions
        # faster: neither changes what history stores, and history makes its own batches durable.
        agent = AgentRun(self, root, {"autosave": {"delayMs": 3_600_000, "maxDelayMs": 3_600_000},
                                      "journal": {"enabled": False}, "write": {"fsync": False}}, f"history-{run}")
        if not agent.effective.get("history", {}).get("enabled", False):
            raise BenchError("the agent's effective config has history.enabled false by default")
        state = os.path.join(root, agent.effective.get("stateDir", ".autosave"))
        database = os.path.join(state, "history.sqlite")
        self.configs["11 versions"] = (f"{count:,} versions of a {FILE_BYTES:,}-byte file of {versions.lines:,} lines, "
                                       f"one {LINE_BYTES}-byte line changed per version (`edit` + `save`, "
                                       f"{PIPELINE_VERSIONS} pipelined, then `sync`); journal.enabled false, "
                                       f"write.fsync false, autosave.delayMs 3600000; the peer: the same versions "
                                       f"through `git fast-import`, then `git gc --aggressive`")
        try:
            agent.start()
            made = self.make_versions(agent, target, versions)
            ids = self.recorded_versions(agent, count)
            store = file_bytes(database, database + "-wal")
            self.record("history.store.agent", store / 1e6)
            self.extra["history.store.wal"].append(round(file_bytes(database + "-wal") / 1e6, 3))
            self.extra["history.versions.ms"].append(round(made))
            print(f"  history: {count:,} versions made through the agent in {made / 1000:.1f} s "
                  f"({made / count:.2f} ms each); history.sqlite + -wal {store / 1e6:.2f} MB "
                  f"(the -wal {file_bytes(database + '-wal') / 1e6:.2f} MB)", flush=True)
            # The peer's repository is the same every run (the same versions, imported and packed alike), and
            # `git gc --aggressive` of 10,000 1 MB versions takes many minutes: it is made in the first run
            # and its pack measured, shown from and logged in every run.
            if getattr(self, "history_git", None) is None:
                self.history_git = self.git_versions(versions_of=count)
            repository, gc_ms = self.history_git
            pack = file_bytes(*[os.path.join(repository, ".git", "objects", "pack", name)
                                for name in os.listdir(os.path.join(repository, ".git", "objects", "pack"))
                                if name.endswith(".pack")])
            self.record("history.store.git", pack / 1e6)
            if run == 0:
                self.extra["history.git-gc.ms"].append(round(gc_ms))
            print(f"  git gc --aggressive of the same versions: pack {pack / 1e6:.2f} MB, gc took {gc_ms / 1000:.1f} s"
                  + (" (in the first run)" if run else ""), flush=True)
            self.time_show(agent, root, repository, ids, database, run)
            self.time_history(root, repository)
        finally:
            agent.stop()
        self.extra["history.store.after-stop"].append(round(file_bytes(database, database + "-wal") / 1e6, 3))
        with open(target, "rb") as file:
            if file.read() != bytes(versions.content):
                raise BenchError(f"after {count} versions {target} does not hold the last version made")

    def make_versions(self, agent, target, versions):
        """Every version through the agent: pipelined `edit` of the changed line and `save`, a `sync`
        after each PIPELINE_VERSIONS (it answers once history has written every version saved before
        it). Returns ms for all of them."""
        client = agent.client(timeout=600)
        try:
            started = now_ns()
            while versions.version < versions.count:
                requests = []
                for _ in range(min(PIPELINE_VERSIONS, versions.count - versions.version)):
                    number, text = versions.advance()
                    edit = {"start": {"line": number, "character": 0}, "end": {"line": number, "character": LINE_BYTES - 1},
                            "text": text[:-1].decode()}
                    requests.append(client.request("edit", {"path": target, "edits": [edit], "positionEncoding": "utf-8"})[1])
                    requests.append(client.request("save", {"paths": [target]})[1])
                for answer in client.pipeline(requests, f"edits and saves up to version {versions.version}"):
                    if "error" in answer:
                        raise BenchError(f"the agent refused a request while making version {versions.version}: "
                                         f"{answer['error'].get('message')}")
                client.call("sync")
            return ms(now_ns() - started)
        finally:
            client.close()

    def recorded_versions(self, agent, count):
        """The ids of doc.txt's versions, oldest first, checked to hold one per version made (and the
        file as the buffer first read it)."""
        result = subprocess.run([self.binary, "history", "doc.txt", "--json"], cwd=agent.root, capture_output=True)
        if result.returncode != 0:
            raise BenchError(f"autosave history doc.txt --json exited {result.returncode}: {result.stderr.decode()[-300:]}")
        listed = json.loads(result.stdout)
        ids = [entry["version"] for entry in sorted(listed, key=lambda entry: int(entry["version"]))]
        if len(ids) != count + 1:
            raise BenchError(f"history lists {len(ids)} versions of doc.txt after {count} saves (expected {count + 1}: "
                             f"each save and the version the buffer first read); kinds: "
                             f"{sorted({entry.get('kind') for entry in listed})}")
        return ids

    def git_versions(self, versions_of):
        """The same versions committed to a scratch repository by `git fast-import`, then `git gc
        --aggressive`; returns (its work tree, ms the gc took)."""
        repository = os.path.join(self.work, "history-git")
        os.makedirs(repository)
        environment = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
        subprocess.run(["git", "init", "-q", "-b", "main", repository], check=True, env=environment)
        importer = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repository, stdin=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=environment)
        versions = VersionedFile(versions_of)
        stamp = 1_700_000_000
        try:
            while True:
                message = f"version {versions.version}\n".encode()
                importer.stdin.write(b"commit refs/heads/main\n"
                                     + f"committer bench <bench@example.com> {stamp + versions.version} +0000\n".encode()
                                     + f"data {len(message)}\n".encode() + message
                                     + f"M 100644 inline doc.txt\ndata {len(versions.content)}\n".encode()
                                     + bytes(versions.content) + b"\n")
                if versions.version == versions.count:
                    break
                versions.advance()
            importer.stdin.close()
        except BrokenPipeError:
            pass
        if importer.wait() != 0:
            raise BenchError(f"git fast-import failed: {importer.stderr.read().decode()[-300:]}")
        started = now_ns()
        result = subprocess.run(["git", "gc", "--aggressive", "--quiet"], cwd=repository, capture_output=True,
                                env=environment)
        gc_ms = ms(now_ns() - started)
        if result.returncode != 0:
            raise BenchError(f"git gc --aggressive failed: {result.stderr.decode()[-300:]}")
        return repository, gc_ms

    def time_show(self, agent, root, repository, ids, database, run):
        """`autosave show doc.txt@V` and `git show HEAD~K:doc.txt` of the same random versions, and of
        the version whose delta chain is longest; the first pick's bytes are checked against git's."""
        count = len(ids) - 1
        picks = random.Random(1100 + run).sample(range(count + 1), min(self.options.history_picks, count + 1))
        worst, depth = self.deepest_version(database, ids)
        if worst is not None:
            picks.append(worst)
        shown = subprocess.run([self.binary, "show", f"doc.txt@{ids[picks[0]]}"], cwd=root, capture_output=True)
        from_git = subprocess.run(["git", "show", f"HEAD~{count - picks[0]}:doc.txt"], cwd=repository, capture_output=True)
        if shown.returncode != 0 or shown.stdout != from_git.stdout or len(shown.stdout) != FILE_BYTES:
            raise BenchError(f"autosave show doc.txt@{ids[picks[0]]} (exit {shown.returncode}, {len(shown.stdout)} bytes) "
                             f"does not print what git holds for that version ({len(from_git.stdout)} bytes)")
        agent_ms, git_ms = [], []
        for index in picks:
            agent_ms.append(timed_run([self.binary, "show", f"doc.txt@{ids[index]}"], root, f"autosave show doc.txt@{ids[index]}"))
            git_ms.append(timed_run(["git", "show", f"HEAD~{count - index}:doc.txt"], repository,
                                    f"git show HEAD~{count - index}:doc.txt"))
        self.record("history.show.agent.p50", percentile(agent_ms, 0.5))
        self.record("history.show.agent.p99", percentile(agent_ms, 0.99))
        self.record("history.show.git.p50", percentile(git_ms, 0.5))
        self.record("history.show.git.p99", percentile(git_ms, 0.99))
        if worst is not None:
            self.record("history.show.agent.deepest", agent_ms[-1])
            self.record("history.show.git.deepest", git_ms[-1])
            self.extra["history.show.deepest-chain"].append(depth)
        deepest = f"; the deepest chain ({depth} deltas, version {ids[worst]}) {agent_ms[-1]:.1f} ms" if worst is not None else ""
        print(f"  autosave show p50 {percentile(agent_ms, 0.5):.1f} ms p99 {percentile(agent_ms, 0.99):.1f} ms, "
              f"git show p50 {percentile(git_ms, 0.5):.1f} ms p99 {percentile(git_ms, 0.99):.1f} ms "
              f"({len(picks)} versions){deepest}", flush=True)

    def deepest_version(self, database, ids):
        """(index in ids, depth) of the version whose content has the longest delta chain, read from
        the database (read-only); (None, None) when its schema has no depth to read."""
        try:
            connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
            try:
                row = connection.execute(
                    "SELECT versions.id, contents.depth FROM versions JOIN contents ON versions.content = contents.id "
                    "WHERE versions.path = 'doc.txt' ORDER BY contents.depth DESC, versions.id LIMIT 1").fetchone()
            finally:
                connection.close()
        except sqlite3.Error as error:
            print(f"  (the deepest chain is not known: reading {database} failed: {error})", flush=True)
            return None, None
        if row is None or str(row[0]) not in {str(version) for version in ids}:
            return None, None
        return [str(version) for version in ids].index(str(row[0])), row[1]

    def time_history(self, root, repository):
        calls = self.options.history_calls
        agent_ms = [timed_run([self.binary, "history", "doc.txt"], root, "autosave history doc.txt") for _ in range(calls)]
        git_ms = [timed_run(["git", "log", "--oneline", "--", "doc.txt"], repository, "git log --oneline -- doc.txt")
                  for _ in range(calls)]
        agent, git = percentile(agent_ms, 0.5), percentile(git_ms, 0.5)
        self.record("history.list.agent", agent)
        self.record("history.list.git", git)
        print(f"  autosave history doc.txt {agent:.1f} ms, git log --oneline {git:.1f} ms (medians of {calls})", flush=True)

    # -- row 5: the baseline of the generated tree ---------------------------------------------------

    BASELINE_METRICS = ("history.baseline.cpu.agent", "history.baseline.store.agent", "history.baseline.latency.p50")

    def history_baseline(self, run):
        probe = AgentRun(self, self.tree, {}, f"baseline-probe-{run}")
        if "baseline" not in probe.effective.get("history", {}):
            self.baseline_not_measured("the agent has no history.baseline key: it builds no baseline")
            return
        state_name = probe.effective.get("stateDir", ".autosave")
        state = os.path.join(self.tree, state_name)
        # From scratch: the agents of earlier figures left a history in the tree.
        shutil.rmtree(state, ignore_errors=True)
        tar_cpu, archive = self.tar_zstd(self.tree, state_name)
        self.record("history.baseline.cpu.tar", tar_cpu)
        self.record("history.baseline.store.tar", archive / 1e6)
        agent = AgentRun(self, self.tree, {"history": {"baseline": True}, "watch": {"settleMs": 0}}, f"baseline-{run}")
        self.configs["11 baseline"] = (f"history.baseline true, watch.settleMs 0, the tree of figures 1-9 "
                                       f"({self.file_count:,} files) without a state directory; the peer "
                                       f"`tar -cf - -C TREE . | zstd -3 -q -c > FILE` (CPU time of both, FILE's size); "
                                       f"the agent's CPU time includes its handling of the outside writes made during "
                                       f"the baseline (at most {self.options.latency_writes} small files)")
        progress = {"seen": False, "done": None, "record": None}

        def note(line):
            record = log_event("history-baseline")(line)
            if record is not None:
                progress["seen"], progress["record"] = True, record
                if record.get("state") == "done" and progress["done"] is None:
                    progress["done"] = cpu_ms(agent.process.pid)
            return record

        try:
            agent.start(timeout=600)
            ready_cpu = agent.setup_cpu_ms
            samples = []
            for index, relative in enumerate(self.latency_targets(17 + run)):
                if progress["done"] is not None:
                    break
                path = os.path.join(self.tree, relative)
                changed = log_event("external-change", path=relative)
                started = now_ns()
                fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
                os.write(fd, f"edit during the baseline {index} {time.time_ns()}\n".encode())
                os.close(fd)
                _, stamp = agent.log.wait_for(lambda line: changed(line) if note(line) is None else None, 30,
                                              f"the agent's `external-change` line for {relative}")
                if progress["done"] is None:
                    samples.append(ms(stamp - started))
                time.sleep(self.options.latency_gap_ms / 1000)
            if not progress["seen"]:
                try:
                    agent.log.wait_for(note, 30, "the agent's first `history-baseline` line")
                except BenchError:
                    self.baseline_not_measured("the agent logged no `history-baseline` line within 30 s of `ready`")
                    return
            if progress["done"] is None:
                agent.log.wait_for(lambda line: True if note(line) is not None and progress["done"] is not None else None,
                                   max(1800, self.file_count / 50), "the agent's `history-baseline ... state=done` line")
            cpu = progress["done"] - ready_cpu
            database = os.path.join(state, "history.sqlite")
            store = file_bytes(database, database + "-wal")
        finally:
            agent.stop()
        done = progress["record"]
        self.record("history.baseline.cpu.agent", cpu)
        self.record("history.baseline.store.agent", store / 1e6)
        self.extra["history.baseline.files"].append(f"{done.get('files')} of {done.get('of')}, {done.get('skipped')} skipped, "
                                                    f"{done.get('bytes')} bytes, its own ms {done.get('ms')}")
        if samples:
            self.record("history.baseline.latency.p50", percentile(samples, 0.5))
            self.record("history.baseline.latency.p99", percentile(samples, 0.99))
        self.extra["history.baseline.latency.writes"].append(len(samples))
        print(f"  baseline: CPU {cpu:.0f} ms vs tar | zstd -3 {tar_cpu:.0f} ms; store {store / 1e6:.2f} MB vs archive "
              f"{archive / 1e6:.2f} MB; {done.get('files')} of {done.get('of')} files in {done.get('ms')} ms (its own); "
              + (f"notice p50 {percentile(samples, 0.5):.2f} ms p99 {percentile(samples, 0.99):.2f} ms over "
                 f"{len(samples)} writes during it" if samples else "no write was noticed before it was done"), flush=True)

    def baseline_not_measured(self, reason):
        for metric in self.BASELINE_METRICS:
            self.not_measured[metric] = reason
        print(f"  baseline: n/a, {reason}", flush=True)

    def tar_zstd(self, tree, state_name):
        """CPU ms (user + system, both processes) and output bytes of `tar -cf - -C TREE . | zstd -3`."""
        archive = os.path.join(self.work, "baseline-peer.tar.zst")
        with open(archive, "wb") as output:
            tar = subprocess.Popen(["tar", "-cf", "-", f"--exclude=./{state_name}", "-C", tree, "."],
                                   stdout=subprocess.PIPE)
            zstd = subprocess.Popen(["zstd", "-3", "-q", "-c"], stdin=tar.stdout, stdout=output)
            tar.stdout.close()
            cpu = 0.0
            for process, name in ((tar, "tar"), (zstd, "zstd")):
                _, status, usage = os.wait4(process.pid, 0)
                process.returncode = os.waitstatus_to_exitcode(status)
                if process.returncode != 0:
                    raise BenchError(f"the baseline's peer: {name} exited {process.returncode}")
                cpu += (usage.ru_utime + usage.ru_stime) * 1000
        size = os.path.getsize(archive)
        os.remove(archive)
        return cpu, size

    # -- row 6: RSS at figure 10's largest tree, history on and off -----------------------------------

    def history_rss(self):
        from .scaling import setup_timeout
        from .scaling_trees import TreeCacheError, clear_state_dir

        scaling = self.scaling
        # The target is about a million files; --smoke checks the mechanism on its largest small tree.
        least = 0 if self.options.smoke else 1_000_000
        sizes = [size for size in (scaling.sizes if scaling else [])
                 if size.shape == "shallow" and size.files >= least and size not in scaling.skipped]
        if not sizes:
            reason = ("figure 10 did not run" if scaling is None
                      else "figure 10 ran no tree of 1,000,000 files (--scaling-sizes)")
            self.not_measured["history.rss.on"] = reason
            print(f"  history RSS: n/a, {reason}", flush=True)
            return
        size = max(sizes, key=lambda size: size.files)
        try:
            tree, _ = scaling.cache.tree(size, scaling.state_dir)
        except TreeCacheError as error:
            raise BenchError(f"figure 10's tree of {size.files:,} files: {error}") from error
        self.history_rss_files = size.files
        self.configs["11 RSS"] = (f"figure 10's tree of {size.files:,} files, history.enabled true (defaults) and false, "
                                  f"VmRSS after {self.options.idle_quiet:g} s of quiet after `ready`")
        for run in range(self.options.runs):
            for enabled in ((True, False) if run % 2 == 0 else (False, True)):
                clear_state_dir(tree, scaling.state_dir)
                agent = AgentRun(self, tree, {"history": {"enabled": enabled}},
                                 f"history-rss-{'on' if enabled else 'off'}-{run}")
                try:
                    agent.start(setup_timeout(size))
                    rss = scaling.settled_rss_mb(agent.process, "the agent", agent.log)
                finally:
                    agent.stop()
                self.record(f"history.rss.{'on' if enabled else 'off'}", rss)
                print(f"  history RSS at {size.files:,} files, history {'on' if enabled else 'off'}: {rss:.1f} MB", flush=True)
