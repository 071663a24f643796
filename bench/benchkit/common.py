"""What every part of bench/compare shares: its two errors, the clock and unit of every timing,
a percentile, the text lines that figures 8 and 9 write, and HERE, the bench/ directory (where
floor.c, scan-floor.c and results.md are).
"""
import math
import os
import shlex
import subprocess
import time

# bench/: the directory of the `compare` script, which holds this package.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BenchError(Exception):
    """A measurement mechanism failed: the message names what was being done or waited for."""


class PeerUnavailable(Exception):
    """A peer tool is not installed; its rows show n/a with this reason."""


def now_ns():
    return time.monotonic_ns()


def ms(nanoseconds):
    return nanoseconds / 1e6


def percentile(values, fraction):
    """Nearest-rank percentile (p99 of 200 samples is the 198th smallest)."""
    if not values:
        raise BenchError("no samples to take a percentile of")
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def write_text_lines(path, size=None, lines=None):
    """Writes numbered text lines of about 60 bytes (figures 8 and 9): until the file holds `size`
    bytes, or `lines` lines."""
    with open(path, "w") as file:
        written, line = 0, 0
        while (size is not None and written < size) or (lines is not None and line < lines):
            text = f"line {line} of a large file, with some words to make it longer\n"
            file.write(text)
            written, line = written + len(text), line + 1


def compile_c(bench, name, error):
    """Compiles bench/NAME.c into the bench's work directory as NAME and returns its path; raises
    `error` (BenchError or PeerUnavailable) with the compiler's message when it cannot."""
    binary = os.path.join(bench.work, name)
    command = ["cc", "-O2", "-pthread", os.path.join(HERE, name + ".c"), "-o", binary]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise error(f"cannot compile {name}.c ({shlex.join(command)}):\n{result.stderr.strip()}")
    return binary
