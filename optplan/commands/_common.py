"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import math
import re

from optplan.formats.minimalloc_csv import decimal_int
from optplan.model import MAX_VALUE, Problem
from optplan.params import MAX_FLAG

_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _int_within(minimum: int, maximum: int = MAX_VALUE):
    def parse(text: str) -> int:
        try:
            value = decimal_int(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"must be in {minimum}..{maximum}, got {value}")
        return value

    return parse


positive_int = _int_within(1)
seed_value = _int_within(0, MAX_FLAG)
worker_count = _int_within(1, MAX_FLAG)


def positive_float(text: str) -> float:
    """A finite number > 0 written in ASCII (``float()`` alone takes ``inf`` and ``１``)."""
    if not _NUMBER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    value = float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
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
    group.add_argument("--workers", type=worker_count, metavar="N",
                       help="solver threads (CP-SAT workers, MILP threads)")
    group.add_argument("--seed", type=seed_value, metavar="N", help="random seed")
