"""bench/benchkit/scaling_plot.py — draws figure 10's plot (scaling.py), in a python3 that has matplotlib.

The figure hands its data to `draw_plot_in_subprocess`, which runs this file as a script,
`scaling_plot.py plot PNG` with the data as JSON on stdin, under Debian's /usr/bin/python3 (which
gets matplotlib from apt): the python3 that runs the benchmark need not have it.
"""
import json
import os
import shlex
import subprocess
import sys

# Debian's python3, which `make bench` gives python3-matplotlib; the plot is drawn there.
PLOT_PYTHON = "/usr/bin/python3"
# The exit status of `scaling_plot.py plot` when matplotlib cannot be imported: the plot is skipped, not failed.
EXIT_NO_MATPLOTLIB = 3


class PlotFailed(Exception):
    """Drawing the plot failed for another reason than a missing matplotlib (a bug to fix)."""


def count_text(count):
    """A file count as the plot's axis says it: 10k, 1M, 2.5k."""
    for unit, suffix in ((1_000_000, "M"), (1000, "k")):
        if count >= unit:
            return f"{count / unit:g}{suffix}"
    return str(count)


def draw_plot_in_subprocess(data, path, python=PLOT_PYTHON):
    """Runs this file as `PYTHON scaling_plot.py plot PATH` with `data` as JSON on stdin. Returns None when
    the plot was drawn, or why it was skipped (no such python, no matplotlib); PlotFailed when the
    drawing itself failed."""
    if not os.path.exists(python):
        return f"{python} does not exist (Debian's python3, with python3-matplotlib, draws the plot)"
    # -E: pyenv's PYTHON* variables must not steer Debian's interpreter.
    argv = [python, "-E", os.path.abspath(__file__), "plot", path]
    try:
        result = subprocess.run(argv, input=json.dumps(data), capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise PlotFailed(f"{python} took over 120 s to draw {path}; stopped it") from None
    except OSError as error:
        return f"cannot run {python}: {error}"
    if result.returncode == EXIT_NO_MATPLOTLIB:
        return result.stderr.strip()
    if result.returncode != 0:
        raise PlotFailed(f"drawing {path} with {shlex.join(argv)} failed (status {result.returncode}): "
                         f"{result.stderr.strip()[-800:]}")
    return None


def plot(data, path):
    """Two panels side by side, log-log, one labelled line per tool: set-up time against files, and
    RSS against files (with the agent's RSS target). Written to a temporary file, then renamed."""
    import matplotlib
    matplotlib.use("Agg")  # no display: draw to a file
    import matplotlib.pyplot as pyplot
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, NullLocator

    figure, (setup_axes, rss_axes) = pyplot.subplots(1, 2, figsize=(12, 5.2), dpi=110)
    panels = ((setup_axes, "setup", "watch set-up", "ms (log)",
               lambda v: f"{v / 1000:.3g} s" if v >= 1000 else f"{v:.3g} ms"),
              (rss_axes, "rss", f"RSS after set-up and {data['quiet_s']:g} s of quiet", "MB (log)",
               lambda v: f"{v:.3g} MB"))
    for axes, quantity, title, unit, text in panels:
        for tool in data["tools"]:
            points = tool[quantity]
            if not points:
                continue
            files, values = zip(*points)
            axes.plot(files, values, marker="o", color=tool["colour"], label=tool["label"],
                      linestyle=tool.get("linestyle", "-"))
            for x, y in points:
                # Where another tool's value at the same size is within 30 %, the higher label goes
                # above its point and the lower below, so that the two do not print over each other.
                near = [other for peer in data["tools"] for size, other in peer[quantity]
                        if size == x and peer is not tool and y / 1.3 < other < y * 1.3]
                label_y = -4 if not near else (-1 if y >= max(near) else -15)
                axes.annotate(text(y), (x, y), textcoords="offset points", xytext=(6, label_y), fontsize=8,
                              color=tool["colour"])
        if quantity == "rss":
            axes.axhline(data["rss_target_mb"], color="tab:blue", linestyle=":", linewidth=1,
                         label=f"agent target ≤ {data['rss_target_mb']} MB")
            if data.get("deep_rss_target_mb"):
                axes.axhline(data["deep_rss_target_mb"], color="tab:blue", linestyle="-.", linewidth=1,
                             label=f"agent target, deep tree ≤ {data['deep_rss_target_mb']} MB")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.margins(y=0.1)  # room for a label set below the lowest point
        # Plain numbers (40, 200, 1000), not 4×10¹; minor ticks labelled only where the axis spans little.
        axes.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        axes.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.5)))
        axes.xaxis.set_major_locator(FixedLocator(data["sizes"]))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: count_text(int(round(x)))))
        axes.xaxis.set_minor_locator(NullLocator())
        if data["sizes"]:
            # Room on the right for the last points' values.
            axes.set_xlim(min(data["sizes"]) / 1.5, max(data["sizes"]) * 2.5)
        axes.set_title(title)
        axes.set_xlabel("files watched (log)")
        axes.set_ylabel(unit)
        axes.grid(True, which="major", alpha=0.4)
        axes.grid(True, which="minor", alpha=0.15)
    # One legend for both panels (the same tools), below them, where it hides no point or value;
    # tight_layout leaves it and the title their strips (matplotlib 3.6, Debian 12's, has no "outside").
    # The set-up panel has every tool (the floor has no RSS); the RSS panel adds the target line.
    handles, labels = setup_axes.get_legend_handles_labels()
    for handle, label in zip(*rss_axes.get_legend_handles_labels()):
        if label not in labels:
            handles.append(handle)
            labels.append(label)
    # Two shapes give up to ten entries: at most four to a row, so none is cut off at the edges.
    columns = min(len(labels), 4)
    rows = -(-len(labels) // columns)
    figure.legend(handles, labels, loc="lower center", ncol=columns, fontsize=9, frameon=False)
    figure.suptitle(data["title"], fontsize=11)
    figure.tight_layout(rect=(0, 0.03 + 0.04 * rows, 1, 0.96))
    temporary = path + ".tmp.png"
    figure.savefig(temporary)
    os.replace(temporary, path)


def main(argv):
    """`scaling_plot.py plot PNG`: draws figure 10's plot from the JSON on stdin (see ScalingFigure.plot_data)."""
    if len(argv) != 2 or argv[0] != "plot":
        print("usage: scaling_plot.py plot PNG < data.json (bench/compare runs it; the figure itself runs from there)",
              file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401 (only whether it is there)
    except ImportError as error:
        print(f"matplotlib is not installed for {sys.executable} ({error}); `make bench` installs it "
              f"(Debian package python3-matplotlib)", file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    plot(json.load(sys.stdin), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
