#!/usr/bin/env python3
"""`autosave mcp` driven by the official MCP Python SDK, as a coding agent's client would.

Each test makes a project, runs `autosave mcp DIR` over stdio (an agent in-process, or one
already running), and checks files, the agent's buffers and what the tools answer. A person's
unsaved edits are made through the CLI (`autosave write`), as an editor would.

    AUTOSAVE_BINARY=.build/debug/autosave .build/mcp-venv/bin/python Tests/mcp/test_mcp.py
"""
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY = os.path.abspath(os.environ.get("AUTOSAVE_BINARY", ".build/debug/autosave"))
TIMEOUT = 20.0
# Saves wait for a long window: only a save, a flush or a stop writes files.
CONFIG = {"autosave": {"delayMs": 600000, "maxDelayMs": 600000}}


def wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


class MCPTestCase(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="autosave-mcp-")
        self.root = os.path.join(self.home, "project")
        os.mkdir(self.root)
        with open(os.path.join(self.root, "autosave.json"), "w") as f:
            json.dump(CONFIG, f)
        self.stderr = open(os.path.join(self.home, "mcp.log"), "w")

    def tearDown(self):
        self.stderr.close()
        if os.environ.get("KEEP"): print(self.home)
        else: shutil.rmtree(self.home, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def read(self, name):
        with open(os.path.join(self.root, name)) as f:
            return f.read()

    def read_bytes(self, name):
        with open(os.path.join(self.root, name), "rb") as f:
            return f.read()

    def cli(self, *args, input=None):
        """The autosave CLI, run in the project, as a person's editor or shell would."""
        return subprocess.run([BINARY, *args], cwd=self.root, input=input, capture_output=True, text=True, timeout=30)

    def log(self):
        with open(os.path.join(self.home, "mcp.log")) as f:
            return f.read()

    async def session(self, body):
        params = StdioServerParameters(command=BINARY, args=["mcp", self.root], cwd=self.root)
        async with stdio_client(params, errlog=self.stderr) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    def run_session(self, body):
        return asyncio.run(asyncio.wait_for(self.session(body), 60))

    @staticmethod
    async def call(session, tool, **arguments):
        result = await session.call_tool(tool, arguments)
        return bool(result.is_error), result.content[0].text


class ToolTests(MCPTestCase):
    def test_tools_are_listed_with_valid_schemas(self):
        async def body(session):
            return (await session.list_tools()).tools

        tools = {tool.name: tool for tool in self.run_session(body)}
        self.assertEqual(
            set(tools),
            {"read_file", "write_file", "edit_file", "apply_patch", "changes", "save", "status", "history", "restore",
             "undo_my_changes"})
        for tool in tools.values():
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            self.assertEqual(tool.input_schema["type"], "object")
            self.assertTrue(tool.description)
        self.assertEqual(tools["edit_file"].input_schema["required"], ["path", "old_string", "new_string"])

    def test_read_edit_patch_and_save_a_file(self):
        self.write("src/app.py", "def main():\n    return 1\n")

        async def body(session):
            failed, shown = await self.call(session, "read_file", path="src/app.py")
            self.assertFalse(failed, shown)
            self.assertIn("     2\t    return 1\n", shown)
            self.assertIn("revision 0", shown)
            failed, text = await self.call(session, "edit_file", path="src/app.py", old_string="return 1", new_string="return 2")
            self.assertFalse(failed, text)
            self.assertIn("revision 1", text)
            patch = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,3 @@\n def main():\n+    print('hi')\n     return 2\n"
            failed, text = await self.call(session, "apply_patch", patch=patch)
            self.assertFalse(failed, text)
            self.assertEqual(self.read("src/app.py"), "def main():\n    return 1\n", "not saved yet")
            failed, text = await self.call(session, "save", paths=["src/app.py"])
            self.assertFalse(failed, text)
            self.assertEqual(self.read("src/app.py"), "def main():\n    print('hi')\n    return 2\n")
            failed, text = await self.call(session, "edit_file", path="src/app.py", old_string="return 3", new_string="x")
            self.assertTrue(failed)
            self.assertIn("nearest text is line 3", text)
            self.assertIn("return 2", text)
            failed, text = await self.call(session, "write_file", path="docs/new.md", content="# New\n")
            self.assertFalse(failed, text)
            failed, text = await self.call(session, "status")
            self.assertIn("docs/new.md", text)

        self.run_session(body)

    def test_a_persons_unsaved_edit_survives_and_blocks_what_collides(self):
        self.write("notes.txt", "".join(f"line {i}\n" for i in range(1, 11)))

        async def body(session):
            await self.call(session, "read_file", path="notes.txt")
            # A person's unsaved edit on line 2, made through the agent (as an editor does).
            person = "".join(("line 2 by the person\n" if i == 2 else f"line {i}\n") for i in range(1, 11))
            self.assertEqual(self.cli("write", "notes.txt", input=person).returncode, 0)
            failed, text = await self.call(session, "edit_file", path="notes.txt", old_string="line 8\n", new_string="line 8 by the model\n")
            self.assertFalse(failed, text)
            self.assertIn("Merged", text)
            both = self.cli("cat", "notes.txt").stdout
            self.assertIn("line 2 by the person\n", both)
            self.assertIn("line 8 by the model\n", both)
            # Now both change line 5: the person first, then the model from what it read.
            await self.call(session, "read_file", path="notes.txt")
            self.cli("write", "notes.txt", input=both.replace("line 5\n", "line 5 by the person\n"))
            failed, text = await self.call(session, "edit_file", path="notes.txt", old_string="line 5\n", new_string="line 5 by the model\n")
            self.assertTrue(failed, text)
            self.assertIn("collides", text)
            self.assertIn("line 5", text)
            after = self.cli("cat", "notes.txt").stdout
            self.assertIn("line 5 by the person\n", after)
            self.assertNotIn("by the model\nline 6", after.replace("line 8 by the model", ""))
            self.assertIn("line 2 by the person\n", after)
            # A write_file over unsaved edits it never read is refused too.
            failed, text = await self.call(session, "write_file", path="notes.txt", content="all mine\n", ifRevision=0)
            self.assertTrue(failed, text)
            self.assertEqual(self.cli("cat", "notes.txt").stdout, after)

        self.run_session(body)

    def test_paths_outside_the_project_and_stale_revisions_are_refused(self):
        self.write("a.txt", "one\r\ntwo\r\n")

        async def body(session):
            for path in ["../outside.txt", "/etc/passwd", ".git/config", ".autosave/agent.lock"]:
                failed, text = await self.call(session, "write_file", path=path, content="x\n")
                self.assertTrue(failed, f"{path}: {text}")
            self.assertFalse(os.path.exists(os.path.join(self.home, "outside.txt")))
            # A revision this session never read: refused, naming the current one.
            failed, text = await self.call(session, "edit_file", path="a.txt", old_string="one", new_string="1", ifRevision=7)
            self.assertTrue(failed, text)
            self.assertIn("revision 0, not 7", text)
            # read_file shows lines without "\r"; an old_string of two lines still finds them in a CRLF file.
            _, shown = await self.call(session, "read_file", path="a.txt", offset=2)
            self.assertTrue(shown.startswith("     2\ttwo\n("), shown)
            failed, text = await self.call(session, "edit_file", path="a.txt", old_string="one\ntwo", new_string="uno\ndos")
            self.assertFalse(failed, text)
            await self.call(session, "save")
            self.assertEqual(self.read_bytes("a.txt"), b"uno\r\ndos\r\n")

        self.run_session(body)

    def test_changes_reports_a_sed_made_meanwhile(self):
        self.write("a.txt", "one\ntwo\n")

        async def body(session):
            failed, first = await self.call(session, "changes")
            cursor = json.loads(first)["cursor"]
            await self.call(session, "read_file", path="a.txt")
            subprocess.run(["sed", "-i", "s/two/TWO/", os.path.join(self.root, "a.txt")], check=True)
            self.cli("write", "b.txt", input="by a person\n")
            seen = []

            async def poll():
                while True:
                    failed, text = await self.call(session, "changes", since=cursor)
                    entries = json.loads(text)["changes"]
                    if any(e["path"] == "a.txt" and e["who"] == "external" for e in entries) and any(e["path"] == "b.txt" for e in entries):
                        return entries
                    await asyncio.sleep(0.02)

            seen = await asyncio.wait_for(poll(), TIMEOUT)
            self.assertIn({"path": "a.txt", "kind": "modified", "who": "external"}, seen)
            self.assertTrue(any(e["path"] == "b.txt" and e["kind"] == "edited" and e["who"] == "cli" for e in seen), seen)
            # Its own edits are not news to it.
            await self.call(session, "edit_file", path="a.txt", old_string="one", new_string="ONE")
            failed, text = await self.call(session, "changes", since=cursor)
            self.assertFalse(any(e["who"].startswith("mcp") for e in json.loads(text)["changes"]), text)
            _, shown = await self.call(session, "read_file", path="a.txt")
            self.assertIn("TWO", shown)

        self.run_session(body)


    def test_new_text_takes_the_files_line_breaks(self):
        # read_file shows no "\r": what a model writes has "\n" where a CRLF file has "\r\n".
        with open(os.path.join(self.root, "crlf.txt"), "wb") as f:
            f.write(b"one\r\ntwo\r\nthree\r\n")
        with open(os.path.join(self.root, "whole.txt"), "wb") as f:
            f.write(b"x\r\ny\r\n")
        self.write("lf.txt", "p\nq\n")

        async def body(session):
            failed, text = await self.call(session, "edit_file", path="crlf.txt", old_string="three", new_string="THREE\nFOUR")
            self.assertFalse(failed, text)
            failed, text = await self.call(session, "write_file", path="whole.txt", content="x\ny\nz\n")
            self.assertFalse(failed, text)
            failed, text = await self.call(session, "edit_file", path="lf.txt", old_string="q", new_string="Q\r\nR")
            self.assertFalse(failed, text)
            failed, text = await self.call(session, "save")
            self.assertFalse(failed, text)

        self.run_session(body)
        self.assertEqual(self.read_bytes("crlf.txt"), b"one\r\ntwo\r\nTHREE\r\nFOUR\r\n")
        self.assertEqual(self.read_bytes("whole.txt"), b"x\r\ny\r\nz\r\n")
        self.assertEqual(self.read_bytes("lf.txt"), b"p\nQ\nR\n")

    def test_a_five_megabyte_line_is_read_in_bounded_pages(self):
        # A minified file: one line of 5 MB, with two-byte characters a page may not split.
        line = "".join(f"v{i}='\u00e9';" for i in range(600000))[:5 * 1024 * 1024]
        self.write("min.js", line + "\nsecond\n")
        bound = 256 * 1024
        page_end = re.compile(r"read_file with offset=1 and column=(\d+) shows what follows")

        async def body(session):
            parts, column, pages = [], None, 0
            while True:
                arguments = {"path": "min.js"} if column is None else {"path": "min.js", "offset": 1, "column": column}
                failed, text = await self.call(session, "read_file", **arguments)
                self.assertFalse(failed, text[-500:])
                self.assertLessEqual(len(text.encode()), bound)
                pages += 1
                self.assertTrue(text.startswith("     1\t"), text[:100])
                parts.append(text[len("     1\t"):text.index("\n")])
                found = page_end.search(text)
                if not found:
                    self.assertIn("     2\tsecond\n", text)
                    break
                self.assertEqual(len("".join(parts).encode()) + 1, int(found.group(1)), "the next page starts where this one ended")
                column = int(found.group(1))
            self.assertEqual("".join(parts), line, "the pages of the line put together are the line")
            self.assertGreaterEqual(pages, 20)
            # offset and limit page by lines as before.
            _, shown = await self.call(session, "read_file", path="min.js", offset=2)
            self.assertTrue(shown.startswith("     2\tsecond\n("), shown[:200])
            # Every tool's result is bounded: a refusal that quotes its input too.
            failed, text = await self.call(session, "write_file", path="x.txt", content=[line[:400000]])
            self.assertTrue(failed)
            self.assertLessEqual(len(text.encode()), bound)
            self.assertIn("must be a string", text)

        self.run_session(body)

class LifeTests(MCPTestCase):
    def test_stdin_closed_flushes_the_in_process_agent_and_exits_zero(self):
        self.write("a.txt", "old\n")
        process = subprocess.Popen([BINARY, "mcp", self.root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}}},
        ]
        for line in lines:
            process.stdin.write((json.dumps(line) + "\n").encode())
            process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        self.assertEqual(answers[1]["id"], 2)
        self.assertFalse(answers[1]["result"]["isError"], answers[1])
        self.assertEqual(self.read("a.txt"), "old\n", "in the buffer, not saved yet")
        process.stdin.close()
        self.assertEqual(process.wait(timeout=30), 0)
        self.assertEqual(self.read("a.txt"), "new\n", "saved on the way out")
        self.assertFalse(os.path.exists(os.path.join(self.root, ".autosave", "agent.sock")))

    def server_holding_an_unsaved_write(self):
        """`autosave mcp` over raw pipes, its in-process agent holding "new" for a.txt (on disk "old")."""
        self.write("a.txt", "old\n")
        process = subprocess.Popen([BINARY, "mcp", self.root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}}}
        process.stdin.write((json.dumps(call) + "\n").encode())
        process.stdin.flush()
        self.assertFalse(json.loads(process.stdout.readline())["result"]["isError"])
        return process

    def test_sigterm_stops_the_in_process_agent_while_input_is_open(self):
        process = self.server_holding_an_unsaved_write()
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(timeout=30), 0)
        self.assertEqual(self.read("a.txt"), "new\n", "saved on the way out")
        process.stdin.close()

    def test_a_client_that_stops_reading_stops_the_server_cleanly(self):
        # The reader of standard output goes away: the next answer cannot be written, and the
        # in-process agent stops as on end of input, saving what it holds.
        process = self.server_holding_an_unsaved_write()
        process.stdout.close()
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        process.stdin.flush()
        self.assertEqual(process.wait(timeout=30), 0)
        self.assertEqual(self.read("a.txt"), "new\n")
        self.assertIn("standard output is closed", self.log())
        process.stdin.close()

    def test_a_second_server_joins_the_running_agent(self):
        self.write("a.txt", "a\n")

        async def first(session):
            await self.call(session, "edit_file", path="a.txt", old_string="a", new_string="from the first")

            async def second(other):
                _, shown = await self.call(other, "read_file", path="a.txt")
                return shown

            shown = await self.session(second)
            self.assertIn("from the first", shown)

        self.run_session(first)
        self.assertIn("mcp-joined", self.log())
        self.assertEqual(self.read("a.txt"), "from the first\n")


class HistoryToolTests(MCPTestCase):
    async def two_sessions(self, body):
        """Two `autosave mcp` servers on the project: two conversations of one client, each its own writer."""
        from contextlib import AsyncExitStack
        async with AsyncExitStack() as stack:
            sessions = []
            for _ in range(2):
                params = StdioServerParameters(command=BINARY, args=["mcp", self.root], cwd=self.root)
                read, write = await stack.enter_async_context(stdio_client(params, errlog=self.stderr))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                sessions.append(session)
            return await body(*sessions)

    def test_undo_my_changes_takes_back_this_sessions_work_and_keeps_the_persons_and_the_other_sessions(self):
        lines = [f"x{n} = {n}\n" for n in range(1, 31)]
        self.write("a.py", "".join(lines))
        self.write("c.py", "c = 1\n")

        async def body(mine, other):
            failed, text = await self.call(mine, "read_file", path="a.py")
            self.assertFalse(failed, text)
            for n in (20, 25, 30):
                failed, text = await self.call(mine, "edit_file", path="a.py", old_string=f"x{n} = {n}\n", new_string=f"x{n} = 'agent'\n")
                self.assertFalse(failed, text)
            failed, text = await self.call(mine, "write_file", path="b.py", content="made by the agent\n")
            self.assertFalse(failed, text)
            await self.call(mine, "save")
            # A person types on lines 1-5 meanwhile, through their editor (the CLI here).
            typed = self.read("a.py").replace("x2 = 2\n", "x2 = 'person'\n")
            self.assertEqual(self.cli("write", "a.py", input=typed).returncode, 0)
            self.assertEqual(self.cli("save", "a.py").returncode, 0)
            # The other conversation edits another file.
            await self.call(other, "read_file", path="c.py")
            failed, text = await self.call(other, "edit_file", path="c.py", old_string="c = 1", new_string="c = 'other session'")
            self.assertFalse(failed, text)
            await self.call(other, "save")

            failed, listed = await self.call(mine, "history", path="a.py")
            self.assertFalse(failed, listed)
            self.assertIn("· cli ·", listed)
            session = re.search(r"this session writes as (mcp:[^ ]+#\d+):", listed).group(1)
            self.assertIn(f"· {session} ·", listed, "its own versions carry the session's name")

            failed, preview = await self.call(mine, "undo_my_changes", dry_run=True)
            self.assertFalse(failed, preview)
            self.assertIn("-x25 = 'agent'", preview)
            self.assertIn("+++ /dev/null", preview)
            self.assertNotIn("c.py", preview)
            self.assertIn("'agent'", self.read("a.py"), "a dry run changes nothing")

            failed, text = await self.call(mine, "undo_my_changes")
            self.assertFalse(failed, text)
            self.assertIn("a.py: your changes taken back", text)
            self.assertIn("b.py: removed", text)

        asyncio.run(asyncio.wait_for(self.two_sessions(body), 90))
        expected = "".join(lines).replace("x2 = 2\n", "x2 = 'person'\n")
        self.assertEqual(self.read("a.py"), expected, "the person's line stays, the agent's go")
        self.assertFalse(os.path.exists(os.path.join(self.root, "b.py")), "the file the agent made is gone")
        self.assertEqual(self.read("c.py"), "c = 'other session'\n", "the other session's edit stays")

    def test_restore_brings_back_a_version_by_its_id(self):
        self.write("notes.md", "first\n")

        async def body(session):
            await self.call(session, "read_file", path="notes.md")
            await self.call(session, "write_file", path="notes.md", content="second\n", ifRevision=0)
            await self.call(session, "save")
            failed, text = await self.call(session, "restore", path="notes.md", version="-1")
            self.assertFalse(failed, text)
            self.assertIn("now holds version -1", text)
            await self.call(session, "save")
            failed, text = await self.call(session, "restore", path="notes.md", version="latest")
            self.assertTrue(failed)
            self.assertIn("`version` must be a version id", text)

        self.run_session(body)
        self.assertEqual(self.read("notes.md"), "first\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
