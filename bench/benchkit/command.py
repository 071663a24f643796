"""The command line of bench/compare: parse_options (every option, its default and its smoke
default) and main (runs the suite, prints the figures table, writes results.md, cleans up).
"""
import argparse
import os
import shlex
import shutil
import signal
import sys

from .common import HERE, BenchError
from .report import build_table, render_table, write_results
from .suite import Bench

DEFAULT_BINARY = os.path.join(os.path.dirname(HERE), ".build", "release", "autosave")


# ---------------------------------------------------------------------------------------------


def parse_options(argv):
    parser = argparse.ArgumentParser(description="Whole-process benchmark of the autosave agent against inotifywait, "
                                                 "watchman and the durable-write floor.")
    parser.add_argument("--binary", default=DEFAULT_BINARY, help=f"the agent binary (default {DEFAULT_BINARY})")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure; figures are medians (default 5)")
    parser.add_argument("--smoke", action="store_true",
                        help="small tree, 1 run, few samples, 3 s idle; checks the mechanisms, writes no results.md")
    parser.add_argument("--only", "--figures", dest="only", default="",
                        help="comma-separated figure numbers to run (default: all)")
    parser.add_argument("--dirs", type=int, help="directories in the generated tree (default 10000, smoke 200)")
    parser.add_argument("--files", type=int, help="files in the generated tree (default 100000, smoke 2000)")
    parser.add_argument("--latency-writes", type=int, help="external writes per notice-latency measurement (default 200)")
    parser.add_argument("--latency-gap-ms", type=float, default=10, help="pause after each noticed write (default 10)")
    parser.add_argument("--idle-seconds", type=float, help="idle window (default 30, smoke 3)")
    parser.add_argument("--idle-quiet", type=float, default=2, help="quiet seconds before the idle window (default 2)")
    parser.add_argument("--save-samples", type=int, help="saves timed per save-cost run (default 50, smoke 5)")
    parser.add_argument("--save-bytes", type=int, default=4096, help="bytes per save-cost write (default 4096)")
    parser.add_argument("--save-delay-ms", type=int, default=20, help="autosave.delayMs for the save cost (default 20)")
    parser.add_argument("--coalesce-writes", type=int, help="writes inside one window (default 10000, smoke 2000)")
    parser.add_argument("--flush-buffers", type=int, help="dirty buffers flushed on SIGTERM (default 1000, smoke 100)")
    parser.add_argument("--flush-bytes", type=int, default=1024, help="bytes per flushed buffer (default 1024)")
    parser.add_argument("--clients", type=int, default=4, help="socket clients writing concurrently (default 4)")
    parser.add_argument("--window", type=int, default=1,
                        help="requests in flight per socket client; 1 waits for each answer (default 1)")
    parser.add_argument("--client", choices=["c", "python"], default="c",
                        help="the socket clients of figure 7: C (floor.c, default) or Python (multiprocessing)")
    parser.add_argument("--edit-bytes", type=int, default=64, help="bytes per socket edit (default 64)")
    parser.add_argument("--throughput-seconds", type=float, help="seconds per throughput measurement (default 5, smoke 1)")
    parser.add_argument("--large-mb", type=int, help="MiB written and read back in figure 8 (default 50, smoke 5)")
    parser.add_argument("--ranged-mb", type=int, help="MiB of the file edited in figure 9 (default 10, smoke 1)")
    parser.add_argument("--ranged-edits", type=int, help="edits timed one by one in figure 9 (default 2000, smoke 100)")
    parser.add_argument("--journal-edits", type=int,
                        help="edits before figure 9 measures the journal and RSS (default 10000, smoke 1000)")
    parser.add_argument("--patch-lines", type=int, help="lines of the file figure 9 patches (default 100000, smoke 10000)")
    parser.add_argument("--patch-hunks", type=int, default=20, help="hunks of figure 9's patch (default 20)")
    parser.add_argument("--patch-samples", type=int, help="patches timed per run in figure 9 (default 10, smoke 3)")
    parser.add_argument("--scaling-sizes",
                        help="figure 10's tree sizes, comma-separated file counts, dirs a tenth "
                             "(default 10000,100000,1000000, smoke 1000,2000)")
    parser.add_argument("--scaling-shapes", default="shallow,deep",
                        help="figure 10's tree shapes, comma-separated: shallow (figure 1's, two levels) and deep "
                             "(fan-out 10 over five levels at 1M files, names f<N>.txt) (default shallow,deep)")
    parser.add_argument("--history-versions", type=int,
                        help="versions of figure 11's 1 MB file, made through the agent (default 10000, smoke 200)")
    parser.add_argument("--history-picks", type=int,
                        help="random versions figure 11 shows, plus the deepest chain (default 50, smoke 10)")
    parser.add_argument("--history-calls", type=int,
                        help="`autosave history` and `git log` calls timed per run in figure 11 (default 20, smoke 5)")
    parser.add_argument("--git-files", type=int,
                        help="files in figure 12's committed repository, a tenth as many directories (default 100000, "
                             "smoke 2000)")
    parser.add_argument("--git-rounds", type=int,
                        help="timed `git status` rounds per configuration in figure 12 (default 10, smoke 3)")
    parser.add_argument("--hook-samples", type=int, help="runs of each fsmonitor hook alone in figure 12 (default 30, smoke 5)")
    parser.add_argument("--sub-writes", type=int,
                        help="writes per subscriber phase in figure 12 (default 1000, smoke 50)")
    parser.add_argument("--tree-cache", default="/var/tmp/autosave-bench-trees",
                        help="where figure 10's trees are made once and kept (default /var/tmp/autosave-bench-trees)")
    parser.add_argument("--tmpdir", default="/tmp", help="where the temp directory is made (default /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory (for debugging)")
    parser.add_argument("--results", default=os.path.join(HERE, "results.md"), help="where to write the results")
    options = parser.parse_args(argv)
    full = {"dirs": 10000, "files": 100000, "latency_writes": 200, "idle_seconds": 30.0, "save_samples": 50,
            "coalesce_writes": 10000, "flush_buffers": 1000, "throughput_seconds": 5.0, "large_mb": 50,
            "ranged_mb": 10, "ranged_edits": 2000, "journal_edits": 10000, "patch_lines": 100000, "patch_samples": 10,
            "scaling_sizes": "10000,100000,1000000", "history_versions": 10000, "history_picks": 50,
            "history_calls": 20, "git_files": 100000, "git_rounds": 10, "hook_samples": 30, "sub_writes": 1000}
    smoke = {"dirs": 200, "files": 2000, "latency_writes": 20, "idle_seconds": 3.0, "save_samples": 5,
             "coalesce_writes": 2000, "flush_buffers": 100, "throughput_seconds": 1.0, "large_mb": 5,
             "ranged_mb": 1, "ranged_edits": 100, "journal_edits": 1000, "patch_lines": 10000, "patch_samples": 3,
             "scaling_sizes": "1000,2000", "history_versions": 200, "history_picks": 10, "history_calls": 5,
             "git_files": 2000, "git_rounds": 3, "hook_samples": 5, "sub_writes": 50}
    for key, value in (smoke if options.smoke else full).items():
        if getattr(options, key) is None:
            setattr(options, key, value)
    if options.smoke:
        options.runs = 1
    try:
        options.only = {int(part) for part in options.only.split(",") if part.strip()}
    except ValueError:
        parser.error(f"--only takes figure numbers 1-12 separated by commas, got {options.only!r}")
    if not options.only <= set(range(1, 13)):
        parser.error(f"--only takes figure numbers 1-12, got {sorted(options.only)}")
    try:
        options.scaling_sizes = sorted({int(part) for part in options.scaling_sizes.split(",") if part.strip()})
    except ValueError:
        parser.error(f"--scaling-sizes takes file counts separated by commas, got {options.scaling_sizes!r}")
    if not options.scaling_sizes or options.scaling_sizes[0] < 10:
        parser.error("--scaling-sizes needs at least one file count, each >= 10 (a tenth as many directories)")
    options.scaling_shapes = [part.strip() for part in options.scaling_shapes.split(",") if part.strip()]
    if not options.scaling_shapes or not set(options.scaling_shapes) <= {"shallow", "deep"}:
        parser.error(f"--scaling-shapes takes shallow and/or deep separated by commas, got {options.scaling_shapes!r}")
    if options.runs < 1 or options.dirs < 1 or options.files < options.dirs or options.latency_writes < 1:
        parser.error("--runs and --dirs must be >= 1, --files >= --dirs, --latency-writes >= 1")
    if min(options.ranged_mb, options.ranged_edits, options.journal_edits, options.patch_hunks, options.patch_samples) < 1:
        parser.error("--ranged-mb, --ranged-edits, --journal-edits, --patch-hunks and --patch-samples must be >= 1")
    if min(options.history_versions, options.history_picks, options.history_calls) < 1:
        parser.error("--history-versions, --history-picks and --history-calls must be >= 1")
    if options.git_files < 100 or min(options.git_rounds, options.hook_samples, options.sub_writes) < 1:
        parser.error("--git-files must be >= 100, --git-rounds, --hook-samples and --sub-writes >= 1")
    return options


def main(argv):
    options = parse_options(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"bench/compare: stopped by SIGTERM"))
    bench = None
    status = 0
    try:
        bench = Bench(options)
        bench.run()
        header, lines = build_table(bench)
        table = render_table(header, lines)
        print()
        print(table)
        for peer, reason in bench.unavailable.items():
            print(f"{peer} unavailable: {reason}")
        if bench.failures:
            print(f"\n{len(bench.failures)} measurement(s) failed:")
            for figure, message in bench.failures:
                print(f"  figure {figure}: {message}")
            status = 1
        if not options.smoke:
            write_results(bench, table, shlex.join(["bench/compare"] + argv))
    except BenchError as error:
        print(f"bench/compare: error: {error}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("bench/compare: interrupted", file=sys.stderr)
        status = 130
    finally:
        if bench is not None:
            bench.children.stop_all()
            if options.keep:
                print(f"kept {bench.work}")
            else:
                shutil.rmtree(bench.work, ignore_errors=True)
    return status
