"""The scenario steps, what the clients and the tools do: the generated git project, client writes
(`autosave write --if-revision`, each derived from the buffer it read), external edits by real
tools (a redirect, sed -i, os.replace, vim's rename dance and vim -es, git checkout, rsync) with
the agent frozen around them, and a round's mix of them (`activity`). Every edit is recorded in
the model (checks.py) as it is made."""

import json
import os
import random
import subprocess
import tempfile
import threading
import time

from agent import SoakError, rpc, run_cli
from checks import JOURNAL_RECORD_OVERHEAD, PathModel, Version
from content import fresh_line, plan_edit, split_lines


class Scenario:
    """The steps of the Soak (part of harness.Soak; uses the state its __init__ makes)."""

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

    # MARK: A round's work

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


def run_tool(command, cwd=None):
    completed = subprocess.run(command, cwd=cwd, capture_output=True, timeout=60)
    if completed.returncode != 0:
        raise SoakError(f"{command[0]} failed ({completed.returncode}): {completed.stderr.decode(errors='replace').strip()}")


def join_all(threads):
    for thread in threads:
        thread.join()
    threads.clear()
