"""bench/benchkit/scan_floor.py — the set-up floor of figure 10: bench/scan-floor.c, compiled and timed.

The floor walks a tree as the agent does (level by level, on as many threads as the agent's
probes) with only the system calls a recursive watch cannot do without: open, inotify_add_watch,
getdents64, close. Its set-up is timed as the agent's is, spawn to the line that says it is done,
and its CPU time is read at that line, before the 100,000 watches are closed at exit. What the
agent takes beyond it is the agent's own work; what inotifywait takes beyond it is its `lstat` of
every entry and its single thread.
"""
import subprocess

from .common import PeerUnavailable, compile_c, ms, now_ns
from .processes import LineReader, cpu_ms

# The agent's `DirectoryProbe.threadCount`: the floor probes a level on as many threads.
AGENT_PROBE_THREADS = 16


class ScanFloor:
    """Compiles bench/scan-floor.c into the bench's work directory once; `run` times one walk."""

    def __init__(self, bench):
        self.bench = bench
        self.binary = compile_c(bench, "scan-floor", PeerUnavailable)

    def run(self, tree, timeout):
        """(ms from spawn to the walk's end, CPU ms of the walk, files it counted)."""
        argv = [self.binary, tree, str(AGENT_PROBE_THREADS)]
        started = now_ns()
        process = self.bench.children.spawn("the set-up floor", argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            lines = LineReader(process.stdout.fileno(), f"the set-up floor (pid {process.pid})")
            files, _ = lines.wait_for(lambda line: int(line.split()[1]) if line.startswith("files ") else None, timeout,
                                      "the set-up floor's `files` line")
            _, stamp = lines.wait_for(lambda line: True if line.startswith("ms ") else None, timeout,
                                      "the set-up floor's `ms` line")
            cpu = cpu_ms(process.pid)
        finally:
            process.stdin.close()
            self.bench.children.stop(process, 30)
        return ms(stamp - started), cpu, files
