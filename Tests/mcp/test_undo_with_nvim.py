#!/usr/bin/env python3
"""`autosave undo --who` with real clients side by side: a person typing in real Neovim (headless,
driven through its RPC by pynvim, the plugin attached) on lines 1-5 of a.py while a coding agent
(the official MCP Python SDK, through `autosave mcp`) edits lines 20-30 of a.py and creates b.py.
Undoing the agent's writer leaves the person's typing and takes the agent's work back.

    AUTOSAVE_BINARY=.build/debug/autosave .build/mcp-venv/bin/python Tests/mcp/test_undo_with_nvim.py
"""
import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import pynvim
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from test_mcp import BINARY, wait_for

PLUGIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "editors", "nvim")


class UndoWithRealClientsTests(unittest.TestCase):
    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="autosave-undo-")
        self.root = os.path.join(self.home, "project")
        os.mkdir(self.root)
        with open(os.path.join(self.root, "autosave.json"), "w") as f:
            json.dump({"autosave": {"delayMs": 200, "maxDelayMs": 1000}}, f)
        self.log = open(os.path.join(self.home, "agent.log"), "w")
        self.agent = subprocess.Popen([BINARY, "run", self.root], stdout=subprocess.DEVNULL, stderr=self.log)
        def is_ready():
            with open(os.path.join(self.home, "agent.log")) as log:
                return " ready" in log.read()
        wait_for(is_ready, "the agent's ready line")
        self.nvim = None

    def tearDown(self):
        if self.nvim is not None:
            try:
                self.nvim.command("qa!")
            except Exception:
                pass
            self.nvim.close()
        self.agent.send_signal(signal.SIGTERM)
        self.agent.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def read(self, name):
        with open(os.path.join(self.root, name)) as f:
            return f.read()

    def cli(self, *args):
        return subprocess.run([BINARY, *args], cwd=self.root, capture_output=True, text=True, timeout=60)

    def test_undo_who_the_agent_keeps_the_persons_typing_and_takes_back_its_edits_and_its_file(self):
        lines = [f"x{n} = {n}\n" for n in range(1, 31)]
        with open(os.path.join(self.root, "a.py"), "w") as f:
            f.write("".join(lines))
        self.nvim = pynvim.attach("child", argv=[
            "nvim", "--embed", "--headless", "--clean", "-n", "--cmd", "set rtp^=" + PLUGIN, "--cmd", "cd " + self.root])
        self.nvim.command("edit " + os.path.join(self.root, "a.py"))
        wait_for(lambda: self.nvim.exec_lua("return require('autosave').status(0)").get("revision") is not None, "a.py attached")

        def type_keys(keys):
            self.nvim.feedkeys(self.nvim.replace_termcodes(keys, True, False, True), "xt", False)

        async def agent_work():
            params = StdioServerParameters(command=BINARY, args=["mcp", self.root], cwd=self.root)
            async with stdio_client(params, errlog=self.log) as (read, write):
                async with ClientSession(read, write, client_info=Implementation(name="test-agent", version="1")) as session:
                    await session.initialize()

                    async def call(tool, **arguments):
                        result = await session.call_tool(tool, arguments)
                        self.assertFalse(result.is_error, result.content[0].text)

                    await call("read_file", path="a.py")
                    # pynvim runs an event loop of its own: it is driven from a thread of its own.
                    await asyncio.to_thread(type_keys, "ggjA # the person's<Esc>")  # line 2, while the agent works
                    for n in (20, 25, 30):
                        await call("edit_file", path="a.py", old_string=f"x{n} = {n}\n", new_string=f"x{n} = 'agent'\n")
                    await asyncio.to_thread(type_keys, "3jA # more<Esc>")  # line 5
                    await call("write_file", path="b.py", content="made by the agent\n")
                    await call("save")

        asyncio.run(asyncio.wait_for(agent_work(), 60))
        person = "".join(lines).replace("x2 = 2\n", "x2 = 2 # the person's\n").replace("x5 = 5\n", "x5 = 5 # more\n")
        both = person.replace("x20 = 20\n", "x20 = 'agent'\n").replace("x25 = 25\n", "x25 = 'agent'\n").replace("x30 = 30\n", "x30 = 'agent'\n")
        wait_for(lambda: self.read("a.py") == both, "everyone's edits on disk")

        undo = self.cli("undo", "--who", "mcp:test-agent")
        self.assertEqual(undo.returncode, 0, undo.stderr)
        self.assertIn("undone a.py", undo.stdout)
        self.assertIn("removed b.py", undo.stdout)
        self.assertEqual(self.read("a.py"), person, "the person's typing stays, the agent's lines go")
        self.assertFalse(os.path.exists(os.path.join(self.root, "b.py")), "the agent's file is gone")
        wait_for(lambda: "".join(l + "\n" for l in self.nvim.current.buffer[:]) == person, "Neovim's buffer to show the undo")


if __name__ == "__main__":
    unittest.main(verbosity=2)
