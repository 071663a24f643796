#!/usr/bin/env python3
"""The Neovim plugin with the real editor and the real agent.

Each test starts `autosave run` on a temporary project and a headless Neovim (`nvim --embed
--clean`, the plugin on 'runtimepath'), drives Neovim through its own RPC (pynvim) as a person
would type, and looks at the files, the agent's log and Neovim's buffer. Waits are on conditions
with generous timeouts, never bare sleeps.

    AUTOSAVE_BINARY=.build/debug/autosave /usr/bin/python3 editors/nvim/test/test_nvim.py
"""
import base64
import grp
import json
import os
import re
import pwd
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import warnings

import pynvim

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
BINARY = os.path.abspath(os.environ.get("AUTOSAVE_BINARY", ".build/debug/autosave"))
TIMEOUT = 20.0


def wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


class Agent:
    """`autosave run` on `root`, logging JSON lines to a file."""

    def __init__(self, root, config):
        self.root = root
        with open(os.path.join(root, "autosave.json"), "w") as f:
            json.dump(config, f)
        self.log_path = os.path.join(os.path.dirname(root), "agent.log")
        self.start()

    def start(self):
        self.log_file = open(self.log_path, "a")
        self.offset = os.path.getsize(self.log_path)
        self.process = subprocess.Popen(
            [BINARY, "run", self.root, "--log-format", "json"], stdout=subprocess.DEVNULL, stderr=self.log_file)
        wait_for(lambda: self.events("ready"), "the agent's ready line")

    def lines(self):
        with open(self.log_path) as f:
            f.seek(self.offset)
            return [json.loads(line) for line in f if line.startswith("{")]

    def events(self, name):
        return [line for line in self.lines() if line.get("event") == name]

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.log_file.close()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)
        self.log_file.close()


class Client:
    """A plain JSON-RPC client of the agent's socket, to look at its buffers from outside."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.sock.sendall(line.encode() + b"\n")
        answer = json.loads(self.file.readline())
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["result"]

    def close(self):
        self.file.close()
        self.sock.close()


class PluginTestCase(unittest.TestCase):
    config = {"autosave": {"delayMs": 300, "maxDelayMs": 2000}}

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="autosave-nvim-")
        self.root = os.path.join(self.home, "project")
        os.mkdir(self.root)
        self.agent = None

    def tearDown(self):
        if getattr(self, "nvim", None) is not None:
            try:
                self.nvim.command("qa!")
            except Exception:
                pass
            self.nvim.close()
        if self.agent:
            self.agent.stop()
        shutil.rmtree(self.home, ignore_errors=True)

    # -- the project, the agent, the editor

    def write(self, name, data):
        with open(os.path.join(self.root, name), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())

    def read(self, name):
        with open(os.path.join(self.root, name), "rb") as f:
            return f.read()

    def start_agent(self, **extra):
        config = json.loads(json.dumps(self.config))
        for key, value in extra.items():
            config.setdefault(key, {}).update(value)
        self.agent = Agent(self.root, config)

    def start_nvim(self):
        env = dict(os.environ, XDG_DATA_HOME=os.path.join(self.home, "data"), XDG_STATE_HOME=os.path.join(self.home, "state"))
        env.pop("AUTOSAVE_SOCKET", None)
        self.nvim = pynvim.attach("child", argv=[
            "nvim", "--embed", "--headless", "--clean", "-n", "--cmd", "set rtp^=" + PLUGIN,
            "--cmd", "cd " + self.root,
        ])
        # Every message the plugin gives, kept for the tests to read.
        self.nvim.exec_lua("""
            _G.notes = {}
            vim.notify = function(message, level) table.insert(_G.notes, {message = message, level = level or 2}) end
        """)
        del env

    def edit(self, name):
        self.nvim.command("edit " + os.path.join(self.root, name))
        wait_for(lambda: self.status().get("revision") is not None, f"{name} attached")

    def status(self):
        return self.nvim.exec_lua("return require('autosave').status(0)")

    def keys(self, keys):
        """Types `keys` as a person would (executed at once, like typeahead)."""
        self.nvim.feedkeys(self.nvim.replace_termcodes(keys, True, False, True), "xt", False)

    def lines(self):
        return self.nvim.current.buffer[:]

    def modified(self):
        return self.nvim.current.buffer.options["modified"]

    def notes(self, level=None):
        notes = self.nvim.exec_lua("return _G.notes")
        return [n["message"] for n in notes if level is None or n["level"] == level]

    def settled(self):
        wait_for(lambda: self.status().get("settled"), "the plugin's edits to reach the agent")

    def write_as_neovim(self, name, expected, may_ask):
        """`:w` that Neovim carries out itself, until `name` holds `expected`. Neovim 0.7 asks before
        writing over a file changed more than a second after it read it (by the agent, say): with
        `may_ask` the person says yes; without, being asked fails the test (nothing else wrote it)."""
        self.nvim.input(":write\r")

        def written():
            # Only Neovim's "fast" calls answer while it waits for an answer to its question.
            if self.nvim.api.get_mode()["mode"] == "r?":
                if not may_ask:
                    raise AssertionError(f"Neovim asked before writing {name}: someone wrote it since Neovim did")
                self.nvim.input("y")
                return False
            return self.read(name) == expected and not self.nvim.api.get_mode()["blocking"]
        wait_for(written, f"Neovim's write of {name}")


class TypingTests(PluginTestCase):
    def test_typing_reaches_the_file_after_the_window_and_clears_modified(self):
        self.write("notes.txt", "one\ntwo\nthree\n")
        self.start_agent()
        self.start_nvim()
        self.edit("notes.txt")
        self.keys("jA and a half<Esc>")
        self.keys("Gofour<Esc>")
        self.assertTrue(self.modified())
        wait_for(lambda: self.read("notes.txt") == b"one\ntwo and a half\nthree\nfour\n", "the autosave")
        wait_for(lambda: not self.modified(), "'modified' to clear once the agent saved")
        self.assertEqual([e["revision"] for e in self.agent.events("saved")][-1:], [self.status()["revision"]])

    def test_w_is_durable_when_it_returns(self):
        self.write("notes.txt", "one\n")
        # A window far longer than the test: only :w can have written the file.
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("notes.txt")
        self.keys("Atwo<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("notes.txt"), b"onetwo\n")
        self.assertFalse(self.modified())
        self.assertTrue(self.agent.events("saved"))

    def test_multibyte_text_and_crlf_files_round_trip_byte_for_byte(self):
        original = "héllo wörld 😀\r\nzweite Zeile\r\n".encode()
        self.write("crlf.txt", original)
        self.write("utf8.txt", "日本語のテキスト\nλ → μ\n")
        self.start_agent()
        self.start_nvim()
        self.edit("crlf.txt")
        self.assertEqual(self.nvim.current.buffer.options["fileformat"], "dos")
        self.keys("fwcwWÖRLD<Esc>")
        self.keys("jo→ drei 😀<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("crlf.txt"), "héllo WÖRLD 😀\r\nzweite Zeile\r\n→ drei 😀\r\n".encode())
        self.edit("utf8.txt")
        self.keys("f語a!<Esc>")
        self.keys("j0x")
        self.nvim.command("write")
        self.assertEqual(self.read("utf8.txt"), "日本語!のテキスト\n → μ\n".encode())

    def test_a_file_with_no_final_line_break_keeps_none(self):
        self.write("bare.txt", b"first\nlast")
        self.start_agent()
        self.start_nvim()
        self.edit("bare.txt")
        self.keys("GAing<Esc>")
        self.keys("ggdd")
        self.nvim.command("write")
        self.assertEqual(self.read("bare.txt"), b"lasting")

    def test_saveas_writes_the_new_file_and_leaves_the_old_one(self):
        self.write("old.txt", "text\n")
        self.start_agent()
        self.start_nvim()
        self.edit("old.txt")
        self.nvim.command("saveas " + os.path.join(self.root, "new.txt"))
        self.assertEqual(self.read("new.txt"), b"text\n")
        wait_for(lambda: self.status().get("path") == "new.txt" and self.status().get("revision") is not None, "the new file attached")
        self.keys("Amore<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("new.txt"), b"textmore\n")
        self.assertEqual(self.read("old.txt"), b"text\n")

    def test_a_new_file_is_created_by_the_agent(self):
        self.start_agent()
        self.start_nvim()
        self.edit("new.txt")
        self.keys("ifresh<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("new.txt"), b"fresh\n")
        # The file exists now, made by the agent: a second :w is not Neovim's "file exists".
        self.keys("Aer<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("new.txt"), b"fresher\n")


class ExternalChangeTests(PluginTestCase):
    def test_sed_on_another_line_arrives_in_the_buffer_as_its_own_undo_step(self):
        self.write("code.txt", "".join(f"line {i}\n" for i in range(1, 11)))
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("code.txt")
        self.keys("3GA mine<Esc>")
        self.settled()
        self.nvim.current.window.cursor = (3, 2)
        subprocess.run(["sed", "-i", "s/^line 8$/line eight/", os.path.join(self.root, "code.txt")], check=True)
        wait_for(lambda: "line eight" in self.lines(), "sed's change in the Neovim buffer")
        self.assertEqual(self.lines()[2], "line 3 mine", "the unsaved edit stays")
        self.assertEqual(self.nvim.current.window.cursor, [3, 2], "the cursor did not move")
        self.assertTrue(self.agent.events("merged"))
        self.keys("u")
        self.assertEqual(self.lines()[7], "line 8", "one u undoes the external change")
        self.assertEqual(self.lines()[2], "line 3 mine", "and only it")

    def test_a_change_landing_while_you_type_is_its_own_undo_step(self):
        self.write("code.txt", "alpha\nbeta\ngamma\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("code.txt")
        self.nvim.input("Ahello")  # still in insert mode
        wait_for(lambda: self.lines()[0] == "alphahello", "the typing")
        self.settled()
        subprocess.run(["sed", "-i", "s/^gamma$/GAMMA/", os.path.join(self.root, "code.txt")], check=True)
        wait_for(lambda: "GAMMA" in self.lines(), "sed's change while in insert mode")
        self.assertEqual(self.nvim.api.get_mode()["mode"], "i")
        self.nvim.input("<Esc>")
        wait_for(lambda: self.nvim.api.get_mode()["mode"] == "n", "normal mode")
        self.keys("u")
        self.assertEqual(self.lines(), ["alphahello", "beta", "gamma"], "u undid sed's change, not the typing")

    def test_another_clients_edit_arrives_in_the_buffer(self):
        self.write("code.txt", "a\nb\nc\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("code.txt")
        self.keys("A mine<Esc>")
        self.settled()
        # A coding agent or a script writes through the agent: it sees the unsaved edit and keeps it.
        cli = subprocess.run([BINARY, "write", "code.txt"], cwd=self.root, input=b"a mine\nb\nC by the cli\n", check=True)
        del cli
        wait_for(lambda: self.lines() == ["a mine", "b", "C by the cli"], "the other client's edit in the buffer")
        self.keys("jA too<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("code.txt"), b"a mine\nb too\nC by the cli\n")

    def test_a_tool_changing_line_breaks_changes_the_file_format(self):
        self.write("dos.txt", b"one\r\ntwo\r\n")
        self.start_agent()
        self.start_nvim()
        self.edit("dos.txt")
        self.assertEqual(self.nvim.current.buffer.options["fileformat"], "dos")
        subprocess.run(["sed", "-i", "s/\\r$//", os.path.join(self.root, "dos.txt")], check=True)
        wait_for(lambda: self.nvim.current.buffer.options["fileformat"] == "unix", "the new file format")
        self.keys("Gothree<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("dos.txt"), b"one\ntwo\nthree\n", "dos2unix stays done")

    def test_a_file_renamed_on_disk_takes_the_buffer_along(self):
        self.write("old.txt", "text\n")
        self.start_agent()
        self.start_nvim()
        self.edit("old.txt")
        os.rename(os.path.join(self.root, "old.txt"), os.path.join(self.root, "new.txt"))
        wait_for(lambda: self.nvim.current.buffer.name.endswith("/new.txt"), "the buffer renamed")
        self.keys("Amore<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("new.txt"), b"textmore\n")
        self.assertFalse(os.path.exists(os.path.join(self.root, "old.txt")))

    def test_a_clean_buffer_reloads_with_the_smallest_change(self):
        self.write("code.txt", "a\nb\nc\nd\n")
        self.start_agent()
        self.start_nvim()
        self.edit("code.txt")
        self.nvim.command("4mark z")
        self.write("code.txt", "a\nB\nc\nd\n")
        wait_for(lambda: self.lines() == ["a", "B", "c", "d"], "the reload")
        self.assertEqual(self.nvim.current.buffer.mark("z"), [4, 0], "a mark on an untouched line stays")
        wait_for(lambda: not self.modified(), "'modified' clear: the agent's buffer is clean")

    def test_an_overlapping_change_keeps_your_text_and_copies_the_disks(self):
        self.write("notes.txt", "shared line\nother\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("notes.txt")
        self.keys("A by me<Esc>")
        self.settled()
        self.write("notes.txt", "shared line by them\nother\n")
        conflict = wait_for(lambda: self.agent.events("conflict"), "the conflict")[0]
        self.assertEqual(conflict["kept"], "buffer")
        with open(os.path.join(self.root, conflict["copy"]), "rb") as f:
            self.assertEqual(f.read(), b"shared line by them\nother\n")
        wait_for(lambda: self.notes(3), "the warning")
        warnings = self.notes(3)
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn(conflict["copy"].split("/")[-1], warnings[0])
        self.assertEqual(self.lines(), ["shared line by me", "other"])
        self.nvim.command("write")
        self.assertEqual(self.read("notes.txt"), b"shared line by me\nother\n")
        self.nvim.command("AutosaveConflicts")
        self.assertEqual(len(self.nvim.eval("getqflist()")), 1)


class HistoryTests(PluginTestCase):
    def test_history_names_each_writer_and_undo_takes_back_one_after_a_preview(self):
        self.write("notes.txt", "line 1\nline 2\nline 3\n")
        self.start_agent()
        self.start_nvim()
        self.edit("notes.txt")
        self.keys("A, typed<Esc>")
        wait_for(lambda: self.read("notes.txt") == b"line 1, typed\nline 2\nline 3\n", "the autosave")
        subprocess.run(["sed", "-i", "s/^line 3$/line 3 by sed/", os.path.join(self.root, "notes.txt")], check=True)
        wait_for(lambda: self.lines() == ["line 1, typed", "line 2", "line 3 by sed"], "sed's change in the buffer")
        notes = self.nvim.current.window

        self.nvim.command("AutosaveHistory")
        wait_for(lambda: self.nvim.current.buffer.name.endswith("history/notes.txt"), "the history list")
        listing = self.nvim.current.buffer[:]
        self.assertRegex(listing[0], r"^\d+  \S+Z  external  modified  ", listing)
        self.assertTrue(any(re.search(r"  nvim:\d+  saved  ", line) for line in listing), listing)
        self.keys("<CR>")
        wait_for(lambda: self.nvim.current.buffer.name.endswith("diff/notes.txt@" + listing[0].split()[0]), "the version's diff")
        self.assertIn("+line 3 by sed", self.nvim.current.buffer[:])
        self.nvim.command("close")
        self.nvim.command("close")
        self.nvim.current.window = notes

        self.nvim.command("AutosaveUndo external")
        wait_for(lambda: self.nvim.current.buffer.name.endswith("undo/external"), "the undo's preview")
        preview = self.nvim.current.buffer[:]
        self.assertIn("-line 3 by sed", preview)
        self.assertIn("+line 3", preview)
        self.assertEqual(self.read("notes.txt"), b"line 1, typed\nline 2\nline 3 by sed\n", "a preview changes nothing")
        self.keys("U")
        wait_for(lambda: self.read("notes.txt") == b"line 1, typed\nline 2\nline 3\n", "sed's change taken back, the typing kept")
        wait_for(lambda: self.lines() == ["line 1, typed", "line 2", "line 3"], "the undo in the buffer")
        wait_for(lambda: any("undid external's changes in 1 file(s)" in n for n in self.notes()), "the note")


BOM = b"\xef\xbb\xbf"


class FileOptionTests(PluginTestCase):
    """Buffer options that change the bytes Neovim writes ('bomb', 'fileformat', 'fileencoding',
    'binary'): the file gets what Neovim would write, or Neovim writes it and says so once."""

    def option(self, name):
        return self.nvim.current.buffer.options[name]

    def handed_over(self, name):
        return [n for n in self.notes() if name in n and "Neovim" in n]

    def record_handled_events(self):
        """Keeps, in order, the agent's events the plugin has handled: the point after which a
        test may look for what one of them did not do."""
        self.nvim.exec_lua("""
            _G.handled = {}
            local agent = require('autosave').session(0).agent
            local handle = agent.event
            agent.event = function(self, event)
                handle(self, event)
                table.insert(_G.handled, {event = event.event, revision = event.revision})
            end""")

    def handled(self, name, revision):
        return {"event": name, "revision": revision} in self.nvim.exec_lua("return _G.handled")

    def test_a_file_with_a_bom_shows_none_and_keeps_one_whoever_writes_it(self):
        self.write("bom.txt", BOM + b"one\ntwo\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("bom.txt")
        self.assertEqual(self.lines(), ["one", "two"], "the mark is 'bomb', not a character of the first line")
        self.assertTrue(self.option("bomb"))
        self.keys("A!<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("bom.txt"), BOM + b"one!\ntwo\n")
        # With the agent gone Neovim writes the buffer itself: one mark still.
        self.agent.kill()
        wait_for(lambda: any("lost the agent" in n for n in self.notes()), "the notice that the agent went")
        self.keys("jA?<Esc>")
        self.write_as_neovim("bom.txt", BOM + b"one!\ntwo?\n", may_ask=True)

    def test_a_tool_adding_or_removing_the_bom_sets_or_clears_bomb(self):
        self.write("notes.txt", "one\n")
        self.start_agent()
        self.start_nvim()
        self.edit("notes.txt")
        self.write("notes.txt", BOM + b"one\n")
        wait_for(lambda: self.option("bomb"), "'bomb' set by the tool's change")
        self.assertEqual(self.lines(), ["one"])
        self.write("notes.txt", "one\n")
        wait_for(lambda: not self.option("bomb"), "'bomb' cleared by the tool's change")
        # What Neovim writes itself, with the agent gone, is what the tool left.
        self.agent.kill()
        wait_for(lambda: any("lost the agent" in n for n in self.notes()), "the notice that the agent went")
        self.keys("Atwo<Esc>")
        self.write_as_neovim("notes.txt", b"onetwo\n", may_ask=True)

    def test_set_bomb_reaches_the_file_without_w_and_set_nobomb_with_it(self):
        self.write("notes.txt", "one\n")
        self.start_agent()
        self.start_nvim()
        self.edit("notes.txt")
        self.nvim.command("set bomb")
        wait_for(lambda: self.read("notes.txt") == BOM + b"one\n", "the byte order mark saved by the agent")
        wait_for(lambda: not self.modified(), "'modified' to clear once the agent saved it")
        self.nvim.command("set nobomb")
        self.nvim.command("write")
        self.assertEqual(self.read("notes.txt"), b"one\n")
        self.assertTrue(self.status()["attached"])

    def test_set_fileformat_or_endofline_reaches_the_file_without_w(self):
        self.write("notes.txt", "a\nb\n")
        self.write("bare.txt", "a\nb")
        self.start_agent()
        self.start_nvim()
        self.edit("notes.txt")
        self.nvim.command("set fileformat=dos")
        wait_for(lambda: self.read("notes.txt") == b"a\r\nb\r\n", "the CRLF line breaks saved by the agent")
        wait_for(lambda: not self.modified(), "'modified' to clear once the agent saved them")
        self.edit("bare.txt")
        self.nvim.command("set endofline")
        wait_for(lambda: self.read("bare.txt") == b"a\nb\n", "the final line break saved by the agent")
        wait_for(lambda: not self.modified(), "'modified' to clear once the agent saved it")

    def test_set_fileencoding_latin1_then_w_writes_latin1_and_hands_the_buffer_to_neovim(self):
        self.write("cafe.txt", "café\n")
        self.start_agent()
        self.start_nvim()
        self.edit("cafe.txt")
        self.record_handled_events()
        self.nvim.command("set fileencoding=latin1")
        self.keys("A au lait<Esc>")
        # What is typed is kept as ever (as UTF-8: the file's encoding until :w) ...
        wait_for(lambda: self.read("cafe.txt") == "café au lait\n".encode(), "the typing saved by the agent")
        saved = wait_for(lambda: self.agent.events("saved"), "the agent's save")[-1]["revision"]
        wait_for(lambda: self.handled("saved", saved), "the plugin to handle the agent's `saved` event")
        # ... and the new encoding is not written yet: :q still says so.
        self.assertTrue(self.modified(), "'modified' kept: the file is not latin1 yet")
        self.write_as_neovim("cafe.txt", "café au lait\n".encode("latin1"), may_ask=True)
        self.assertFalse(self.modified())
        self.assertFalse(self.status()["attached"])
        self.assertEqual(len(self.handed_over("latin1")), 1, self.notes())
        # Neovim writes it from now on; the agent, clean since it saved before Neovim wrote, only
        # reloads what Neovim wrote (and writes nothing Neovim would be asked about).
        self.keys("A!<Esc>")
        self.write_as_neovim("cafe.txt", "café au lait!\n".encode("latin1"), may_ask=False)
        client = Client(os.path.join(self.root, ".autosave", "agent.sock"))
        try:
            client.call("sync")
            content = client.call("read", path="cafe.txt")
        finally:
            client.close()
        self.assertEqual(base64.b64decode(content.get("contentBase64", "")), "café au lait!\n".encode("latin1"),
                         "the agent holds Neovim's latin1 bytes")
        taken = [line["event"] for line in self.agent.lines() if line.get("event") in ("reloaded", "merged", "conflict")]
        self.assertEqual(set(taken), {"reloaded"}, "Neovim's writes reached a clean buffer in the agent")
        self.assertEqual(self.read("cafe.txt"), "café au lait!\n".encode("latin1"))
        self.assertEqual(len(self.handed_over("latin1")), 1, "told once")

    def test_a_buffer_neovim_reads_as_latin1_is_left_to_neovim_as_read(self):
        self.write("utf8.txt", "café\n")
        self.write("latin1.txt", "café\n".encode("latin1"))
        self.start_agent()
        self.start_nvim()
        # ++enc=latin1: the person says how to read the bytes; the plugin must not read them otherwise.
        self.nvim.command("edit ++enc=latin1 " + os.path.join(self.root, "utf8.txt"))
        wait_for(lambda: self.handed_over("utf8.txt"), "the message")
        self.assertEqual(self.lines(), ["cafÃ©"])
        self.assertFalse(self.status()["attached"])
        self.keys("A!<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("utf8.txt"), "café!\n".encode())
        self.nvim.command("edit " + os.path.join(self.root, "latin1.txt"))
        note = wait_for(lambda: self.handed_over("latin1.txt"), "the message")
        self.assertIn("latin1", note[0])
        self.assertEqual(self.lines(), ["café"])
        self.assertFalse(self.status()["attached"])
        self.keys("A!<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("latin1.txt"), "café!\n".encode("latin1"))
        self.assertEqual(len(self.notes()), 2, self.notes())

    def test_set_binary_on_a_crlf_file_then_w_writes_what_neovim_writes(self):
        self.write("dos.txt", b"a\r\nb\r\n")
        self.start_agent()
        self.start_nvim()
        self.edit("dos.txt")
        self.nvim.command("set binary")
        self.nvim.command("write")
        self.assertEqual(self.read("dos.txt"), b"a\nb\n", "'binary' writes \\n whatever 'fileformat' says")
        self.assertFalse(self.status()["attached"])
        self.assertEqual(len(self.handed_over("binary")), 1, self.notes())


class PropertyTests(PluginTestCase):
    """Random editing, searching for a buffer and an agent that disagree."""

    seed = int(os.environ.get("AUTOSAVE_NVIM_SEED", "20261125"))
    commands = [
        "x", "3x", "dd", "2dd", "yyp", "J", "3J", "gUU", ">>", "<<", "~", "u", "<C-r>", "xp", "ddp", "O<Esc>",
        "o<Esc>", "Anew é<Esc>", "I😀 <Esc>", "cwword<Esc>", "D", "C→<Esc>", "Go<Esc>", "ggdG", "P", "p",
        ":%s/a/AA/g<CR>", ":%s/\\n\\n/\\r/<CR>", ":g/x/d<CR>", ":2,4j<CR>", ":sort<CR>", ":%s/$/;/<CR>",
        "rX", "3rY", "i<CR><Esc>", "A<CR><CR><Esc>", ":1,3>><CR>", "vjd", "vj>", "<C-v>jIcol<Esc>",
    ]

    def texts(self, random):
        pieces = ["alpha", "beta", "é", "x", "日本", "a a", "", " ", "😀", "tab\t"]
        lines = ["".join(random.choice(pieces) for _ in range(random.randint(0, 4))) for _ in range(random.randint(0, 8))]
        return lines

    def check_agrees(self, client, name, context):
        try:
            self.settled()
        except AssertionError as error:
            state = self.nvim.exec_lua("""local s = require('autosave').session(0)
                return {shadow = s:base_text(), buffer = require('autosave.text').of_buffer(0), in_flight = s.in_flight,
                    batch = s.batch ~= nil, needs_resync = s.needs_resync, resyncing = s.resyncing, mode = s.mode}""")
            raise AssertionError(f"{error}; {context}; plugin: {self.status()}, {state}; messages: {self.notes()}") from None
        # What Neovim would write: the mark 'bomb' asks for, then the lines.
        ours = self.nvim.exec_lua("return (vim.bo.bomb and '\\239\\187\\191' or '') .. require('autosave.text').of_buffer(0)")
        theirs = client.call("read", path=name).get("content", "")
        if isinstance(ours, bytes):
            ours = ours.decode()
        self.assertEqual(theirs, ours, f"{context}; plugin: {self.status()}; messages: {self.notes()} {self.nvim.command_output('messages')}")

    def run_editing(self, name, content, steps):
        rng = random.Random(self.seed + len(name))
        self.write(name, content)
        self.edit(name)
        client = Client(os.path.join(self.root, ".autosave", "agent.sock"))
        try:
            done = []
            for step in range(steps):
                line = rng.randint(1, max(1, len(self.lines())))
                command = rng.choice(self.commands)
                done.append(f"{line}G{command}")
                try:
                    self.keys(f"{line}G")
                    self.keys(command)
                except pynvim.NvimError:
                    pass  # an Ex command with nothing to do (no match): Neovim says so, nothing changed
                self.check_agrees(client, name, f"seed {self.seed}, after {done}")
        finally:
            client.close()

    def test_random_editing_keeps_the_agent_equal_to_the_buffer(self):
        rng = random.Random(self.seed)
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        lines = self.texts(rng)
        self.run_editing("lf.txt", "".join(line + "\n" for line in lines), 80)
        self.run_editing("crlf.txt", "".join(line + "\r\n" for line in lines) or "a\r\n", 40)
        self.run_editing("bare.txt", "\n".join(lines) + "end", 40)
        self.run_editing("bom.txt", "\ufeff" + "".join(line + "\n" for line in lines), 40)

    def test_the_texts_diff_edit_placed_by_the_agent_gives_the_new_text(self):
        rng = random.Random(self.seed)
        self.start_agent()
        self.start_nvim()
        client = Client(os.path.join(self.root, ".autosave", "agent.sock"))
        alphabet = ["a", "b", "\n", "\r", "\r\n", "é", "😀", "日"]
        for case in range(200):
            a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) if rng.random() < 0.3 else \
                a[:rng.randint(0, len(a))] + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))) + a[rng.randint(0, len(a)):]
            edit = self.nvim.exec_lua("return require('autosave.text').edit(...)", a, b)
            name = f"case{case}.txt"
            client.call("write", path=name, content=a)
            if edit is not None:
                client.call("edit", path=name, positionEncoding="utf-8", edits=[edit])
            self.assertEqual(client.call("read", path=name).get("content", ""), b, f"{a!r} -> {b!r}: {edit}")
        client.close()


    def test_keep_agent_lets_the_agents_configuration_decide(self):
        self.write("notes.txt", "shared line\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.nvim.exec_lua("require('autosave').setup({ keep = 'agent' })")
        self.edit("notes.txt")
        self.keys("A by me<Esc>")
        self.settled()
        self.write("notes.txt", "shared line by them\n")
        conflict = wait_for(lambda: self.agent.events("conflict"), "the conflict")[0]
        self.assertEqual(conflict["kept"], "disk", "conflicts.keep's default")
        wait_for(lambda: self.lines() == ["shared line by them"], "the disk's version in the buffer")
        with open(os.path.join(self.root, conflict["copy"]), "rb") as f:
            self.assertEqual(f.read(), b"shared line by me\n")
        self.assertEqual(len(self.notes(3)), 1, self.notes())
        self.settled()
        self.assertEqual(self.read("notes.txt"), b"shared line by them\n", "nothing sent back over it")


class AgentLifeTests(PluginTestCase):
    def test_the_agent_killed_and_restarted_loses_nothing_typed(self):
        self.write("notes.txt", "start\n")
        self.start_agent(autosave={"delayMs": 600000, "maxDelayMs": 600000})
        self.start_nvim()
        self.edit("notes.txt")
        self.keys("Abefore<Esc>")
        self.settled()
        self.agent.kill()
        wait_for(lambda: any("lost the agent" in n for n in self.notes()), "the notice that the agent went")
        self.keys("owhile away<Esc>")
        self.agent.start()
        wait_for(lambda: self.status().get("connected") and self.status().get("settled"), "the plugin to attach again")
        self.keys("oafter<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("notes.txt"), b"startbefore\nwhile away\nafter\n")
        self.assertEqual(len([n for n in self.notes() if "lost the agent" in n]), 1, "told once")

    def test_no_agent_leaves_neovims_writing_alone_and_says_so_once(self):
        self.write("a.txt", "a\n")
        self.write("b.txt", "b\n")
        self.start_nvim()
        self.nvim.command("edit " + os.path.join(self.root, "a.txt"))
        self.nvim.command("edit " + os.path.join(self.root, "b.txt"))
        self.keys("Ax<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("b.txt"), b"bx\n")
        self.assertEqual(len([n for n in self.notes() if "no agent" in n]), 1)
        self.assertFalse(self.status()["attached"])
        # An agent appears: the buffers attach by themselves.
        self.start_agent()
        wait_for(lambda: self.status().get("connected") and self.status().get("revision") is not None, "the attach")
        self.keys("Ay<Esc>")
        wait_for(lambda: self.read("b.txt") == b"bxy\n", "the autosave")

    def test_a_file_over_the_agents_limit_is_left_to_neovim(self):
        self.write("big.txt", "x" * 2000 + "\n")
        self.start_agent(limits={"maxFileBytes": 1024})
        self.start_nvim()
        self.nvim.command("edit " + os.path.join(self.root, "big.txt"))
        wait_for(lambda: any("maxFileBytes" in n for n in self.notes()), "the message")
        self.assertFalse(self.status()["attached"])
        self.keys("Ay<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("big.txt"), b"x" * 2000 + b"y\n")


class GlobTests(unittest.TestCase):
    """LSP glob patterns as the plugin matches them (to apply each watcher's kinds), in the real Neovim."""

    cases = [
        ("**/*.py", "a.py", True), ("**/*.py", "x/y/a.py", True), ("**/*.py", "a.pyc", False),
        ("**/*.py", "x/a.txt", False), ("**/*.py", "A.PY", False),
        ("*.py", "a.py", True), ("*.py", "x/a.py", False),
        ("src/**/*.ts", "src/a.ts", True), ("src/**/*.ts", "src/x/y/a.ts", True), ("src/**/*.ts", "a.ts", False),
        ("src/**/*.ts", "srcx/a.ts", False),
        ("**/*.{ts,js}", "a.ts", True), ("**/*.{ts,js}", "b/c.js", True), ("**/*.{ts,js}", "c.jsx", False),
        ("{a,{b,c}}.py", "c.py", True), ("{a,{b,c}}.py", "d.py", False),
        ("file?.txt", "file1.txt", True), ("file?.txt", "file10.txt", False), ("file?.txt", "file/.txt", False),
        ("[abc].py", "a.py", True), ("[abc].py", "d.py", False), ("[!abc].py", "d.py", True),
        ("[!abc].py", "a.py", False), ("[0-9].py", "5.py", True),
        ("**", "any/thing/at/all", True), ("dir/**", "dir/a/b", True), ("dir/**", "other/a", False),
        ("**/node_modules/**", "node_modules/x", True), ("**/node_modules/**", "a/node_modules/b/c", True),
        ("a.b", "a.b", True), ("a.b", "axb", False), ("$x~.py", "$x~.py", True), ("a\\b", "a\\b", True),
        ("café/*.py", "café/a.py", True),
    ]

    def test_globs_match_as_the_protocol_says(self):
        nvim = pynvim.attach("child", argv=["nvim", "--embed", "--headless", "--clean", "--cmd", "set rtp^=" + PLUGIN])
        try:
            results = nvim.exec_lua("""
                local glob = require('autosave.glob')
                local out = {}
                for i, case in ipairs(...) do out[i] = glob.compile(case[1])(case[2]) end
                return out""", [[g, p] for g, p, _ in self.cases])
        finally:
            nvim.close()
        wrong = [(g, p, want) for (g, p, want), got in zip(self.cases, results) if got != want]
        self.assertEqual(wrong, [], "globs that matched otherwise than expected (glob, path, expected)")


LANGUAGE_SERVER = os.path.join(HERE, "fake_language_server.py")


class LspWatchTests(PluginTestCase):
    """File watching for language servers (issue 37): the plugin answers the servers' registrations
    for `workspace/didChangeWatchedFiles` under the agent's folder and sends them what the agent's
    `changes` say, one notification per settled burst. The servers are fake_language_server.py,
    started by Neovim's own LSP client; what they received is in their record files."""

    def start_server(self, name, *watchers, root_dir=None):
        """Starts a language server registering `watchers` (see fake_language_server.py), attached to
        a buffer under the agent's folder; returns its record file once its registration is answered."""
        record = os.path.join(self.home, name + ".jsonl")
        open(record, "w").close()
        self.nvim.exec_lua("""
            local name, cmd, root = ...
            local id = vim.lsp.start_client({ name = name, cmd = cmd, root_dir = root })
            vim.lsp.buf_attach_client(0, id)""",
            name, ["/usr/bin/python3", LANGUAGE_SERVER, record, *watchers], root_dir or self.root)
        wait_for(lambda: self.recorded(record, "registered"), f"{name}'s registration answered")
        return record

    def recorded(self, record, event):
        with open(record) as f:
            return [entry for entry in map(json.loads, f) if entry["event"] == event]

    def notifications(self, record):
        """Each `workspace/didChangeWatchedFiles` the server got, as a list of (path under the root, type)."""
        prefix = "file://" + self.root + "/"
        return [[(c["uri"][len(prefix):] if c["uri"].startswith(prefix) else c["uri"], c["type"]) for c in entry["changes"]]
                for entry in self.recorded(record, "changes")]

    def watches(self):
        return self.nvim.exec_lua("return require('autosave.watchfiles').state()")

    def wait_subscribed(self, count=1):
        wait_for(lambda: len(self.watches()) == count and all(w["subscribed"] for w in self.watches()),
                 f"{count} subscribed watch(es); messages: {self.notes()}")

    def expect(self, record, expected, marker, seen, one_notification=True):
        """Waits until the server got `expected` ((path, type) pairs), then creates `marker` and
        waits for it: what arrived before it (after the `seen` notifications) must be exactly
        `expected`, each once (and with `one_notification`, in one notification). Returns the
        count of notifications seen now."""
        def arrived():
            got = {change for note in self.notifications(record)[seen:] for change in note}
            return expected <= got
        try:
            wait_for(arrived, f"{sorted(expected)} in {os.path.basename(record)}")
        except AssertionError as error:
            raise AssertionError(f"{error}; it got {self.notifications(record)[seen:]}; messages: {self.notes()}") from None
        self.write(marker, "")
        notes = wait_for(lambda: [n for n in self.notifications(record)[seen:] if (marker, 1) in n] and self.notifications(record),
                         f"the marker {marker}")
        after = notes[seen:]
        before = [[change for change in note if change[0] != marker] for note in after]
        before = [note for note in before if note]
        changes = [change for note in before for change in note]
        self.assertEqual(sorted(changes), sorted(expected), "each change once, and nothing else")
        if one_notification:
            self.assertEqual(len(before), 1, f"one notification for the burst, got {before}")
        return len(notes)

    def test_the_server_gets_each_change_once_with_its_type(self):
        self.write("main.py", "print('main')\n")
        self.write("old.py", "x = 1\n")
        self.write("notes.txt", "not watched\n")
        os.makedirs(os.path.join(self.root, "pkg"))
        self.write("pkg/a.py", "a\n")
        self.write("pkg/b.py", "b\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        record = self.start_server("python", "**/*.py")
        capabilities = self.recorded(record, "initialize")[0]["capabilities"]
        self.assertTrue(capabilities["workspace"]["didChangeWatchedFiles"]["dynamicRegistration"])
        self.assertIsNone(self.recorded(record, "registered")[0]["response"].get("error"))
        self.wait_subscribed()
        self.assertEqual(self.watches()[0]["globs"], ["**/*.py"])
        seen = 0
        subprocess.run(["sed", "-i", "s/1/2/", os.path.join(self.root, "old.py")], check=True)
        self.write("notes.txt", "still not watched\n")
        seen = self.expect(record, {("old.py", 2)}, "marker1.py", seen)
        self.write("new.py", "new\n")
        seen = self.expect(record, {("new.py", 1)}, "marker2.py", seen)
        os.remove(os.path.join(self.root, "old.py"))
        seen = self.expect(record, {("old.py", 3)}, "marker3.py", seen)
        os.rename(os.path.join(self.root, "pkg"), os.path.join(self.root, "lib"))
        seen = self.expect(record, {("pkg/a.py", 3), ("pkg/b.py", 3), ("lib/a.py", 1), ("lib/b.py", 1)}, "marker4.py", seen)
        # The buffer's own autosave is a write like any other.
        self.keys("Goprint('more')<Esc>")
        wait_for(lambda: b"more" in self.read("main.py"), "the autosave")
        seen = self.expect(record, {("main.py", 2)}, "marker5.py", seen)

    def test_git_checkout_of_another_branch(self):
        def git(*args):
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=self.root, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.write("main.py", "main\n")
        self.write("kept.py", "kept\n")
        self.write("changed.py", "before\n")
        self.write("gone.py", "gone\n")
        git("init", "-q", "-b", "trunk")
        git("add", ".")
        git("commit", "-qm", "one")
        git("checkout", "-qb", "other")
        self.write("changed.py", "after\n")
        os.remove(os.path.join(self.root, "gone.py"))
        self.write("added.py", "added\n")
        git("add", "-A")
        git("commit", "-qm", "two")
        git("checkout", "-q", "trunk")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        record = self.start_server("python", "**/*.py")
        self.wait_subscribed()
        # The agent records a removal at once and a written file once its settle window closed: a
        # checkout may reach the server as two notifications (each change still once).
        git("checkout", "-q", "other")
        seen = self.expect(record, {("changed.py", 2), ("gone.py", 3), ("added.py", 1)}, "marker1.py", 0, False)
        git("checkout", "-q", "trunk")
        self.expect(record, {("changed.py", 2), ("gone.py", 1), ("added.py", 3)}, "marker2.py", seen, False)

    def test_two_servers_get_only_what_their_globs_match(self):
        self.write("main.py", "main\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        python = self.start_server("python", "**/*.py")
        text = self.start_server("text", "**/*.txt")
        self.wait_subscribed(2)
        self.write("a.py", "a\n")
        self.write("b.txt", "b\n")
        self.write("c.md", "c\n")
        self.expect(python, {("a.py", 1)}, "marker.py", 0)
        self.expect(text, {("b.txt", 1)}, "marker.txt", 0)

    def test_a_watcher_gets_only_the_kinds_it_asks_for(self):
        self.write("main.py", "main\n")
        self.write("old.py", "old\n")
        self.write("old.cfg", "old\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        # Creations only for .py (kind 1); everything for .cfg, as a RelativePattern.
        record = self.start_server("python", "**/*.py@1", "rel:*.cfg")
        self.wait_subscribed()
        self.write("old.py", "changed\n")
        os.remove(os.path.join(self.root, "old.py"))
        self.write("new.py", "new\n")
        self.write("old.cfg", "changed\n")
        # Several files: each settles on its own, so they may come in more than one notification.
        self.expect(record, {("new.py", 1), ("old.cfg", 2)}, "marker.py", 0, False)

    def test_a_watcher_outside_the_agents_folder_is_left_to_neovim(self):
        outside = os.path.join(self.home, "outside")
        os.mkdir(outside)
        self.write("main.py", "main\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        record = self.start_server("python", "**/*.py", outside + "/**/*.txt")
        self.wait_subscribed()
        self.assertEqual(self.watches()[0]["globs"], ["**/*.py"], "only the watcher under the agent's folder")
        self.assertEqual(self.recorded(record, "registered")[0]["response"].get("result", "absent"), None,
                         "the registration is answered")

    def test_an_unregistered_watcher_gets_nothing_more(self):
        self.write("main.py", "main\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        leaving = self.start_server("leaving", "**/*.py")
        staying = self.start_server("staying", "**/*.py")
        self.wait_subscribed(2)
        self.write("unregister-leaving.py", "")
        seen = self.expect(staying, {("unregister-leaving.py", 1)}, "marker1.py", 0)
        answer = wait_for(lambda: self.recorded(leaving, "unregistered"), "the unregistration answered")[0]["response"]
        self.assertNotIn("error", answer, "Neovim 0.7 has no handler of its own for it")
        self.wait_subscribed(1)
        self.write("after.py", "")
        self.expect(staying, {("after.py", 1)}, "marker2.py", seen)
        got = [change for note in self.notifications(leaving) for change in note]
        self.assertEqual(got, [("unregister-leaving.py", 1)], "nothing after the unregistration")

    def test_a_stopped_server_stops_its_watch(self):
        self.write("main.py", "main\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        self.start_server("python", "**/*.py")
        self.wait_subscribed()
        self.nvim.exec_lua("vim.lsp.stop_client(vim.lsp.get_active_clients()[1].id)")
        wait_for(lambda: self.watches() == [], "the watch to stop with its server")

    def test_the_watch_follows_the_agent_through_a_restart(self):
        self.write("main.py", "main\n")
        self.start_agent()
        self.start_nvim()
        self.edit("main.py")
        record = self.start_server("python", "**/*.py")
        self.wait_subscribed()
        self.agent.kill()
        self.write("while-away.py", "")
        self.agent.start()
        # The old clock is another run's: the agent answers fresh, and the person is told once.
        wait_for(lambda: [n for n in self.notes() if "may have missed file changes" in n and "python" in n],
                 f"the warning; messages: {self.notes()}")
        self.wait_subscribed()
        seen = len(self.notifications(record))
        self.write("after.py", "")
        self.expect(record, {("after.py", 1)}, "marker.py", seen)
        self.assertEqual(len([n for n in self.notes() if "may have missed" in n]), 1, self.notes())

    def test_placing_watchers_under_the_agents_root(self):
        """Which watchers the plugin takes (relative to the agent's root) and which it leaves to Neovim."""
        outside = os.path.join(self.home, "outside")
        os.makedirs(os.path.join(self.root, "sub"))
        os.mkdir(outside)
        self.start_agent()
        self.start_nvim()
        placed = self.nvim.exec_lua("""
            local root, outside = ...
            local place = require('autosave.watchfiles').place
            local function client(...)
              local folders = {}
              for i, f in ipairs({...}) do folders[i] = { uri = vim.uri_from_fname(f), name = f } end
              return { workspace_folders = folders, config = {} }
            end
            local function show(watcher, c)
              local placed, left = place(watcher, c)
              local globs = {}
              for i, p in ipairs(placed) do globs[i] = p.glob end
              return { globs, #left }
            end
            return {
              show({ globPattern = '**/*.py' }, client(root)),
              show({ globPattern = '**/*.py' }, client(root .. '/sub')),
              show({ globPattern = { baseUri = vim.uri_from_fname(root .. '/sub'), pattern = '*.py' } }, client(root)),
              show({ globPattern = { baseUri = { uri = vim.uri_from_fname(root), name = 'r' }, pattern = '*.py' } }, client()),
              show({ globPattern = { baseUri = vim.uri_from_fname(outside), pattern = '*.py' } }, client(root)),
              show({ globPattern = root .. '/src/**/*.py' }, client(outside)),
              show({ globPattern = outside .. '/**/*.py' }, client(root)),
              show({ globPattern = '**/*.py' }, client(root, outside)),
            }""", self.root, outside)
        self.assertEqual(placed, [
            [["**/*.py"], 0], [["sub/**/*.py"], 0], [["sub/*.py"], 0], [["*.py"], 0], [[], 1],
            [["src/**/*.py"], 0], [[], 1], [["**/*.py"], 1],
        ])


# The other user the trust tests act as, reached with setpriv (root only).
AS_NOBODY = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def can_act_as_another_user():
    try:
        pwd.getpwnam("nobody")
        grp.getgrnam("nogroup")
    except KeyError:
        return False
    return os.getuid() == 0 and os.access(AS_NOBODY[0], os.X_OK)


# A server another user planted: answers with a fake result, prints what it receives (shared with
# the Swift tests).
with open(os.path.join(HERE, "..", "..", "..", "Tests", "support", "planted_server.py")) as source:
    PLANTED_SERVER = source.read()


@unittest.skipUnless(can_act_as_another_user(), "needs root, setpriv and the user nobody (group nogroup) to act as another user")
class OtherUsersSocketTests(PluginTestCase):
    """Sockets of another user (issue 32): the plugin refuses them before it sends anything."""

    def plant(self):
        """Starts a server of `nobody`'s listening in a folder of theirs (it answers every connection
        with a fake result and prints the size of every chunk it receives, as it comes); returns
        its socket."""
        os.chmod(self.home, 0o755)
        theirs = os.path.join(self.home, "theirs")
        os.mkdir(theirs)
        os.chown(theirs, pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid)
        socket_path = os.path.join(theirs, "agent.sock")
        self.planted = subprocess.Popen(AS_NOBODY + ["/usr/bin/python3", "-c", PLANTED_SERVER, socket_path],
                                        stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (self.planted.kill(), self.planted.wait(), self.planted.stdout.close()))
        self.assertEqual(self.planted.stdout.readline().strip(), "listening")
        return socket_path

    def received(self):
        """Stops the planted server and returns the sizes of the chunks it received."""
        self.planted.kill()
        output = self.planted.stdout.read()
        return [int(line.split()[1]) for line in output.splitlines() if line.startswith("received ")]

    def refuses(self, socket_path, words):
        self.write("a.txt", "a\n")
        os.makedirs(os.path.join(self.root, ".autosave"))
        with open(os.path.join(self.root, ".autosave", "agent.sock.path"), "w") as f:
            f.write(socket_path + "\n")
        self.start_nvim()
        self.nvim.command("edit " + os.path.join(self.root, "a.txt"))
        note = wait_for(lambda: [n for n in self.notes() if "refused the socket " + socket_path in n], "the refusal")[0]
        self.assertIn(words, note)
        self.assertIn("nothing was sent to it", note)
        self.assertFalse(self.status().get("connected"))
        # Neovim writes the file itself, as with no agent.
        self.keys("Ab<Esc>")
        self.nvim.command("write")
        self.assertEqual(self.read("a.txt"), b"ab\n")
        self.assertEqual(self.received(), [], "the planted server received nothing")

    def test_a_socket_file_of_another_user_is_refused_unopened(self):
        self.refuses(self.plant(), "it belongs to user nobody")

    def test_a_socket_file_made_to_look_ours_is_refused_by_who_listens(self):
        if not self.nvim_has_ffi():
            self.skipTest("this Neovim has no LuaJIT FFI to ask SO_PEERCRED")
        socket_path = self.plant()
        # The file's owner says root; the process listening is still nobody's.
        os.chown(socket_path, 0, 0)
        self.refuses(socket_path, "runs as user nobody")

    def nvim_has_ffi(self):
        probe = subprocess.run(["nvim", "--headless", "--clean", "-c", "lua io.stdout:write(tostring(pcall(require, 'ffi')))", "-c", "qa!"],
                               capture_output=True, text=True, timeout=TIMEOUT)
        return probe.stdout.strip().startswith("true")


if __name__ == "__main__":
    # pynvim leaves its child's pipes to the garbage collector.
    warnings.simplefilter("ignore", ResourceWarning)
    unittest.main(verbosity=2)
