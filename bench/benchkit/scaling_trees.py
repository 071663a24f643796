"""bench/benchkit/scaling_trees.py — the trees of figure 10 (scaling.py), made once and reused.

A tree of 1,000,000 files takes minutes to make, so trees are made once into a cache directory
(--tree-cache) and reused by later runs (TreeCache). Before a reused tree's runs every entry of it
is stat'ed: that checks it against its manifest and loads its inodes into the kernel's caches, so
that no tool pays alone for reading the tree from disk (a tree just made is in the caches
already). Also here: whether inotify's watch limit leaves room for a tree's directories.
"""
import collections
import datetime
import fcntl
import json
import math
import os
import shutil
import time

# Bump when write_tree's shape or contents change: cached trees of an older version are made again.
GENERATOR_VERSION = 1


class TreeCacheError(Exception):
    """A cached tree could not be made or checked: the message names the tree and what to do."""


# ---------------------------------------------------------------------------------------------
# The trees


SHAPES = ("shallow", "deep")


class TreeSize(collections.namedtuple("TreeSize", "files dirs shape")):
    """One tree: `files` files in `dirs` directories, drawn in one of two shapes.

    shallow  figure 1's tree: a tenth as many directories as files, two levels (`t003/s001`), files
             named `f0`, `f1`, ... within each directory.
    deep     a tree shaped like a real project's: fan-out 10 over as many levels as it takes to give
             a tenth as many leaf directories as files (`d1/d12/d123/d1234/d12345` at 1,000,000
             files), files named `f<N>.txt` with N counting over the whole tree, spread evenly over
             every directory, the inner ones too.
    """

    @classmethod
    def for_files(cls, files, shape="shallow"):
        if shape == "deep":
            return cls(files, len(deep_directory_names(files)), shape)
        return cls(files, max(1, files // 10), shape)

    @property
    def name(self):
        """The tree's name in the cache: `tree-<dirs>d-<files>f` (shallow), `deep-<dirs>d-<files>f`."""
        return f"{'deep' if self.shape == 'deep' else 'tree'}-{self.dirs}d-{self.files}f"

    @property
    def label(self):
        """How results name the tree: `1,000,000 files` (shallow) or `1,000,000 files, deep`."""
        return f"{self.files:,} files" + (", deep" if self.shape == "deep" else "")


def directory_names(dirs):
    """The tree's directories relative to its root, parents first: about sqrt(dirs) at the top
    (`t000`, `t001`, ...), the rest one level below them in turn (`t000/s000`, `t001/s000`, ...)."""
    top = max(1, round(math.sqrt(dirs)))
    names = [f"t{index:03d}" for index in range(min(top, dirs))]
    index = 0
    while len(names) < dirs:
        names.append(f"t{index % top:03d}/s{index // top:03d}")
        index += 1
    return names


def deep_directory_names(files):
    """The deep tree's directories relative to its root, parents first: leaf directories numbered
    0 .. files/10 - 1 with as many digits as the largest takes, each under the directories named by
    its number's prefixes (leaf 12345 is `d1/d12/d123/d1234/d12345`), fan-out 10 at every level."""
    leaves = max(1, files // 10)
    depth = len(str(leaves - 1))
    names, seen = [], set()
    for level in range(1, depth + 1):
        for leaf in range(leaves):
            digits = f"{leaf:0{depth}d}"[:level]
            if digits not in seen:
                seen.add(digits)
                names.append("/".join("d" + digits[:upto] for upto in range(1, level + 1)))
    return names


def write_deep_tree(root, size):
    """Makes `root` and the deep tree in it (TreeSize's `deep`): every directory of
    `deep_directory_names`, and `size.files` files `f0.txt`, `f1.txt`, ... spread evenly over them
    (the first `files % dirs` hold one more), each holding its own relative path and a newline."""
    os.makedirs(root)
    names = deep_directory_names(size.files)
    for name in names:
        os.mkdir(os.path.join(root, name))
    per_dir, extra = divmod(size.files, len(names))
    number = 0
    for position, name in enumerate(names):
        for _ in range(per_dir + (1 if position < extra else 0)):
            fd = os.open(os.path.join(root, name, f"f{number}.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, f"{name}/f{number}.txt\n".encode())
            finally:
                os.close(fd)
            number += 1


def write_tree(root, size):
    """Makes `root` and the tree in it: `directory_names(size.dirs)`, and `size.files` files spread
    evenly over them (the first `files % dirs` hold one more), `f0`, `f1`, ... each holding its own
    relative path and a newline (`t003/s001/f7\\n`). The shape and contents of the tree that
    Bench.make_tree in suite.py makes for figures 1-9."""
    os.makedirs(root)
    names = directory_names(size.dirs)
    for name in names:
        os.mkdir(os.path.join(root, name))
    per_dir, extra = divmod(size.files, size.dirs)
    for position, name in enumerate(names):
        for number in range(per_dir + (1 if position < extra else 0)):
            fd = os.open(os.path.join(root, name, f"f{number}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, f"{name}/f{number}\n".encode())
            finally:
                os.close(fd)


def census(root):
    """(directories, files) under `root`, the root itself not counted, with every entry stat'ed:
    that loads the tree's inodes into the kernel's caches, so the first tool to start does not pay
    alone for reading them from disk."""
    directories, files = 0, 0
    pending = [root]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    directories += 1
                    pending.append(entry.path)
                else:
                    files += 1
    return directories, files


def clear_state_dir(tree, state_dir):
    """Removes the agent's state directory (`stateDir`, `.autosave` by default) from the tree, so that
    every run of every tool starts on the same tree: an agent finding an earlier run's journal would
    start differently, and a peer would watch one more directory. Only ever inside the tree."""
    path = os.path.realpath(os.path.join(tree, state_dir))
    root = os.path.realpath(tree)
    if path != root and path.startswith(root + os.sep):
        shutil.rmtree(path, ignore_errors=True)


class TreeCache:
    """Generated trees kept between benchmark runs in one directory.

    Each size's tree is `<cache>/tree-<dirs>d-<files>f/`, next to its manifest
    `<cache>/tree-<dirs>d-<files>f.json` (dirs, files, generator version), which is written only
    once the tree is complete and on disk: a tree without a matching manifest is a tree whose
    making was cut short (or made by an older generator), so it is removed and made again. A tree
    whose manifest matches is reused after its entries are counted (census): one that no longer
    holds what its manifest says is made again too.
    """

    def __init__(self, directory, say=print):
        self.directory = os.path.abspath(directory)
        self.say = say

    def tree_path(self, size):
        return os.path.join(self.directory, size.name)

    def manifest_path(self, size):
        return os.path.join(self.directory, size.name + ".json")

    def manifest(self, size):
        """What a complete tree of `size` has written beside it."""
        written = {"dirs": size.dirs, "files": size.files, "generator": GENERATOR_VERSION}
        return {**written, "shape": "deep"} if size.shape == "deep" else written

    def tree(self, size, state_dir):
        """The path of a complete tree of `size`, made if need be, with the agent's `state_dir` removed
        from it; and how it came to be ("reused", "made in 412 s"). TreeCacheError when it cannot be
        made."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            # Two benchmark runs at once would each remove the other's half-made tree: one at a time.
            with open(os.path.join(self.directory, ".lock"), "w") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self.say(f"    waiting for another benchmark run using the tree cache {self.directory}", flush=True)
                    fcntl.flock(lock, fcntl.LOCK_EX)
                return self._tree(size, state_dir)
        except OSError as error:
            raise TreeCacheError(f"cannot make or check the {size.files:,}-file tree in {self.directory}: {error}; "
                                 f"this size is not measured (pass --tree-cache DIR for another place)") from error

    def _tree(self, size, state_dir):
        path, manifest_path = self.tree_path(size), self.manifest_path(size)
        try:
            with open(manifest_path) as file:
                written = json.load(file)
        except (OSError, ValueError):
            written = None
        if written is not None and all(written.get(key) == value for key, value in self.manifest(size).items()) \
                and os.path.isdir(path):
            clear_state_dir(path, state_dir)
            started = time.monotonic()
            found = census(path)
            if found == (size.dirs, size.files):
                return path, f"reused ({time.monotonic() - started:.1f} s to stat its {size.dirs + size.files:,} entries)"
            self.say(f"    {path} holds {found[0]:,} directories and {found[1]:,} files, its manifest says "
                     f"{size.dirs:,} and {size.files:,}: making it again", flush=True)
        elif os.path.lexists(path):
            self.say(f"    {path} has no manifest matching {self.manifest(size)} (its making was cut short, or an "
                     f"older generator made it): removing it and making it again", flush=True)
        self._remove(size)
        self._check_room(size)
        self.say(f"    making {path}: {size.dirs:,} directories, {size.files:,} files", flush=True)
        started = time.monotonic()
        (write_deep_tree if size.shape == "deep" else write_tree)(path, size)
        # The manifest must not reach the disk before the tree does (it says the tree is complete).
        os.sync()
        made = time.monotonic() - started
        temporary = manifest_path + ".tmp"
        with open(temporary, "w") as file:
            json.dump({**self.manifest(size), "made": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"), "seconds": round(made, 1)}, file, indent=2)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, manifest_path)
        return path, f"made in {made:.0f} s" if made >= 10 else f"made in {made:.1f} s"

    def _remove(self, size):
        # The manifest first: a removal cut short must not leave a manifest vouching for half a tree.
        for leftover in (self.manifest_path(size), self.manifest_path(size) + ".tmp"):
            if os.path.lexists(leftover):
                os.unlink(leftover)
        path = self.tree_path(size)
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)

    def _check_room(self, size):
        """Fails before making a tree the file system has no room for: each file takes an inode and a block."""
        stats = os.statvfs(self.directory)
        inodes, blocks = size.dirs + size.files, (size.dirs + size.files) * 4096
        if stats.f_favail < inodes or stats.f_bavail * stats.f_frsize < blocks:
            raise TreeCacheError(
                f"the {size.files:,}-file tree needs about {inodes:,} inodes and {blocks / 1e9:.1f} GB in "
                f"{self.directory}, whose file system has {stats.f_favail:,} inodes and "
                f"{stats.f_bavail * stats.f_frsize / 1e9:.1f} GB free; this size is not measured (remove old "
                f"trees there, or pass --tree-cache DIR on another file system)")


# ---------------------------------------------------------------------------------------------
# inotify's limit on watches


def inotify_watches_held(uid):
    """Watches the processes of user `uid` hold now (the `inotify wd:` lines of their inotify fds):
    max_user_watches counts every watch of the user, not only this script's."""
    held = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                    with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                        held += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # the process exited while it was looked at, or is not ours to read
    return held


def watch_shortfall(size):
    """Why inotify cannot give a watcher one watch per directory of `size`'s tree, or None when it can.

    Each tool runs alone, so one tool's watches must fit: the tree's directories and its root, and a
    margin for what else the agent may watch and for other processes' counts moving meanwhile.
    """
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as file:
            limit = int(file.read())
    except (OSError, ValueError) as error:
        return f"cannot read /proc/sys/fs/inotify/max_user_watches ({error})"
    needed = size.dirs + 1 + 1000 + size.dirs // 20
    raise_it = f"raise it: sysctl fs.inotify.max_user_watches={max(2 * needed, limit + needed):,}"
    if limit < needed:
        return f"needs about {needed:,} inotify watches, and max_user_watches is {limit:,} ({raise_it})"
    held = inotify_watches_held(os.getuid())
    if limit - held < needed:
        return (f"needs about {needed:,} inotify watches, and of max_user_watches {limit:,} other processes of this "
                f"user hold {held:,} (stop them, or {raise_it})")
    return None
