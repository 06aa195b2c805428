"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import sys

from optplan.errors import InputError
from optplan.exact.budget import DEFAULT_TIME_LIMIT
from optplan.exact.heartbeat import Heartbeat
from optplan.formats.minimalloc_csv import decimal_int
from optplan.model import MAX_VALUE, Instance
from optplan.params import MAX_FLAG
from optplan.problems import get_problem
from optplan.problems import problems as problem_table
from optplan.registry import get_method

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


def record_problems() -> list[str]:
    """The problems over usage records (their instances are :class:`~optplan.Instance`)."""
    return [name for name, spec in problem_table().items() if spec.instance_type is Instance]


def objective_unit(problem) -> str:
    """What a problem's objective counts (its spec's unit: bytes, or µs for preload)."""
    return get_problem(problem).unit


def add_problem_argument(parser: argparse.ArgumentParser, *, required: bool = True,
                         problems=None) -> None:
    """``--problem`` with the names on the problem table (or ``problems``) as choices; the
    older spellings the specs list are accepted too."""
    specs = [spec for name, spec in problem_table().items()
             if problems is None or name in problems]
    parser.add_argument("--problem", required=required,
                        choices=[s.name for s in specs] + [a for s in specs for a in s.aliases],
                        metavar="{" + ",".join(s.name for s in specs) + "}",
                        help="which planning problem")


def _time_limit(text: str) -> float:
    return math.inf if text.strip().lower() == "none" else positive_float(text)


def add_solver_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("solver flags (every method accepts them; methods "
                                      "that have no use for them ignore them)")
    group.add_argument("--time-limit", type=_time_limit, metavar="S",
                       help="wall-clock limit in seconds for an exact method's whole run "
                            f"(default {DEFAULT_TIME_LIMIT:g}; 'none': no limit)")
    group.add_argument("--workers", type=worker_count, metavar="N",
                       help="solver threads (CP-SAT workers, MILP threads)")
    group.add_argument("--seed", type=seed_value, metavar="N", help="random seed")


def _warm_start(text: str):
    lowered = text.strip().lower()
    if lowered in ("true", "on", "yes"):
        return True
    if lowered in ("false", "off", "no"):
        return False
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected true, false or heuristic names, got {text!r}")
    return names


def _parameter(text: str) -> tuple[str, object]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value      # a plain string, e.g. presolve=off
    return name.strip(), parsed


def add_exact_options(parser: argparse.ArgumentParser) -> None:
    """The rest of the exact methods' keyword contract (``warm_start``, ``initial_solution``,
    ``**solver_params``), and method parameters in general."""
    group = parser.add_argument_group("exact methods")
    group.add_argument("--warm-start", type=_warm_start, metavar="true|false|A,B,...",
                       help="the warm start: the problem's heuristics (true: the default, but "
                            "false for the peers), none (false), or these heuristics")
    group.add_argument("--initial-solution", metavar="FILE",
                       help="a solution to start from (the format of --output)")
    group.add_argument("--param", type=_parameter, action="append", default=[],
                       metavar="NAME=VALUE", help="a method or solver parameter (VALUE as JSON, "
                       "else text), e.g. --param presolve=off; repeatable")


def time_limit_of(args, method: str) -> float | None:
    """``--time-limit``, else :data:`~optplan.exact.budget.DEFAULT_TIME_LIMIT` for an exact
    method (``None``: no limit)."""
    if args.time_limit is None:
        return DEFAULT_TIME_LIMIT if get_method(method).kind == "exact" else None
    return None if math.isinf(args.time_limit) else args.time_limit


def add_progress_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--progress", action="store_true",
                        help="a heartbeat on stderr every few seconds (incumbent, bound, gap, "
                             "elapsed) while an exact method runs; on by default when stderr "
                             "is a terminal")


def heartbeat(args) -> contextlib.AbstractContextManager:
    """The heartbeat when asked for (or stderr is a terminal), else nothing."""
    if args.progress or sys.stderr.isatty():
        return Heartbeat()
    return contextlib.nullcontext()


def method_parameters(args) -> dict:
    """The parameters of :func:`add_exact_options` as keywords for :func:`optplan.solve`."""
    params = dict(args.param)
    if args.warm_start is not None:
        params["warm_start"] = args.warm_start
    if args.initial_solution is not None:
        params["initial_solution"] = args.initial_solution
    return params


def instance_options(spec, *, alignment=None, budget=None) -> tuple[dict, dict]:
    """The instance options given on the command line, split into those the loader takes
    (``alignment``) and those :func:`~optplan.solve` takes (``budget``); an option the
    problem has no use for is an error."""
    for name, value in (("alignment", alignment), ("budget", budget)):
        if value is not None and name not in spec.options:
            takers = [s.name for s in problem_table().values() if name in s.options]
            raise InputError(f"--{name} applies to the {', '.join(takers)} problem"
                             f"{'s' if len(takers) > 1 else ''} only", field=name)
    load = {"alignment": alignment} if "alignment" in spec.options else {}
    return load, ({"budget": budget} if budget is not None else {})
