"""Figure 4: coalescing. N pipelined writes to one buffer inside one autosave window should make
one save (one `saved` line).
"""
import os

from .agent import AgentRun
from .common import BenchError, ms, now_ns
from .processes import log_event


class CoalescingFigure:
    """Figure 4: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 4: coalescing -----------------------------------------------------------------------

    def coalescing(self, run):
        root = self.fresh_dir("coalesce")
        target = os.path.join(root, "doc.txt")
        with open(target, "w") as file:
            file.write("start\n")
        writes = self.options.coalesce_writes
        settings = {"autosave": {"delayMs": 1000, "maxDelayMs": 3_600_000}, "journal": {"fsync": False}}
        agent = AgentRun(self, root, settings, f"coalesce-{run}")
        delay = agent.effective["autosave"]["delayMs"]
        self.configs["4"] = f"autosave.delayMs {delay}, maxDelayMs 3600000, journal.fsync false, one connection, pipelined"
        saves = []
        try:
            agent.start()
            client = agent.client()
            try:
                requests = [client.line("write", {"path": target, "content": f"edit {index}\n"}, index + 1)
                            for index in range(writes)]
                started = now_ns()
                answers = client.pipeline(requests, f"{writes} pipelined writes")
                elapsed = ms(now_ns() - started)
            finally:
                client.close()
            refused = [answer for answer in answers if "error" in answer]
            if refused:
                raise BenchError(f"the agent refused {len(refused)} of {writes} writes: {refused[0]['error'].get('message')}")
            first, _ = agent.log.wait_for(log_event("saved", path="doc.txt"), delay / 1000 + 60,
                                          "the agent's first `saved` line after the pipelined writes")
            saves = [first] + [value for value, _ in agent.log.collect(2 * delay / 1000 + 1, log_event("saved", path="doc.txt"))]
        finally:
            agent.stop()
        with open(target) as file:
            if file.read() != f"edit {writes - 1}\n":
                raise BenchError(f"after {writes} writes {target} does not hold the last one")
        self.record("coalesce.saves", len(saves))
        self.extra["coalesce.writes-per-s"].append(writes / elapsed * 1000)
        print(f"  coalescing: {writes} writes in {elapsed:.0f} ms ({writes / elapsed * 1000:.0f}/s) -> {len(saves)} save(s)", flush=True)
