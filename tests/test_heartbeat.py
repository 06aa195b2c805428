"""The heartbeat of exact methods (issue 22, item 2) and the default time limit of the CLI."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from optplan.cli import main
from optplan.commands import _common
from optplan.exact import budget as budget_module
from optplan.exact.budget import DEFAULT_TIME_LIMIT, Budget, Trajectory
from optplan.exact.heartbeat import Heartbeat

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples" / "paper_example.json"


def test_a_heartbeat_line_shows_incumbent_bound_gap_and_elapsed(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(budget_module, "clock", lambda: now[0])
    trajectory = Trajectory(Budget(60.0), "cpsat offsets", "bytes")
    trajectory.record(1_250_000, 1_000_000)
    now[0] += 12.0
    stream = io.StringIO()
    Heartbeat(stream).beat()
    assert stream.getvalue() == ("optplan: cpsat offsets  12.0 s of 60 s  incumbent 1,250,000 "
                                 "bytes  bound 1,000,000  gap 25.00%\n")
    trajectory.as_tuple()          # the run ended: nothing more to show
    assert Heartbeat.line() == ""


def test_every_exact_run_shows_up_in_the_heartbeat_while_it_runs():
    from optplan import Instance, solve
    from optplan.exact.budget import active_trajectories

    seen = []

    def looking(instance):       # a warm-start heuristic, called while the method runs
        seen.extend(t.label for t in active_trajectories())
        return None

    instance = Instance.from_tuples([(0, 1, 4), (1, 2, 4)])
    for problem in ("shared-objects", "offsets"):
        for method in ("cpsat", "milp_highs", "milp_cbc", "brute_force"):
            solve(instance, method, problem, warm_start=[looking])
    assert "cpsat offsets" in seen and "brute_force shared-objects" in seen
    assert len(seen) == 8


def test_progress_flag_runs_the_heartbeat(monkeypatch, capsys):
    entered = []

    class Recording:
        def __enter__(self):
            entered.append(True)
            return self

        def __exit__(self, *exc):
            return None

    monkeypatch.setattr(_common, "Heartbeat", Recording)
    code = main(["solve", str(EXAMPLE), "--problem", "offsets",
                 "--method", "cpsat", "--progress", "--json"])
    assert code == 0 and entered == [True]


@pytest.mark.parametrize(("given", "method", "expected"), [
    (None, "cpsat", DEFAULT_TIME_LIMIT), (None, "greedy_by_size", None),
    ("none", "cpsat", None), ("7.5", "search", 7.5)])
def test_exact_methods_get_a_default_time_limit_on_the_command_line(given, method, expected):
    parser = argparse.ArgumentParser()
    _common.add_solver_flags(parser)
    args = parser.parse_args([] if given is None else ["--time-limit", given])
    assert _common.time_limit_of(args, method) == expected
