"""Figure 12, git's side: `git status` with `autosave fsmonitor` as core.fsmonitor, against the same
without a hook, with git's own fsmonitor-watchman sample hook and a private watchman, and with a
hook that answers "nothing changed" at once (bench/fsmonitor-floor.c: git's floor, what any hook
costs git itself), and with the oracle, the same program answering at once the paths this script
changed (what git itself costs with a hook that is exact and free: git then refreshes those
entries and writes its index, which the floor spares it); the hooks alone, start to exit; and the inotify watches the agent holds while
it serves git, two language servers and the CLI, against what watchman and a watcher per server
would hold.

All on one scratch repository (git_repo.py: figure 10's tree of --git-files files, committed once
and cached). Each configuration has its own index file (GIT_INDEX_FILE=.git/index-CONFIG, copied
from the committed index), so their fsmonitor tokens and untracked caches stay their own;
core.untrackedCache=true and core.fsmonitorHookVersion=2 for all, given with `git -c`. Each is
warmed up with three statuses (the first has no token and scans; at the second, the hooks answer
"everything" to a token not theirs; from the third on, a hook answers what changed). Then, each
round, 10 tracked files (other ones each round) get new content, and each configuration's
`git status --porcelain` (untracked files at git's default, `normal`) is timed spawn to exit, in
an order rotating from round to round; the output of the configurations that must see the
changes (no hook, autosave, watchman) is checked to be the same.
"""
import os
import shutil
import statistics
import subprocess

from .agent import AgentRun
from .common import BenchError, PeerUnavailable, compile_c, ms, now_ns
from .git_repo import GIT_ENVIRONMENT, RepositoryCache, git, repository_size
from .peers import Watchman
from .scaling_trees import directory_names

CONFIGS = ("none", "autosave", "watchman", "oracle", "floor")
CONFIG_LABELS = {"none": "no hook", "autosave": "autosave fsmonitor",
                 "watchman": "fsmonitor-watchman.sample + watchman",
                 "oracle": "hook answering the changed paths at once", "floor": "hook answering \"nothing changed\""}
# The configurations whose `git status` must list the files changed (the floor's cannot).
EXACT = ("autosave", "watchman", "oracle")
WATCHMAN_HOOK = "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample"
CHANGED_PER_STATUS = 10
WARM_UPS = 3
# The globs of the two language servers a Neovim session runs (the watches row): what their
# `workspace/didChangeWatchedFiles` registrations ask for, through the agent.
SERVER_GLOBS = (["**/*.py", "**/*.pyi"], ["**/*.lua"])


def inotify_watches(pid):
    """Watches `pid` holds: the `inotify wd:` lines of its inotify file descriptors."""
    held = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                    with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                        held += sum(1 for line in info if line.startswith("inotify wd:"))
            except OSError:
                continue
    except OSError as error:
        raise BenchError(f"cannot read the inotify watches of pid {pid}: {error}") from error
    return held


def hook_answer(output, what):
    """(token, paths) of a version-2 hook's answer: the token, a NUL, then NUL-separated paths."""
    token, separator, rest = output.partition(b"\0")
    if not separator:
        raise BenchError(f"{what} answered no token and NUL: {output[:200]!r}")
    return token.decode(), [path.decode() for path in rest.split(b"\0") if path]


class GitFigure:
    """Figure 12's git rows: methods of Bench (suite.py); `self` is a Bench."""

    def git_section(self):
        """The "git and subscribers (figure 12)" part of results.md: how its rows were measured, and
        the values behind them."""

        def values(key):
            found = self.extra.get(key) or self.samples.get(key)
            return "; ".join(f"{value:.1f}" if isinstance(value, float) else str(value) for value in found) if found else "n/a"

        return "\n".join([
            "## git and subscribers (figure 12)",
            "",
            f"On a scratch repository of figure 10's tree ({getattr(self, 'git_repository_how', 'not made')}). `git "
            f"status --porcelain` (untracked files at git's default, `normal`) spawn to exit, "
            f"core.untrackedCache=true, each configuration with its own index file, {WARM_UPS} statuses to warm "
            f"each up, then per round {CHANGED_PER_STATUS} tracked files given new content and one status of each "
            f"configuration in a rotating order; a run's figure is the median of its rounds, the output with "
            f"autosave's, watchman's and the oracle's hooks checked to be the output without a hook. The "
            f"floor (bench/fsmonitor-floor.c) prints the token it was given and no path, so git trusts its whole index "
            f"and sees none of the changed files: what git costs with any hook. The oracle (the same program) prints a "
            f"new token and the {CHANGED_PER_STATUS} paths this script changed, at once: what git costs with an exact "
            f"hook that costs nothing, git then refreshing those entries and writing its index (which it does not "
            f"with the floor). git runs `autosave fsmonitor` through "
            f"`sh -c` (the command has a space), the floor, the oracle and the sample hook directly. The hooks alone: each run "
            f"by this script from the work tree with {CHANGED_PER_STATUS} files changed since its token, checked to "
            f"list them. Subscribers: see bench/benchkit/subscribers.py. Watches: the `inotify wd:` lines of the "
            f"agent's inotify descriptor right after `ready`, and after it served the git rows, two `subscribe`s "
            f"with the globs {' and '.join(' '.join(globs) for globs in SERVER_GLOBS)} (Neovim's two language "
            f"servers) and `autosave status`, `changes` and `sync`; watchman's are measured on its daemon; a "
            f"watcher per server is computed as one watch per directory of the tree and its root (not run).",
            "",
            *(f"- `git status` per round (ms), {CONFIG_LABELS[config]}: {values(f'git.status.{config}.rounds')}"
              for config in CONFIGS),
            f"- inotify watches: watchman's daemon {values('git.watches.watchman')}, a per-directory watcher "
            f"{values('git.watches.per-server-watcher')} (computed)",
            *(f"- the agent's CPU (ms) over {self.options.sub_writes} {writes} with no subscriber: "
              f"{values(f'{metric}.cpu-ms.none')}; with 8: {values(f'{metric}.cpu-ms.eight')}"
              for metric, writes in (("subs.cpu-us.in-place", "of figure 2's writes"), ("subs.cpu-us", "of sed -i's writes"))),
            "",
        ])

    def git_setup(self):
        """The scratch repository (made or reused) and the floor hook; once per bench run."""
        if getattr(self, "git_repository", None):
            RepositoryCache.restore(self.git_repository, ".autosave")
            return
        if not shutil.which("git"):
            raise BenchError("git is not installed (Debian package git): figure 12 times git status")
        size = repository_size(self.options.git_files)
        self.git_size = size
        self.git_repository, how = RepositoryCache(self.options.tree_cache).repository(size, ".autosave")
        self.git_repository_how = how
        print(f"  figure 12: repository {self.git_repository}: {how}", flush=True)
        self.fsmonitor_floor = compile_c(self, "fsmonitor-floor", BenchError)
        self.git_names = [f"{directory}/f{number}" for number in range(size.files // size.dirs)
                          for directory in directory_names(size.dirs)]
        self.git_written = 0
        self.git_version = git(self.git_repository, "--version").decode().strip()

    def git_change_files(self, count=CHANGED_PER_STATUS):
        """Gives `count` tracked files new content (others each time); their paths."""
        chosen = []
        for _ in range(count):
            relative = self.git_names[(self.git_written * 7919) % len(self.git_names)]
            self.git_written += 1
            with open(os.path.join(self.git_repository, relative), "w") as file:
                file.write(f"{relative} changed {self.git_written}\n")
            chosen.append(relative)
        return chosen

    def git_status_figure(self, run):
        self.git_setup()
        repo = self.git_repository
        agent = AgentRun(self, repo, {"history": {"baseline": False}}, f"git-{run}")
        self.configs["12 git"] = (f"{self.git_size.files:,} files in {self.git_size.dirs:,} directories committed "
                                  f"({self.git_version}); the agent at its defaults (watch.settleMs "
                                  f"{agent.effective['watch']['settleMs']}) but history.baseline false (no baseline during the timings); git -c core.untrackedCache=true -c "
                                  f"core.fsmonitorHookVersion=2, GIT_INDEX_FILE per configuration, {WARM_UPS} warm-up "
                                  f"statuses, {CHANGED_PER_STATUS} tracked files changed before each round, "
                                  f"`git status --porcelain` (untracked: normal) spawn to exit; "
                                  f"{self.options.git_rounds} rounds, {self.options.hook_samples} hook samples")
        watchman = None
        try:
            agent.start()
            alone = inotify_watches(agent.process.pid)
            hooks = {"none": None, "autosave": f"{self.binary} fsmonitor", "oracle": self.fsmonitor_floor,
                     "floor": self.fsmonitor_floor}
            self.oracle_answer = os.path.join(self.work, "oracle-answer")
            self.write_oracle("warm-up", None)
            environment = {"oracle": {"FSMONITOR_FLOOR_ANSWER": self.oracle_answer}}
            try:
                if not os.access(WATCHMAN_HOOK, os.X_OK):
                    raise PeerUnavailable(f"git's sample hook {WATCHMAN_HOOK} is missing (Debian package git)")
                watchman = Watchman(self)
                watchman.start_daemon()
                self.versions["watchman"] = watchman.version
                watchman.command(["watch", repo], 600)
                watchman.command(["query", repo, {"expression": ["type", "f"], "fields": ["name"]}], 600)
                hooks["watchman"] = WATCHMAN_HOOK
                environment["watchman"] = self.watchman_cli(watchman)
            except PeerUnavailable as reason:
                self.unavailable["watchman"] = str(reason)
                print(f"  watchman: unavailable: {reason}", flush=True)
            configs = [config for config in CONFIGS if config in hooks]
            for config in configs:
                shutil.copyfile(os.path.join(repo, ".git", "index"), os.path.join(repo, ".git", f"index-{config}"))
                for _ in range(WARM_UPS):
                    self.git_status(config, hooks[config], environment.get(config))
            self.git_rounds(configs, hooks, environment, run)
            self.hook_alone(agent, watchman, run)
            self.git_watches(agent, watchman, alone)
        finally:
            if watchman is not None and watchman.process is not None:
                watchman.stop()
            agent.stop()

    def watchman_cli(self, watchman):
        """The environment of the sample hook: `watchman` on its PATH is a wrapper that points the
        CLI at the private daemon. (The CLI of watchman 4.9 ignores WATCHMAN_SOCK, and where it finds
        no daemon it starts one of its own, which outlives the benchmark; with --no-spawn it fails
        instead, and git says so.) The wrapper costs the hook one exec of sh."""
        directory = os.path.join(self.work, "watchman-cli")
        os.makedirs(directory, exist_ok=True)
        wrapper = os.path.join(directory, "watchman")
        with open(wrapper, "w") as file:
            file.write(f"#!/bin/sh\nexec {shutil.which('watchman')} --no-spawn --sockname {watchman.sockname} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        return {"PATH": f"{directory}:{os.environ.get('PATH', '/usr/bin:/bin')}"}

    def git_status(self, config, hook, env):
        """(ms spawn to exit, its output) of one `git status --porcelain` of a configuration."""
        argv = ["git", "-c", "core.untrackedCache=true", "-c", "core.fsmonitorHookVersion=2"]
        if hook:
            argv += ["-c", f"core.fsmonitor={hook}"]
        argv += ["status", "--porcelain"]
        environment = {**os.environ, **GIT_ENVIRONMENT, **(env or {}),
                       "GIT_INDEX_FILE": os.path.join(self.git_repository, ".git", f"index-{config}")}
        started = now_ns()
        result = subprocess.run(argv, cwd=self.git_repository, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        elapsed = ms(now_ns() - started)
        if result.returncode != 0:
            raise BenchError(f"git status ({CONFIG_LABELS[config]}) exited {result.returncode}: "
                             f"{result.stderr.decode(errors='replace')[-300:]}")
        if result.stderr.strip():
            raise BenchError(f"git status ({CONFIG_LABELS[config]}) complained: {result.stderr.decode(errors='replace')[-300:]}")
        return elapsed, result.stdout

    def write_oracle(self, token, paths):
        """The oracle's next answer: a new token and `paths`, or `/` (everything) when None."""
        with open(self.oracle_answer, "wb") as file:
            file.write(f"oracle-{token}".encode() + b"\0" + b"".join(path.encode() + b"\0" for path in (paths or ["/"])))

    def git_rounds(self, configs, hooks, environment, run):
        times = {config: [] for config in configs}
        for round_number in range(self.options.git_rounds):
            changed = self.git_change_files()
            self.write_oracle(f"{run}-{round_number}", changed)
            shift = (round_number + run) % len(configs)
            outputs = {}
            for config in configs[shift:] + configs[:shift]:
                elapsed, outputs[config] = self.git_status(config, hooks[config], environment.get(config))
                times[config].append(elapsed)
            reference = set(outputs["none"].splitlines())
            missing = [path for path in changed if f" M {path}".encode() not in reference]
            if missing:
                raise BenchError(f"git status without a hook does not list the files just changed: {missing[:3]}")
            for config in EXACT:
                if config in outputs and set(outputs[config].splitlines()) != reference:
                    difference = set(outputs[config].splitlines()) ^ reference
                    raise BenchError(f"git status with {CONFIG_LABELS[config]} differs from git status without a "
                                     f"hook (round {round_number + 1}): {sorted(difference)[:5]}")
        for config, values in times.items():
            self.record(f"git.status.{config}", statistics.median(values))
            self.extra[f"git.status.{config}.rounds"].append(" ".join(f"{value:.0f}" for value in values))
        print("  git status medians: " + ", ".join(f"{CONFIG_LABELS[config]} {statistics.median(values):.1f} ms"
                                                  for config, values in times.items()), flush=True)

    def hook_alone(self, agent, watchman, run):
        """Each hook run alone, start to exit, with 10 changes since its token, checked to list them."""
        repo = self.git_repository
        tokens = {"autosave": hook_answer(self.run_hook([self.binary, "fsmonitor", "2", "none"], None), "autosave")[0]}
        hooks = {"autosave": [self.binary, "fsmonitor", "2"], "floor": [self.fsmonitor_floor, "2"]}
        tokens["floor"] = "1"
        env = {}
        if watchman is not None and "watchman" not in self.unavailable:
            hooks["watchman"] = [WATCHMAN_HOOK, "2"]
            env["watchman"] = self.watchman_cli(watchman)
            tokens["watchman"] = watchman.command(["clock", repo], 60)["clock"]
        times = {name: [] for name in hooks}
        answered = []
        names = list(hooks)
        for sample in range(self.options.hook_samples):
            # Changes still settling are listed at once and again once settled (docs/git.md): so that
            # exactly the 10 files are pending, the autosave hook's token is taken after a `sync`.
            self.cli(agent, ["sync"])
            tokens["autosave"] = hook_answer(self.run_hook([self.binary, "fsmonitor", "2", tokens["autosave"]], None),
                                             "autosave")[0]
            changed = set(self.git_change_files())
            shift = (sample + run) % len(names)
            for name in names[shift:] + names[:shift]:
                started = now_ns()
                output = self.run_hook(hooks[name] + [tokens[name]], env.get(name))
                times[name].append(ms(now_ns() - started))
                token, paths = hook_answer(output, f"the {name} hook")
                if name != "floor":
                    if "/" in paths or not changed <= set(paths):
                        raise BenchError(f"the {name} hook, 10 files after its token, answered {len(paths)} paths "
                                         f"without {sorted(changed - set(paths))[:3]} ({paths[:5]})")
                    if name == "watchman" and token.split(":")[2:3] != [str(watchman.process.pid)]:
                        raise BenchError(f"the sample hook's clock {token} is not the private watchman daemon's "
                                         f"(pid {watchman.process.pid}): another daemon answered it")
                    tokens[name] = token
                if name == "autosave":
                    answered.append(len(paths))
        self.extra["git.hook.autosave.paths"].append(" ".join(map(str, answered)))
        for name, values in times.items():
            self.record(f"git.hook.{name}", statistics.median(values))
        print("  hooks alone, medians: " + ", ".join(f"{name} {statistics.median(values):.2f} ms"
                                                     for name, values in times.items()), flush=True)

    def run_hook(self, argv, env):
        result = subprocess.run(argv, cwd=self.git_repository, env={**os.environ, **(env or {})},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise BenchError(f"`{' '.join(argv)}` exited {result.returncode}: {result.stderr.decode(errors='replace')[-300:]}")
        return result.stdout

    def git_watches(self, agent, watchman, alone):
        """The agent's watches once it has served git, two language servers' subscriptions and the
        CLI, against its own right after `ready`; watchman's (measured) and a per-directory watcher's
        per server (computed: the tree's directories and its root)."""
        servers = []
        try:
            for globs in SERVER_GLOBS:
                client = agent.client()
                client.call("subscribe", glob=globs)
                servers.append(client)
            self.cli(agent, ["status"])
            self.cli(agent, ["changes"])
            self.cli(agent, ["sync"])
            serving = inotify_watches(agent.process.pid)
        finally:
            for client in servers:
                client.close()
        directories = self.git_size.dirs + 1
        self.record("git.watches.agent", serving)
        self.record("git.watches.agent-alone", alone)
        self.extra["git.watches.per-server-watcher"].append(directories)
        line = f"  inotify watches: agent {serving} serving git, 2 servers and the CLI ({alone} right after ready)"
        if watchman is not None and "watchman" not in self.unavailable:
            held = inotify_watches(watchman.process.pid)
            self.extra["git.watches.watchman"].append(held)
            self.record("git.watches.peers", held + len(SERVER_GLOBS) * directories)
            line += f"; watchman {held}, + {len(SERVER_GLOBS)} × {directories:,} for a watcher per server"
        print(line, flush=True)
