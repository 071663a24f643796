#!/usr/bin/env python3
"""`autosave mcp` when the agent it works through goes away (issue 33, item 6), driven by the
official MCP Python SDK as a coding agent's client would.

Several servers on one folder: the first runs the agent in its process, the others join it. When
the first exits, the others must go on: one of them starts the next agent (the lock decides which),
the rest join it, and no tool result carries the transport's raw words. A change whose answer was
lost (the connection ended after the agent took it) is made once, never twice: an answer-dropping
proxy, a fault-injection seam named as such, stands between the server and a real agent for that.

    AUTOSAVE_BINARY=.build/debug/autosave .build/mcp-venv/bin/python Tests/mcp/test_handover.py
"""
import asyncio
import fcntl
import os
import signal
import socket
import subprocess
import threading
import unittest

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from test_mcp import BINARY, TIMEOUT, MCPTestCase, wait_for

RAW = ("errno", "connect(descriptor", "IOError", "ChannelError")


class Server:
    """One `autosave mcp` process and its client session, living in a task of its own so that
    servers can end in any order."""

    def __init__(self, case, name):
        self.case, self.name = case, name
        self.log_path = os.path.join(case.home, f"{name}.log")
        self.ready, self.done = asyncio.Event(), asyncio.Event()
        self.session = None

    async def _run(self):
        params = StdioServerParameters(command=BINARY, args=["mcp", self.case.root], cwd=self.case.root)
        with open(self.log_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self.session = session
                    self.ready.set()
                    await self.done.wait()

    @classmethod
    async def started(cls, case, name):
        server = cls(case, name)
        server.task = asyncio.create_task(server._run())
        waiting = asyncio.create_task(server.ready.wait())
        await asyncio.wait({server.task, waiting}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if not server.ready.is_set():
            waiting.cancel()
            raise AssertionError(f"{name} did not start: {server.log()}")
        return server

    async def stop(self):
        """Ends its input; returns once the process is gone (it saves first when it runs the agent)."""
        self.done.set()
        await asyncio.wait_for(self.task, TIMEOUT)

    async def call(self, tool, **arguments):
        result = await self.session.call_tool(tool, arguments)
        text = result.content[0].text
        for word in RAW:
            assert word not in text, f"{self.name}'s {tool} showed raw transport text: {text}"
        return bool(result.is_error), text

    def log(self):
        with open(self.log_path) as f:
            return f.read()


class HandoverTests(MCPTestCase):
    def run_async(self, body):
        return asyncio.run(asyncio.wait_for(body(), 90))

    def assert_one_started_an_agent(self, servers):
        started = [server.name for server in servers if "mcp-serving" in server.log()]
        self.assertEqual(len(started), 1, f"servers that started an agent: {started}")

    def test_a_joined_server_goes_on_when_the_server_running_the_agent_exits(self):
        self.write("a.txt", "a\n")

        async def body():
            first = await Server.started(self, "first")
            second = await Server.started(self, "second")
            self.assertIn("mcp-serving", first.log())
            self.assertIn("mcp-joined", second.log())
            await first.stop()
            self.assertEqual(self.read("a.txt"), "a\n")
            failed, text = await second.call("edit_file", path="a.txt", old_string="a", new_string="by the second")
            self.assertFalse(failed, text)
            failed, text = await second.call("read_file", path="a.txt")
            self.assertFalse(failed, text)
            self.assertIn("1\tby the second\n", text)
            # The agent it started is the project's: the CLI finds it.
            self.assertEqual(self.cli("cat", "a.txt").stdout, "by the second\n")
            await second.stop()
            self.assertIn("mcp-agent-gone", second.log())

        self.run_async(body)
        self.assertEqual(self.read("a.txt"), "by the second\n", "saved when the second stopped")

    def test_servers_left_without_an_agent_start_exactly_one_and_all_go_on(self):
        names = ["second", "third", "fourth"]
        for name in names:
            self.write(f"{name}.txt", "old\n")

        async def body():
            first = await Server.started(self, "first")
            others = [await Server.started(self, name) for name in names]
            await first.stop()
            # All at once: each finds the agent gone; the lock lets one start the next.
            results = await asyncio.gather(*[
                server.call("edit_file", path=f"{server.name}.txt", old_string="old", new_string=f"by the {server.name}")
                for server in others])
            for failed, text in results:
                self.assertFalse(failed, text)
            self.assert_one_started_an_agent(others)
            status = self.cli("status", "--json").stdout
            for name in names:
                self.assertIn(f"{name}.txt", status)
            for server in others:
                await server.stop()

        self.run_async(body)
        for name in names:
            self.assertEqual(self.read(f"{name}.txt"), f"by the {name}\n")

    def test_servers_started_together_share_one_agent(self):
        names = ("one", "two", "three", "four", "five", "six")

        async def body():
            servers = await asyncio.gather(*[Server.started(self, name) for name in names])
            self.assert_one_started_an_agent(servers)
            for server in servers:
                failed, text = await server.call("write_file", path=f"{server.name}.txt", content=f"by {server.name}\n")
                self.assertFalse(failed, text)
            for server in servers:
                await server.stop()

        self.run_async(body)
        for name in names:
            self.assertEqual(self.read(f"{name}.txt"), f"by {name}\n")

    def test_a_server_waiting_out_anothers_lock_still_stops_on_sigterm(self):
        # Another process holds the lock and serves nothing: the server tries to start an agent,
        # loses, and waits for a socket. An agent's service group that never served left SIGTERM
        # ignored (or, with a stop deadline armed, ended it 10 s later with status 1).
        state = os.path.join(self.root, ".autosave")
        os.mkdir(state, 0o700)
        with open(os.path.join(state, "agent.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            lock.write(f"{os.getpid()}\n")
            lock.flush()
            server = subprocess.Popen([BINARY, "mcp", self.root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
            try:
                wait_for(lambda: f"mcp-waiting pid={os.getpid()} " in self.log(), "mcp-waiting in its log")
                server.send_signal(signal.SIGTERM)
                self.assertEqual(server.wait(timeout=5), -signal.SIGTERM, self.log())
            finally:
                server.kill()
                server.wait()
                server.stdin.close()
                server.stdout.close()

class AnswerDroppingProxy:
    """Fault-injection seam: a socket that passes requests to the real agent and its answers back,
    except for the first request whose method is in `drop`: that one reaches the agent, whose
    answer is read and thrown away, and the client's connection is closed, as when an agent stops
    between taking a change and answering it."""

    def __init__(self, path, agent, drop):
        self.agent, self.drop, self.dropped = agent, drop, threading.Event()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._pass, args=(client,), daemon=True).start()

    def _pass(self, client):
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(self.agent)
        first = b""
        while b"\n" not in first:
            chunk = client.recv(65536)
            if not chunk:
                break
            first += chunk
        upstream.sendall(first)
        if not self.dropped.is_set() and any(f'"method":"{m}"'.encode() in first for m in self.drop):
            self.dropped.set()
            answer = b""
            while b"\n" not in answer:
                answer += upstream.recv(65536)
            client.close()
            upstream.close()
            return
        requests = threading.Thread(target=self._copy, args=(client, upstream), daemon=True)
        requests.start()
        self._copy(upstream, client)
        requests.join(TIMEOUT)
        client.close()
        upstream.close()

    @staticmethod
    def _copy(source, target):
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass
        for end in (source, target):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.server.close()


class LostAnswerTests(MCPTestCase):
    def setUp(self):
        super().setUp()
        self.agent_log = open(os.path.join(self.home, "agent.log"), "w")
        self.agent = subprocess.Popen([BINARY, "run", self.root], stderr=self.agent_log)
        wait_for(lambda: " ready " in self.agent_output(), "the agent's ready line")

    def agent_output(self):
        with open(os.path.join(self.home, "agent.log")) as f:
            return f.read()

    def tearDown(self):
        self.agent.terminate()
        self.agent.wait(timeout=30)
        self.agent_log.close()
        super().tearDown()

    def proxy(self, *methods):
        """Puts the proxy between clients and the agent: the state directory's pointer file names it."""
        folder = os.path.join(self.home, "proxy")
        os.mkdir(folder, 0o700)
        proxy = AnswerDroppingProxy(os.path.join(folder, "agent.sock"), os.path.join(self.root, ".autosave", "agent.sock"), methods)
        self.addCleanup(proxy.close)
        with open(os.path.join(self.root, ".autosave", "agent.sock.path"), "w") as f:
            f.write(os.path.join(folder, "agent.sock") + "\n")
        return proxy

    def test_an_edit_whose_answer_was_lost_is_made_once(self):
        # Made twice, this edit would leave two `y = 2` lines: its old_string is still there after.
        self.write("a.py", "x = 1\n")
        proxy = self.proxy("edit", "write")

        async def body(session):
            failed, text = await self.call(session, "edit_file", path="a.py", old_string="x = 1", new_string="x = 1\ny = 2")
            self.assertTrue(proxy.dropped.is_set(), "the proxy dropped the edit's answer")
            self.assertFalse(failed, text)
            self.assertIn("made once", text)
            for word in RAW:
                self.assertNotIn(word, text)

        self.run_session(body)
        self.assertEqual(self.cli("cat", "a.py").stdout, "x = 1\ny = 2\n")

    def test_a_patch_whose_answer_was_lost_is_applied_once(self):
        self.write("a.py", "x = 1\nz = 3\n")
        proxy = self.proxy("patch")
        patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 2\n z = 3\n"

        async def body(session):
            failed, text = await self.call(session, "apply_patch", patch=patch)
            self.assertTrue(proxy.dropped.is_set(), "the proxy dropped the patch's answer")
            self.assertFalse(failed, text)
            self.assertIn("not applied twice", text)

        self.run_session(body)
        self.assertEqual(self.cli("cat", "a.py").stdout, "x = 2\ny = 2\nz = 3\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
