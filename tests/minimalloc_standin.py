"""A stand-in for MiniMalloc, which is not on PyPI (nothing built from it is committed): its
command-line contract and, as a module, its Python bindings' API, with an exact decider by
first fit over every order (complete: pack an optimal packing's buffers bottom-up with first
fit and none rises). ``STANDIN_MODE`` makes it misbehave on purpose (see ``mode()``)."""

from __future__ import annotations

import stat
import sys
import textwrap
from pathlib import Path

STANDIN = textwrap.dedent('''
    """A stand-in for MiniMalloc: its CLI contract, its module API, an exact decider."""
    import csv, io, itertools, os, sys, time

    def mode():
        return os.environ.get("STANDIN_MODE", "exact")

    def first_fit(rows, order):
        placed, offsets = [], {}
        for i in order:
            lower, upper, size = rows[i][1:4]
            live = sorted((offsets[j], offsets[j] + rows[j][3]) for j in placed
                          if rows[j][1] < upper and lower < rows[j][2])  # half-open
            offset = 0
            for start, end in live:
                if offset + size <= start:
                    break
                offset = max(offset, end)
            offsets[i] = offset
            placed.append(i)
        return [offsets[i] for i in range(len(rows))]

    def decide(rows, capacity):
        """Offsets within capacity, None: none exist, "timeout": pretend to run out."""
        if mode().startswith("timeout_below=") and capacity < int(mode().split("=")[1]):
            return "timeout"
        if mode() == "overlap":
            return [0] * len(rows)
        if mode() == "poor":  # every buffer stacked, whatever the capacity asked
            return [sum(row[3] for row in rows[:i]) for i in range(len(rows))]
        for order in itertools.permutations(range(len(rows))):
            offsets = first_fit(rows, order)
            if max([o + r[3] for o, r in zip(offsets, rows)], default=0) <= capacity:
                return offsets
        return None

    def read(text):
        return [(r["id"], int(r["lower"]), int(r["upper"]), int(r["size"]))
                for r in csv.DictReader(io.StringIO(text))]

    BOOLEAN = ["validate", "canonical_only", "section_inference", "dynamic_ordering",
               "check_dominance", "unallocated_floor", "static_preordering",
               "dynamic_decomposition", "monotonic_floor", "hatless_pruning",
               "minimize_capacity", "only_check_args"]
    FLAGS = BOOLEAN + ["capacity", "input", "output", "timeout", "preordering_heuristics"]

    def flags_refused(args):
        """What absl says of unknown flags and bad booleans (None: all good)."""
        for name, value in args.items():
            if name not in FLAGS:
                return f"ERROR: Unknown command line flag '{name}'"
            if name in BOOLEAN and value not in ("true", "false"):
                return f"ERROR: Illegal value '{value}' specified for flag '{name}'"
        return None

    def main():
        args = dict(a[2:].split("=", 1) for a in sys.argv[1:])
        text = open(args["input"]).read() if "input" in args else ""
        if "STANDIN_LOG" in os.environ:
            with open(os.environ["STANDIN_LOG"], "a") as log:
                log.write(repr((args, text)) + "\\n")
        refused = flags_refused(args)
        if refused:
            print(refused, file=sys.stderr)
            sys.exit(1)
        if args.get("only_check_args") == "true":
            sys.exit(0)
        if mode() == "crash":
            print("Segmentation fault", file=sys.stderr)
            sys.exit(139)
        rows = read(text)
        answer = decide(rows, int(args["capacity"]))
        print("Elapsed time 0.001s", file=sys.stderr)
        if answer is None or answer == "timeout":
            code = "NOT_FOUND" if answer is None else "DEADLINE_EXCEEDED"
            print(code + ": Error encountered during search.", file=sys.stderr)
            sys.exit(1)
        with open(args["output"], "w") as out:
            out.write("id,lower,upper,size,offset\\n")
            for row, offset in zip(rows, answer):
                out.write(",".join(map(str, row + (offset,))) + "\\n")

    # The module API of MiniMalloc's Python bindings (the parts the wrapper uses).
    __version__ = "stand-in"

    class Problem:
        def __init__(self, rows):
            self.rows, self.capacity = rows, 0

    class Solution:
        def __init__(self, offsets):
            self.offsets = offsets

    class SolverParams:
        timeout = None
        check_dominance = True
        preordering_heuristics = ["WAT", "TAW", "TWA"]
        minimize_capacity = False

    SOLVED_WITH = []  # the SolverParams of every solve, as (name, value) pairs

    class Solver:
        def __init__(self, params):
            self.params = params

        def solve(self, problem):
            SOLVED_WITH.append({name: getattr(self.params, name) for name in dir(self.params)
                                if not name.startswith("_")})
            answer = decide(problem.rows, problem.capacity)
            if answer == "timeout":
                time.sleep(self.params.timeout)
                return None
            return None if answer is None else Solution(answer)

    def from_csv(text):
        return Problem(read(text))

    if __name__ == "__main__":
        main()
''')


def write_standin_binary(folder: Path) -> Path:
    """The stand-in as an executable file ``folder/minimalloc`` (for ``MINIMALLOC_BIN``)."""
    binary = folder / "minimalloc"
    binary.write_text(f"#!{sys.executable}\n" + STANDIN)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary
