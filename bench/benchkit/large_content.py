"""Figure 8: large content. `autosave write` of a --large-mb text file from a file, then
`autosave cat` into a file, end to end through the CLI, in MB/s, against `cat` copying the same
file; the agent's peak RSS over the content.
"""
import filecmp
import os
import subprocess

from .agent import AgentRun
from .common import BenchError, ms, now_ns, write_text_lines
from .processes import peak_rss_kib


class LargeContentFigure:
    """Figure 8: methods of Bench (suite.py), which is made of the figures' classes; `self` is a Bench."""

    # -- figure 8: large content --------------------------------------------------------------------

    def large_content(self, run):
        root = self.fresh_dir("large")
        source = os.path.join(self.work, "large-in.txt")
        size = self.options.large_mb << 20
        if not os.path.exists(source):
            write_text_lines(source, size=size)
        size = os.path.getsize(source)
        agent = AgentRun(self, root, {"autosave": {"delayMs": 60_000, "maxDelayMs": 3_600_000}}, f"large-{run}")
        self.configs["8"] = f"{size / 1e6:.1f} MB of text lines, write --from FILE, cat > FILE, the peer `cat FILE > FILE2`"
        out, peer_out = os.path.join(self.work, "large-out.txt"), os.path.join(self.work, "large-peer.txt")
        try:
            agent.start()
            base = peak_rss_kib(agent.process.pid)
            started = now_ns()
            self.cli(agent, ["write", "big.txt", "--from", source])
            wrote = ms(now_ns() - started)
            started = now_ns()
            with open(out, "wb") as output:
                self.cli(agent, ["cat", "big.txt"], stdout=output)
            read = ms(now_ns() - started)
            peak = peak_rss_kib(agent.process.pid)
        finally:
            agent.stop()
        started = now_ns()
        with open(peer_out, "wb") as output:
            subprocess.run(["cat", source], stdout=output, check=True)
        copied = ms(now_ns() - started)
        if not filecmp.cmp(source, out, shallow=False):
            raise BenchError("autosave cat did not print what autosave write sent")
        for path in (out, peer_out):
            os.remove(path)
        megabytes = size / 1e6
        self.record("large.write.agent", megabytes / wrote * 1000)
        self.record("large.cat.agent", megabytes / read * 1000)
        self.record("large.peer", megabytes / copied * 1000)
        self.record("large.rss.agent", peak / 1024 / megabytes)
        self.record("large.rss.base", base / 1024 / megabytes)
        print(f"  large content: write {megabytes / wrote * 1000:.0f} MB/s, cat {megabytes / read * 1000:.0f} MB/s, "
              f"peer cat {megabytes / copied * 1000:.0f} MB/s, peak RSS {peak / 1024:.0f} MB", flush=True)
