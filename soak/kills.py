"""The kill strategies: a round of the crash soak (activity, then maybe kill -9 and a restart,
then settle and check) and the moments the agent is killed: a burst in flight, just after its
acks, frozen after an external edit, at a random moment. The power-cut soak cuts the power at
the same moments (`interrupt`). `settle` waits until everything is saved before the checks."""

import random
import time

from agent import SoakError, rpc, run_cli, tail
from scenario import join_all


class Kills:
    """The rounds of the Soak (part of harness.Soak; uses the state its __init__ makes)."""

    # MARK: Rounds

    def run_round(self):
        self.round += 1
        self.appended = [0, self.appended[0]]
        threads = self.activity()
        roll = self.rng.random()
        killed = ("in-flight" if roll < 0.2 else "after-ack" if roll < 0.4 else "frozen" if roll < 0.55
                  else "random" if roll < 0.75 else None)
        if killed:
            threads = self.interrupt(killed, threads, ["sed", "os.replace", "redirect"])
            if self.agent.alive():
                self.agent.kill()
            self.kinds[killed] += 1
            self.counts["kills"] += 1
            join_all(threads)
            if self.rng.random() < 0.3:
                for _ in range(self.rng.randint(1, 3)):
                    self.external_edit(agent_down=True)
            self.agent.start()
        else:
            join_all(threads)
        self.settle()
        self.check()

    def interrupt(self, moment, threads, frozen_tools):
        """Leads up to the moment the agent is killed: "in-flight" (a burst whose appends and acks
        are on their way), "after-ack" (a burst acknowledged, its saves running), "frozen" (the
        agent stopped, an external edit by one of `frozen_tools` it never sees, killed stopped) or
        "random". Returns the client threads still running."""
        if moment == "in-flight":
            threads += self.burst(self.rng.randint(2, 6))
            time.sleep(self.rng.uniform(0.0, 0.06))
        elif moment == "after-ack":
            join_all(threads)
            threads = self.burst(self.rng.randint(2, 6))
            join_all(threads)
            time.sleep(self.rng.uniform(0, (self.agent.settings["delayMs"] + 10) / 1000))
        elif moment == "frozen":
            join_all(threads)
            path = self.rng.choice(self.paths())
            with self.path_locks[path]:
                if self.agent.freeze():
                    self._external_edit(path, self.rng.choice(frozen_tools),
                                        random.Random(self.rng.getrandbits(64)), self.next_tag("e"), False)
                    self.agent.kill()  # SIGKILL ends a stopped process too
        else:
            time.sleep(self.rng.uniform(0, 0.3))
        return threads

    def settle(self):
        """`autosave sync`, then wait until no buffer is dirty or saving and no change is pending."""
        deadline = time.monotonic() + 30
        quiet = 0
        while time.monotonic() < deadline:
            done = run_cli(self.binary, self.project, ["sync"])
            if done.returncode != 0:
                raise SoakError(f"`autosave sync` failed ({done.returncode}): {done.stderr.decode().strip()}\n"
                                f"{tail(self.agent.log_paths[-1])}")
            status = rpc(self.project, "status")
            busy = [b["path"] for b in status["buffers"] if b["dirty"] or b["saving"]]
            if not busy and status["watcher"]["pendingChanges"] == 0:
                quiet += 1
                if quiet >= 2:
                    return
            else:
                quiet = 0
            time.sleep(0.02)
        self.notes["rounds checked with a buffer still dirty after 30 s"] += 1
