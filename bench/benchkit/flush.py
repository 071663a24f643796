"""Figure 5: flush on SIGTERM. N dirty buffers saved when the agent is signalled, signal -> exit,
against N durable writes by the floor (bench/floor.c).
"""
import json
import os
import signal
import threading

from .agent import AgentRun
from .common import BenchError, ms, now_ns
from .processes import log_event


class FlushFigure:
    """Figure 5: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 5: flush on SIGTERM ------------------------------------------------------------------

    def flush(self, run):
        root = self.fresh_dir("flush")
        count, size = self.options.flush_buffers, self.options.flush_bytes
        paths = []
        for index in range(count):
            directory = os.path.join(root, f"d{index // 100:02d}")
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, f"f{index:04d}")
            with open(path, "w") as file:
                file.write("-" * (size - 1) + "\n")
            paths.append(path)
        os.sync()
        settings = {"autosave": {"delayMs": 3_600_000, "maxDelayMs": 3_600_000}}
        agent = AgentRun(self, root, settings, f"flush-{run}")
        self.configs["5"] = (f"autosave.delayMs 3600000 (nothing saves before the signal), journal.fsync "
                             f"{json.dumps(agent.effective['journal']['fsync'])}, write.fsync {json.dumps(agent.effective['write']['fsync'])}")
        contents = [(chr(ord("a") + index % 26) * (size - 1) + "\n") for index in range(count)]
        try:
            agent.start()
            client = agent.client()
            try:
                requests = [client.line("write", {"path": path, "content": content}, index + 1)
                            for index, (path, content) in enumerate(zip(paths, contents))]
                answers = client.pipeline(requests, f"{count} writes to distinct buffers")
                refused = [answer for answer in answers if "error" in answer]
                if refused:
                    raise BenchError(f"the agent refused {len(refused)} writes: {refused[0]['error'].get('message')}")
                status = client.call("status")
            finally:
                client.close()
            dirty = sum(1 for buffer in status["buffers"] if buffer.get("dirty"))
            if dirty != count:
                raise BenchError(f"expected {count} dirty buffers before SIGTERM, the agent's status shows {dirty}")
            exited = []

            def reap():
                agent.process.wait()
                exited.append(now_ns())

            reaper = threading.Thread(target=reap, name="reap the agent", daemon=True)
            started = now_ns()
            agent.process.send_signal(signal.SIGTERM)
            reaper.start()
            reaper.join(300)
            if not exited:
                raise BenchError(f"timed out after 300 s waiting for the agent to save {count} buffers and exit after SIGTERM")
            total = ms(exited[0] - started)
            if agent.process.returncode != 0:
                raise BenchError(f"the agent exited with status {agent.process.returncode} after SIGTERM; last lines:\n    "
                                 f"{agent.log.recent()}")
            shutdown, _ = agent.log.wait_for(log_event("shutdown"), 10, "the agent's `shutdown` line")
        finally:
            self.children.stop(agent.process, 60)
        if shutdown.get("saved") != count or shutdown.get("failed") != 0:
            raise BenchError(f"the `shutdown` line says saved={shutdown.get('saved')} failed={shutdown.get('failed')}, expected {count} and 0")
        for path, content in zip(paths, contents):
            with open(path) as file:
                if file.read() != content:
                    raise BenchError(f"after the flush {path} does not hold its buffer's content")
        _, floor_total = self.floors.save(self.fresh_dir("floor-flush"), size, count, count)
        self.record("flush.agent", total)
        self.record("flush.floor", floor_total)
        self.extra["flush.agent-own-ms"].append(shutdown.get("ms"))
        print(f"  flush of {count} buffers: {total:.0f} ms (its own ms={shutdown.get('ms')}) vs {count} x floor {floor_total:.0f} ms", flush=True)
