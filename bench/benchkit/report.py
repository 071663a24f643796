"""The report: the figures table (table_rows: each row's metrics, peer and target; build_table
judges them; render_table lays them out) and results.md (write_results: the machine, the table,
figure 10's section, the settings per figure and the raw values, one per run).
"""
import datetime
import os
import statistics


# ---------------------------------------------------------------------------------------------
# The table

# (figure, what, unit, agent metric, peer metric, peer name, target text, check(agent, ratio) or None)
def table_rows(options):
    settle = 50
    rows = [
        ("1", "watch set-up", "ms", "setup.agent", "setup.inotifywait", "inotifywait -r",
         "≤ 0.6 × peer", lambda a, r: r <= 0.6),
        ("1", "watch set-up", "ms", "setup.agent", "setup.watchman", "watchman watch+query",
         "≤ 0.2 × peer", lambda a, r: r <= 0.2),
        ("1", "set-up CPU time (user+sys)", "ms", "setup.cpu.agent", "setup.cpu.inotifywait", "inotifywait -r",
         "(info)", None),
        ("1", "set-up CPU time (user+sys)", "ms", "setup.cpu.agent", "setup.cpu.watchman", "watchman watch+query",
         "(info)", None),
        ("2", "notice p50, settleMs 0", "ms", "latency.settle0.agent.p50", "latency.inotifywait.p50", "inotifywait",
         "≤ 1 ms", lambda a, r: a <= 1),
        ("2", "notice p99, settleMs 0", "ms", "latency.settle0.agent.p99", "latency.inotifywait.p99", "inotifywait",
         "≤ 5 ms", lambda a, r: a <= 5),
        ("2", f"notice p50, settleMs {settle}", "ms", "latency.default.agent.p50", "latency.watchman.p50",
         "watchman (settle 20)", f"≤ {settle + 1} ms", lambda a, r: a <= settle + 1),
        ("2", f"notice p99, settleMs {settle}", "ms", "latency.default.agent.p99", "latency.watchman.p99",
         "watchman (settle 20)", f"≤ {settle + 5} ms", lambda a, r: a <= settle + 5),
        # Figure 3 judges the agent's overhead over the durable write it makes (agent - floor, here
        # agent × (1 - 1/ratio) from the paired ratio): on a fast disk a ratio measures the fixed
        # per-request costs rather than the write path.
        ("3", "save cost, defaults (journal on)", "ms", "save.journal.agent", "save.journal.floor", "durable-write floor",
         "overhead ≤ 1.0 ms", lambda a, r: r > 0 and a * (1 - 1 / r) <= 1.0),
        ("3", "save cost, journal off", "ms", "save.nojournal.agent", "save.nojournal.floor", "durable-write floor",
         "overhead ≤ 1.0 ms", lambda a, r: r > 0 and a * (1 - 1 / r) <= 1.0),
        ("3", "save as timed inside (journal on)", "ms", "save.journal.agent-own", "save.journal.floor-own",
         "floor's own timing", "(info)", None),
        ("3", "save as timed inside (journal off)", "ms", "save.nojournal.agent-own", "save.nojournal.floor-own",
         "floor's own timing", "(info)", None),
        ("4", f"disk writes for {options.coalesce_writes} writes", "saves", "coalesce.saves", None, "—",
         "= 1", lambda a, r: a == 1),
        ("5", f"flush {options.flush_buffers} buffers on SIGTERM", "ms", "flush.agent", "flush.floor",
         f"{options.flush_buffers} × floor", "≤ 0.5 × peer", lambda a, r: r <= 0.5),
        ("6", f"idle CPU ticks / {options.idle_seconds:.0f} s", "ticks", "idle.ticks.agent", "idle.ticks.inotifywait",
         "inotifywait", "= 0", lambda a, r: a == 0),
        ("6", f"idle CPU ticks / {options.idle_seconds:.0f} s", "ticks", "idle.ticks.agent", "idle.ticks.watchman",
         "watchman", "= 0", lambda a, r: a == 0),
        ("6", f"idle wake-ups / {options.idle_seconds:.0f} s", "wake-ups", "idle.wakeups.agent", "idle.wakeups.inotifywait",
         "inotifywait", "(info)", None),
        ("6", f"idle wake-ups / {options.idle_seconds:.0f} s", "wake-ups", "idle.wakeups.agent", "idle.wakeups.watchman",
         "watchman", "(info)", None),
        ("6", "… without libdispatch's manager thread", "wake-ups", "idle.wakeups-own.agent", None, "—",
         "= 0", lambda a, r: a == 0),
        ("6", f"idle CPU time / {options.idle_seconds:.0f} s", "µs", "idle.cpu-us.agent", "idle.cpu-us.inotifywait",
         "inotifywait", "(info)", None),
        ("6", f"idle CPU time / {options.idle_seconds:.0f} s", "µs", "idle.cpu-us.agent", "idle.cpu-us.watchman",
         "watchman", "(info)", None),
        ("6", "RSS, tree watched", "MB", "idle.rss.agent", "idle.rss.inotifywait", "inotifywait",
         "≤ 40 MB", lambda a, r: a <= 40),
        ("6", "RSS, tree watched", "MB", "idle.rss.agent", "idle.rss.watchman", "watchman", "≤ 40 MB", lambda a, r: a <= 40),
        ("7", "writes/s, journal.fsync false", "/s", "socket.nofsync.rate.agent", "socket.nofsync.rate.echo",
         "echo floor", "≥ 20000/s", lambda a, r: a >= 20000),
        ("7", "write p99, journal.fsync false", "ms", "socket.nofsync.p99.agent", "socket.nofsync.p99.echo",
         "echo floor", "—", None),
        ("7", "writes/s, journal.fsync true", "/s", "socket.fsync.rate.agent", "socket.fsync.rate.echo",
         "echo floor", "≥ 2000/s", lambda a, r: a >= 2000),
        ("7", "write p99, journal.fsync true", "ms", "socket.fsync.p99.agent", "socket.fsync.p99.echo",
         "echo floor", "—", None),
        ("8", f"write {options.large_mb} MiB through the CLI", "MB/s", "large.write.agent", "large.peer", "cat FILE > FILE2",
         "≥ 200 MB/s", lambda a, r: a >= 200),
        ("8", f"cat {options.large_mb} MiB through the CLI", "MB/s", "large.cat.agent", "large.peer", "cat FILE > FILE2",
         "≥ 200 MB/s", lambda a, r: a >= 200),
        ("8", "agent peak RSS / content", "×", "large.rss.agent", None, "—", "≤ 3 ×", lambda a, r: a <= 3),
        ("9", f"edit p50, 1 char into {options.ranged_mb} MiB", "ms", "ranged.edit.p50", "ranged.trip.p50",
         "tiny `read` round trip", "≤ 0.3 ms", lambda a, r: a <= 0.3),
        ("9", f"edit p99, 1 char into {options.ranged_mb} MiB", "ms", "ranged.edit.p99", "ranged.trip.p99",
         "tiny `read` round trip", "(info)", None),
        ("9", f"journal after {options.journal_edits} edits", "MB", "ranged.journal", None, "—", "≤ 2 MB", lambda a, r: a <= 2),
        ("9", f"RSS the {options.ranged_mb} MiB file costs / file", "×", "ranged.rss.growth", None, "—", "≤ 3 ×",
         lambda a, r: a <= 3),
        ("9", "agent peak RSS / file (the idle agent included)", "×", "ranged.rss", None, "—", "(info)", None),
        ("9", f"patch {options.patch_hunks} hunks into {options.patch_lines} lines", "ms", "ranged.patch.agent",
         "ranged.patch.peer", "GNU patch", "≤ 20 ms", lambda a, r: a <= 20),
    ]
    return [row for row in rows if not options.only or int(row[0]) in options.only]


def history_rows(options):
    """Figure 11's rows (history.py): each against its peer of the same run."""
    versions = f"{options.history_versions:,} versions of 1 MB"
    return [
        ("11", "save cost, history on", "ms", "save.history-on.agent", "save.history-off.agent", "history off",
         "(info)", None),
        ("11", "save cost, history on", "ms", "save.history-on.agent", "save.history.floor", "durable-write floor",
         "(info)", None),
        ("11", "what history adds to a save (on − off)", "ms", "history.save.extra", None, "paired per save",
         "≤ 0.3 ms", lambda a, r: a <= 0.3),
        ("11", f"store, {versions}", "MB", "history.store.agent", "history.store.git", "git gc --aggressive pack",
         "≤ 1.0 × peer", lambda a, r: r <= 1.0),
        ("11", f"show p50, {versions}", "ms", "history.show.agent.p50", "history.show.git.p50", "git show HEAD~K:file",
         "≤ 20 ms", lambda a, r: a <= 20),
        ("11", f"show p99, {versions}", "ms", "history.show.agent.p99", "history.show.git.p99", "git show HEAD~K:file",
         "≤ 20 ms", lambda a, r: a <= 20),
        ("11", "show, the deepest delta chain", "ms", "history.show.agent.deepest", "history.show.git.deepest",
         "git show HEAD~K:file", "≤ 20 ms", lambda a, r: a <= 20),
        ("11", f"history PATH, {options.history_versions:,} versions", "ms", "history.list.agent", "history.list.git",
         "git log --oneline -- file", "≤ 30 ms", lambda a, r: a <= 30),
        ("11", "baseline CPU time (user+sys)", "ms", "history.baseline.cpu.agent", "history.baseline.cpu.tar",
         "tar -cf - TREE, zstd -3", "≤ 1.5 × peer", lambda a, r: r <= 1.5),
        ("11", "baseline store", "MB", "history.baseline.store.agent", "history.baseline.store.tar",
         "tar, zstd -3: the archive", "≤ 1.1 × peer", lambda a, r: r <= 1.1),
        ("11", "notice p50 during the baseline, settleMs 0", "ms", "history.baseline.latency.p50", None, "—",
         "≤ 2 ms", lambda a, r: a <= 2),
        ("11", f"RSS, {max(options.scaling_sizes):,} files (figure 10's tree), history on", "MB", "history.rss.on", "history.rss.off", "history off",
         "≤ peer + 16 MB", lambda a, r: a - a / r <= 16),
    ]


def git_rows(options):
    """Figure 12's rows (git_status.py, subscribers.py): each against its peer of the same run."""
    status = "git status, 10 files changed"
    floor = 'hook answering "nothing changed"'
    return [
        ("12", f"{status}, autosave fsmonitor", "ms", "git.status.autosave", "git.status.floor", floor,
         "≤ 1.3 × peer", lambda a, r: r <= 1.3),
        ("12", f"{status}, autosave fsmonitor", "ms", "git.status.autosave", "git.status.oracle",
         "hook answering the changed paths at once", "(info)", None),
        ("12", f"{status}, autosave fsmonitor", "ms", "git.status.autosave", "git.status.none", "no hook",
         "(info)", None),
        ("12", f"{status}, autosave fsmonitor", "ms", "git.status.autosave", "git.status.watchman",
         "fsmonitor-watchman.sample + watchman", "(info)", None),
        ("12", f"{status}, watchman's hook", "ms", "git.status.watchman", "git.status.floor", floor, "(info)", None),
        ("12", f"{status}, the oracle hook", "ms", "git.status.oracle", "git.status.floor", floor, "(info)", None),
        ("12", f"{status}, no hook", "ms", "git.status.none", "git.status.floor", floor, "(info)", None),
        ("12", "the hook alone, 10 changes, start to exit", "ms", "git.hook.autosave", "git.hook.floor",
         "the floor hook alone", "≤ 10 ms", lambda a, r: a <= 10),
        ("12", "the hook alone, 10 changes, start to exit", "ms", "git.hook.autosave", "git.hook.watchman",
         "fsmonitor-watchman.sample alone", "(info)", None),
        ("12", "notice p50, the 8th of 8 subscribers, settleMs 0", "ms", "subs.eight.p50", "subs.one.p50",
         "that subscriber alone", "≤ 1.5 ms", lambda a, r: a <= 1.5),
        ("12", "notice p99, the 8th of 8 subscribers, settleMs 0", "ms", "subs.eight.p99", "subs.one.p99",
         "that subscriber alone", "(info)", None),
        ("12", "notice p50, no subscriber: the agent's log line", "ms", "subs.log.p50", None,
         "figure 2's method, in the same blocks", "(info)", None),
        ("12", "agent CPU per change per subscriber (sed -i's writes)", "µs/change", "subs.cpu-us", None,
         "(8 subscribers − none) / (writes × 8)", "≤ 20 µs", lambda a, r: a <= 20),
        ("12", "… with figure 2's writes (in place)", "µs/change", "subs.cpu-us.in-place", None,
         "the same, less steady", "(info)", None),
        ("12", "inotify watches: git, 2 language servers, the CLI", "watches", "git.watches.agent",
         "git.watches.agent-alone", "the agent alone at ready", "= peer", lambda a, r: r == 1),
        ("12", "inotify watches: git, 2 language servers, the CLI", "watches", "git.watches.agent", "git.watches.peers",
         "watchman + a watcher per server", "(info)", None),
    ]


def number(value, unit):
    if value is None:
        return "n/a"
    if unit in ("ticks", "saves", "wake-ups", "µs", "watches"):
        return f"{value:.0f}"
    if unit == "/s":
        return f"{value:,.0f}"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def build_table(bench):
    header = ["#", "figure", "agent", "peer", "ratio", "target", "met"]
    lines = []
    rows = (table_rows(bench.options) + (bench.scaling.table_rows() if bench.scaling else [])
            + (history_rows(bench.options) if bench.wanted(11) else [])
            + (git_rows(bench.options) if bench.wanted(12) else []))
    for figure, what, unit, agent_key, peer_key, peer_name, target, check in rows:
        agent_values, peer_values = bench.samples.get(agent_key), bench.samples.get(peer_key) if peer_key else None
        agent = statistics.median(agent_values) if agent_values else None
        peer = statistics.median(peer_values) if peer_values else None
        if peer_key is None and figure == "4":
            peer, peer_text = None, f"{bench.options.coalesce_writes:,} writes"
        elif peer_key is None:
            peer, peer_text = None, peer_name
        else:
            reason = next((bench.unavailable[name] for name in bench.unavailable if name in peer_name), None)
            peer_text = (f"{number(peer, unit)} {unit} ({peer_name})" if peer is not None
                         else f"n/a ({peer_name}: {reason or 'not measured'})")
        ratio_value = None
        if figure == "4" and agent is not None:
            ratio_value = agent / bench.options.coalesce_writes
            ratio = f"{ratio_value:.5f}"
        elif agent is not None and peer:
            # Agent and peer are measured in the same run, so each run gives one ratio; their median
            # is steadier on a shared machine than the ratio of the two medians.
            paired = len(agent_values) == len(peer_values) and all(peer_values)
            ratio_value = (statistics.median(a / p for a, p in zip(agent_values, peer_values)) if paired
                           else agent / peer)
            ratio = f"{ratio_value:.2f}"
        elif agent is not None and peer == 0:
            ratio = "∞" if agent else "1"
        else:
            ratio = "—"
        if check is None or agent is None:
            met = "—"
        else:
            needs_peer = "peer" in target or "overhead" in target
            met = "—" if needs_peer and ratio_value is None else ("yes" if check(agent, ratio_value) else "no")
        agent_text = (f"{number(agent, unit)} {unit}" if agent is not None
                      else f"n/a ({bench.not_measured[agent_key]})" if agent_key in bench.not_measured else "not measured")
        lines.append([figure, what, agent_text, peer_text, ratio, target, met])
    return header, lines


def render_table(header, lines):
    widths = [max(len(str(row[index])) for row in [header] + lines) for index in range(len(header))]
    text = ["| " + " | ".join(str(cell).ljust(width) for cell, width in zip(header, widths)) + " |",
            "|" + "|".join("-" * (width + 2) for width in widths) + "|"]
    text += ["| " + " | ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) + " |" for row in lines]
    return "\n".join(text)


def write_results(bench, table, command):
    path = bench.options.results
    when = datetime.datetime.now(datetime.timezone.utc)
    raw = "\n".join(f"- `{key}`: " + ", ".join(str(value) if isinstance(value, int) or not isinstance(value, float)
                                               else number(value, "")
                                               for value in values)
                    for key, values in sorted(list(bench.samples.items()) + list(bench.extra.items())))
    configs = "\n".join(f"- figure {key}: {value}" for key, value in sorted(bench.configs.items()))
    unavailable = "\n".join(f"- {peer}: {reason}" for peer, reason in bench.unavailable.items()) or "- none"
    failures = "\n".join(f"- figure {figure}: {message}" for figure, message in bench.failures) or "- none"
    machine = "\n".join(f"- {key}: {value if not isinstance(value, list) else ' '.join(value)}"
                        for key, value in bench.machine.items())
    tree = (f"generated tree ({bench.options.dirs:,} directories, {bench.file_count:,} files)" if bench.file_count
            else "generated trees of figure 10 (see its section)")
    scaling_section = bench.scaling.results_section() + "\n" if bench.scaling else ""
    scaling_section += bench.history_section() + "\n" if bench.wanted(11) else ""
    scaling_section += bench.git_section() + "\n" if bench.wanted(12) else ""
    text = f"""# Benchmark results

Written by `bench/compare`; every figure is the median of {bench.options.runs} run(s) on the same
{tree}, each peer measured in the same run;
`ratio` is the median of the per-run ratios agent/peer (the runs are paired), `met` judges that ratio or the
agent's median against its target (figure 3: the agent's overhead over the floor, agent × (1 − 1/ratio)).

- date: {when:%Y-%m-%d %H:%M} UTC
- command: `{command}`

## Machine

{machine}

## Figures

{table}

{scaling_section}## Settings per figure

{configs}

Peers unavailable:
{unavailable}

Failed measurements:
{failures}

## Raw values (one per run)

{raw}
"""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as file:
        file.write(text)
    print(f"wrote {path}")
