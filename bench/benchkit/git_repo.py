"""The scratch git repository of figure 12: figure 10's tree of --git-files files (a tenth as many
directories, made by scaling_trees.write_tree) committed once, kept in --tree-cache beside figure
10's trees and reused by later runs, since `git add` of 100,000 files takes a minute or two.

`<cache>/repo-<dirs>d-<files>f/` is the work tree, with `.git` in it; its manifest
`<cache>/repo-<dirs>d-<files>f.json` (dirs, files, generator versions, the commit) is written only
once the commit exists, so a repository without a matching manifest is one whose making was cut
short: it is removed and made again. Before each run the repository is put back as committed
(`git reset --hard`), and what earlier runs left is removed: the agent's state directory and the
index files of figure 12's configurations.
"""
import datetime
import fcntl
import glob
import json
import os
import shutil
import subprocess
import time

from .common import BenchError
from .scaling_trees import GENERATOR_VERSION, TreeSize, clear_state_dir, write_tree

# Bump when how the repository is made changes (its config, its excludes): older ones are made again.
REPOSITORY_VERSION = 1

# Every git command of figure 12 runs with these, so that no user's or system's config changes what is measured.
GIT_ENVIRONMENT = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "bench",
                   "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
                   "GIT_COMMITTER_EMAIL": "bench@localhost", "GIT_TERMINAL_PROMPT": "0"}


def git(repository, *arguments, env=None, timeout=1800):
    """Runs `git ARGUMENTS` in the repository; its stdout, or BenchError naming the command."""
    environment = {**os.environ, **GIT_ENVIRONMENT, **(env or {})}
    try:
        result = subprocess.run(["git", *arguments], cwd=repository, env=environment, capture_output=True,
                                timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError(f"`git {' '.join(arguments)}` in {repository} did not finish in {timeout} s") from None
    if result.returncode != 0:
        raise BenchError(f"`git {' '.join(arguments)}` in {repository} exited {result.returncode}: "
                         f"{result.stderr.decode(errors='replace').strip()[-400:]}")
    return result.stdout


class RepositoryCache:
    """Figure 12's committed trees, kept between runs in the tree cache directory."""

    def __init__(self, directory, say=print):
        self.directory = os.path.abspath(directory)
        self.say = say

    def manifest(self, size):
        return {"dirs": size.dirs, "files": size.files, "generator": GENERATOR_VERSION, "repository": REPOSITORY_VERSION}

    def repository(self, size, state_dir):
        """The path of the repository of `size`, made if need be and put back as committed; and how it
        came to be ("reused", "made in 95 s")."""
        os.makedirs(self.directory, exist_ok=True)
        with open(os.path.join(self.directory, ".lock"), "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.say(f"    waiting for another benchmark run using {self.directory}", flush=True)
                fcntl.flock(lock, fcntl.LOCK_EX)
            return self._repository(size, state_dir)

    def _repository(self, size, state_dir):
        name = f"repo-{size.dirs}d-{size.files}f"
        path, manifest_path = os.path.join(self.directory, name), os.path.join(self.directory, name + ".json")
        try:
            with open(manifest_path) as file:
                written = json.load(file)
        except (OSError, ValueError):
            written = None
        if written is not None and all(written.get(key) == value for key, value in self.manifest(size).items()) \
                and os.path.isdir(os.path.join(path, ".git")):
            started = time.monotonic()
            self.restore(path, state_dir)
            return path, f"reused (put back as committed in {time.monotonic() - started:.1f} s)"
        if os.path.lexists(manifest_path):
            os.unlink(manifest_path)
        if os.path.lexists(path):
            self.say(f"    {path} has no manifest matching {self.manifest(size)}: removing it and making it again",
                     flush=True)
            shutil.rmtree(path)
        self.say(f"    making {path}: {size.dirs:,} directories, {size.files:,} files, committed once", flush=True)
        started = time.monotonic()
        write_tree(path, size)
        git(path, "init", "-q", "-b", "main", ".")
        # The agent's state directory is the agent's, not the project's (docs/git.md).
        with open(os.path.join(path, ".git", "info", "exclude"), "a") as exclude:
            exclude.write(f"/{state_dir}/\n")
        git(path, "add", "-A", ".")
        git(path, "commit", "-q", "-m", f"{size.files} files in {size.dirs} directories")
        commit = git(path, "rev-parse", "HEAD").decode().strip()
        os.sync()
        made = time.monotonic() - started
        temporary = manifest_path + ".tmp"
        with open(temporary, "w") as file:
            json.dump({**self.manifest(size), "commit": commit, "made": datetime.datetime.now(
                datetime.timezone.utc).isoformat(timespec="seconds"), "seconds": round(made, 1)}, file, indent=2)
            file.write("\n")
        os.replace(temporary, manifest_path)
        return path, f"made in {made:.0f} s"

    @staticmethod
    def restore(path, state_dir):
        """Puts the work tree back as committed and removes what a run of figure 12 leaves."""
        clear_state_dir(path, state_dir)
        for index in glob.glob(os.path.join(path, ".git", "index-*")):
            os.unlink(index)
        git(path, "reset", "-q", "--hard", "HEAD")
        left = git(path, "status", "--porcelain", "--untracked-files=all").decode()
        if left.strip():
            raise BenchError(f"the scratch repository {path} is not as committed after `git reset --hard`: "
                             f"{left[:300]}; remove it (and its .json) to have it made again")


def repository_size(files):
    """Figure 12's tree: `files` files in a tenth as many directories, as figure 10's."""
    return TreeSize.for_files(files)
