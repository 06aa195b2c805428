"""The offsets driver shared by the CP-SAT and MILP offsets methods: warm start, bound, time
parts, stitching (see :mod:`optplan.exact.geometry` for why the parts are independent)."""

from __future__ import annotations

from dataclasses import dataclass, field

from optplan.bounds import offsets_bound
from optplan.exact.geometry import sub_instance, time_components
from optplan.exact.run import ExactRun
from optplan.heuristics.constructions import decreasing_size_offsets, stacked_offsets
from optplan.model import Instance, OffsetsSolution, round_up
from optplan.result import SolverOutcome

__all__ = ["PartOutcome", "solve_offsets_by_parts", "arena_of"]


@dataclass
class PartOutcome:
    """A part's packing in bytes: ``objective`` is its aligned arena, ``bound`` a proven lower
    bound on the whole instance's objective learnt on this part, ``proven`` whether the part
    solver closed its own search."""

    offsets: list[int]
    objective: int
    bound: int
    proven: bool
    info: dict = field(default_factory=dict)


def arena_of(part: Instance, offsets) -> int:
    """The aligned arena of ``offsets`` on ``part``."""
    return round_up(max(o + r.size for o, r in zip(offsets, part.records)), part.alignment)


def solve_offsets_by_parts(run: ExactRun, solve_part, *, warm_start, initial_solution,
                           decompose: bool, stop_at_bound: bool) -> SolverOutcome:
    """Warm start, then solve each time part with ``solve_part`` and stitch the packings.

    ``solve_part(part, start_offsets, target, time_limit, on_progress)`` returns a
    :class:`PartOutcome`; ``target`` is a proven lower bound on the whole objective (the part
    need not go below it, since the arena is the maximum over parts), ``time_limit`` the
    part's share of what is left (model building included; ``None``: unlimited), and
    ``on_progress(incumbent, bound)`` reports the part's anytime curve in bytes. Hardest parts first: their bounds raise the target the
    easier parts must reach; a second pass gives the time that quick parts left to the parts
    still open.
    """
    instance, info = run.instance, run.info
    global_bound = offsets_bound(instance)
    info["combinatorial_bound"] = global_bound
    run.raise_bound(global_bound)
    run.start(warm_start, initial_solution, construction=decreasing_size_offsets,
              fallback=stacked_offsets)
    if not len(instance):
        return run.finished("an instance without records")
    if stop_at_bound and run.meets_bound():
        return run.finished("warm start meets the combinatorial bound")
    if run.out_of_time():
        return run.outcome()

    parts = time_components(instance) if decompose else [list(range(len(instance)))]
    info["parts"] = len(parts)
    part_instances = [sub_instance(instance, part, f"#{k}") for k, part in enumerate(parts)]
    part_bounds = [offsets_bound(p) for p in part_instances]
    offsets = list(run.solution.offsets)
    part_objectives = [arena_of(part_instances[k], [offsets[i] for i in part])
                       for k, part in enumerate(parts)]
    proven: dict[int, bool] = {}
    order = sorted(range(len(parts)), key=lambda k: -part_bounds[k])
    for attempt in range(2):
        queue = [k for k in order if attempt == 0 or not proven.get(k, True)]
        for position, k in enumerate(queue):
            if stop_at_bound and part_objectives[k] <= run.bound:
                proven[k] = True
                continue
            if run.out_of_time():
                proven.setdefault(k, False)
                continue
            # the time left is shared by this part and the later ones that still need work
            open_parts = sum(1 for m in queue[position:]
                             if part_objectives[m] > run.bound or not stop_at_bound)
            left = run.budget.remaining()
            limit = None if left is None else left / max(1, open_parts)

            def on_progress(incumbent, bound, k=k):
                others = max((part_objectives[m] for m in range(len(parts)) if m != k),
                             default=0)
                run.trajectory.record(None if incumbent is None else max(incumbent, others),
                                      None if bound is None else max(bound, run.bound))

            outcome = solve_part(part_instances[k], [offsets[i] for i in parts[k]],
                                 run.bound, limit, on_progress)
            if outcome.objective <= part_objectives[k]:
                for i, offset in zip(parts[k], outcome.offsets):
                    offsets[i] = offset
                part_objectives[k] = outcome.objective
            run.raise_bound(outcome.bound)
            proven[k] = outcome.proven
            info.setdefault("part_info", []).append({"part": k, "records": len(parts[k]),
                                                     "pass": attempt + 1} | outcome.info)
        if all(proven.values()) or run.out_of_time():
            break
    run.offer(OffsetsSolution.from_offsets(instance, offsets))
    return run.outcome(proven=all(proven.values()))
