"""Start-up time of the ``optplan`` command: the target is < 0.5 s for ``--help`` and
``methods``.

    python bench/cli.py                 # 7 runs of each command
    python bench/cli.py --runs 15 --command "runs --help"

Each command runs as a fresh process (``python -m optplan ...``), as a user types it; the
table gives the median and the fastest wall time and the median CPU time (user + system, which
a loaded machine inflates less than the wall time), and the heavy libraries that the command
imported (none of matplotlib, pandas, ortools should appear for these commands).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = ("--help", "methods", "methods --json", "run --help", "report --help")
HEAVY = ("matplotlib", "pandas", "pyarrow", "ortools", "pulp", "networkx", "numpy")
PROBE = ("import sys, runpy; sys.argv = ['optplan'] + sys.argv[1:]\n"
         "try:\n    runpy.run_module('optplan', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & set(%r))), "
         "file=sys.stderr)" % (HEAVY,))


def time_command(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu


def heavy_imports(arguments: list[str]) -> str:
    """The heavy libraries loaded by the time the command has finished."""
    done = subprocess.run([sys.executable, "-c", PROBE, *arguments], check=True, text=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--command", action="append",
                        help="an optplan command line to time (repeatable; default: "
                             + ", ".join(COMMANDS) + ")")
    args = parser.parse_args(argv)
    commands = args.command or list(COMMANDS)
    interpreter = [time_command([sys.executable, "-c", "pass"])[0] for _ in range(args.runs)]
    print(f"python -c pass (the interpreter alone): median "
          f"{statistics.median(interpreter):.3f} s")
    print(f"{'command':<18} {'median s':>9} {'min s':>7} {'cpu s':>7}  imported")
    for command in commands:
        arguments = command.split()
        samples = [time_command([sys.executable, "-m", "optplan", *arguments])
                   for _ in range(args.runs)]
        walls = [wall for wall, _ in samples]
        cpus = [cpu for _, cpu in samples]
        print(f"{command:<18} {statistics.median(walls):>9.3f} {min(walls):>7.3f} "
              f"{statistics.median(cpus):>7.3f}  {heavy_imports(arguments) or '-'}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} cores (figures under load are not "
          "final)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
