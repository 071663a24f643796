#!/usr/bin/env python3
"""Power-cut soak for the autosave agent: the crash soak's clients and tools on a faultfs mount,
and at random moments the power is cut; then a check that nothing acknowledged or saved was lost.

    soak/powercut.py --smoke                   # CI: 2 minutes at most (as root, with FUSE)
    soak/powercut.py --minutes 30 --seed 42    # what `make powercut SOAK_MINUTES=30` runs
    soak/powercut.py --no-fsync --rounds 100   # journal.fsync and write.fsync false: see below

`kill -9` leaves the page cache to the next agent, so the crash soak cannot see a missing fsync.
Here the project (and the agent's state dir, journal included) lives on faultfs
(`faultfs/faultfs.py`), which passes everything through to a backing folder but keeps apart the
*durable image*: file data made durable by fsync, names by fsync of their folder. A cut kills
the agent (`kill -9`, as the power would), then tells faultfs to drop everything volatile: the
mount shows only the durable image, and the agent starts again on it. Half the cuts are *torn*:
a random prefix of the volatile operations, in order, reaches the disk as a partial flush would
(and part of the write where it stops): every state a save or a journal append passes through.

Each round runs the crash soak's activity (client writes through `autosave write --if-revision`,
external edits by real tools with the agent frozen around them), then cuts the power: with a
burst of writes in flight (journal appends), right after their acks (saves in flight), after an
external edit the agent never saw, at a random moment, or once everything settled. Tools that do
not fsync (sed -i, a redirect, git, rsync, vim) may lose their edit in a cut: that is theirs to
lose; one that writes in place or makes the file anew (a redirect, git) can leave it empty or
half written, and the soak then puts back what the tool found, as its user would (counted), and
removes the tools' half-done temps. `durable-replace` (temp, fsync, rename, fsync of the folder)
may lose nothing.

Checks, right after the cut, on the durable image, before the agent is back:
  (s) every file whose `saved` line was logged holds that revision or a later one: each client
      write acknowledged at a revision up to the last one saved is on disk or in a conflict copy
      (unless a later edit, made on a version holding it, changed it);
  (a) no file is torn (header first, footer last, only lines someone wrote);
and once the agent is back (`ready`, then `autosave sync` and settled), the crash soak's checks:
  (a) no file, buffer or conflict copy is torn;
  (b, c) every acknowledged client write, and every external edit that was durable (a
      durable-replace, or any edit the image still held after the cut), is on disk, in its buffer
      or in a conflict copy; (r) a file whose acknowledged edit the cut took from the disk logged
      `recovered` (or a conflict);
  (d) no agent temp file is left; (j) the journal was readable: no `journal-corrupt`, and the
      agent started.
With --no-fsync (`journal.fsync: false`, `write.fsync: false`) the same run counts what was lost
instead, sorted by what docs/guarantees.md's known limits allow: an acknowledged edit lost in a cut (allowed
with journal.fsync false); a saved revision undone, a file or conflict copy written just before
the cut torn or gone (allowed with write.fsync false; the soak puts back the file's last settled
or durably replaced version and removes the copy). A temp left, an unreadable journal, or a loss
of anything the cut left on disk are violations in both modes.

The last line: `powercut: R rounds, C cuts, A acknowledged edits, V violations`.

The code: this file (PowerCutSoak: the cut, the checks on the durable image, its summary lines)
and faultmount.py (the faultfs mount); the rest is the crash soak's (see the header of soak.py).
"""

import argparse
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from agent import SoakError, read_events  # noqa: E402
from checks import TEMP_PATTERN, Version, short  # noqa: E402
from content import split_lines  # noqa: E402
from faultmount import FaultMount, why_not_here  # noqa: E402
from harness import Soak  # noqa: E402
from options import parse_arguments, run_soak  # noqa: E402
from scenario import join_all  # noqa: E402

TORN_BY_TOOL = "files a tool's unsynced write left torn by a cut (restored)"


class PowerCutSoak(Soak):
    """The crash soak on faultfs, each round ending in a power cut."""

    def __init__(self, args):
        super().__init__(args)
        self.fsync = not args.no_fsync
        self.backing = os.path.join(self.workdir, "backing")
        self.mount = FaultMount(self.workdir, self.backing, os.path.join(self.workdir, "mount"),
                                self.rng.getrandbits(32))
        self.extra_tools = ["durable-replace", "durable-replace"]
        self.agent.config_extra = {"journal": {"fsync": self.fsync}, "write": {"fsync": self.fsync}}
        self.cut_kinds = Counter()
        self.losses = Counter()  # what --no-fsync lost, by the known limit that allows it
        self.awaiting_recovery = set()  # paths whose acknowledged edits the cut took from the disk
        self.settled = {}  # path -> the file as the last settled round found it
        self.unsynced = {}  # path -> the file before the last tool that wrote it without fsync since the last cut

    # MARK: Setup

    def generate_project(self, file_count):
        """The project is made in the backing folder (durable from the first mount), then mounted."""
        os.makedirs(self.backing)
        self.project = os.path.join(self.backing, "project")
        super().generate_project(file_count)
        self.settled = {path: self.disk_lines(path) for path in self.paths()}
        self.mount.start()
        self.project = os.path.join(self.mount.mountpoint, "project")
        self.agent.project = self.project

    def _external_edit(self, path, tool, rng, tag, agent_down):
        before = self.disk_lines(path)
        super()._external_edit(path, tool, rng, tag, agent_down)
        if tool == "durable-replace":
            self.unsynced.pop(path, None)
            self.settled[path] = self.disk_lines(path)  # durable: what a later torn save is put back to
        elif before is not None and self.disk_lines(path) != before:
            # A torn flush stops inside one write; everything before it reached the disk. So a file
            # torn by a cut was torn by the last tool that wrote it without fsync, and `before` is
            # what that tool found.
            self.unsynced[path] = before

    # MARK: Rounds

    def run_round(self):
        self.round += 1
        self.appended = [0, self.appended[0]]
        threads = self.activity(burst_share=0.5)
        roll = self.rng.random()
        kind = ("in-flight" if roll < 0.25 else "after-ack" if roll < 0.5 else "frozen" if roll < 0.65
                else "random" if roll < 0.85 else "settled")
        if kind == "settled":  # everything saved: every acknowledged edit must be on disk
            join_all(threads)
            self.settle()
        else:
            threads = self.interrupt(kind, threads, ["sed", "durable-replace", "redirect"])
        torn = self.rng.random() < 0.5
        self.cut(kind, torn, threads)
        if self.rng.random() < 0.3:
            for _ in range(self.rng.randint(1, 3)):
                self.external_edit(agent_down=True)
        self.restart()
        self.settle()
        self.check_recovered()
        self.check()

    def cut(self, kind, torn, threads):
        if self.agent.alive():
            self.agent.kill()
        join_all(threads)  # the clients hear the agent go and exit: nothing holds the mount
        saved = self.saved_revisions(self.agent.log_paths[-1])
        self.mount.cut(torn)
        self.kinds[kind] += 1
        self.cut_kinds["torn" if torn else "whole"] += 1
        self.counts["kills"] += 1
        lock = os.path.join(self.project, ".git", "index.lock")
        if os.path.exists(lock):  # git's lock, made but never removed durably; its user removes it too
            os.unlink(lock)
            self.note("git index.lock left by a cut (removed before git ran again)")
        self.check_after_cut(saved)
        self.remove_tool_leftovers()

    def restart(self):
        try:
            self.agent.start()
        except SoakError as error:
            self.violation(".autosave/journal", "the agent after a cut", "starts (`ready`)", str(error))
            raise
        for event in read_events(self.agent.log_paths[-1]):
            if event.get("event") == "journal-corrupt":
                self.violation(".autosave/journal", "the journal", "readable after a cut", f"journal-corrupt: {event}")

    @staticmethod
    def saved_revisions(log_path):
        saved = {}
        for event in read_events(log_path):
            if event.get("event") == "saved" and "revision" in event:
                saved[event["path"]] = max(saved.get(event["path"], 0), int(event["revision"]))
        return saved

    # MARK: Checks after the cut, on the durable image

    def check_after_cut(self, saved):
        self.awaiting_recovery = set()
        copies = self.conflict_copies()
        if not self.fsync:
            self.remove_torn_copies(copies)
        for path in self.paths():
            model = self.model.paths[path]
            data = self.disk_bytes(path)
            lines = None if data is None else split_lines(data)
            restored_note = ""
            broken = lines is None or not self.is_complete(model, lines)
            if broken and (path in self.unsynced or not self.fsync):
                # A tool that writes in place or makes the file anew without fsync (a redirect,
                # git, vim's rename dance) can leave it empty, half written or gone, and so can a
                # save with write.fsync false whose folder reached the disk before its data: put
                # back what was there, as its user would.
                if path in self.unsynced:
                    restored = self.unsynced[path]
                    self.counts[TORN_BY_TOOL] += 1
                else:
                    restored = self.settled[path]
                    self.losses["a file saved just before the cut torn or gone (write.fsync false)"] += 1
                self.write_file(path, restored)
                self.sync_file(path)
                # Not a new edit (it asks for nothing to be kept): the lines were already required
                # as far as their authors' edits were.
                version = Version(self.next_tag("r"), path, "restore", self.round, restored, restored, "acked")
                version.detail = "the file as it was before the write a cut tore"
                self.model.add(version)
                lines = restored
                restored_note = f" (torn by the cut: {len(data or b'')} bytes; the soak restored it)"
            if lines is None:
                self.violation(path, "the file after a cut", "a complete version on disk", "the file is missing")
                continue
            self.check_complete(model, "disk after a cut", lines)
            present = set(lines)
            kept_aside = []  # what an overlap kept in a conflict copy is as durable as a save
            for copy in copies[path]:
                with open(copy, "rb") as handle:
                    kept_aside.append(set(split_lines(handle.read())))
            live = {id(r): r for r in model.requirements}
            # Edits queued behind a write whose client got no answer (a cut mid-burst) have not
            # superseded anything yet: a line they replaced may rightly be gone. Those files are
            # checked after the restart, once the queue is resolved against what is found.
            undecided = bool(model.queue)
            if undecided:
                self.counts["files not checked at a cut (writes of unknown outcome)"] += 1
            for requirement in list(model.requirements):
                version = requirement.version
                on_disk = any(requirement.present <= held and not (requirement.absent & held)
                              for held in [present] + kept_aside)
                revision = version.revision
                if not undecided and revision is not None and version.run == self.agent.starts and revision <= saved.get(path, 0) and not on_disk:
                    self.counts["saved revisions undone"] += 1
                    if self.fsync:
                        self.violation(path, version.describe(),
                                       f"on disk after a cut: saved at revision {saved[path]} >= {revision}",
                                       f"missing {sorted(short(l) for l in requirement.present - present)}, "
                                       f"still has {sorted(short(l) for l in requirement.absent & present)}{restored_note}")
                    else:
                        self.losses["saved revision undone (write.fsync false)"] += 1
                if not undecided and not on_disk and version.author == "client" and self.durable(version):
                    self.awaiting_recovery.add(path)
                if on_disk or self.durable(version):
                    continue
                # A tool that never fsync'd lost its edit; or, with fsync off, an acknowledged edit
                # (journal.fsync false), or a durable tool's edit that only a save or a conflict
                # copy of the agent's held once it had saved over it (write.fsync false).
                del live[id(requirement)]
                if version.author == "client":
                    self.losses["acknowledged edit not on disk (journal.fsync false)"] += 1
                elif version.author in ("durable-replace", "restore"):
                    self.losses["a durable tool's edit held by a save or copy the cut undid (write.fsync false)"] += 1
                else:
                    self.counts["volatile external edits lost in a cut"] += 1
            model.requirements = list(live.values())
        self.unsynced.clear()
        self.check_temp_files_after_cut()

    @staticmethod
    def is_complete(model, lines):
        return bool(lines) and lines[0] == model.header and lines[-1] == model.footer and all(l in model.known_lines for l in lines)

    def sync_file(self, path):
        """fsyncs the file and its folder."""
        absolute = os.path.join(self.project, path)
        for target, flags in ((absolute, os.O_RDONLY), (os.path.dirname(absolute), os.O_RDONLY | os.O_DIRECTORY)):
            descriptor = os.open(target, flags)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)

    def check(self, with_buffers=True):
        super().check(with_buffers)
        for path in self.paths():  # what the file was once settled: what a torn save is put back to
            lines = self.disk_lines(path)
            if lines is not None and self.is_complete(self.model.paths[path], lines):
                self.settled[path] = lines

    def check_recovered(self):
        """A file whose acknowledged edit the cut took from the disk is brought back from the journal."""
        recovered = {event.get("path") for event in read_events(self.agent.log_paths[-1])
                     if event.get("event") in ("recovered", "conflict")}
        for path in sorted(self.awaiting_recovery):
            self.counts["files brought back from the journal after a cut"] += 1
            if path not in recovered:
                self.violation(path, "an acknowledged edit the cut took from the disk",
                               "`recovered` (or a conflict copy) once the agent is back", "no such event in its log")

    def durable(self, version):
        """Whether a cut may not lose `version` (with fsync off, the agent's saves and copies of it may)."""
        if version.author == "client":
            return self.fsync and version.status == "acked"
        return self.fsync and version.author in ("durable-replace", "restore")

    def remove_torn_copies(self, copies):
        """With write.fsync false a conflict copy is not durable either: one the cut tore is a loss
        docs/guarantees.md's known limits allow, removed so later rounds do not report it again."""
        for path, paths in copies.items():
            model = self.model.paths[path]
            for copy in list(paths):
                with open(copy, "rb") as handle:
                    if self.is_complete(model, split_lines(handle.read())):
                        continue
                os.unlink(copy)
                paths.remove(copy)
                self.losses["a conflict copy torn (write.fsync false)"] += 1

    def remove_tool_leftovers(self):
        """Removes what tools left half done (sed's and rsync's temps, vim's probe and backup), as
        their user would; the agent's own temps are left for it to remove (check (d))."""
        for directory, folders, files in os.walk(self.project):
            if os.path.relpath(directory, self.project).split(os.sep)[0] in (".git", ".autosave"):
                folders.clear()
                continue
            for name in files:
                relative = os.path.relpath(os.path.join(directory, name), self.project)
                if relative not in self.model.paths and not TEMP_PATTERN.match(name):
                    os.unlink(os.path.join(directory, name))
                    self.counts["tool leftovers removed after a cut"] += 1

    def check_temp_files_after_cut(self):
        """Counted only: the agent removes leftover temps when it starts (check (d) after it)."""
        for directory, _, files in os.walk(self.project):
            self.counts["temps left by a cut"] += sum(1 for name in files if name.endswith(".tmp") and ".autosave-" in name)

    # MARK: Driving

    def summary(self, elapsed):
        super().summary(elapsed)
        c = self.counts
        print(f"cuts {c['kills']} ({', '.join(f'{k} {v}' for k, v in sorted(self.cut_kinds.items()))}); "
              f"mode {'journal.fsync and write.fsync true' if self.fsync else 'journal.fsync and write.fsync false'}")
        print(f"volatile external edits lost in a cut {c['volatile external edits lost in a cut']} (tools that never fsync); "
              f"files a tool's unsynced write left torn, restored {c[TORN_BY_TOOL]}; "
              f"agent temps left by a cut {c['temps left by a cut']}; tool leftovers removed {c['tool leftovers removed after a cut']}; files brought back from the journal "
              f"{c['files brought back from the journal after a cut']}")
        if not self.fsync:
            print("losses allowed by docs/guarantees.md's known limits: " +
                  (", ".join(f"{k} {v}" for k, v in sorted(self.losses.items())) or "none seen"))
        print(f"powercut: {self.round - 1} rounds, {c['kills']} cuts, {c['client writes acknowledged']} acknowledged edits, "
              f"{len(self.violations)} violations")


def main():
    parser = argparse.ArgumentParser(description="Power-cut soak for the autosave agent (see the header of this file).")
    parser.add_argument("--no-fsync", action="store_true", help="journal.fsync and write.fsync false: count the losses")
    args = parse_arguments(parser, files=24, smoke_files=12, smoke_rounds=40)
    reason = why_not_here()
    if reason:
        print(f"powercut: skipped: {reason}")
        return 0 if args.smoke else 2
    return run_soak(PowerCutSoak, args, "powercut", stop=lambda soak: soak.mount.stop())

if __name__ == "__main__":
    sys.exit(main())
