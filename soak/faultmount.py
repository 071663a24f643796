"""The power switch of the power-cut soak: a faultfs process (`faultfs/faultfs.py`, a FUSE file
system that keeps apart what fsync made durable) mounting the backing folder, and told to cut the
power (drop what was volatile); and why it cannot be mounted on this machine, when it cannot."""

import os
import shutil
import signal
import subprocess
import time

from agent import SoakError, tail

HERE = os.path.dirname(os.path.abspath(__file__))
FAULTFS = os.path.join(os.path.dirname(HERE), "faultfs", "faultfs.py")


def why_not_here():
    """Why a FUSE file system cannot be mounted here, or None."""
    if os.geteuid() != 0:
        return "faultfs mounts a file system: run as root"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    if subprocess.run(["/usr/bin/python3", "-c", "import pyfuse3"], capture_output=True).returncode != 0:
        return "pyfuse3 is not installed for /usr/bin/python3 (Debian: python3-pyfuse3)"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (Debian: fuse3)"
    return None


class FaultMount:
    """A faultfs process: mounts `backing` on `mountpoint`; `cut()` cuts the power."""

    def __init__(self, workdir, backing, mountpoint, seed):
        self.seed = seed
        self.backing = backing
        self.mountpoint = mountpoint
        self.state = os.path.join(workdir, "faultfs.state")
        self.log_path = os.path.join(workdir, "logs", "faultfs.log")
        self.process = None
        self.generation = 0

    def start(self):
        os.makedirs(self.mountpoint, exist_ok=True)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(["/usr/bin/python3", FAULTFS, self.backing, self.mountpoint, "--state", self.state,
                                         "--seed", str(self.seed)],
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        self.wait_for_generation(0)

    def wait_for_generation(self, generation):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SoakError(f"faultfs exited with status {self.process.returncode}; log {self.log_path}:\n{tail(self.log_path)}")
            try:
                with open(self.state) as handle:
                    fields = handle.read().split()
                if fields[1] == str(generation) and os.path.ismount(self.mountpoint):
                    self.generation = generation
                    return
            except (OSError, IndexError):
                pass
            time.sleep(0.01)
        raise SoakError(f"faultfs did not mount generation {generation} within 120 s; log {self.log_path}:\n{tail(self.log_path)}")

    def cut(self, torn):
        """Drops what was volatile (all of it, or with `torn` what follows a random prefix)."""
        self.process.send_signal(signal.SIGUSR2 if torn else signal.SIGUSR1)
        self.wait_for_generation(self.generation + 1)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if os.path.ismount(self.mountpoint):
            subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], capture_output=True)
