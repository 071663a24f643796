"""Child processes and what is read from them: Children (every process the benchmark starts, all
stopped on the way out), LineReader (a child's output, line by line, each stamped with the time it
was read), log_event (a matcher for the agent's JSON log lines), and the /proc readers of CPU time
and memory (cpu_ticks, cpu_ms, peak_rss_kib, rss_kib, idle_cost).
"""
import collections
import ctypes
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time

from .common import BenchError, now_ns


# ---------------------------------------------------------------------------------------------
# Child processes and their output


def _die_with_parent():
    """Run in each child before exec: SIGKILL it if this script dies without cleaning up."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Children:
    """Every process this script starts, so that all of them are stopped on the way out."""

    def __init__(self):
        self.processes = []

    def spawn(self, name, argv, **options):
        options.setdefault("stdin", subprocess.DEVNULL)
        try:
            process = subprocess.Popen(argv, preexec_fn=_die_with_parent, **options)
        except OSError as error:
            raise BenchError(f"cannot start {name} ({shlex.join(argv)}): {error}") from error
        process.bench_name = name
        self.processes.append(process)
        return process

    def stop(self, process, timeout=30.0, sig=signal.SIGTERM):
        """Signals the process and waits for it; SIGKILL after `timeout`. Returns the exit status."""
        if process.poll() is None:
            try:
                process.send_signal(sig)
                return process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise BenchError(f"{process.bench_name} (pid {process.pid}) did not exit within {timeout:.0f} s of "
                                 f"signal {sig}; killed it")
        return process.returncode

    def stop_all(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                try:
                    process.terminate()
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                except OSError:
                    pass


class LineReader:
    """Reads lines from a pipe or socket on a thread, stamping each with the time it was read.

    A thread (not select in the caller) so that a pipe never fills while the caller is busy; the
    caller blocks in a queue while it waits, so the reading thread runs at once when data arrives.
    """

    def __init__(self, fd, name):
        self.fd = fd
        self.name = name
        self.lines = queue.Queue()
        self.tail = collections.deque(maxlen=12)
        self.closed = False
        threading.Thread(target=self._read, name=f"read {name}", daemon=True).start()

    def _read(self):
        pending = []
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                chunk = b""
            stamp = now_ns()
            if not chunk:
                self.lines.put((None, stamp))
                return
            parts = chunk.split(b"\n")
            if len(parts) == 1:
                pending.append(chunk)
                continue
            pending.append(parts[0])
            self.lines.put((b"".join(pending).decode("utf-8", "replace"), stamp))
            for part in parts[1:-1]:
                self.lines.put((part.decode("utf-8", "replace"), stamp))
            pending = [parts[-1]] if parts[-1] else []

    def recent(self):
        return "\n    ".join(line[:300] for line in self.tail) or "(nothing)"

    def next(self, deadline, what, timeout):
        """The next line and when it was read; BenchError naming `what` on timeout or EOF."""
        if self.closed:
            raise BenchError(f"{self.name} had closed its output while waiting for {what}; last lines:\n    {self.recent()}")
        remaining = (deadline - now_ns()) / 1e9
        try:
            line, stamp = self.lines.get(timeout=max(0.0, remaining))
        except queue.Empty:
            raise BenchError(f"timed out after {timeout:.1f} s waiting for {what} from {self.name}; "
                             f"last lines:\n    {self.recent()}") from None
        if line is None:
            self.closed = True
            raise BenchError(f"{self.name} closed its output while waiting for {what}; last lines:\n    {self.recent()}")
        self.tail.append(line)
        return line, stamp

    def wait_for(self, match, timeout, what):
        """Skips lines until match(line) returns a value; returns (value, read time)."""
        deadline = now_ns() + int(timeout * 1e9)
        while True:
            line, stamp = self.next(deadline, what, timeout)
            value = match(line)
            if value is not None:
                return value, stamp

    def collect(self, seconds, match):
        """Every value match() returns for lines read during the next `seconds`."""
        deadline = now_ns() + int(seconds * 1e9)
        found = []
        while True:
            remaining = (deadline - now_ns()) / 1e9
            if remaining <= 0:
                return found
            try:
                line, stamp = self.lines.get(timeout=remaining)
            except queue.Empty:
                return found
            if line is None:
                self.lines.put((None, stamp))
                return found
            self.tail.append(line)
            value = match(line)
            if value is not None:
                found.append((value, stamp))

    def drain(self):
        """Discards what has been read so far."""
        while True:
            try:
                line, stamp = self.lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                self.lines.put((None, stamp))
                return
            self.tail.append(line)


def log_event(name, **fields):
    """A matcher for the agent's JSON log: the parsed line when `event` and `fields` match."""

    def match(line):
        if not line.startswith("{"):
            return None
        try:
            record = json.loads(line)
        except ValueError:
            return None
        if record.get("event") != name:
            return None
        return record if all(record.get(key) == value for key, value in fields.items()) else None

    return match


def cpu_ticks(pid):
    """utime + stime of every thread of `pid`, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError as error:
        raise BenchError(f"cannot read /proc/{pid}/stat: {error}") from error
    return int(fields[11]) + int(fields[12])


def cpu_ms(pid):
    """CPU time (user + system) `pid` has used so far, in ms."""
    return cpu_ticks(pid) * 1000 / os.sysconf("SC_CLK_TCK")


def status_kib(pid, field):
    """A kB line of /proc/PID/status (`VmRSS`, `VmHWM`), in KiB."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError as error:
        raise BenchError(f"cannot read /proc/{pid}/status: {error}") from error
    raise BenchError(f"/proc/{pid}/status has no {field} line")


def peak_rss_kib(pid):
    """VmHWM: the most the process has held resident since it started."""
    return status_kib(pid, "VmHWM")


def rss_kib(pid):
    """VmRSS: what the process holds resident now."""
    return status_kib(pid, "VmRSS")


def thread_runs(pid):
    """Each thread of `pid` as {tid: (name, ns on a CPU, times it was put on a CPU)}, from
    /proc/PID/task/TID/schedstat: exact where ticks are sampled 100 times a second. A thread that
    has just ended is left out."""
    runs = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError as error:
        raise BenchError(f"cannot list /proc/{pid}/task: {error}") from error
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm, open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                name = comm.read().strip()
                on_cpu_ns, _, slices = (int(field) for field in stat.read().split())
        except (OSError, ValueError):
            continue
        runs[tid] = (name, on_cpu_ns, slices)
    return runs


def wakeups_by_thread(before, after):
    """{thread name: (wake-ups, µs on a CPU)} between two `thread_runs`, threads of one name summed;
    a thread started in between counts from zero."""
    woken = {}
    for tid, (name, on_cpu_ns, slices) in after.items():
        _, earlier_ns, earlier_slices = before.get(tid, (name, 0, 0))
        if slices > earlier_slices:
            count, microseconds = woken.get(name, (0, 0))
            woken[name] = (count + slices - earlier_slices, microseconds + (on_cpu_ns - earlier_ns) / 1000)
    return woken


# libdispatch's manager thread (Swift concurrency's runtime on Linux): it runs a one-second timer
# that watches the worker pool from the moment the first worker starts, compiled in
# (HAVE_DISPATCH_WORKQ_MONITORING), whatever the program does.
DISPATCH_MANAGER_THREAD = "-qos.overcommit"


def idle_cost(process, quiet, window, name, log=None):
    """CPU ticks and wake-ups over `window` seconds after `quiet` seconds of nothing, and VmRSS at
    the end. `wakeups_own` leaves libdispatch's manager thread out."""

    def alive(when):
        if process.poll() is not None:
            tail = f"; last lines:\n    {log.recent()}" if log else ""
            raise BenchError(f"{name} (pid {process.pid}) exited with status {process.returncode} {when}{tail}")

    time.sleep(quiet)
    alive("before the idle window")
    before = cpu_ticks(process.pid)
    runs_before = thread_runs(process.pid)
    time.sleep(window)
    rss = rss_kib(process.pid) / 1024 if process.poll() is None else None
    after = cpu_ticks(process.pid)
    woken = wakeups_by_thread(runs_before, thread_runs(process.pid))
    alive("during the idle window")
    return {
        "ticks": after - before, "rss_mb": rss, "woken": woken,
        "wakeups": sum(count for count, _ in woken.values()),
        "wakeups_own": sum(count for thread, (count, _) in woken.items() if thread != DISPATCH_MANAGER_THREAD),
        "cpu_us": sum(microseconds for _, microseconds in woken.values()),
    }
