"""Figure 3: save cost. A client's write -> the agent's `saved` line (durable), minus
autosave.delayMs, against the durable-write floor (bench/floor.c) asked over a pipe to make the same
write, timed on the same path; journal on and off.
"""
import json
import os
import statistics
import time

from .agent import AgentRun
from .common import BenchError, ms, now_ns
from .processes import log_event


class SaveCostFigure:
    """Figure 3: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 3: save cost ------------------------------------------------------------------------

    def save_cost(self, run, journal):
        label = "journal" if journal else "nojournal"
        root = self.fresh_dir(f"save-{label}")
        target = os.path.join(root, "doc.txt")
        size = self.options.save_bytes
        with open(target, "w") as file:
            file.write("-" * (size - 1) + "\n")
        delay = self.options.save_delay_ms
        agent = AgentRun(self, root, {"autosave": {"delayMs": delay}, "journal": {"enabled": journal}}, f"save-{label}-{run}")
        self.configs[f"3 {label}"] = (f"autosave.delayMs {delay}, journal.enabled {json.dumps(journal)}, "
                                      f"journal.fsync {json.dumps(agent.effective['journal']['fsync'])}, write.fsync {json.dumps(agent.effective['write']['fsync'])}")
        costs, own, floor, floor_own = [], [], [], []
        floor_process, floor_sample = self.floors.serve(self.fresh_dir(f"floor-save-{label}"), size)
        try:
            agent.start()
            client = agent.client()
            try:
                content = ""
                for index in range(self.options.save_samples):
                    content = chr(ord("a") + index % 26) * (size - 1) + "\n"
                    agent.log.drain()
                    started = now_ns()
                    revision = client.call("write", path=target, content=content)["revision"]
                    record, stamp = agent.log.wait_for(log_event("saved", path="doc.txt", revision=revision),
                                                       delay / 1000 + 30, f"the agent's `saved` line for revision {revision}")
                    costs.append(ms(stamp - started) - delay)
                    own.append(record.get("ms"))
                    # The floor's sample right after the agent's, so both see the same disk load. It is
                    # timed on the same path as the agent's: a request over a pipe, then the answer line
                    # read by the same reader thread, so the harness's own latency is on both sides.
                    round_trip, itself = floor_sample()
                    floor.append(round_trip)
                    floor_own.append(itself)
                    time.sleep(0.02)
            finally:
                client.close()
        finally:
            agent.stop()
            self.children.stop(floor_process, 10)
        with open(target) as file:
            if file.read() != content:
                raise BenchError(f"after the save-cost writes {target} does not hold the last content written")
        cost, floor = statistics.median(costs), statistics.median(floor)
        self.record(f"save.{label}.agent", cost)
        self.record(f"save.{label}.floor", floor)
        self.record(f"save.{label}.agent-own", statistics.median(own))
        self.record(f"save.{label}.floor-own", statistics.median(floor_own))
        print(f"  save cost ({label}) {cost:.2f} ms vs floor {floor:.2f} ms; inside each process: the agent's own ms "
              f"{statistics.median(own):.2f}, the floor's {statistics.median(floor_own):.2f}", flush=True)
