"""Objectives (b) and (c) of preload-aware planning (issue 8): the minimum budget at which a
latency target is met, and the latency/budget Pareto curve.

* :func:`minimum_budget` — objective (b) with an exact model (``cpsat`` or ``milp_highs``);
  without a target it is the minimum feasible budget (the optimal packing when nothing is
  preloaded: every preload or pin only lengthens residence intervals); with ``slicing=True``
  over every layer slicing too (issue 21).
* :func:`no_pressure_budget` — the smallest budget whose optimal latency equals the
  unlimited-memory bound (objective (b) with the bound as the target).
* :func:`budget_sweep` — evenly or geometrically spaced budgets; :func:`pareto_front` keeps
  the points no other
  point beats in both budget and latency (the curve itself, objective (a) at each budget for
  any preload methods, is :func:`optplan.experiments.pareto.pareto_curve`).
"""

from __future__ import annotations

from optplan.errors import InputError
from optplan.preload.bounds import latency_lower_bound
from optplan.preload.exact_cpsat import cpsat_minimum_budget
from optplan.preload.exact_milp import milp_minimum_budget
from optplan.preload.model import PreloadInstance
from optplan.preload.sliced_cpsat import cpsat_minimum_budget_sliced
from optplan.preload.sliced_milp import milp_minimum_budget_sliced
from optplan.preload.slicing import SLICE_MENU

__all__ = ["minimum_budget", "no_pressure_budget", "budget_sweep", "pareto_front"]


def minimum_budget(instance: PreloadInstance, latency_target: int | None = None, *,
                   method: str = "cpsat", time_limit: float | None = None,
                   workers: int | None = None, seed: int | None = None,
                   slicing: bool = False, menu=SLICE_MENU):
    """Objective (b): the smallest budget at which latency <= ``latency_target``; with
    ``slicing``, over every layer slicing with slice counts from ``menu``.

    Returns a :class:`~optplan.preload.exact_cpsat.BudgetOutcome` (``budget`` the best found,
    ``best_bound`` a proven lower bound, ``status`` OPTIMAL only when they meet).
    """
    solvers = {"cpsat": cpsat_minimum_budget, "milp_highs": milp_minimum_budget}
    sliced_solvers = {"cpsat": cpsat_minimum_budget_sliced,
                      "milp_highs": milp_minimum_budget_sliced}
    if method not in solvers:
        raise InputError(f"unknown method {method!r} for the minimum budget; valid: "
                         + ", ".join(solvers), field="method")
    flags = {"latency_target": latency_target, "time_limit": time_limit, "workers": workers,
             "seed": seed}
    if slicing:
        return sliced_solvers[method](instance, menu=menu, **flags)
    return solvers[method](instance, **flags)


def no_pressure_budget(instance: PreloadInstance, **options):
    """The smallest budget at which the latency meets the unlimited-memory bound."""
    return minimum_budget(instance, latency_lower_bound(instance), **options)


def budget_sweep(low: int, high: int, steps: int, spacing: str = "linear") -> list[int]:
    """``steps`` budgets from ``low`` to ``high`` (both included), rounded: evenly spaced
    (``spacing="linear"``) or in a constant ratio (``"geometric"``, for sweeps over orders of
    magnitude)."""
    if steps < 2 or high < low or (spacing == "geometric" and low < 1):
        raise InputError(f"need steps >= 2 and low <= high, got {steps}, [{low}, {high}]",
                         field="steps")
    if spacing == "geometric":
        values = [round(low * (high / low) ** (k / (steps - 1))) for k in range(steps)]
        values[-1] = high
    elif spacing == "linear":
        values = [low + round((high - low) * k / (steps - 1)) for k in range(steps)]
    else:
        raise InputError(f"unknown spacing {spacing!r}; valid: linear, geometric",
                         field="spacing")
    return list(dict.fromkeys(values))


def pareto_front(rows: list[dict], method: str) -> list[tuple[int, int]]:
    """The (budget, latency) points of ``method`` that no other point of it dominates."""
    points = sorted((row["budget"], row["latency_us"]) for row in rows
                    if row["method"] == method and row["latency_us"] is not None)
    front: list[tuple[int, int]] = []
    for budget, latency in points:
        if not front or latency < front[-1][1]:
            front.append((budget, latency))
    return front
