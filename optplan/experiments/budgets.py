"""The budgets a preload instance is swept over in an experiment grid (the ``[preload]`` table).

A counted sweep (``budgets = 8``) spans each instance's minimum feasible budget
(:func:`optplan.preload.pareto.minimum_budget` without a latency target) to its no-pressure
budget (:func:`~optplan.preload.pareto.no_pressure_budget`: the smallest budget found at which
the latency meets the unlimited-memory bound), evenly or geometrically spaced by
:func:`~optplan.preload.pareto.budget_sweep` — the sweep of ``bench/preload.py``. Both endpoints
are CP-SAT solves under a time limit. When one is not proven, its best found budget is used:
the minimum is then still a feasible budget and the no-pressure budget still reaches the
latency bound, so the sweep stays meaningful; the endpoint's status says which it was. With
``slicing = true`` the minimum is the one with layer slicing allowed and the minimum without
slicing is one more budget of the sweep (when it is below the no-pressure budget).

A time-limited solve may find another budget next time, and a job's ``job_id`` includes its
budget, so the endpoints are computed once per instance and kept in a :class:`BudgetCache`;
the runner stores it as ``RUN/preload_budgets.json`` and a resumed run reads it back.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from optplan.errors import InputError

__all__ = ["SweepEndpoints", "BudgetCache", "sweep_budgets", "CACHE_FILE"]

CACHE_FILE = "preload_budgets.json"


@dataclass(frozen=True)
class SweepEndpoints:
    """The two ends of one instance's counted sweep, with the CP-SAT status of each."""

    minimum: int
    minimum_status: str
    no_pressure: int
    no_pressure_status: str
    time_limit: float
    workers: int
    seed: int
    slicing: bool = False
    unsliced_minimum: int | None = None
    unsliced_minimum_status: str | None = None


class BudgetCache:
    """Sweep endpoints by instance identity (``key@digest``), optionally backed by a file.

    Entries computed with other settings (time limit, workers, seed, slicing) are recomputed.
    """

    def __init__(self, entries: dict[str, SweepEndpoints] | None = None):
        self.entries = dict(entries or {})
        self.computed: list[str] = []  # identities computed in this process (for notes)

    @classmethod
    def read(cls, path: str | Path) -> "BudgetCache":
        """The cache in ``path`` (an empty one when the file does not exist)."""
        path = Path(path)
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = {identity: SweepEndpoints(**fields) for identity, fields in data.items()}
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, AttributeError) as error:
            raise InputError(f"unreadable preload budget cache: {error}", file=str(path)) from None
        return cls(entries)

    def write(self, path: str | Path) -> None:
        """Write the cache to ``path`` atomically (nothing when it is empty)."""
        if not self.entries:
            return
        path = Path(path)
        text = json.dumps({k: asdict(v) for k, v in sorted(self.entries.items())}, indent=1)
        temporary = path.with_name(path.name + f".tmp-{os.getpid()}")
        temporary.write_text(text + "\n", encoding="utf-8")
        os.replace(temporary, path)

    def endpoints(self, identity: str, load, *, time_limit: float, workers: int,
                  seed: int, slicing: bool = False) -> SweepEndpoints:
        """The endpoints of ``identity``; ``load()`` gives the instance when they must be
        computed."""
        cached = self.entries.get(identity)
        if cached is not None and (cached.time_limit, cached.workers, cached.seed,
                                   cached.slicing) == (time_limit, workers, seed, slicing):
            return cached
        found = _solve_endpoints(load(), time_limit=time_limit, workers=workers, seed=seed,
                                 slicing=slicing)
        self.entries[identity] = found
        self.computed.append(identity)
        return found


def _solve_endpoints(instance, *, time_limit: float, workers: int, seed: int,
                     slicing: bool = False) -> SweepEndpoints:
    from optplan.preload.pareto import minimum_budget, no_pressure_budget

    flags = {"time_limit": time_limit, "workers": workers, "seed": seed}
    low = minimum_budget(instance, slicing=slicing, **flags)
    high = no_pressure_budget(instance, **flags)
    for name, outcome in (("minimum", low), ("no-pressure", high)):
        if outcome.budget is None:
            raise InputError(f"no {name} budget for preload instance {instance.name!r} "
                             f"({outcome.status.value})", field="preload.budgets")
    unsliced = minimum_budget(instance, **flags) if slicing else None
    return SweepEndpoints(minimum=int(low.budget), minimum_status=low.status.value,
                          no_pressure=int(high.budget), no_pressure_status=high.status.value,
                          time_limit=time_limit, workers=workers, seed=seed, slicing=slicing,
                          unsliced_minimum=None if unsliced is None or unsliced.budget is None
                          else int(unsliced.budget),
                          unsliced_minimum_status=None if unsliced is None
                          else unsliced.status.value)


def sweep_budgets(sweep, identity: str, load, cache: BudgetCache, *, workers: int,
                  seed: int) -> tuple[int, ...]:
    """The budgets of one preload instance under ``sweep`` (a
    :class:`~optplan.experiments.config.PreloadSweep`), smallest first."""
    from optplan.preload.pareto import budget_sweep

    if sweep.count is None:
        return tuple(sweep.budgets)
    ends = cache.endpoints(identity, load, time_limit=sweep.time_limit, workers=workers,
                           seed=seed, slicing=sweep.slicing)
    if ends.minimum >= ends.no_pressure:  # no memory pressure at the minimum budget
        return (ends.minimum,)
    budgets = budget_sweep(ends.minimum, ends.no_pressure, sweep.count, sweep.spacing)
    if ends.unsliced_minimum is not None and ends.unsliced_minimum < ends.no_pressure:
        budgets.append(ends.unsliced_minimum)
    return tuple(sorted(set(budgets)))
