#!/usr/bin/env python3
"""Crash soak for the autosave agent: random client writes, real external tools and kill -9,
then a check that nothing anyone wrote was lost.

    soak/soak.py --smoke                  # CI: 60 rounds, 2 minutes at most
    soak/soak.py --minutes 30 --seed 42   # what `make soak SOAK_MINUTES=30` runs
    soak/soak.py --rounds 200 --keep      # keep the generated project afterwards

Each round, against a generated git project (a few dozen text files in a few directories):
  * client writes go through `autosave write PATH --if-revision N` (stdin), each one derived from
    the buffer it read at revision N, the way an editor writes; exit 0 means acknowledged;
  * external edits are made by real tools: a shell redirect, `sed -i`, Python `os.replace` of a
    temp file, vim's rename dance (emulated, and real `vim -es`), `git checkout <commit> -- FILE`
    and `rsync` of a prepared file. The agent is frozen with SIGSTOP around each one (the tool
    runs for real; the agent wakes up wherever it was, often mid-save), so the soak knows exactly
    which version each tool read;
  * most rounds end with `kill -9` of the agent: right after a burst of writes (appends and acks in
    flight), after the acks (saves in flight), while frozen after an external edit, or at a random
    moment; sometimes files are edited while it is down. The agent is restarted (new random
    save delay 0-20 ms and `conflicts.keep`) and the soak waits for `ready` in its JSON log.
After `autosave sync` and the agent settled, every round checks:
  (a) no file, buffer or conflict copy is torn: it starts with the file's header line, ends with
      its footer line, and every line is one that somebody wrote to that path (every line carries a
      unique tag, so a merge of versions is recognised and anything else is not);
  (b, c) every acknowledged client write and every external edit is still somewhere: on disk, in
      the buffer (the `read` request `autosave cat` makes) or in a conflict copy under
      .autosave/conflicts/. "Is there" means one of those holds the lines the edit added and none
      of the lines it removed; a line stops being required once a later edit of that path, by
      anyone, was made on a version containing it and changed it (superseded). A write whose
      client got no answer (the agent died) counts once any of its lines is seen;
  (d) no agent temp file (.NAME.autosave-XXXXXXXXXX.tmp) is left anywhere under the root;
  (e) the journal (.autosave/journal/journal.log) stays within the bound EditJournal's compaction
      gives (see journal_limit()).
At the end the agent is stopped with SIGTERM and the disk and conflict copies are checked once more.
Exit 0 when there are no violations, 1 otherwise (each printed with path, version and finding).
The seed fixes every random choice (files, edits, tools, kill moments); timing still varies, so a
replay repeats the same scenario, not the same interleaving.
"""

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

# The release build of this checkout (/work/main/.build/release/autosave here).
DEFAULT_BINARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build", "release", "autosave")
TEMP_PATTERN = re.compile(r"^\..+\.autosave-[a-z0-9]{10}\.tmp$")
WORDS = ("amber brisk cedar delta ember fjord grove harbor iris juniper kelp lumen moss nectar "
         "onyx pebble quartz river sable thistle umber violet willow xenon yarrow zephyr").split()
JOURNAL_COMPACTION_THRESHOLD = 1 << 20  # EditJournal.compactionThreshold
JOURNAL_RECORD_OVERHEAD = 8 + 38        # frame (length, crc) + fixed payload, before path and content


class SoakError(Exception):
    """The soak itself could not go on (agent would not start, tool missing...)."""


# MARK: - The model: who wrote what, and what must still be somewhere

class Version:
    """One edit: the lines its author saw (source) and the lines it wrote (result)."""

    def __init__(self, vid, path, author, round_number, source, result, status):
        self.vid = vid
        self.path = path
        self.author = author
        self.round = round_number
        self.source = tuple(source)
        self.result = tuple(result)
        self.status = status  # "acked" or "unknown" (the client got no answer)
        self.detail = ""      # e.g. the revision the agent acknowledged, which agent run
        self.revision = None  # the revision a client write was acknowledged at, by agent run `run`
        self.run = None

    def describe(self):
        return f"{self.vid} ({self.author}, round {self.round}, {self.status}{', ' + self.detail if self.detail else ''})"


class Requirement:
    """What must still hold somewhere for a version: lines present, lines absent."""

    def __init__(self, version, present, absent):
        self.version = version
        self.present = set(present)
        self.absent = set(absent)


class PathModel:
    def __init__(self, path, header, footer):
        self.path = path
        self.header = header
        self.footer = footer
        self.known_lines = set()
        self.known_versions = set()
        self.queue = []          # versions waiting behind a write of unknown outcome
        self.requirements = []
        self.violated = set()    # version ids already reported
        self.largest = 0         # bytes of the largest version written

    def learn(self, lines):
        self.known_lines.update(lines)
        self.largest = max(self.largest, sum(len(line) for line in lines))
        self.known_versions.add(content_digest(lines))


class Model:
    def __init__(self):
        self.paths = {}
        self.lock = threading.Lock()
        self.counts = Counter()

    def add(self, version):
        with self.lock:
            model = self.paths[version.path]
            model.learn(version.result)
            if version.status == "unknown" or model.queue:
                model.queue.append(version)
            else:
                self._apply(model, version)

    @staticmethod
    def _apply(model, version):
        source, result = set(version.source), set(version.result)
        for requirement in model.requirements:
            # Superseded: the later author saw the line (or its absence) and changed that.
            requirement.present -= {line for line in requirement.present if line in source and line not in result}
            requirement.absent -= {line for line in requirement.absent if line not in source and line in result}
        model.requirements = [r for r in model.requirements if r.present or r.absent]
        requirement = Requirement(version, result - source, source - result)
        if requirement.present or requirement.absent:
            model.requirements.append(requirement)

    def resolve(self, path, locations):
        """Applies queued versions; a write of unknown outcome counts when any of its lines was seen."""
        with self.lock:
            model = self.paths[path]
            queue, model.queue = model.queue, []
            for index, version in enumerate(queue):
                if version.status == "unknown":
                    added = set(version.result) - set(version.source)
                    seen = any(added & set(later.source) for later in queue[index + 1:]) or any(
                        added & set(lines) for _, lines in locations)
                    self.counts["unknown writes applied" if seen else "unknown writes not applied"] += 1
                    if not seen:
                        continue
                self._apply(model, version)


def content_digest(lines):
    return hashlib.sha1("".join(lines).encode()).hexdigest()


# MARK: - Content and edits

def fresh_line(path_id, tag, index, rng):
    return f"{path_id} {tag}.{index} {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.getrandbits(24):06x}\n"


def plan_edit(lines, rng, path_id, tag, allow_structure=True):
    """Replaces 1-3 lines, maybe inserts and deletes one; never touches the header or the footer.

    Returns (result lines, sed script, replaced line indexes): the script, applied by `sed -i` (or,
    replacements only, by `vim -es`), gives the same result.
    """
    body = range(1, len(lines) - 1)
    replace = set(rng.sample(list(body), min(len(body), rng.choice((1, 1, 1, 2, 2, 3)))))
    delete = None
    insert_after = None
    if allow_structure:
        others = [i for i in body if i not in replace]
        if others and (len(body) > 40 or (len(body) > 6 and rng.random() < 0.2)):
            delete = rng.choice(others)
        if len(body) < 8 or rng.random() < 0.25:
            insert_after = rng.choice([i for i in range(0, len(lines) - 1) if i != delete])
    result, script, counter = [], [], 0
    for i, line in enumerate(lines):
        if i == delete:
            script.append(f"{i + 1}d")
        elif i in replace:
            new = fresh_line(path_id, tag, counter, rng)
            counter += 1
            result.append(new)
            script.append(f"{i + 1}s/.*/{new.rstrip()}/")
        else:
            result.append(line)
        if i == insert_after:
            new = fresh_line(path_id, tag, counter, rng)
            counter += 1
            result.append(new)
            script.append(f"{i + 1}a {new.rstrip()}")
    return result, script, sorted(replace)


def split_lines(data):
    text = data.decode("utf-8", errors="surrogateescape")
    return text.splitlines(keepends=True)


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


# MARK: - The soak

class Soak:
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
        self.has_vim = shutil.which("vim") is not None
        self.has_rsync = shutil.which("rsync") is not None
        self.extra_tools = []  # the power-cut soak adds "durable-replace"
        self.agent = Agent(self.binary, self.project, self.workdir, random.Random(self.rng.getrandbits(64)))

    def next_tag(self, prefix):
        """A tag no other edit has: every line an edit adds carries it."""
        with self.model.lock:
            self.sequence += 1
            return f"{prefix}{self.sequence:06d}"

    # MARK: Setup

    def generate_project(self, file_count):
        os.makedirs(self.project)
        os.makedirs(self.staging)
        os.makedirs(os.path.join(self.workdir, "logs"))
        directories = ["src", "src/lib", "docs", "notes/2026", "config"]
        for index in range(file_count):
            path = f"{directories[index % len(directories)]}/file{index:02d}.txt"
            path_id = f"f{index:02d}"
            header, footer = f"#BEGIN {path}\n", f"#END {path}\n"
            self.path_ids[path] = path_id
            self.path_locks[path] = threading.Lock()
            self.model.paths[path] = PathModel(path, header, footer)
            lines = [header] + [fresh_line(path_id, "g0", k, self.rng) for k in range(self.rng.randint(10, 30))] + [footer]
            self.write_file(path, lines)
        self.git("init", "-q")
        with open(os.path.join(self.project, ".git", "info", "exclude"), "a") as handle:
            handle.write(".autosave/\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "first version")
        self.commits["first"] = self.git("rev-parse", "HEAD").strip()
        for path in self.paths():
            lines = self.disk_lines(path)
            self.model.paths[path].learn(lines)
            if self.rng.random() < 0.8:
                result, _, _ = plan_edit(lines, self.rng, self.path_ids[path], "g1")
                self.write_file(path, result)
                self.model.paths[path].learn(result)
        self.git("commit", "-q", "-a", "-m", "second version")
        self.commits["second"] = self.git("rev-parse", "HEAD").strip()

    def git(self, *args):
        completed = subprocess.run(
            ["git", "-c", "user.name=soak", "-c", "user.email=soak@localhost", "-c", "commit.gpgsign=false"] + list(args),
            cwd=self.project, capture_output=True, text=True)
        if completed.returncode != 0:
            raise SoakError(f"git {' '.join(args)} failed: {completed.stderr.strip()}")
        return completed.stdout

    def paths(self):
        return sorted(self.model.paths)

    def write_file(self, path, lines):
        absolute = os.path.join(self.project, path)
        os.makedirs(os.path.dirname(absolute), exist_ok=True)
        with open(absolute, "w") as handle:
            handle.write("".join(lines))

    def disk_bytes(self, path):
        try:
            with open(os.path.join(self.project, path), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    def disk_lines(self, path):
        data = self.disk_bytes(path)
        return None if data is None else split_lines(data)

    # MARK: Client writes

    def client_job(self, path, seed):
        """Read the buffer, change it, write it with --if-revision; retry when it moved on."""
        rng = random.Random(seed)
        with self.path_locks[path]:
            for _ in range(3):
                try:
                    reply = rpc(self.project, "read", path=path)
                except (OSError, RuntimeError, ValueError):
                    self.bump("client reads failed (agent gone)")
                    return
                if "content" not in reply:
                    self.bump("client reads without content")
                    return
                source = split_lines(reply["content"].encode())
                tag = self.next_tag("c")
                result, _, _ = plan_edit(source, rng, self.path_ids[path], tag)
                data = "".join(result).encode()
                with self.model.lock:
                    self.model.paths[path].learn(result)  # known before the agent can see it
                    self.appended[0] += len(data) + 2 * (JOURNAL_RECORD_OVERHEAD + len(path))
                try:
                    done = run_cli(self.binary, self.project, ["write", path, "--if-revision", str(reply["revision"])], stdin=data)
                except subprocess.TimeoutExpired:
                    done = None
                if done is not None and done.returncode == 0:
                    self.bump("client writes acknowledged")
                    version = Version(tag, path, "client", self.round, source, result, "acked")
                    version.detail = (f"read at revision {reply['revision']}, acknowledged "
                                      f"{done.stdout.decode().strip()} by agent run {self.agent.starts}")
                    try:
                        version.revision = int(json.loads(done.stdout)["revision"])
                    except (ValueError, KeyError, TypeError):
                        version.revision = None
                    version.run = self.agent.starts
                    self.model.add(version)
                    return
                if done is not None and b"edited meanwhile" in done.stderr:
                    self.bump("client writes refused (stale revision, retried)")
                    continue
                self.bump("client writes without answer")
                self.model.add(Version(tag, path, "client", self.round, source, result, "unknown"))
                return

    def bump(self, key, amount=1):
        with self.model.lock:
            self.counts[key] += amount

    def note(self, key):
        with self.model.lock:
            self.notes[key] += 1

    def burst(self, size):
        threads = []
        for path in self.rng.sample(self.paths(), size):
            thread = threading.Thread(target=self.client_job, args=(path, self.rng.getrandbits(64)), daemon=True)
            thread.start()
            threads.append(thread)
        return threads

    # MARK: External edits

    def external_edit(self, agent_down=False, path=None):
        path = path or self.rng.choice(self.paths())
        tools = ["redirect", "sed", "os.replace", "rename-dance", "git-checkout"] + self.extra_tools
        if self.has_vim:
            tools.append("vim")
        if self.has_rsync:
            tools.append("rsync")
        tool = self.rng.choice(tools)
        seed = self.rng.getrandbits(64)
        tag = self.next_tag("e")
        with self.path_locks[path]:
            frozen = False
            if not agent_down:
                frozen = self.agent.freeze()
                if not frozen:
                    self.note("external edits skipped (agent would not stop)")
                    return
            try:
                self._external_edit(path, tool, random.Random(seed), tag, agent_down)
            finally:
                if frozen:
                    self.agent.thaw()

    def _external_edit(self, path, tool, rng, tag, agent_down):
        absolute = os.path.join(self.project, path)
        source = self.disk_lines(path)
        if source is None:
            self.note("external edits skipped (file missing)")
            return
        path_id = self.path_ids[path]
        if tool == "git-checkout":
            for name in self.rng.sample(sorted(self.commits), len(self.commits)):
                commit = self.commits[name]
                shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=self.project, capture_output=True)
                intended = split_lines(shown.stdout)
                if intended != source:
                    break
            else:
                self.note("external edits skipped (git versions equal the file)")
                return
        else:
            intended, script, _ = plan_edit(source, rng, path_id, tag, allow_structure=(tool != "vim"))
        data = "".join(intended).encode()
        self.model.paths[path].learn(intended)
        staged = os.path.join(self.staging, os.path.basename(path))
        if tool in ("redirect", "rsync"):
            with open(staged, "wb") as handle:
                handle.write(data)
        if tool == "redirect":
            run_tool(["sh", "-c", 'cat "$1" > "$2"', "sh", staged, absolute])
        elif tool == "sed":
            run_tool(["sed", "-i"] + [arg for command in script for arg in ("-e", command)] + [absolute])
        elif tool in ("os.replace", "durable-replace"):
            descriptor, temp = tempfile.mkstemp(dir=os.path.dirname(absolute))
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, 0o644)
            os.replace(temp, absolute)
            if tool == "durable-replace":  # what a careful tool adds to survive a power cut
                folder = os.open(os.path.dirname(absolute), os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
        elif tool == "rename-dance":
            # What vim does with `backupcopy=no`: probe file, original renamed to the backup name,
            # new file written, backup deleted.
            directory = os.path.dirname(absolute)
            probe = os.path.join(directory, "4913")
            if os.path.exists(probe):  # left by a power cut; vim would take the next number
                os.unlink(probe)
            os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            os.unlink(probe)
            backup = absolute + "~"
            os.rename(absolute, backup)
            descriptor = os.open(absolute, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.unlink(backup)
        elif tool == "vim":
            commands = [arg for command in script for arg in ("-c", command)]
            run_tool(["vim", "-es", "-n", "-N", "-u", "NONE", "-i", "NONE",
                      "-c", "set backupcopy=no writebackup nobackup"] + commands + ["-c", "wq", absolute])
        elif tool == "git-checkout":
            run_tool(["git", "checkout", commit, "--", path], cwd=self.project)
        elif tool == "rsync":
            run_tool(["rsync", "-I", staged, absolute])
        actual = self.disk_lines(path)
        if actual != intended:
            self.note(f"{tool} wrote something else than planned (recorded what it wrote)")
            if actual is None:
                return
            self.model.paths[path].learn(actual)
        with self.model.lock:
            self.tools[tool + (" (agent down)" if agent_down else "")] += 1
            self.counts["external edits"] += 1
        version = Version(tag, path, tool, self.round, source, actual, "acked")
        version.detail = "while the agent was down" if agent_down else f"during agent run {self.agent.starts}"
        self.model.add(version)

    # MARK: Rounds

    def run_round(self):
        self.round += 1
        self.appended = [0, self.appended[0]]
        threads = self.activity()
        roll = self.rng.random()
        killed = ("in-flight" if roll < 0.2 else "after-ack" if roll < 0.4 else "frozen" if roll < 0.55
                  else "random" if roll < 0.75 else None)
        if killed:
            threads = self.interrupt(killed, threads, ["sed", "os.replace", "redirect"])
            if self.agent.alive():
                self.agent.kill()
            self.kinds[killed] += 1
            self.counts["kills"] += 1
            join_all(threads)
            if self.rng.random() < 0.3:
                for _ in range(self.rng.randint(1, 3)):
                    self.external_edit(agent_down=True)
            self.agent.start()
        else:
            join_all(threads)
        self.settle()
        self.check()

    def activity(self, burst_share=0.45):
        """A round's work: bursts of client writes, external edits (some of a file whose buffer has
        a client write just made), pauses. Returns the client threads still running."""
        threads = []
        for _ in range(self.rng.randint(3, 10)):
            choice = self.rng.random()
            if choice < burst_share:
                threads += self.burst(self.rng.randint(1, 5))
                if self.rng.random() < 0.5:
                    join_all(threads)
            elif choice < 0.65:
                # An external edit of a file whose buffer has an unsaved (or half-saved) client write.
                path = self.rng.choice([p for p in self.paths() if not self.path_locks[p].locked()] or self.paths())
                self.client_job(path, self.rng.getrandbits(64))
                time.sleep(self.rng.uniform(0, 0.015))
                self.external_edit(path=path)
            elif choice < 0.9:
                self.external_edit()
            else:
                time.sleep(self.rng.uniform(0, 0.05))
        return threads

    def interrupt(self, moment, threads, frozen_tools):
        """Leads up to the moment the agent is killed: "in-flight" (a burst whose appends and acks
        are on their way), "after-ack" (a burst acknowledged, its saves running), "frozen" (the
        agent stopped, an external edit by one of `frozen_tools` it never sees, killed stopped) or
        "random". Returns the client threads still running."""
        if moment == "in-flight":
            threads += self.burst(self.rng.randint(2, 6))
            time.sleep(self.rng.uniform(0.0, 0.06))
        elif moment == "after-ack":
            join_all(threads)
            threads = self.burst(self.rng.randint(2, 6))
            join_all(threads)
            time.sleep(self.rng.uniform(0, (self.agent.settings["delayMs"] + 10) / 1000))
        elif moment == "frozen":
            join_all(threads)
            path = self.rng.choice(self.paths())
            with self.path_locks[path]:
                if self.agent.freeze():
                    self._external_edit(path, self.rng.choice(frozen_tools),
                                        random.Random(self.rng.getrandbits(64)), self.next_tag("e"), False)
                    self.agent.kill()  # SIGKILL ends a stopped process too
        else:
            time.sleep(self.rng.uniform(0, 0.3))
        return threads

    def settle(self):
        """`autosave sync`, then wait until no buffer is dirty or saving and no change is pending."""
        deadline = time.monotonic() + 30
        quiet = 0
        while time.monotonic() < deadline:
            done = run_cli(self.binary, self.project, ["sync"])
            if done.returncode != 0:
                raise SoakError(f"`autosave sync` failed ({done.returncode}): {done.stderr.decode().strip()}\n"
                                f"{tail(self.agent.log_paths[-1])}")
            status = rpc(self.project, "status")
            busy = [b["path"] for b in status["buffers"] if b["dirty"] or b["saving"]]
            if not busy and status["watcher"]["pendingChanges"] == 0:
                quiet += 1
                if quiet >= 2:
                    return
            else:
                quiet = 0
            time.sleep(0.02)
        self.notes["rounds checked with a buffer still dirty after 30 s"] += 1

    # MARK: Checks

    def conflict_copies(self):
        copies = {}
        directory = os.path.join(self.project, ".autosave", "conflicts")
        for path in self.paths():
            folder = os.path.join(directory, os.path.dirname(path))
            pattern = re.compile(re.escape(os.path.basename(path)) + r"\.\d{8}-\d{6}\.\d+(-\d+)?$")
            try:
                names = sorted(os.listdir(folder))
            except FileNotFoundError:
                names = []
            copies[path] = [os.path.join(folder, name) for name in names if pattern.match(name)]
        return copies

    def check(self, with_buffers=True):
        copies = self.conflict_copies()
        for path in self.paths():
            model = self.model.paths[path]
            locations = []
            data = self.disk_bytes(path)
            if data is None:
                self.violation(path, "the file", "a complete version on disk", "the file is missing")
            else:
                locations.append(("disk", split_lines(data)))
            if with_buffers:
                try:
                    reply = rpc(self.project, "read", path=path)
                    if "content" in reply:
                        locations.append(("buffer", split_lines(reply["content"].encode())))
                except (OSError, RuntimeError, ValueError) as error:
                    raise SoakError(f"reading the buffer of {path} failed: {error}")
            for copy in copies[path]:
                with open(copy, "rb") as handle:
                    locations.append((os.path.relpath(copy, self.project), split_lines(handle.read())))
            for name, lines in locations:
                self.check_complete(model, name, lines)
            self.model.resolve(path, locations)
            for requirement in list(model.requirements):
                self.counts["versions checked"] += 1
                if any(requirement.present <= set(lines) and not (requirement.absent & set(lines)) for _, lines in locations):
                    continue
                version = requirement.version
                if version.vid in model.violated:
                    continue
                model.violated.add(version.vid)
                found = "; ".join(
                    f"{name}: missing {sorted(short(l) for l in requirement.present - set(lines))}, "
                    f"still has {sorted(short(l) for l in requirement.absent & set(lines))}"
                    for name, lines in locations)
                self.violation(path, version.describe(), 
                               f"lines {sorted(short(l) for l in requirement.present)} present and "
                               f"{sorted(short(l) for l in requirement.absent)} gone", found)
        self.check_temp_files()
        self.check_journal()

    def check_complete(self, model, name, lines):
        self.counts["contents checked"] += 1
        if lines and lines[0] == model.header and lines[-1] == model.footer and all(l in model.known_lines for l in lines):
            self.counts["contents equal to a written version" if content_digest(lines) in model.known_versions
                        else "contents that are merges of written versions"] += 1
            return
        unknown = [short(l) for l in lines if l not in model.known_lines][:5]
        self.violation(model.path, f"{name} is torn", "header first, footer last, only lines someone wrote",
                       f"{len(lines)} lines, first {short(lines[0]) if lines else '-'}, "
                       f"last {short(lines[-1]) if lines else '-'}, unknown lines {unknown}")

    def check_temp_files(self):
        for directory, _, files in os.walk(self.project):
            if os.path.relpath(directory, self.project).split(os.sep)[0] == ".git":
                continue
            for name in files:
                relative = os.path.relpath(os.path.join(directory, name), self.project)
                if TEMP_PATTERN.match(name) and relative not in self.reported_temps:
                    self.reported_temps.add(relative)  # reported once, however many rounds it stays
                    self.violation(relative, "agent temp file", "no temp file left once the agent restarted and settled",
                                   "the temp file is still there")
                elif not relative.startswith(".autosave" + os.sep) and relative not in self.model.paths:
                    self.notes[f"stray file {relative}"] += 1

    def journal_limit(self):
        """EditJournal rewrites itself on a save once it is over 1 MiB and over 4x its unsaved
        records. Settled, every edit is saved, so at the last save it was at most
        max(1 MiB, 4 x (unsaved records + header)); unsaved records are at most one per path, no
        larger than a merge of two of the path's versions (2 x its largest). Only appends since that save come on top: the
        records (and saved-markers) of this round's and, after a kill before any save, the previous
        round's client writes."""
        live = sum(len(path) + JOURNAL_RECORD_OVERHEAD + 2 * self.model.paths[path].largest for path in self.paths())
        return max(JOURNAL_COMPACTION_THRESHOLD, 4 * (live + 8)) + sum(self.appended)

    def check_journal(self):
        journal = os.path.join(self.project, ".autosave", "journal", "journal.log")
        try:
            size = os.path.getsize(journal)
        except FileNotFoundError:
            return
        self.max_journal = max(self.max_journal, size)
        limit = self.journal_limit()
        if size > limit:
            self.violation(".autosave/journal/journal.log", "the journal", f"at most {limit} bytes", f"{size} bytes")

    def violation(self, path, version, expected, found):
        entry = (self.round, path, version, expected, found, self.agent.starts)
        self.violations.append(entry)
        print(f"VIOLATION round {self.round}: {path}: {version} (details at the end)", flush=True)

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

    def summary(self, elapsed):
        events = Counter()
        for log_path in self.agent.log_paths:
            for event in read_events(log_path):
                events[event.get("event", "?")] += 1
        c, m = self.counts, self.model.counts
        print(f"seed {self.seed}: {self.round - 1} rounds in {elapsed / 60:.1f} min; "
              f"agent settings varied per start (save delay 0-20 ms, conflicts.keep disk/buffer)")
        print(f"rounds {self.round - 1} | kills {c['kills']} ({', '.join(f'{k} {v}' for k, v in sorted(self.kinds.items()))})"
              f" | restarts {self.agent.starts - 1}")
        print(f"client writes {c['client writes acknowledged']} acknowledged, "
              f"{c['client writes refused (stale revision, retried)']} refused as stale, "
              f"{c['client writes without answer']} without answer "
              f"({m['unknown writes applied']} had been applied, {m['unknown writes not applied']} had not)")
        print(f"external edits {c['external edits']} ({', '.join(f'{k} {v}' for k, v in sorted(self.tools.items()))})")
        print(f"agent log: " + ", ".join(f"{k} {events[k]}" for k in
              ("saved", "reloaded", "merged", "conflict", "recovered", "removed-temp", "journal-torn", "save-failed")))
        print(f"versions checked {c['versions checked']} | contents checked {c['contents checked']} "
              f"({c['contents equal to a written version']} equal to a written version, "
              f"{c['contents that are merges of written versions']} merges) | journal max {self.max_journal} bytes")
        for note, count in sorted(self.notes.items()):
            print(f"note: {note}: {count}")
        print(f"violations {len(self.violations)}")
        for round_number, path, version, expected, found, run in self.violations:
            print(f"- round {round_number}, agent run {run} (logs/agent-{run:04d}.log): {path}\n"
                  f"    version:  {version}\n    expected: {expected}\n    found:    {found}")
            for log_path in self.agent.log_paths[max(0, run - 3):run]:
                for event in read_events(log_path):
                    if event.get("path") == path or event.get("event") in ("journal-torn", "removed-temp", "recover-failed"):
                        print(f"    {os.path.basename(log_path)}: {json.dumps(event)}")


def short(line):
    return line.rstrip("\n")[:40]


def run_tool(command, cwd=None):
    completed = subprocess.run(command, cwd=cwd, capture_output=True, timeout=60)
    if completed.returncode != 0:
        raise SoakError(f"{command[0]} failed ({completed.returncode}): {completed.stderr.decode(errors='replace').strip()}")


def join_all(threads):
    for thread in threads:
        thread.join()
    threads.clear()


def replay_command(args, seed):
    parts = [sys.argv[0], "--seed", str(seed), "--binary", args.binary, "--files", str(args.files)]
    if args.rounds:
        parts += ["--rounds", str(args.rounds)]
    if args.minutes:
        parts += ["--minutes", str(args.minutes)]
    if getattr(args, "no_fsync", False):
        parts.append("--no-fsync")
    return " ".join(parts)


def main():
    parser = argparse.ArgumentParser(description="Crash soak for the autosave agent (see the header of this file).")
    return run_soak(Soak, parse_arguments(parser, files=36, smoke_files=16, smoke_rounds=60), "soak")


def parse_arguments(parser, files, smoke_files, smoke_rounds):
    """The options both soaks take (`parser` may have more), parsed, with --smoke's limits and a
    seed drawn when none was given."""
    parser.add_argument("--binary", default=DEFAULT_BINARY, help=f"the autosave binary (default {DEFAULT_BINARY})")
    parser.add_argument("--rounds", type=int, help="run this many rounds")
    parser.add_argument("--minutes", type=float, help="run rounds for this long")
    parser.add_argument("--seed", type=int, help="random seed (printed; a run is replayed from it)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"short mode for CI: {smoke_files} files, {smoke_rounds} rounds, 2 minutes at most")
    parser.add_argument("--files", type=int, default=files, help=f"files in the generated project (default {files})")
    parser.add_argument("--keep", action="store_true", help="keep the work folder even when the run passes")
    args = parser.parse_args()
    if args.smoke:
        args.files = min(args.files, smoke_files)
        args.minutes = args.minutes or 2.0
        args.rounds = args.rounds or smoke_rounds
    if not args.rounds and not args.minutes:
        args.rounds = 100
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2**31)
    return args


def run_soak(kind, args, name, stop=lambda soak: None):
    """Checks the binary and tools, runs a `kind` soak, prints its summary; `stop(soak)` runs last
    (the power-cut soak unmounts there). Returns the exit status: 0 with no violation, 1 with
    any (or when the soak could not go on), 2 when it could not start."""
    if not os.access(args.binary, os.X_OK):
        print(f"{name}: the autosave binary {args.binary} does not exist or is not executable "
              f"(build it with `swift build -c release`, or pass --binary)", file=sys.stderr)
        return 2
    for tool in ("git", "sed"):
        if shutil.which(tool) is None:
            print(f"{name}: `{tool}` is not installed; it is needed for the external edits", file=sys.stderr)
            return 2
    soak = kind(args)
    failed = False
    try:
        elapsed = soak.run()
        soak.summary(elapsed)
        failed = bool(soak.violations)
    except (SoakError, OSError, subprocess.SubprocessError, RuntimeError) as error:
        print(f"{name}: stopped in round {soak.round} (seed {soak.seed}): {error}", file=sys.stderr)
        if soak.agent.log_paths:
            print(f"{name}: agent log {soak.agent.log_paths[-1]}", file=sys.stderr)
        failed = True
    except KeyboardInterrupt:
        print(f"{name}: interrupted in round {soak.round} (seed {soak.seed})", file=sys.stderr)
        failed = True
    finally:
        if soak.agent.alive():
            soak.agent.thaw()
            soak.agent.process.kill()
            soak.agent.process.wait()
        stop(soak)
    if failed or args.keep:
        print(f"{name}: the project, config and logs are kept in {soak.workdir}", file=sys.stderr if failed else sys.stdout)
    else:
        shutil.rmtree(soak.workdir, ignore_errors=True)
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
