"""The report printed at the end of a soak: rounds, kills, client writes and external edits by
outcome and tool, the agent's log events, what was checked, notes, and every violation with the
log events of its path."""

import json
import os
from collections import Counter

from agent import read_events


class Report:
    """The summary of the Soak (part of harness.Soak; uses the state its __init__ makes)."""

    def summary(self, elapsed):
        events = Counter()
        for log_path in self.agent.log_paths:
            for event in read_events(log_path):
                events[event.get("event", "?")] += 1
        c, m = self.counts, self.model.counts
        print(f"seed {self.seed}: {self.round - 1} rounds in {elapsed / 60:.1f} min; "
              f"agent settings varied per start (save delay 0-20 ms, conflicts.keep disk/buffer)")
        print(f"rounds {self.round - 1} | kills {c['kills']} ({', '.join(f'{k} {v}' for k, v in sorted(self.kinds.items()))})"
              f" | restarts {self.agent.starts - 1}")
        print(f"client writes {c['client writes acknowledged']} acknowledged, "
              f"{c['client writes refused (stale revision, retried)']} refused as stale, "
              f"{c['client writes without answer']} without answer "
              f"({m['unknown writes applied']} had been applied, {m['unknown writes not applied']} had not)")
        print(f"external edits {c['external edits']} ({', '.join(f'{k} {v}' for k, v in sorted(self.tools.items()))})")
        print(f"agent log: " + ", ".join(f"{k} {events[k]}" for k in
              ("saved", "reloaded", "merged", "conflict", "recovered", "removed-temp", "journal-torn", "save-failed")))
        print(f"versions checked {c['versions checked']} | contents checked {c['contents checked']} "
              f"({c['contents equal to a written version']} equal to a written version, "
              f"{c['contents that are merges of written versions']} merges) | journal max {self.max_journal} bytes")
        print(f"history: {c['history versions read back']} versions read back after the kills and cuts since they were "
              f"recorded, {c['history latest versions checked']} latest versions checked against the disk")
        for note, count in sorted(self.notes.items()):
            print(f"note: {note}: {count}")
        print(f"violations {len(self.violations)}")
        for round_number, path, version, expected, found, run in self.violations:
            print(f"- round {round_number}, agent run {run} (logs/agent-{run:04d}.log): {path}\n"
                  f"    version:  {version}\n    expected: {expected}\n    found:    {found}")
            for log_path in self.agent.log_paths[max(0, run - 3):run]:
                for event in read_events(log_path):
                    if event.get("path") == path or event.get("event") in ("journal-torn", "removed-temp", "recover-failed"):
                        print(f"    {os.path.basename(log_path)}: {json.dumps(event)}")
