"""What "nothing lost" means, and the verdicts. The model records every edit (a Version: the
lines its author saw and the lines it wrote) and what each one still requires to be somewhere
(lines present, lines absent) until a later edit made on a version holding it supersedes it.
Checks, the Soak's checks after every round: (a) nothing torn, (b, c) every requirement held on
disk, in the buffer or in a conflict copy, (d) no agent temp file, (e) the journal's bound, (f)
history keeps its versions and holds the disk; each finding is a violation."""

import base64
import hashlib
import os
import re
import threading
import time
from collections import Counter

from agent import SoakError, read_events, rpc
from content import split_lines

TEMP_PATTERN = re.compile(r"^\..+\.autosave-[a-z0-9]{10}\.tmp$")
JOURNAL_COMPACTION_THRESHOLD = 1 << 20  # EditJournal.compactionThreshold
JOURNAL_RECORD_OVERHEAD = 8 + 38        # frame (length, crc) + fixed payload, before path and content


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


class Checks:
    """The checks of the Soak (part of harness.Soak; uses the state its __init__ makes)."""

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
        if with_buffers:
            self.check_history()

    def check_history(self):
        """(f) History keeps what it was given through kill -9 and power cuts: each version read
        back at an earlier check (after `sync`, so durable) is read back again byte for byte, and
        a random path's latest version is what its file holds now (once this run's baseline is
        done: a file changed while the agent was down gets its version there)."""
        log = self.agent.log_paths[-1]
        deadline = time.monotonic() + 30
        state = None
        while time.monotonic() < deadline and state not in ("done", "off", "failed"):
            states = [e.get("state") for e in read_events(log) if e.get("event") == "history-baseline"]
            state = states[-1] if states else None
            if state not in ("done", "off", "failed"):
                time.sleep(0.02)
        if state != "done":
            self.violation("-", "history's baseline", "history-baseline state=done after ready",
                           f"state {state} (log {log})")
            return
        for path, version, digest in self.history_samples:
            found = history_content(self.project, path, version)
            self.counts["history versions read back"] += 1
            if found is None or hashlib.sha256(found).hexdigest() != digest:
                self.violation(path, f"history version {version}", f"its bytes (sha256 {digest[:12]}) read back",
                               "missing" if found is None else f"sha256 {hashlib.sha256(found).hexdigest()[:12]}")
        path = self.history_rng.choice(self.paths())
        disk = self.disk_bytes(path)
        if disk is None:
            return
        # A conflict copy is a version of the file that was never on disk at its path: the file's
        # latest is the newest of the others.
        versions = rpc(self.project, "history", path=path, limit=16)["versions"]
        latest = next((v for v in versions if v["kind"] != "conflict-copy"), None)
        found = history_content(self.project, path, latest["version"]) if latest else None
        self.counts["history latest versions checked"] += 1
        if found != disk:
            self.violation(path, "history's latest version", f"the file's {len(disk)} bytes on disk",
                           "no version" if latest is None else f"version {latest['version']} ({latest['kind']}): "
                           f"{'no content' if found is None else f'{len(found)} other bytes'}")
            return
        self.history_samples = (self.history_samples + [(path, latest["version"], hashlib.sha256(disk).hexdigest())])[-8:]

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


def history_content(project, path, version):
    """A version's bytes, as `autosave show PATH@ID` prints them; None when it has none."""
    try:
        reply = rpc(project, "show", path=path, version=str(version))
    except RuntimeError:
        return None
    if "content" in reply:
        return reply["content"].encode()
    if "contentBase64" in reply:
        return base64.b64decode(reply["contentBase64"])
    return None


def short(line):
    return line.rstrip("\n")[:40]
