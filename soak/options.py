"""The options both soaks take (`parse_arguments`), the replay command printed first, and
`run_soak`: checks the binary and the tools, runs a soak, prints its summary, keeps or removes
the work folder and gives the exit status (0 no violation, 1 violations or stopped, 2 could not
start)."""

import os
import random
import shutil
import subprocess
import sys

from agent import SoakError

# The release build of this checkout (/work/main/.build/release/autosave here).
DEFAULT_BINARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".build", "release", "autosave")


def replay_command(args, seed):
    parts = [sys.argv[0], "--seed", str(seed), "--binary", args.binary, "--files", str(args.files)]
    if args.rounds:
        parts += ["--rounds", str(args.rounds)]
    if args.minutes:
        parts += ["--minutes", str(args.minutes)]
    if getattr(args, "no_fsync", False):
        parts.append("--no-fsync")
    return " ".join(parts)


def parse_arguments(parser, files, smoke_files, smoke_rounds):
    """The options both soaks take (`parser` may have more), parsed, with --smoke's limits and a
    seed drawn when none was given."""
    parser.add_argument("--binary", default=DEFAULT_BINARY, help=f"the autosave binary (default {DEFAULT_BINARY})")
    parser.add_argument("--rounds", type=int, help="run this many rounds")
    parser.add_argument("--minutes", type=float, help="run rounds for this long")
    parser.add_argument("--seed", type=int, help="random seed (printed; a run is replayed from it)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"short mode for CI: {smoke_files} files, {smoke_rounds} rounds, 2 minutes at most")
    parser.add_argument("--files", type=int, default=files, help=f"files in the generated project (default {files})")
    parser.add_argument("--keep", action="store_true", help="keep the work folder even when the run passes")
    args = parser.parse_args()
    if args.smoke:
        args.files = min(args.files, smoke_files)
        args.minutes = args.minutes or 2.0
        args.rounds = args.rounds or smoke_rounds
    if not args.rounds and not args.minutes:
        args.rounds = 100
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2**31)
    return args


def run_soak(kind, args, name, stop=lambda soak: None):
    """Checks the binary and tools, runs a `kind` soak, prints its summary; `stop(soak)` runs last
    (the power-cut soak unmounts there). Returns the exit status: 0 with no violation, 1 with
    any (or when the soak could not go on), 2 when it could not start."""
    if not os.access(args.binary, os.X_OK):
        print(f"{name}: the autosave binary {args.binary} does not exist or is not executable "
              f"(build it with `swift build -c release`, or pass --binary)", file=sys.stderr)
        return 2
    for tool in ("git", "sed"):
        if shutil.which(tool) is None:
            print(f"{name}: `{tool}` is not installed; it is needed for the external edits", file=sys.stderr)
            return 2
    soak = kind(args)
    failed = False
    try:
        elapsed = soak.run()
        soak.summary(elapsed)
        failed = bool(soak.violations)
    except (SoakError, OSError, subprocess.SubprocessError, RuntimeError) as error:
        print(f"{name}: stopped in round {soak.round} (seed {soak.seed}): {error}", file=sys.stderr)
        if soak.agent.log_paths:
            print(f"{name}: agent log {soak.agent.log_paths[-1]}", file=sys.stderr)
        failed = True
    except KeyboardInterrupt:
        print(f"{name}: interrupted in round {soak.round} (seed {soak.seed})", file=sys.stderr)
        failed = True
    finally:
        if soak.agent.alive():
            soak.agent.thaw()
            soak.agent.process.kill()
            soak.agent.process.wait()
        stop(soak)
    if failed or args.keep:
        print(f"{name}: the project, config and logs are kept in {soak.workdir}", file=sys.stderr if failed else sys.stdout)
    else:
        shutil.rmtree(soak.workdir, ignore_errors=True)
    return 1 if failed else 0
