"""benchkit — the code of bench/compare, the whole-process benchmark of the autosave agent.

bench/compare puts bench/ on sys.path and calls `benchkit.main(argv)` (command.py). Its docstring
says what every figure measures and lists the modules here in reading order: the options and the
run (command.py, suite.py), what the figures share (common.py, processes.py, agent.py, peers.py),
one module per figure (watchers.py for figures 1, 2 and 6, then save_cost.py, coalescing.py,
flush.py, throughput.py, large_content.py, ranged_edits.py, scaling.py with its helpers for
figure 10, history.py for figure 11, git_status.py and
subscribers.py for figure 12), and the report (machine.py, report.py).
"""
from .command import main

__all__ = ["main"]
