"""The latency/budget curve of preload-aware planning (objective (c)): objective (a) at each
budget of a sweep (:func:`optplan.preload.pareto.budget_sweep`) for any preload methods;
:func:`optplan.preload.pareto.pareto_front` keeps its undominated points."""

from __future__ import annotations

from optplan.preload.model import PreloadInstance
from optplan.solve import solve

__all__ = ["pareto_curve"]


def pareto_curve(instance: PreloadInstance, budgets, methods=("flexnn", "cpsat"), *,
                 time_limit: float | None = None, workers: int | None = None,
                 seed: int | None = None) -> list[dict]:
    """One row per (budget, method): status, latency, best bound, gap, wall time, validity;
    every plan validated by :func:`optplan.solve.solve`."""
    rows = []
    for budget in budgets:
        for method in methods:
            result = solve(instance, method, "preload", budget=budget, time_limit=time_limit,
                           workers=workers, seed=seed)
            rows.append({"instance": instance.name, "budget": budget, "method": method,
                         "status": result.status.value, "latency_us": result.objective,
                         "best_bound_us": result.best_bound, "gap": result.gap,
                         "wall_time_s": round(result.wall_time_s, 3), "valid": result.valid})
    return rows
