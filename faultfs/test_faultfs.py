#!/usr/bin/env python3
"""faultfs's own tests: what a power cut keeps and what it forgets, on the real kernel and FUSE.

    /usr/bin/python3 faultfs/test_faultfs.py     (as root, with /dev/fuse; skipped otherwise)
"""
import ctypes
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 20.0


def why_not_here():
    """Why FUSE cannot be used here, or None."""
    if os.geteuid() != 0:
        return "faultfs tests mount a file system: they run as root"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    try:
        import pyfuse3  # noqa: F401
    except ImportError:
        return "pyfuse3 is not installed (Debian: python3-pyfuse3)"
    return None


def wait_for(condition, what):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class MountedTestCase(unittest.TestCase):
    """A faultfs mount over a fresh backing folder holding `before.txt`."""

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="faultfs-")
        self.backing = os.path.join(self.home, "backing")
        self.mount = os.path.join(self.home, "mount")
        self.state = os.path.join(self.home, "state")
        os.mkdir(self.backing)
        os.mkdir(self.mount)
        self.write_backing("before.txt", b"there before\n")
        self.log = open(os.path.join(self.home, "faultfs.log"), "w")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "faultfs.py"), self.backing, self.mount, "--state", self.state],
            stderr=self.log)
        self.generation = self.mounted(0)

    def tearDown(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=TIMEOUT)
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def mounted(self, generation):
        def ready():
            try:
                with open(self.state) as f:
                    return f.read().split()[1] == str(generation) and os.path.ismount(self.mount)
            except (OSError, IndexError):
                return False
        wait_for(ready, f"mount {generation}")
        return generation

    def cut(self):
        self.process.send_signal(signal.SIGUSR1)
        self.generation = self.mounted(self.generation + 1)

    def write_backing(self, name, data):
        with open(os.path.join(self.backing, name), "wb") as f:
            f.write(data)

    def path(self, name):
        return os.path.join(self.mount, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def write(self, name, data, sync=False, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
        fd = os.open(self.path(name), flags, 0o644)
        os.write(fd, data)
        if sync:
            os.fsync(fd)
        os.close(fd)

    def sync_dir(self, name=""):
        fd = os.open(self.path(name) if name else self.mount, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(fd)
        os.close(fd)



@unittest.skipIf(why_not_here(), why_not_here() or "")
class PowerCutTests(MountedTestCase):
    def test_what_was_never_synced_is_gone(self):
        self.write("new.txt", b"lost\n")
        self.write("before.txt", b"overwritten, never synced\n")
        self.cut()
        self.assertFalse(os.path.exists(self.path("new.txt")))
        self.assertEqual(self.read("before.txt"), b"there before\n")

    def test_a_file_and_its_directory_synced_survive(self):
        self.write("kept.txt", b"durable\n", sync=True)
        self.sync_dir()
        self.cut()
        self.assertEqual(self.read("kept.txt"), b"durable\n")

    def test_a_synced_file_whose_directory_was_not_synced_is_gone(self):
        self.write("orphan.txt", b"data without a name\n", sync=True)
        self.cut()
        self.assertFalse(os.path.exists(self.path("orphan.txt")))

    def test_a_name_made_durable_without_its_data_comes_back_empty(self):
        self.write("empty.txt", b"never synced\n")
        self.sync_dir()
        self.cut()
        self.assertEqual(self.read("empty.txt"), b"")

    def test_a_rename_reverts_unless_the_directory_is_synced(self):
        os.rename(self.path("before.txt"), self.path("after.txt"))
        self.cut()
        self.assertEqual(os.listdir(self.mount), ["before.txt"])
        os.rename(self.path("before.txt"), self.path("after.txt"))
        self.sync_dir()
        self.cut()
        self.assertEqual(os.listdir(self.mount), ["after.txt"])
        self.assertEqual(self.read("after.txt"), b"there before\n")

    def test_an_append_only_journal_loses_its_unsynced_tail(self):
        self.write("journal", b"", sync=True)
        self.sync_dir()
        fd = os.open(self.path("journal"), os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"record 1\n")
        os.fsync(fd)
        os.write(fd, b"record 2\n")
        os.close(fd)
        self.cut()
        self.assertEqual(self.read("journal"), b"record 1\n")

    def test_an_atomic_save_by_exchange_is_all_or_nothing(self):
        libc = ctypes.CDLL(None, use_errno=True)
        self.write(".before.tmp", b"new version\n", sync=True)
        result = libc.renameat2(-100, self.path(".before.tmp").encode(), -100, self.path("before.txt").encode(), 2)
        self.assertEqual(result, 0, os.strerror(ctypes.get_errno()))
        self.assertEqual(self.read("before.txt"), b"new version\n")
        self.cut()
        self.assertEqual(self.read("before.txt"), b"there before\n", "the exchange was not durable yet")
        self.assertFalse(os.path.exists(self.path(".before.tmp")))
        self.write(".before.tmp", b"new version\n", sync=True)
        libc.renameat2(-100, self.path(".before.tmp").encode(), -100, self.path("before.txt").encode(), 2)
        self.sync_dir()
        self.cut()
        self.assertEqual(self.read("before.txt"), b"new version\n")
        self.assertEqual(self.read(".before.tmp"), b"there before\n", "the old version, under the temp name")

    def test_hard_links_and_folders_come_back_as_they_were_synced(self):
        os.mkdir(self.path("sub"))
        self.write("sub/a.txt", b"linked\n", sync=True)
        os.link(self.path("sub/a.txt"), self.path("sub/b.txt"))
        self.sync_dir("sub")
        self.sync_dir()
        self.cut()
        self.assertEqual(os.stat(self.path("sub/a.txt")).st_ino, os.stat(self.path("sub/b.txt")).st_ino)
        self.assertEqual(self.read("sub/b.txt"), b"linked\n")

    def test_a_socket_made_durable_comes_back_as_a_socket(self):
        # The agent's control socket lives in its state dir: after a reboot a stale socket is
        # there, not a regular file the agent would refuse to replace.
        import socket
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.path("agent.sock"))
        server.close()
        self.sync_dir()
        self.cut()
        self.assertTrue(stat.S_ISSOCK(os.lstat(self.path("agent.sock")).st_mode))

    def test_an_unlinked_files_inode_reused_does_not_change_what_its_durable_name_holds(self):
        # The backing file system gives the next new file the number of the one just unlinked;
        # the durable image still has the old file under its name (the unlink was never synced).
        self.write("old.txt", b"old data\n", sync=True)
        self.sync_dir()
        reused = False
        for attempt in range(20):
            number = os.stat(self.path("old.txt")).st_ino
            os.unlink(self.path("old.txt"))
            self.write(f"new{attempt}.txt", b"new data\n", sync=True)
            if os.stat(self.path(f"new{attempt}.txt")).st_ino == number:
                reused = True
                break
            os.unlink(self.path(f"new{attempt}.txt"))
            self.cut()
        if not reused:
            self.skipTest("the backing file system did not reuse the inode number in 20 tries")
        self.cut()
        self.assertEqual(self.read("old.txt"), b"old data\n")


@unittest.skipIf(why_not_here(), why_not_here() or "")
class TornCutTests(MountedTestCase):
    """SIGUSR2: a random prefix of the volatile operations, in order, reaches the disk (and a
    random part of the write where it stops)."""

    def torn_cut(self):
        self.process.send_signal(signal.SIGUSR2)
        self.generation = self.mounted(self.generation + 1)

    def test_what_reaches_the_disk_is_a_prefix_of_what_was_done(self):
        self.write("kept.txt", b"durable\n", sync=True)
        self.sync_dir()
        prefixes = set()
        for _ in range(12):
            for index in range(5):  # create n0..n4, each then written: ten operations in order
                self.write(f"n{index}", f"file {index}\n".encode())
            self.torn_cut()
            present = sorted(name for name in os.listdir(self.mount) if name.startswith("n"))
            count = len(present)
            self.assertEqual(present, [f"n{i}" for i in range(count)], "names come back in the order made")
            for index in range(count - 1):
                self.assertEqual(self.read(f"n{index}"), f"file {index}\n".encode(),
                                 "a file made before a later file's name reached the disk has its data")
            if count:
                last = self.read(f"n{count - 1}")
                self.assertTrue(f"file {count - 1}\n".encode().startswith(last), f"a prefix of its write, not {last!r}")
            self.assertEqual(self.read("kept.txt"), b"durable\n", "what was durable stays, whatever the prefix")
            prefixes.add(count)
            for name in present:
                os.unlink(self.path(name))
            self.sync_dir()
        self.assertGreater(len(prefixes), 2, f"torn cuts kept different prefixes ({sorted(prefixes)})")

    def test_an_append_only_journal_keeps_a_prefix_of_its_unsynced_bytes(self):
        self.write("journal", b"record 0\n", sync=True)
        self.sync_dir()
        fd = os.open(self.path("journal"), os.O_WRONLY | os.O_APPEND)
        for index in range(1, 9):
            os.write(fd, f"record {index}\n".encode())
        os.close(fd)
        self.torn_cut()
        everything = "".join(f"record {i}\n" for i in range(9)).encode()
        kept = self.read("journal")
        self.assertTrue(kept.startswith(b"record 0\n"), "the synced record stays")
        self.assertTrue(everything.startswith(kept), f"a prefix of what was appended, maybe ending inside a record: {kept!r}")


BINARY = os.path.abspath(os.environ.get("AUTOSAVE_BINARY", os.path.join(HERE, "..", ".build", "debug", "autosave")))


@unittest.skipIf(why_not_here() or not os.path.exists(BINARY), why_not_here() or f"no agent binary at {BINARY}")
class AgentPowerCutTests(MountedTestCase):
    """The agent on faultfs: what it acknowledged or logged as saved survives a power cut."""

    def agent(self, *args, input=None):
        return subprocess.run([BINARY, *args], cwd=self.mount, input=input, capture_output=True, timeout=60)

    def tearDown(self):
        # An agent left running would hold the mount busy.
        for agent in getattr(self, "agents", []):
            if agent.poll() is None:
                agent.kill()
                agent.wait()
        super().tearDown()

    def start_agent(self):
        log = open(os.path.join(self.home, f"agent{self.generation}.log"), "w")
        agent = subprocess.Popen([BINARY, "run", self.mount], stderr=log)
        self.agents = getattr(self, "agents", []) + [agent]
        try:
            wait_for(lambda: "ready" in open(log.name).read(), "the agent's ready line")
        except AssertionError:
            raise AssertionError(f"the agent did not start: {open(log.name).read()}") from None
        return agent, log.name

    def test_an_acknowledged_edit_survives_a_power_cut_on_a_new_state_directory(self):
        # Written durably, as a configuration long in place would be.
        self.write("autosave.json", b'{"autosave": {"delayMs": 600000, "maxDelayMs": 600000}}', sync=True)
        self.sync_dir()
        agent, _ = self.start_agent()
        self.assertEqual(self.agent("write", "a.txt", input=b"acknowledged\n").returncode, 0)
        self.assertEqual(self.agent("write", "before.txt", input=b"saved\n").returncode, 0)
        self.assertEqual(self.agent("save", "before.txt").returncode, 0)
        agent.kill()
        agent.wait()
        self.cut()
        self.assertEqual(self.read("before.txt"), b"saved\n", "logged saved: durable")
        agent, log = self.start_agent()
        self.assertIn("recovered path=a.txt", open(log).read(), "the journal and its folders were durable")
        self.assertEqual(self.agent("cat", "a.txt").stdout, b"acknowledged\n")
        self.assertEqual(self.agent("stop").returncode, 0)
        agent.wait(timeout=30)
        self.assertEqual(self.read("a.txt"), b"acknowledged\n")
        self.assertEqual(sorted(n for n in os.listdir(self.mount) if n.startswith(".") and n != ".autosave"), [],
                         "no temp file left")

    def test_a_file_saved_in_folders_the_agent_made_survives_a_power_cut(self):
        # `write --parents` makes the folders through the path resolver, and a conflict copy its
        # folder under .autosave/conflicts: a save or a copy reported durable must not lose its
        # folder to a cut (the resolver's mkdirat once left the folder it was made in unsynced).
        self.write("autosave.json", b'{"autosave": {"delayMs": 600000, "maxDelayMs": 600000}}', sync=True)
        self.sync_dir()
        agent, _ = self.start_agent()
        self.assertEqual(self.agent("write", "--parents", "new/deep/a.txt", input=b"saved in new folders\n").returncode, 0)
        self.assertEqual(self.agent("save", "new/deep/a.txt").returncode, 0)
        agent.kill()
        agent.wait()
        self.cut()
        self.assertEqual(self.read("new/deep/a.txt"), b"saved in new folders\n", "logged saved: durable, folders and all")

    def test_keystrokes_in_a_large_file_survive_a_power_cut(self):
        # A clean file of 1 MiB or more: its first edit (a patch here, as `autosave patch` sends it)
        # is journaled as a splice on a pinned copy of the file in .autosave/journal/bases/. The
        # copy must be as durable as the record that stands on it when the edit is acknowledged,
        # or the cut leaves a record whose base is gone (journal-corrupt, the edit lost).
        self.write("autosave.json", b'{"autosave": {"delayMs": 600000, "maxDelayMs": 600000}}', sync=True)
        lines = [b"line %d of a file large enough to be pinned\n" % n for n in range(40_000)]
        self.write("big.txt", b"".join(lines), sync=True)
        self.sync_dir()
        agent, _ = self.start_agent()
        edited = list(lines)
        edited[20_000] = b"an acknowledged keystroke\n"
        patch = b"--- big.txt\n+++ big.txt\n@@ -20000,3 +20000,3 @@\n " + lines[19_999] + b"-" + lines[20_000] + \
            b"+" + edited[20_000] + b" " + lines[20_001]
        self.assertEqual(self.agent("patch", input=patch).returncode, 0)
        agent.kill()
        agent.wait()
        self.cut()
        agent, log = self.start_agent()
        self.assertNotIn("journal-corrupt", open(log).read())
        self.assertIn("recovered path=big.txt", open(log).read(), "the record and the copy it stands on were durable")
        self.assertEqual(self.agent("stop").returncode, 0)
        agent.wait(timeout=30)
        self.assertEqual(self.read("big.txt"), b"".join(edited))


if __name__ == "__main__":
    if why_not_here():
        print(f"faultfs: tests skipped: {why_not_here()}")
    unittest.main(verbosity=2)
