#!/usr/bin/env python3
"""The walls (issue 32), end to end: `autosave mcp` driven by the official MCP Python SDK over a
random tree full of traps, as a coding agent whose paths a model chose would drive it.

Each scenario (one seed) builds a home folder with the project (the root) and an `outside`
folder beside it: files holding unique sentinels, `.git/`, a state directory with an old conflict
copy, NFC/NFD twin names, and relative and absolute symlinks to files and folders inside, outside,
into `.git/` and the state directory, dangling, chained, with `..` after them, and sometimes a
state-directory component that is a link. It runs `autosave mcp ROOT` (its in-process agent) and
makes a seeded random sequence of tool calls (every tool the server lists) with paths drawn from
those names and their `..`, absolute and `/`+U+0301 forms, and swaps between calls (a file
replaced by a link out, a folder by a link into `.git/`, a link retargeted or renamed over a
file, a state-dir folder replaced by a link, outside edits), waiting with `autosave sync` for the
agent to take them in. After every call, and after the server's end of input (which saves
everything):

  (a) every entry outside the project, under `.git/`, and in the state directory other than the
      agent's own (journal, conflict copies, socket, history database; the lock once written at
      start) is as before:
      same kind, same link target, same bytes;
  (b) no tool result carries a sentinel of a file outside the root, in `.git/` or in the state
      directory, unless the call itself sent it;
  (c) a twin's file holds no token a call addressed to its twin, and reading one twin never shows
      the other's bytes.

Refusals are fine: the test says where bytes went, never what a refusal says.

    AUTOSAVE_BINARY=.build/debug/autosave .build/mcp-venv/bin/python Tests/mcp/test_walls.py
    WALLS_SEED=7 WALLS_CASES=1 WALLS_VERBOSE=1 ...   # replay seed 7, printing every call
    WALLS_SEED=1000 WALLS_CASES=200 ...              # a longer search: seeds 1000..1199
"""
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY = os.path.abspath(os.environ.get("AUTOSAVE_BINARY", ".build/debug/autosave"))
VERBOSE = bool(os.environ.get("WALLS_VERBOSE"))
# Seeds 1-13, two whose state directory holds a link (30: journal/ leads out; 36: the state
# directory itself does) and one with a link to the agent's lock (42), which the first ones happen
# not to plant.
FIXED_SEEDS = list(range(1, 14)) + [30, 36, 42]
STEPS = int(os.environ.get("WALLS_STEPS", "26"))
# Autosaves happen between calls too (a save through a link is found by the next check).
CONFIG = {"autosave": {"delayMs": 300, "maxDelayMs": 3000}}
SENTINELS = ("OUTSIDE-SENTINEL-", "GIT-SENTINEL-", "STATE-SENTINEL-")
TOKEN = re.compile(r"[A-Z]+(?:-[A-Z]+)*-\d+")
ACUTE = "\u0301"

TWINS = [
    ("caf\u00e9.txt", "cafe\u0301.txt"),
    ("d/r\u00e9sum\u00e9.md", "d/re\u0301sume\u0301.md"),
    ("na\u00efve/x.txt", "nai\u0308ve/x.txt"),
]


def b(path):
    """A path as the kernel sees it: bytes (never compared as str, where NFC != NFD anyway, but
    kept as bytes so no normalization can creep in)."""
    return path.encode() if isinstance(path, str) else path


def shown(path):
    text = path.decode() if isinstance(path, bytes) else path
    return "".join(c if ord(c) < 128 else f"\\u{{{ord(c):x}}}" for c in text)


def entry(path):
    """One entry as lstat and readlink see it: ('file', bytes) / ('dir',) / ('link', target)."""
    try:
        st = os.lstat(path)
    except OSError:  # missing, or a folder on the way is a link loop
        return None
    import stat
    if stat.S_ISDIR(st.st_mode):
        return ("dir",)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            chunks = []
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
            return ("file", b"".join(chunks))
        finally:
            os.close(fd)
    return ("other",)


def walk(path, out, skip=None):
    path = b(path)
    if skip is not None and path == skip:
        return
    e = entry(path)
    if e is None:
        return
    out[path] = e
    if e == ("dir",):
        for name in os.listdir(path):
            walk(path + b"/" + name, out, skip)


def under(path, folder):
    return path == folder or path.startswith(folder + b"/")


def describe(e):
    if e is None:
        return "absent"
    if e[0] == "file":
        return "file " + repr(e[1][:60])
    if e[0] == "link":
        return "link -> " + shown(e[1])
    return e[0]


def kernel_target(path):
    """Where open(path, O_CREAT) would land: links followed, a dangling one to where it points."""
    path = b(path)
    for _ in range(40):
        if os.path.exists(path):
            return os.path.realpath(path)
        parent, name = path.rsplit(b"/", 1)
        if not os.path.isdir(parent or b"/"):
            return None
        folder = os.path.realpath(parent or b"/")
        candidate = folder + b"/" + name
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            path = target if target.startswith(b"/") else folder + b"/" + target
            continue
        return candidate
    return None


class Scenario:
    def __init__(self, seed, home):
        self.seed = seed
        self.rng = random.Random(seed)
        self.home = b(home)
        self.root = self.home + b"/project"
        self.outside = self.home + b"/outside"
        self.git = self.root + b"/.git"
        self.state = self.root + b"/.autosave"
        self.counter = 0
        self.pool = []
        self.links = []
        self.inside_files = ["a.txt", "d/b.txt", "d/e/c.txt"]
        self.twin_of = {}
        self.owner = {}
        self.planted = set()
        self.baseline = {}
        self.findings = []
        self.reported = set()
        self.step = -1
        self.note = "start"
        self.tally = {"accepted": 0, "refused": 0, "swaps": 0, "twin": 0, "link": 0, "syncs": 0}
        self.sync_failures = 0
        self.refused_start = None
        self.initialized = False
        self.tools_seen = set()
        self.called = set()

    # --- the tree ---------------------------------------------------------------------------

    def token(self, kind):
        self.counter += 1
        return f"{kind}-{self.counter}"

    def put(self, path, text):
        path = b(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text.encode())

    def r(self, path):
        return self.root + b"/" + b(path)

    def link(self, name, target, absolute):
        at = self.r(name)
        folder = os.path.realpath(os.path.dirname(at))
        text = target if absolute else os.path.relpath(target, folder)
        if os.path.lexists(at):
            os.unlink(at)
        os.symlink(text, at)
        if name not in self.links:
            self.links.append(name)

    def file_targets(self):
        o, g, s, r = self.outside, self.git, self.state, self.root
        return [r + b"/a.txt", o + b"/secret.txt", o + b"/dir/inner.txt", g + b"/config", g + b"/HEAD",
                g + b"/hooks/pre-commit", s + b"/agent.lock", s + b"/new.txt",
                s + b"/conflicts/keep.txt.20240101-000000.1", s + b"/journal/journal.log", o + b"/missing.txt",
                o + b"/nodir/x.txt",
                r + b"/d/missing.txt", r + b"/d/b.txt"]

    def folder_targets(self):
        o, g, s, r = self.outside, self.git, self.state, self.root
        return [r + b"/d", r + b"/d/e", o, o + b"/dir", g, g + b"/hooks", s, s + b"/conflicts"]

    CHILDREN = {
        b"d": ["b.txt", "new.txt", "e/c.txt", "../a.txt", ACUTE + "x.txt"],
        b"e": ["c.txt", "../b.txt", "../../a.txt"],
        b"outside": ["secret.txt", "new.txt", "dir/inner.txt"],
        b"dir": ["inner.txt", "new.txt", "../secret.txt", ACUTE + "x.txt"],
        b".git": ["config", "hooks/pre-commit", "new.txt", ACUTE + "x/new.txt", "../a.txt"],
        b"hooks": ["pre-commit", "pre-push.sample", "../config", ACUTE + "x/pre-commit"],
        b".autosave": ["agent.lock", "new.txt", ACUTE + "x.txt", "conflicts/x.txt", "../a.txt"],
        b"conflicts": ["keep.txt.20240101-000000.1", "x.txt", "../agent.lock"],
    }

    def children(self, folder):
        return self.CHILDREN.get(os.path.basename(folder), ["x.txt"])

    def build(self):
        r, o = self.root, self.outside
        for folder in [r + b"/d/e", r + b"/.git/hooks", r + b"/.git/objects", r + b"/.autosave/conflicts", o + b"/dir/sub"]:
            os.makedirs(folder, exist_ok=True)
        with open(r + b"/autosave.json", "w") as f:
            json.dump(CONFIG, f)
        for name in self.inside_files:
            self.put(self.r(name), self.token("INSIDE") + "\n")
        self.put(r + b"/.git/config", "[core]\n\t" + self.token("GIT-SENTINEL") + "\n")
        self.put(r + b"/.git/HEAD", self.token("GIT-SENTINEL") + "\n")
        self.put(r + b"/.git/hooks/pre-push.sample", self.token("GIT-SENTINEL") + "\n")
        self.put(r + b"/.autosave/conflicts/keep.txt.20240101-000000.1", self.token("STATE-SENTINEL") + "\n")
        self.put(o + b"/secret.txt", self.token("OUTSIDE-SENTINEL") + "\n")
        self.put(o + b"/dir/inner.txt", self.token("OUTSIDE-SENTINEL") + "\n")
        self.put(o + b"/dir/sub/deep.txt", self.token("OUTSIDE-SENTINEL") + "\n")
        self.pool = [
            "a.txt", "d/b.txt", "d/e/c.txt", "new.txt", "d/new.txt", "nd/new.txt", "./a.txt", "d/../a.txt",
            "d/e/../b.txt", ".git/config", ".git/hooks/pre-commit", ".autosave/agent.lock", ".autosave/new.txt",
            "../outside/secret.txt", "../outside/new.txt", "../new.txt", (o + b"/secret.txt").decode(),
            ".git/" + ACUTE + "x.txt", ".git/" + ACUTE + "x/new.txt", ".autosave/" + ACUTE + "x.txt",
            "d/" + ACUTE + "x.txt",
        ]
        for index in range(self.rng.randint(3, 9)):
            self.plant(index)
        seen = set()
        self.pool = [p for p in self.pool if not (b(p) in seen or seen.add(b(p)))]

    def plant(self, index):
        rng = self.rng
        kind = rng.randrange(8)
        if kind == 6 and rng.random() < 0.6:
            # A link in the state directory may stop the agent at start (a fix may refuse it):
            # such a seed checks only that nothing was written, so fewer of them.
            kind = 7
        folder = "d/" if rng.random() < 0.3 else ""
        absolute = rng.random() < 0.5
        name = f"{folder}l{index}"
        g, s, o = self.git, self.state, self.outside
        if kind in (0, 1):
            choices = [g + b"/config", g + b"/hooks/pre-commit", g + b"/HEAD", s + b"/agent.lock", s + b"/new.txt",
                       s + b"/journal/journal.log", o + b"/secret.txt"] if kind == 0 else self.file_targets()
            self.link(name + ".txt", rng.choice(choices), absolute)
            self.pool += [name + ".txt", "d/../" + name + ".txt"]
        elif kind == 2:
            target = rng.choice(self.folder_targets())
            self.link(name, target, absolute)
            self.pool += [name + "/" + c for c in self.children(target)]
        elif kind == 3:
            is_folder = rng.random() < 0.5
            target = rng.choice(self.folder_targets() if is_folder else self.file_targets())
            suffix = "" if is_folder else ".txt"
            self.link(name + "b" + suffix, target, absolute)
            self.link(name + suffix, self.r(name + "b" + suffix), rng.random() < 0.5)
            self.pool += [name + "/" + c for c in self.children(target)] if is_folder else [name + suffix]
        elif kind in (4, 5):
            nfc, nfd = rng.choice(TWINS)
            which = rng.randrange(3)
            for spelling, exists in ((nfc, which != 2), (nfd, which != 1)):
                if exists and not os.path.lexists(self.r(spelling)):
                    text = self.token("TWIN")
                    self.put(self.r(spelling), text + "\n")
                    self.owner[text] = self.r(spelling)
            self.twin_of[self.r(nfc)] = self.r(nfd)
            self.twin_of[self.r(nfd)] = self.r(nfc)
            self.pool += [nfc, nfd, "./" + nfd, (self.r(nfc)).decode()]
            for spelling in (nfc, nfd):
                if spelling not in self.inside_files:
                    self.inside_files.append(spelling)
        elif kind == 6:
            links = o + b"/state-links"
            variant = rng.randrange(4)
            if variant == 0 and not os.path.lexists(s + b"/journal"):
                os.makedirs(links + b"/journal", exist_ok=True)
                os.symlink(links + b"/journal", s + b"/journal")
            elif variant == 1 and os.path.isdir(s + b"/conflicts") and not os.path.islink(s + b"/conflicts"):
                os.makedirs(links + b"/conflicts", exist_ok=True)
                os.rename(s + b"/conflicts", links + b"/conflicts-old")
                os.symlink(links + b"/conflicts", s + b"/conflicts")
            elif variant == 2 and not os.path.lexists(s + b"/conflicts/d"):
                target = links + b"/d" if rng.random() < 0.5 else g + b"/objects"
                os.makedirs(target, exist_ok=True)
                os.symlink(target, s + b"/conflicts/d")
            elif variant == 3 and os.path.isdir(s) and not os.path.islink(s):
                os.makedirs(links, exist_ok=True)
                os.rename(s, links + b"/state")
                os.symlink(os.path.relpath(links + b"/state", self.root), s)
        else:
            target = rng.choice([self.r("d/e"), o + b"/dir", g + b"/hooks", o + b"/dir/sub"])
            self.link(name, target, absolute)
            self.pool += [name + "/../b.txt", name + "/../../a.txt", name + "/../secret.txt", name + "/../config"]

    # --- snapshots and invariants ------------------------------------------------------------

    def guarded(self):
        out = {}
        walk(self.home, out, skip=self.root)
        walk(self.git, out)
        walk(self.state, out)
        return out

    def agents_own(self, path):
        if path in self.planted or not under(path, self.state) or path == self.state:
            return False
        inside = path[len(self.state) + 1:]
        return (inside.startswith(b"journal") or inside.startswith(b"conflicts/") or inside == b"conflicts"
                or inside.startswith(b"agent.sock") or inside.startswith(b"history.sqlite")
                or (inside == b"agent.lock" and not self.started))

    def agents_name(self, path):
        """The state directory itself, or a name in it the agent keeps its own things under."""
        if path == self.state:
            return True
        if not under(path, self.state):
            return False
        inside = path[len(self.state) + 1:]
        return inside.startswith((b"journal", b"conflicts", b"agent.sock", b"agent.lock", b"history.sqlite"))

    def shown(self, path):
        return shown(path[len(self.home) + 1:])

    def place(self, path):
        return "in .git/" if under(path, self.git) else "in the state directory" if under(path, self.state) else "outside the root"

    def violation(self, invariant, message, key=None):
        if (invariant, key or message) in self.reported:
            return
        self.reported.add((invariant, key or message))
        finding = f"seed {self.seed} step {self.step} [{self.note}]: ({invariant}) {message}"
        self.findings.append(finding)
        if VERBOSE:
            print("   VIOLATION", finding, flush=True)

    def check_disk(self):
        now = self.guarded()
        for key in sorted(set(self.baseline) | set(now)):
            before, after = self.baseline.get(key), now.get(key)
            if before == after:
                continue
            if self.agents_own(key):
                self.check_agents_own(key, before, after)
                continue
            if self.agents_name(key) and before and before[0] == "link" and (after is None or after[0] in ("dir", "file")):
                # A stranger's link where the agent keeps its own things (the state directory
                # itself, journal/, conflicts/…): the agent may take the name back; what the link
                # led to is judged where it is.
                continue
            self.violation("a", f"{self.shown(key)} {self.place(key)} changed: was {describe(before)}, now {describe(after)}",
                           key=(key, before is None, after is None))
        self.baseline = now

    def check_agents_own(self, key, before, after):
        """The agent's own files change only as the agent changes them: a journal keeps its header
        (a write through a link to it replaces it with a client's text), a conflict copy is written
        once and never changed or deleted (a temp being written aside)."""
        if not before or before[0] != "file":
            return
        inside = key[len(self.state) + 1:]
        if inside.startswith(b"journal/"):
            if len(before[1]) >= 4 and after is not None and not (after[0] == "file" and after[1][:4] == before[1][:4]):
                self.violation("a", f"the agent's journal {self.shown(key)} was overwritten: was {describe(before)}, now {describe(after)}",
                               key=("journal", key))
        elif inside.startswith(b"conflicts/"):
            name = os.path.basename(key)
            if not (name.startswith(b".") and name.endswith(b".tmp") and b".autosave-" in name):
                self.violation("a", f"the conflict copy {self.shown(key)} changed: was {describe(before)}, now {describe(after)}",
                               key=("copy", key))

    def check_twins_on_disk(self):
        for path, twin in self.twin_of.items():
            e = entry(path)
            if not e or e[0] != "file":
                continue
            for tok in TOKEN.findall(e[1].decode(errors="replace")):
                if self.owner.get(tok) == twin:
                    self.violation("c", f"{self.shown(path)} holds {tok}, which was meant for its twin {self.shown(twin)}")

    def check_answer(self, path, text, sent):
        for tok in TOKEN.findall(text):
            if tok.startswith(SENTINELS) and tok not in sent:
                source = ("a file outside the root" if tok.startswith("OUTSIDE") else
                          "a file in .git/" if tok.startswith("GIT") else "a file in the state directory")
                self.violation("b", f"the answer for {shown(path) if path else 'the call'} carried {tok} from {source}: {text[:150]!r}")
        if path is None:
            return
        target = self.resolve(path)
        twin = self.twin_of.get(target)
        if twin is None:
            return
        foreign = [t for t in TOKEN.findall(text) if self.owner.get(t) == twin]
        if foreign:
            self.violation("c", f"reading {shown(path)} (the file {self.shown(target)}) showed {', '.join(foreign)}, the bytes of its twin {self.shown(twin)}")

    def resolve(self, path):
        return kernel_target(b(path) if b(path).startswith(b"/") else self.r(path))

    # --- calls -------------------------------------------------------------------------------

    def pick(self):
        path = self.rng.choice(self.pool)
        form = self.rng.randrange(6)
        if form == 0 and not path.startswith("/"):
            return self.root.decode() + "/" + path
        if form == 1 and not path.startswith("/"):
            return "./" + path
        return path

    def count(self, path):
        target = self.resolve(path)
        if target in self.twin_of:
            self.tally["twin"] += 1
        current = b"" if b(path).startswith(b"/") else self.root
        for part in b(path).split(b"/"):
            if not part:
                continue
            current += b"/" + part
            if os.path.islink(current):
                self.tally["link"] += 1
                return

    def client_token(self, path):
        text = self.token("CLIENT")
        target = self.resolve(path)
        if target in self.twin_of:
            self.owner[text] = target
        return text

    def first_line(self, path):
        target = self.resolve(path)
        e = entry(target) if target else None
        if not e or e[0] != "file":
            return None
        return e[1].split(b"\n")[0].decode(errors="replace")

    def sync(self):
        """Waits until the agent has taken in every change made so far (`autosave sync`)."""
        self.tally["syncs"] += 1
        done = subprocess.run([BINARY, "sync"], cwd=self.root, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            self.sync_failures += 1
            if VERBOSE:
                print("   sync failed:", done.stderr.strip(), flush=True)

    def swap(self):
        rng = self.rng
        self.counter += 1
        variant = rng.randrange(6)
        absolute = rng.random() < 0.5
        exists = lambda name: entry(self.r(name))
        if variant in (0, 1):
            files = [f for f in self.inside_files if (exists(f) or ("",))[0] == "file"]
            preferred = [f for f in files if f in self.open_paths]
            choices = preferred if preferred and rng.random() < 0.75 else files
            if not choices:
                return False
            name = rng.choice(choices)
            target = rng.choice(self.file_targets())
            temp = f"{name}.swap{self.counter}"
            self.link(temp, target, absolute)
            self.links.remove(temp)
            os.rename(self.r(temp), self.r(name))
            if name not in self.links:
                self.links.append(name)
            self.note = f"swap: {shown(name)} replaced by a link to {self.shown(target)}"
        elif variant == 2:
            folders = [f for f in ["d/e", "d", TWINS[2][0].split("/")[0], TWINS[2][1].split("/")[0]] if exists(f) == ("dir",)]
            if not folders:
                return False
            name = rng.choice(folders)
            target = rng.choice(self.folder_targets())
            os.rename(self.r(name), self.r(f"{name}.moved{self.counter}"))
            self.link(name, target, absolute)
            self.note = f"swap: folder {shown(name)} replaced by a link to {self.shown(target)}"
        elif variant == 3:
            current = [l for l in self.links if os.path.islink(self.r(l))]
            if not current:
                return False
            name = rng.choice(current)
            target = rng.choice(self.file_targets() + self.folder_targets())
            temp = f"{name}.swap{self.counter}"
            self.link(temp, target, absolute)
            self.links.remove(temp)
            os.rename(self.r(temp), self.r(name))
            self.note = f"swap: link {shown(name)} retargeted to {self.shown(target)}"
        elif variant == 4:
            current = [l for l in self.links if os.path.islink(self.r(l))]
            files = [f for f in self.inside_files if (exists(f) or ("",))[0] == "file"]
            if not current or not files:
                return False
            link, name = rng.choice(current), rng.choice(files)
            os.rename(self.r(link), self.r(name))
            self.links.remove(link)
            if name not in self.links:
                self.links.append(name)
            self.note = f"swap: link {shown(link)} renamed over {shown(name)}"
        else:
            if not os.path.isdir(self.state) or os.path.islink(self.state):
                return False
            os.makedirs(self.state + b"/conflicts", exist_ok=True)
            name = rng.choice([b"conflicts/d", b"conflicts/na\xc3\xafve", b"conflicts/d/e"])
            at = self.state + b"/" + name
            if not os.path.isdir(os.path.dirname(at)):
                return False
            target = self.outside + b"/dir/sub" if rng.random() < 0.5 else self.git + b"/objects"
            if os.path.lexists(at):
                os.rename(at, at + f".moved{self.counter}".encode())
            os.symlink(target if absolute else os.path.relpath(target, os.path.dirname(at)), at)
            self.note = f"swap: the state directory's {shown(name)} replaced by a link to {self.shown(target)}"
        self.tally["swaps"] += 1
        # What the swap did to the guarded places is the test's doing, not the agent's.
        now = self.guarded()
        for key in set(self.baseline) | set(now):
            if self.baseline.get(key) != now.get(key) and not self.agents_own(key) and under(key, self.state) and key in now:
                self.planted.add(key)
        self.baseline = now
        return True

    def external_edit(self):
        files = [f for f in self.inside_files if (entry(self.r(f)) or ("",))[0] == "file"]
        if not files:
            return
        name = self.rng.choice(files)
        text = self.token("EXT")
        if self.r(name) in self.twin_of:
            self.owner[text] = self.r(name)
        self.note = f"a tool writes {text} to {shown(name)}"
        if self.rng.random() < 0.5:
            self.put(self.r(name), text + "\n")
        else:
            temp = os.path.dirname(self.r(name)) + b"/.walls-edit.tmp~"
            self.put(temp, text + "\n")
            os.rename(temp, self.r(name))

    async def call(self, session, tool, path=None, **arguments):
        """One tool call; returns (failed, text) and checks the answer."""
        sent = set()
        for value in arguments.values():
            if isinstance(value, str):
                sent.update(t for t in TOKEN.findall(value) if t.startswith(SENTINELS))
        if path is not None and tool not in ("apply_patch",):
            arguments["path"] = path
        self.called.add(tool)
        result = await session.call_tool(tool, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        failed = bool(result.is_error)
        self.tally["refused" if failed else "accepted"] += 1
        if VERBOSE:
            print(f"   {tool} {json.dumps({k: v for k, v in arguments.items()}, ensure_ascii=True)[:160]} -> "
                  f"{'ERROR ' if failed else ''}{text[:160]!r}", flush=True)
        self.check_answer(path if tool == "read_file" and not failed else None, text, sent)
        return failed, text

    async def step_once(self, session):
        rng = self.rng
        op = rng.randrange(17)
        path = self.pick()
        self.count(path)
        if op in (0, 1):
            self.note = f"read_file {shown(path)}"
            await self.call(session, "read_file", path)
        elif op in (2, 3):
            text = self.client_token(path)
            self.note = f"write_file {text} to {shown(path)}"
            await self.call(session, "write_file", path, content=text + "\n")
        elif op == 4:
            old = self.first_line(path)
            text = self.client_token(path)
            self.note = f"edit_file {shown(path)}: {old!r} -> {text}"
            sent = old or "INSIDE-0"
            # The model read the file first, as it must before an edit.
            await self.call(session, "read_file", path)
            await self.call(session, "edit_file", path, old_string=sent, new_string=text)
        elif op in (5, 6):
            old = self.first_line(path)
            text = self.client_token(path)
            head = (lambda p, prefix: p if p.startswith("/") else prefix + p)
            if op == 5 or old is None:
                patch = f"--- /dev/null\n+++ {head(path, 'b/')}\n@@ -0,0 +1 @@\n+{text}\n"
            else:
                patch = f"--- {head(path, 'a/')}\n+++ {head(path, 'b/')}\n@@ -1 +1 @@\n-{old}\n+{text}\n"
            if rng.random() < 0.3 and self.twin_of:
                # Headers naming the two spellings of one name.
                frm = rng.choice(sorted(self.twin_of))
                to = self.twin_of[frm]
                fname, tname = frm[len(self.root) + 1:].decode(), to[len(self.root) + 1:].decode()
                old = self.first_line(fname) or "TWIN-0"
                text = self.client_token(tname)
                self.tally["twin"] += 1
                patch = f"--- a/{fname}\n+++ b/{tname}\n@@ -1 +1 @@\n-{old}\n+{text}\n"
            self.note = f"apply_patch {patch!r}"
            await self.call(session, "apply_patch", patch=patch)
        elif op == 7:
            self.note = "save"
            paths = [self.rng.choice(self.open_paths)] if self.open_paths and rng.random() < 0.5 else None
            await self.call(session, "save", **({"paths": paths} if paths else {}))
        elif op == 8:
            self.note = "changes"
            await self.call(session, "changes", since=self.cursor) if self.cursor else await self.call(session, "changes")
        elif op in (9, 10):
            if self.swap():
                self.sync()
        elif op == 11:
            self.external_edit()
            self.sync()
        elif op == 12:
            # One twin, then the other spelling.
            if not self.twin_of:
                return
            first = rng.choice(sorted(self.twin_of))
            for twin in (first, self.twin_of[first]):
                name = twin[len(self.root) + 1:].decode()
                self.tally["twin"] += 1
                if rng.random() < 0.5:
                    self.note = f"twins: read_file {shown(name)}"
                    await self.call(session, "read_file", name)
                else:
                    text = self.client_token(name)
                    self.note = f"twins: write_file {text} to {shown(name)}"
                    await self.call(session, "write_file", name, content=text + "\n")
        elif op == 14:
            self.note = f"history {shown(path)}"
            await self.call(session, "history", path)
        elif op == 15:
            self.note = f"restore {shown(path)}@-1"
            await self.call(session, "restore", path, version="-1")
        elif op == 16:
            dry = rng.random() < 0.5
            self.note = f"undo_my_changes in {shown(path)}{' (dry run)' if dry else ''}"
            await self.call(session, "undo_my_changes", paths=[path], dry_run=dry)
        else:
            self.note = "status"
            await self.call(session, "status")

    async def read_back(self, session):
        """Every open file read as the model would: no answer may carry what it must not."""
        failed, text = await session.call_tool("status", {}), None
        text = "\n".join(getattr(c, "text", "") for c in failed.content)
        self.check_answer(None, text, set())
        paths = re.findall(r"^(.*?) · revision", text, re.M)
        self.open_paths = paths
        for path in paths:
            result = await session.call_tool("read_file", {"path": path})
            answer = "\n".join(getattr(c, "text", "") for c in result.content)
            self.check_answer(None if result.is_error else path, answer, set())

    async def run(self, stderr):
        self.open_paths = []
        self.called = set()
        self.cursor = None
        self.started = False
        self.build()
        self.baseline = self.guarded()
        self.planted = {k for k in self.baseline if under(k, self.state)}
        if VERBOSE:
            links = sorted(k for k, e in self.guarded().items() if e[0] == "link")
            print(f"seed {self.seed}: links {[shown(l) for l in self.links]}", flush=True)
        try:
            await self.session(stderr)
        except Exception as error:
            if self.initialized:
                raise
            # The agent refused to start (a hostile state directory, say): refusing writes nothing,
            # which the disk shows.
            self.refused_start = repr(error)[:200]
            if VERBOSE:
                print("   the start was refused:", self.refused_start, flush=True)
        # End of input: the in-process agent saves every unsaved edit and exits.
        self.step = STEPS
        self.note = "end of input (the agent saves everything and exits)"
        self.check_disk()
        self.check_twins_on_disk()

    async def session(self, stderr):
        params = StdioServerParameters(command=BINARY, args=["mcp", self.root.decode()], cwd=self.root.decode())
        self.initialized = False
        async with stdio_client(params, errlog=stderr) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                self.initialized = True
                tools = {t.name for t in (await session.list_tools()).tools}
                self.tools_seen = tools
                failed, text = await self.call(session, "changes")
                try:
                    self.cursor = json.loads(text).get("cursor")
                except ValueError:
                    self.cursor = None
                self.note = "the agent's start"
                self.check_disk()
                # The lock is the agent's own while it writes its pid at start; never after.
                self.started = True
                self.baseline = self.guarded()
                for step in range(STEPS):
                    self.step = step
                    await self.step_once(session)
                    if VERBOSE:
                        print(f" step {step}: {self.note}", flush=True)
                    await self.read_back(session)
                    self.check_disk()
                    self.check_twins_on_disk()


class WallsTests(unittest.TestCase):
    def test_no_tool_call_reaches_through_the_walls(self):
        seeds = FIXED_SEEDS
        if os.environ.get("WALLS_SEED") or os.environ.get("WALLS_CASES"):
            first = int(os.environ.get("WALLS_SEED", "1"))
            seeds = list(range(first, first + int(os.environ.get("WALLS_CASES", "1"))))
        findings, totals, tools, called = [], {}, set(), set()
        started = time.monotonic()
        for seed in seeds:
            home = tempfile.mkdtemp(prefix="autosave-walls-")
            try:
                scenario = Scenario(seed, home)
                # The server's log goes beside home, not in it: home is all watched for changes.
                with open(home + ".mcp.log", "w") as stderr:
                    asyncio.run(asyncio.wait_for(scenario.run(stderr), 120))
                findings += scenario.findings
                tools |= scenario.tools_seen
                called |= scenario.called
                for key, value in scenario.tally.items():
                    totals[key] = totals.get(key, 0) + value
                totals["sync failures"] = totals.get("sync failures", 0) + scenario.sync_failures
                totals["starts refused"] = totals.get("starts refused", 0) + (scenario.refused_start is not None)
            finally:
                if os.environ.get("KEEP"):
                    print("kept", home, "and", home + ".mcp.log")
                else:
                    shutil.rmtree(home, ignore_errors=True)
                    os.unlink(home + ".mcp.log")
        print(f"\ntest_walls: {len(seeds)} seeds in {time.monotonic() - started:.1f} s: {totals}", flush=True)
        for finding in findings:
            print("  ", finding)
        # Every tool the server lists was reached by the generator, and it reached the walls.
        self.assertEqual(tools, {"read_file", "write_file", "edit_file", "apply_patch", "changes", "save", "status", "history",
                                 "restore", "undo_my_changes"},
                         "the server's tools changed: give the generator the new ones")
        if seeds == FIXED_SEEDS:
            self.assertEqual(called, tools, "every tool the server lists is called")
            self.assertGreater(totals["accepted"], 50, totals)
            self.assertGreater(totals["swaps"], 10, totals)
            self.assertGreater(totals["twin"], 5, totals)
            self.assertGreater(totals["link"], 20, totals)
        if findings:
            self.fail(f"{len(findings)} broken walls (listed above); replay one with WALLS_SEED=N WALLS_CASES=1 WALLS_VERBOSE=1")


if __name__ == "__main__":
    unittest.main(verbosity=2)
