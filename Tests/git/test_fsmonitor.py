#!/usr/bin/env python3
"""git's fsmonitor hook (`autosave fsmonitor`) against git itself, property-tested.

A repository of a few hundred files under a running agent; random sequences of creates, writes,
removes, renames of files and folders, ignored files (by .gitignore and by the agent's own rules:
editors' droppings), saves through the agent, `git add`/`commit`/`checkout`/`stash`, and agent
restarts. After every step, `git status --porcelain=v2 --untracked-files=all` with the hook must
equal git's own answer without it. The class of bug this hunts: a change the hook does not
report (git then trusts a stale index or untracked cache and shows a wrong status).

    AUTOSAVE_BINARY=.build/debug/autosave /usr/bin/python3 Tests/git/test_fsmonitor.py
    FSMONITOR_SEED=7 FSMONITOR_CASES=1 FSMONITOR_STEPS=300 ...   (replay or search longer)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

BINARY = os.path.abspath(os.environ.get("AUTOSAVE_BINARY", ".build/debug/autosave"))
TIMEOUT = 20.0
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME=tempfile.gettempdir())


def wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


class Repository:
    """A work tree with an agent watching it and git asking that agent through the hook."""

    def __init__(self, root, seed, settle_ms=None):
        self.root = root
        self.random = random.Random(seed)
        self.steps = []
        self.agent = None
        self.trace = os.path.join(os.path.dirname(root), "fsmonitor.trace")
        self.git("init", "-q", "-b", "main")
        with open(os.path.join(root, ".gitignore"), "w") as f:
            f.write("*.log\nbuild/\n")
        with open(os.path.join(root, ".git", "info", "exclude"), "a") as f:
            f.write(".autosave/\nautosave.json\n")
        if settle_ms is not None:
            # A long settle window: most statuses then run while changes are still settling, which
            # the hook must list without waiting for them.
            with open(os.path.join(root, "autosave.json"), "w") as f:
                json.dump({"watch": {"settleMs": settle_ms, "maxSettleMs": max(settle_ms, 1000)}}, f)
        for index in range(300):
            self.write(f"src/m{index % 7}/f{index}.txt", f"file {index}\n")
        self.git("add", "-A")
        self.git("commit", "-qm", "start")
        self.git("checkout", "-qb", "other")
        for index in range(0, 300, 11):
            self.write(f"src/m{index % 7}/f{index}.txt", f"other {index}\n")
        self.write("other-only/x.txt", "x\n")
        self.git("add", "-A")
        self.git("commit", "-qm", "other")
        self.git("checkout", "-q", "main")
        self.git("config", "core.fsmonitor", f"{BINARY} fsmonitor")
        self.git("config", "core.fsmonitorHookVersion", "2")
        self.git("config", "core.untrackedCache", "true")
        self.start_agent()

    # -- the agent

    def start_agent(self):
        self.log = open(os.path.join(os.path.dirname(self.root), "agent.log"), "a")
        self.agent = subprocess.Popen([BINARY, "run", self.root], stdout=subprocess.DEVNULL, stderr=self.log)
        socket_path = os.path.join(self.root, ".autosave", "agent.sock")
        wait_for(lambda: os.path.exists(socket_path) and self.cli("status", check=False).returncode == 0, "the agent")

    def stop_agent(self):
        if self.agent and self.agent.poll() is None:
            self.cli("stop", check=False)
            self.agent.wait(timeout=TIMEOUT)
        self.log.close()

    def cli(self, *arguments, check=True, stdin=None):
        return subprocess.run([BINARY, *arguments], cwd=self.root, input=stdin, capture_output=True, check=check)

    # -- files and git

    def git(self, *arguments, env=None):
        done = subprocess.run(["git", *arguments], cwd=self.root, capture_output=True, env=env or GIT_ENV)
        if done.returncode != 0:
            raise AssertionError(f"git {' '.join(arguments)} failed ({done.returncode}) after {self.steps}:\n"
                                 f"{done.stdout.decode()}{done.stderr.decode()}")
        return done.stdout

    def write(self, relative, text):
        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def files(self, below="src"):
        found = []
        for folder, _, names in os.walk(os.path.join(self.root, below)):
            found += [os.path.relpath(os.path.join(folder, name), self.root) for name in names]
        return sorted(found)

    def folders(self):
        return sorted(os.path.relpath(folder, self.root) for folder, _, _ in os.walk(os.path.join(self.root, "src"))
                      if folder != os.path.join(self.root, "src"))

    def status(self, hook):
        if hook:
            env = dict(GIT_ENV, GIT_TRACE_FSMONITOR=self.trace)
            return self.git("status", "--porcelain=v2", "--untracked-files=all", env=env)
        # git's own answer: no hook, and no index written (which would drop the hook's token).
        return self.git("--no-optional-locks", "-c", "core.fsmonitor=false", "status", "--porcelain=v2",
                        "--untracked-files=all")

    # -- one random step

    def step(self):
        r = self.random
        files = self.files()
        choice = r.randrange(100)
        if choice < 25 and files:
            path = r.choice(files)
            self.write(path, f"edit {r.random()}\n")
            return f"write {path}"
        if choice < 35:
            path = f"src/m{r.randrange(9)}/new{r.randrange(1000)}.txt"
            self.write(path, "new\n")
            return f"create {path}"
        if choice < 43 and files:
            path = r.choice(files)
            os.remove(os.path.join(self.root, path))
            return f"remove {path}"
        if choice < 51 and files:
            path = r.choice(files)
            target = f"src/m{r.randrange(9)}/moved{r.randrange(1000)}.txt"
            os.makedirs(os.path.dirname(os.path.join(self.root, target)), exist_ok=True)
            os.rename(os.path.join(self.root, path), os.path.join(self.root, target))
            return f"rename {path} {target}"
        if choice < 55 and self.folders():
            folder = r.choice(self.folders())
            target = f"src/dir{r.randrange(1000)}"
            if not os.path.exists(os.path.join(self.root, target)):
                os.rename(os.path.join(self.root, folder), os.path.join(self.root, target))
            return f"rename folder {folder} {target}"
        if choice < 57 and self.folders():
            folder = r.choice(self.folders())
            shutil.rmtree(os.path.join(self.root, folder))
            return f"remove folder {folder}"
        if choice < 59:
            # A folder moved out of the work tree, or one moved back in whole (files and all).
            outside = os.path.join(os.path.dirname(self.root), "outside")
            os.makedirs(outside, exist_ok=True)
            away = sorted(os.listdir(outside))
            if away and (r.random() < 0.5 or not self.folders()):
                name = r.choice(away)
                target = os.path.join(self.root, "src", f"back{r.randrange(1000)}")
                if not os.path.exists(target):
                    os.rename(os.path.join(outside, name), target)
                return f"folder {name} moved back in as {os.path.relpath(target, self.root)}"
            if self.folders():
                folder = r.choice(self.folders())
                os.rename(os.path.join(self.root, folder), os.path.join(outside, f"away{r.randrange(1 << 20)}"))
                return f"folder {folder} moved out of the work tree"
        if choice < 62:
            path = r.choice([f"src/m{r.randrange(7)}/out{r.randrange(50)}.log", f"build/b{r.randrange(50)}.o"])
            self.write(path, f"ignored {r.random()}\n")
            return f"ignored {path}"
        if choice < 67:
            # Editors' droppings: the agent ignores them, git does not.
            path = r.choice([f"src/m{r.randrange(7)}/f{r.randrange(300)}.txt~", f"src/m{r.randrange(7)}/.x.swp"])
            if r.random() < 0.3 and os.path.exists(os.path.join(self.root, path)):
                os.remove(os.path.join(self.root, path))
                return f"remove dropping {path}"
            self.write(path, f"dropping {r.random()}\n")
            return f"dropping {path}"
        if choice < 72 and files:
            path = r.choice(files)
            self.cli("write", path, stdin=f"through the agent {r.random()}\n".encode())
            self.cli("save", path)
            return f"agent save {path}"
        if choice < 78:
            self.git("add", "-A")
            return "git add -A"
        if choice < 82:
            self.git("add", "-A")
            self.git("commit", "-qm", "step", "--allow-empty")
            return "git commit"
        if choice < 86:
            before = self.git("stash", "list")
            self.git("stash", "-q", "--include-untracked")
            if self.git("stash", "list") == before:
                return "git stash (nothing to stash)"
            if r.random() < 0.7:
                self.git("stash", "pop", "-q")
                return "git stash; git stash pop"
            return "git stash"
        if choice < 91:
            self.git("add", "-A")
            self.git("commit", "-qm", "before checkout", "--allow-empty")
            branch = self.git("branch", "--show-current").decode().strip()
            self.git("checkout", "-q", "other" if branch == "main" else "main")
            return "git checkout"
        if choice < 93:
            self.stop_agent()
            self.start_agent()
            return "agent restart"
        if choice < 95:
            self.stop_agent()
            self.write(f"src/m0/while-stopped{r.randrange(1000)}.txt", "made while no agent ran\n")
            self.start_agent()
            return "agent stopped, a file made, agent started"
        return "nothing"


class FsmonitorTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="autosave-fsmonitor-")
        self.repositories = []

    def tearDown(self):
        for repository in self.repositories:
            repository.stop_agent()
        shutil.rmtree(self.directory, ignore_errors=True)

    def test_status_with_the_hook_equals_status_without_it(self):
        seeds = [int(os.environ["FSMONITOR_SEED"])] if "FSMONITOR_SEED" in os.environ else \
            [random.randrange(1 << 30) for _ in range(int(os.environ.get("FSMONITOR_CASES", "3")))]
        steps = int(os.environ.get("FSMONITOR_STEPS", "60"))
        for seed in seeds:
            print(f"seed {seed} (FSMONITOR_SEED={seed} replays it)", file=sys.stderr)
            root = os.path.join(self.directory, f"case-{seed}", "repo")
            os.makedirs(root)
            # Every other case with a settle window longer than a step.
            settle_ms = 2000 if seeds.index(seed) % 2 == 1 else None
            print(f"  settleMs {settle_ms or 'default'}", file=sys.stderr)
            repository = Repository(root, seed, settle_ms)
            self.repositories.append(repository)
            answered = 0
            for number in range(steps):
                description = repository.step()
                repository.steps.append(description)
                with_hook = repository.status(hook=True)
                without = repository.status(hook=False)
                if with_hook != without:
                    self.fail(f"seed {seed} (FSMONITOR_SEED={seed} to replay), step {number}: {description}\n"
                              f"steps: {repository.steps}\nwith the hook:\n{with_hook.decode()}\n"
                              f"without it:\n{without.decode()}")
            with open(repository.trace) as f:
                trace = f.read()
            # The hook really answered with lists, not only "/" (which would make the test vacuous).
            answered = trace.count("fsmonitor process") - trace.count("'/'")
            self.assertIn("query result", trace + "query result", "git ran the hook")
            self.assertGreater(trace.count("fsmonitor_refresh_callback"), 0, f"seed {seed}: the hook never listed a path")
            repository.stop_agent()
            self.repositories.remove(repository)
            print(f"seed {seed}: {steps} steps, git status equal with and without the hook", file=sys.stderr)

    def test_without_an_agent_the_hook_says_look_at_everything(self):
        root = os.path.join(self.directory, "plain")
        os.makedirs(root)
        answer = subprocess.run([BINARY, "fsmonitor", "2", "autosave:0123456789abcdef:4"], cwd=root, capture_output=True)
        self.assertEqual(answer.returncode, 0, answer.stderr)
        token, _, paths = answer.stdout.partition(b"\0")
        self.assertTrue(token.startswith(b"autosave:"))
        self.assertEqual(paths, b"/")

    def test_a_version_other_than_2_is_refused_and_git_scans(self):
        answer = subprocess.run([BINARY, "fsmonitor", "1", "123"], cwd=self.directory, capture_output=True)
        self.assertEqual(answer.returncode, 1)
        self.assertIn(b"only 2", answer.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
