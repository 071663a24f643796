"""Figure 9: ranged edits. One-character `edit`s into an open --ranged-mb text file, one at a time
(9a: latency against a tiny `read`'s round trip) and pipelined (9b: the journal's size and the
agent's peak RSS), each checked against a model of the edits (EditModel); and `autosave patch` of a
`diff -u` into an open file against GNU `patch` (9c).
"""
import filecmp
import os
import random
import shlex
import shutil
import statistics
import subprocess

from .agent import AgentRun
from .common import BenchError, ms, now_ns, percentile, write_text_lines
from .processes import log_event, peak_rss_kib


# ---------------------------------------------------------------------------------------------
# Figure 9's edits and the text they should make


class EditModel:
    """One-character insertions at random places in a text, and the text they make.

    Each `next_params` is the `edit` request for one insertion (a letter at a random line and
    character, utf-8 positions) and applies it to the model's own lines, so that after the agent
    answered every request its buffer must equal `content()`. Seeded: a run is reproducible.
    """

    def __init__(self, content, seed):
        # Split at `\n` only: the text is figure 8's ASCII lines, so the agent counts the same lines.
        self.lines = content.split(b"\n")
        self.random = random.Random(seed)
        # The last element is what follows the final line break (empty): never edited, so every
        # edit lands inside a real line.
        self.editable = len(self.lines) - 1 if len(self.lines) > 1 else 1

    def next_params(self, path):
        line = self.random.randrange(self.editable)
        text = self.lines[line]
        character = self.random.randint(0, len(text))
        letter = chr(ord("a") + self.random.randrange(26))
        self.lines[line] = text[:character] + letter.encode() + text[character:]
        position = {"line": line, "character": character}
        return {"path": path, "positionEncoding": "utf-8",
                "edits": [{"start": position, "end": position, "text": letter}]}

    def content(self):
        return b"\n".join(self.lines)


def scattered_changes(content, count, seed):
    """`content` with `count` lines rewritten, one in each of `count` equal stretches of the text and
    at least 8 lines from a stretch's ends, so that `diff -u` (3 lines of context) makes one hunk each."""
    lines = content.split(b"\n")
    stretch = (len(lines) - 1) // count
    if stretch < 17:
        raise BenchError(f"{len(lines) - 1} lines are too few for {count} separate hunks (at least {17 * count})")
    chosen = random.Random(seed)
    for index in range(count):
        line = index * stretch + chosen.randrange(8, stretch - 8)
        lines[line] = f"line {line} was changed by the patch (seed {seed})".encode()
    return b"\n".join(lines)


def unified_diff(old_path, new_path, name):
    """`diff -u` of two files, labelled `a/NAME` and `b/NAME` as git labels them."""
    if not shutil.which("diff"):
        raise BenchError("diff is not installed (Debian package diffutils): figure 9 makes its patch with it")
    argv = ["diff", "-u", "--label", f"a/{name}", "--label", f"b/{name}", old_path, new_path]
    result = subprocess.run(argv, capture_output=True)
    if result.returncode != 1:
        raise BenchError(f"{shlex.join(argv)} exited {result.returncode} (1 = files differ): {result.stderr.decode()[-300:]}")
    return result.stdout


# ---------------------------------------------------------------------------------------------
# The figure


class RangedEditsFigure:
    """Figure 9: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 9: ranged edits ---------------------------------------------------------------------

    # Nothing is saved while the edits come (each pushes the save a minute on), so the journal holds
    # every one of them; the journal is not fsync'd, so an edit costs what the agent does, not the disk.
    RANGED_SETTINGS = {"autosave": {"delayMs": 60_000, "maxDelayMs": 3_600_000}, "journal": {"fsync": False}}

    def ranged_agent(self, label, run):
        """A fresh root holding `big.txt` (--ranged-mb MiB of figure 8's lines) and `tiny.txt`, and an
        agent for it (not started); returns the agent and big.txt's bytes."""
        source = os.path.join(self.work, "ranged-in.txt")
        if not os.path.exists(source):
            write_text_lines(source, size=self.options.ranged_mb << 20)
        with open(source, "rb") as file:
            content = file.read()
        root = self.fresh_dir(f"ranged-{label}")
        shutil.copyfile(source, os.path.join(root, "big.txt"))
        with open(os.path.join(root, "tiny.txt"), "w") as file:
            file.write("tiny\n")
        return AgentRun(self, root, self.RANGED_SETTINGS, f"ranged-{label}-{run}"), content

    @staticmethod
    def check_model(held, model, what):
        """Fails the figure when the buffer's bytes are not what the model of the edits made."""
        expected = model.content()
        if held == expected:
            return
        first = next((index for index, (a, b) in enumerate(zip(held, expected)) if a != b), min(len(held), len(expected)))
        line = expected.count(b"\n", 0, first)
        raise BenchError(f"after {what} the buffer ({len(held)} bytes) differs from the model of the edits "
                         f"({len(expected)} bytes) from byte {first} (line {line}): buffer {held[first:first + 40]!r}, "
                         f"model {expected[first:first + 40]!r}")

    def ranged_latency(self, run):
        """9a: one-character edits into the open big buffer, each answered before the next is sent,
        each followed by the peer: a `read` of tiny.txt on the same connection (a round trip that
        touches no large buffer; `status` would, as it compares each buffer with its base)."""
        agent, content = self.ranged_agent("latency", run)
        count, warmup = self.options.ranged_edits, 20
        self.configs["9 edit latency"] = (
            f"{len(content) / 1e6:.1f} MB of text lines open in a buffer, {count} one-letter insertions at random places "
            f"(utf-8 positions; {warmup} more untimed first), each answered before the next is sent, one connection, each "
            f"followed by a `read` of a 5-byte file on it (the peer); autosave.delayMs 60000, journal.fsync false")
        model = EditModel(content, seed=run)
        edits, trips = [], []
        try:
            agent.start()
            client = agent.client()
            try:
                client.call("open", path="big.txt")
                client.call("open", path="tiny.txt")
                for index in range(warmup + count):
                    edit_id, edit_line = client.request("edit", model.next_params("big.txt"))
                    trip_id, trip_line = client.request("read", {"path": "tiny.txt"})
                    edit = client.round_trip(edit_id, edit_line, "a one-character `edit`")
                    trip = client.round_trip(trip_id, trip_line, "a `read` of tiny.txt")
                    if index >= warmup:
                        edits.append(ms(edit))
                        trips.append(ms(trip))
                held = client.read_raw("big.txt")
            finally:
                client.close()
        finally:
            agent.stop()
        self.check_model(held, model, f"{warmup + count} edits")
        for name, samples in (("edit", edits), ("trip", trips)):
            self.record(f"ranged.{name}.p50", percentile(samples, 0.5))
            self.record(f"ranged.{name}.p99", percentile(samples, 0.99))
        print(f"  ranged edit into {len(content) / 1e6:.1f} MB: p50 {percentile(edits, 0.5):.3f} ms, p99 "
              f"{percentile(edits, 0.99):.3f} ms ({count} edits); round trip of a tiny `read` p50 "
              f"{percentile(trips, 0.5):.3f} ms, p99 {percentile(trips, 0.99):.3f} ms", flush=True)

    def ranged_journal(self, run):
        """9b: --journal-edits one-character edits, pipelined on one connection, then the journal's size
        and the agent's peak RSS, before any save (the journal still holds every edit)."""
        agent, content = self.ranged_agent("journal", run)
        count = self.options.journal_edits
        self.configs["9 journal"] = (f"{len(content) / 1e6:.1f} MB open in a buffer, {count} one-letter insertions at random places, "
                                     f"pipelined on one connection, measured before any save; autosave.delayMs 60000, journal.fsync false")
        journal = os.path.join(agent.root, agent.effective["stateDir"], "journal", "journal.log")
        model = EditModel(content, seed=1000 + run)
        try:
            agent.start()
            base = peak_rss_kib(agent.process.pid)
            client = agent.client()
            try:
                client.call("open", path="big.txt")
                requests = [client.request("edit", model.next_params("big.txt"))[1] for _ in range(count)]
                started = now_ns()
                answers = client.pipeline(requests, f"{count} pipelined one-character edits")
                elapsed = ms(now_ns() - started)
                refused = [answer for answer in answers if "error" in answer]
                if refused:
                    raise BenchError(f"the agent refused {len(refused)} of {count} edits: {refused[0]['error'].get('message')}")
                # Before the read that checks the buffer: that read's copy is the check's, not the edits'.
                peak = peak_rss_kib(agent.process.pid)
                held = client.read_raw("big.txt")
            finally:
                client.close()
            # Read before the stop, which saves the buffer and rewrites the journal.
            try:
                journal_bytes = os.path.getsize(journal)
            except OSError as error:
                raise BenchError(f"cannot find the agent's journal: {error}") from error
            saves = agent.log.collect(0.05, log_event("saved", path="big.txt"))
        finally:
            agent.stop()
        self.check_model(held, model, f"{count} pipelined edits")
        if saves:
            raise BenchError(f"the agent saved big.txt during the edits (autosave.delayMs 60000), so the journal was not "
                             f"measured holding all {count} of them")
        self.record("ranged.journal", journal_bytes / 1e6)
        self.record("ranged.rss", peak * 1024 / len(content))
        self.record("ranged.rss.growth", (peak - base) * 1024 / len(content))
        self.extra["ranged.rss.base-mib"].append(base / 1024)
        self.extra["ranged.journal.bytes-per-edit"].append(journal_bytes / count)
        self.extra["ranged.journal.edits-per-s"].append(count / elapsed * 1000)
        print(f"  {count} ranged edits in {elapsed:.0f} ms ({count / elapsed * 1000:.0f}/s): journal {journal_bytes / 1e6:.2f} MB "
              f"({journal_bytes / count:.0f} bytes per edit), peak RSS {peak / 1024:.0f} MiB = "
              f"{peak * 1024 / len(content):.2f} x the file ({base / 1024:.0f} MiB before the file was opened)", flush=True)

    def ranged_patch(self, run):
        """9c: `autosave patch` of a --patch-hunks-hunk `diff -u` into the open buffer of a --patch-lines
        file, CLI start to exit, vs GNU `patch` applying the same diff to a copy on disk. Each sample
        is undone, untimed, by the reverse diff (agent) or a fresh copy (peer)."""
        lines, hunks, samples = self.options.patch_lines, self.options.patch_hunks, self.options.patch_samples
        original_path = os.path.join(self.work, "patch-in.txt")
        if not os.path.exists(original_path):
            write_text_lines(original_path, lines=lines)
        with open(original_path, "rb") as file:
            original = file.read()
        changed = scattered_changes(original, hunks, seed=run)
        changed_path = os.path.join(self.work, "patch-out.txt")
        with open(changed_path, "wb") as file:
            file.write(changed)
        forward, reverse = os.path.join(self.work, "fix.diff"), os.path.join(self.work, "unfix.diff")
        for path, (old, new) in ((forward, (original_path, changed_path)), (reverse, (changed_path, original_path))):
            text = unified_diff(old, new, "doc.txt")
            made = text.count(b"\n@@ ")
            if made != hunks:
                raise BenchError(f"diff -u made {made} hunks of the {hunks} scattered changes")
            with open(path, "wb") as file:
                file.write(text)
        root = self.fresh_dir("ranged-patch")
        shutil.copyfile(original_path, os.path.join(root, "doc.txt"))
        with open(os.path.join(root, "tiny.txt"), "w") as file:
            file.write("tiny\n")
        peer = shutil.which("patch")
        if peer is None and "patch" not in self.unavailable:
            self.unavailable["patch"] = "GNU patch is not installed (Debian package patch)"
            print(f"  patch: unavailable: {self.unavailable['patch']}", flush=True)
        agent = AgentRun(self, root, self.RANGED_SETTINGS, f"ranged-patch-{run}")
        self.configs["9 patch"] = (f"{lines} lines ({len(original) / 1e6:.1f} MB) open in a buffer, a `diff -u` of {hunks} one-line "
                                   f"changes ({hunks} hunks), `autosave patch FILE` start to exit, {samples} per run; the peer "
                                   f"`patch -s FILE -i DIFF` on a copy on disk; autosave.delayMs 60000, journal.fsync false")
        agent_ms, peer_ms, floor_ms = [], [], []
        peer_copy = os.path.join(self.work, "patch-peer.txt")
        try:
            agent.start()
            client = agent.client()
            try:
                client.call("open", path="doc.txt")
                for sample in range(samples):
                    started = now_ns()
                    self.cli(agent, ["patch", forward])
                    agent_ms.append(ms(now_ns() - started))
                    if client.read_raw("doc.txt") != changed:
                        raise BenchError(f"after `autosave patch` (sample {sample + 1}) the buffer is not the patched file")
                    self.cli(agent, ["patch", reverse])
                    # What any CLI command costs start to exit (the process, finding the socket, one
                    # small request): the part of the patch's time that is not the patch.
                    started = now_ns()
                    self.cli(agent, ["cat", "tiny.txt"])
                    floor_ms.append(ms(now_ns() - started))
                    if peer is not None:
                        shutil.copyfile(original_path, peer_copy)
                        argv = [peer, "-s", "--no-backup-if-mismatch", peer_copy, "-i", forward]
                        started = now_ns()
                        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                        peer_ms.append(ms(now_ns() - started))
                        if result.returncode != 0:
                            raise BenchError(f"{shlex.join(argv)} exited {result.returncode}: {result.stderr.decode()[-300:]}")
                        if not filecmp.cmp(peer_copy, changed_path, shallow=False):
                            raise BenchError("GNU patch did not make the patched file (the diff is not what it should be)")
                if client.read_raw("doc.txt") != original:
                    raise BenchError("the reverse patch did not bring the buffer back to the original")
            finally:
                client.close()
        finally:
            agent.stop()
        self.record("ranged.patch.agent", statistics.median(agent_ms))
        if peer_ms:
            self.record("ranged.patch.peer", statistics.median(peer_ms))
        self.extra["ranged.patch.cli-floor-ms"].append(statistics.median(floor_ms))
        peer_text = f"GNU patch {statistics.median(peer_ms):.1f} ms" if peer_ms else "GNU patch unavailable"
        print(f"  patch of {hunks} hunks into {lines} lines: autosave patch {statistics.median(agent_ms):.1f} ms "
              f"(min {min(agent_ms):.1f}, max {max(agent_ms):.1f}, {samples} samples; `autosave cat` of a 5-byte file "
              f"{statistics.median(floor_ms):.1f} ms), {peer_text}", flush=True)
