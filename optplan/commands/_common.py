"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse

from optplan.model import Problem


def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


positive_int = _int_at_least(1)
non_negative_int = _int_at_least(0)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


RECORD_PROBLEMS = (Problem.OFFSETS, Problem.SHARED_OBJECTS)


def objective_unit(problem: Problem) -> str:
    """What a problem's objective counts: bytes of memory, or µs of latency for preload."""
    return "µs" if problem is Problem.PRELOAD else "bytes"


def add_problem_argument(parser: argparse.ArgumentParser, *, required: bool = True,
                         problems=tuple(Problem)) -> None:
    parser.add_argument("--problem", required=required,
                        choices=[p.cli_name for p in problems] + [p.value for p in problems
                                                                  if p.value != p.cli_name],
                        metavar="{" + ",".join(p.cli_name for p in problems) + "}",
                        help="which planning problem")


def add_solver_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("solver flags (every method accepts them; methods "
                                      "that have no use for them ignore them)")
    group.add_argument("--time-limit", type=positive_float, metavar="S",
                       help="wall-clock limit in seconds for exact methods")
    group.add_argument("--workers", type=positive_int, metavar="N",
                       help="solver threads (CP-SAT workers, MILP threads)")
    group.add_argument("--seed", type=non_negative_int, metavar="N", help="random seed")
