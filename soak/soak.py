#!/usr/bin/env python3
"""Crash soak for the autosave agent: random client writes, real external tools and kill -9,
then a check that nothing anyone wrote was lost.

    soak/soak.py --smoke                  # CI: 60 rounds, 2 minutes at most
    soak/soak.py --minutes 30 --seed 42   # what `make soak SOAK_MINUTES=30` runs
    soak/soak.py --rounds 200 --keep      # keep the generated project afterwards

Each round, against a generated git project (a few dozen text files in a few directories):
  * client writes go through `autosave write PATH --if-revision N` (stdin), each one derived from
    the buffer it read at revision N, the way an editor writes; exit 0 means acknowledged;
  * external edits are made by real tools: a shell redirect, `sed -i`, Python `os.replace` of a
    temp file, vim's rename dance (emulated, and real `vim -es`), `git checkout <commit> -- FILE`
    and `rsync` of a prepared file. The agent is frozen with SIGSTOP around each one (the tool
    runs for real; the agent wakes up wherever it was, often mid-save), so the soak knows exactly
    which version each tool read;
  * most rounds end with `kill -9` of the agent: right after a burst of writes (appends and acks in
    flight), after the acks (saves in flight), while frozen after an external edit, or at a random
    moment; sometimes files are edited while it is down. The agent is restarted (new random
    save delay 0-20 ms and `conflicts.keep`) and the soak waits for `ready` in its JSON log.
After `autosave sync` and the agent settled, every round checks:
  (a) no file, buffer or conflict copy is torn: it starts with the file's header line, ends with
      its footer line, and every line is one that somebody wrote to that path (every line carries a
      unique tag, so a merge of versions is recognised and anything else is not);
  (b, c) every acknowledged client write and every external edit is still somewhere: on disk, in
      the buffer (the `read` request `autosave cat` makes) or in a conflict copy under
      .autosave/conflicts/. "Is there" means one of those holds the lines the edit added and none
      of the lines it removed; a line stops being required once a later edit of that path, by
      anyone, was made on a version containing it and changed it (superseded). A write whose
      client got no answer (the agent died) counts once any of its lines is seen;
  (d) no agent temp file (.NAME.autosave-XXXXXXXXXX.tmp) is left anywhere under the root;
  (e) the journal (.autosave/journal/journal.log) stays within the bound EditJournal's compaction
      gives (see journal_limit()).
  (f) history keeps its versions: a version read from history at an earlier check (after `sync`,
      so durable) reads back byte for byte, through every kill -9 since; and once the run's
      baseline is done, a random path's latest version in history is what its file holds.
At the end the agent is stopped with SIGTERM and the disk and conflict copies are checked once more.
Exit 0 when there are no violations, 1 otherwise (each printed with path, version and finding).
The seed fixes every random choice (files, edits, tools, kill moments); timing still varies, so a
replay repeats the same scenario, not the same interleaving.

The code (soak/, shared with powercut.py), in the order a newcomer reads it:
  soak.py        this header (the rules) and main();
  options.py     the options both soaks take, and run_soak (exit codes, the work folder);
  harness.py     the Soak: its state, and the run from the first round to the last check;
  scenario.py    the steps: the generated project, client writes, external edits by real tools;
  content.py     the tagged lines of the generated files and the edits planned on them;
  kills.py       a round and the moments the agent is killed (the power-cut soak cuts at them too);
  agent.py       the agent process (start, kill -9, SIGTERM, freeze), its JSON log, its socket;
  checks.py      what "nothing lost" means (who wrote what, what must still be somewhere) and the
                 checks (a)-(e) with their violations;
  report.py      the summary printed at the end;
  faultmount.py  the power-cut soak's faultfs mount, which cuts the power.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import Soak  # noqa: E402
from options import parse_arguments, run_soak  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description="Crash soak for the autosave agent (see the header of this file).")
    return run_soak(Soak, parse_arguments(parser, files=36, smoke_files=16, smoke_rounds=60), "soak")

if __name__ == "__main__":
    sys.exit(main())
