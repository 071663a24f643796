"""The machine a run is measured on: describe_machine (CPU, memory, kernel, the temp dir's file
system, inotify limits, the agent binary and the peers' versions), printed at the start and written
to results.md; filesystem_of, which figure 10 also uses for its tree cache.
"""
import datetime
import hashlib
import os
import shutil
import subprocess
import sys

from .common import HERE


def run_text(argv):
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (result.stdout or result.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"


def filesystem_of(path):
    """The mount holding `path` (longest mount point that prefixes it): type, mount and superblock
    options, and for ext4 whether it keeps a journal (without one, fsync costs a fraction and every
    freed inode is skipped by file creations for minutes, which shapes figures 3 and 5)."""
    best = ("?", "?", "", "", "")
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            mount_point, options = fields[4], fields[5]
            separator = fields.index("-")
            fstype, source, super_options = fields[separator + 1:separator + 4]
            if (path == mount_point or path.startswith(mount_point.rstrip("/") + "/")) and len(mount_point) >= len(best[2]):
                best = (fstype, options, mount_point, source, super_options)
    fstype, options, mount_point, source, super_options = best
    text = f"{fstype} ({options}; {super_options}) mounted on {mount_point}"
    if fstype == "ext4":
        try:
            with open(f"/sys/fs/ext4/{os.path.basename(source)}/journal_task") as task:
                text += ", no journal" if task.read().strip() == "<none>" else ", with a journal"
        except OSError:
            pass
    return text


def describe_machine(bench):
    model = "?"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as meminfo:
        memory = next(line.split()[1] for line in meminfo if line.startswith("MemTotal"))
    digest = hashlib.sha256()
    with open(bench.binary, "rb") as binary:
        for block in iter(lambda: binary.read(1 << 20), b""):
            digest.update(block)
    repository = os.path.dirname(HERE)
    head = run_text(["git", "-C", repository, "rev-parse", "--short", "HEAD"])
    dirty = run_text(["git", "-C", repository, "status", "--porcelain", "--untracked-files=no"])
    built = datetime.datetime.fromtimestamp(os.path.getmtime(bench.binary), datetime.timezone.utc)
    watchman = run_text(["watchman", "--version"]) if shutil.which("watchman") else "not installed"
    inotifywait = run_text(["inotifywait", "--help"]).splitlines()[0] if shutil.which("inotifywait") else "not installed"
    return {
        "cpu": f"{model}, {os.cpu_count()} cores",
        "memory": f"{int(memory) // 1024} MiB",
        "kernel": f"{os.uname().sysname} {os.uname().release}",
        # Paths as the repo names them: results are read on other machines.
        "temp dir fs": f"{os.path.dirname(bench.work)}: {filesystem_of(bench.work)}",
        "inotify limits": f"max_user_watches {open('/proc/sys/fs/inotify/max_user_watches').read().strip()}, "
                          f"max_queued_events {open('/proc/sys/fs/inotify/max_queued_events').read().strip()}",
        "agent": f"{os.path.relpath(bench.source_binary, os.path.dirname(HERE))} (sha256 {digest.hexdigest()[:12]}, built {built:%Y-%m-%d %H:%M} UTC, "
                 f"repo HEAD {head}{' + uncommitted changes' if dirty else ''})",
        "inotifywait": inotifywait,
        "watchman": watchman,
        "cc": run_text(["cc", "--version"]).splitlines()[0],
        "python": sys.version.split()[0],
        "load before": open("/proc/loadavg").read().split()[:3],
    }
