"""MILP formulations of ``schedule`` and ``schedule-offsets`` (PuLP; HiGHS and CBC).

A time-indexed 0-1 program in the spirit of OLLA/MODeL's ILP (Steiner et al. 2023, whose
variables say at which step a tensor is created and whether it is kept): here ``D[v, s]``
says that op ``v`` has run by step ``s`` (monotone in ``s``, one more op per step) and a
continuous ``L[b, s]`` that buffer ``b`` is live at step ``s``; ``L`` is only bounded from
below by the order, the objective pulls it down. Variables exist only inside each op's
window of feasible steps, so near-chains give tiny programs. Placement adds offsets with
pairwise big-M disjunctions, switched on by the steps where both buffers are live. Two
methods share the models: ``milp_highs`` and ``milp_cbc`` (the solvers of
:mod:`optplan.exact.milp`). Statuses are checked against the solver's dual bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

from optplan.exact.budget import Budget
from optplan.exact.milp import BACKENDS, Milp, milp_version
from optplan.exact.highs import check_highs_options
from optplan.registry import register
from optplan.result import SolverOutcome
from optplan.schedule.cpsat import objective_range, size_unit
from optplan.schedule.dag import Dag, lifetimes_of, order_indices, order_names, peak
from optplan.schedule.driver import PartOutcome, solve_schedule, solve_schedule_offsets
from optplan.schedule.model import ScheduleInstance, ScheduleSolution
from optplan.schedule.validate import arena_of

__all__ = ["build_schedule_milp", "relaxation_bound", "milp_highs_schedule",
           "milp_highs_schedule_offsets", "milp_cbc_schedule", "milp_cbc_schedule_offsets",
           "milp_segment", "milp_joint", "estimated_terms", "MODEL_TERMS_LIMIT"]

DEFAULT_WORKERS = 1
_REFERENCE = "time-indexed 0-1 program of order and lifetimes (OLLA/MODeL, Steiner et al. 2023)"
MODEL_TERMS_LIMIT = 1_000_000
"""Above this many (estimated) constraint terms the program is not built (PuLP builds in
Python): the method keeps its warm start and says so in ``info["model"]``."""


@dataclass
class StepIndex:
    """The 0-1 step variables of one program: ``done(v, s)`` is ``D[v, s]`` (a constant
    outside ``v``'s window; graph inputs, op ``-1``, are done from step 0)."""

    dag: Dag
    variables: dict

    def done(self, v: int, s: int):
        if v < 0:
            return 1 if s >= 0 else 0
        low, high = self.dag.windows[v]
        if s < low:
            return 0
        if s >= high:
            return 1
        return self.variables[v, s]

    def runs(self, v: int, s: int):
        """``x[v, s] = D[v, s] - D[v, s-1]``: op ``v`` runs at step ``s``."""
        return self.done(v, s) - self.done(v, s - 1)


def _lifetime_window(dag: Dag, b: int) -> tuple[int, int]:
    """The steps buffer ``b`` may be live at in some order."""
    n = dag.num_ops
    p = dag.producer[b]
    first = dag.windows[p][0] if p >= 0 else 0
    if dag.output[b]:
        return first, n - 1
    if dag.consumers[b]:
        return first, max(dag.windows[c][1] for c in dag.consumers[b])
    return first, (dag.windows[p][1] if p >= 0 else 0)


def estimated_terms(dag: Dag, *, placement: bool = False) -> int:
    """A rough count of the program's constraint terms."""
    terms = 0
    for b in range(dag.num_buffers):
        first, last = _lifetime_window(dag, b)
        terms += (last - first + 1) * (4 * max(1, len(dag.consumers[b])) + 1)
    if placement:
        windows = [_lifetime_window(dag, b) for b in range(dag.num_buffers)]
        for i, (fi, li) in enumerate(windows):
            for fj, lj in windows[i + 1:]:
                terms += 3 * max(0, min(li, lj) - max(fi, fj) + 1) + 8
    return terms


def build_schedule_milp(dag: Dag, *, lower: int, upper: int, start: list[int],
                        alignment: int | None = None, start_offsets=None) -> Milp:
    r"""The time-indexed program; with ``alignment`` the joint order and placement program.

    :math:`D_{vs} \in \{0,1\}` (op :math:`v` done by step :math:`s`; fixed outside its
    window), :math:`x_{vs} = D_{vs} - D_{v,s-1}`, :math:`L_{bs} \in [0, 1]`, in-place
    choices :math:`y_{kab}`, :math:`Y_b = \sum_{k,a} y_{kab}`, sizes :math:`w_b`:

    .. math::

        &D_{vs} \ge D_{v,s-1},\quad \textstyle\sum_v D_{vs} = s + 1,\quad
         D_{cs} \le D_{p,s-1} \;(p \to c)                                                \\
        &L_{bs} \ge D_{k(b),s-1} - D_{c,s-1} \;(c \in C(b)),\;\;
         L_{bs} \ge D_{k(b),s-1} \;(b \text{ output}),\;\;
         L_{bs} \ge x_{k(b)s} - Y_b                                                        \\
        &y_{kab} \Rightarrow D_{c,s-1} \ge D_{ks} \;(c \in C(a) \setminus \{k\}),\quad
         y_{kab} \Rightarrow x_{k,n-1} = 1 \;(a \text{ output}),\quad
         \textstyle\sum_b y_{kab} \le 1,\; \sum_a y_{kab} \le 1                            \\
        &\text{peak: } P \ge \textstyle\sum_b w_b L_{bs},\quad L \le P \le U,\quad \min P \\
        &\text{arena: } A K \ge A q_b + w_b,\; A K \ge \textstyle\sum_b w_b L_{bs},\;
         z_{ij} + z_{ji} \ge L_{is} + L_{js} - 1,\;
         A q_i + w_i \le A q_j + M (1 - z_{ij}),                                           \\
        &\qquad |q_a - q_b| \le U (1 - y_{kab}),\quad L \le A K \le U,\quad \min K

    (graph inputs are done from step 0; :math:`M = A U` with :math:`U` the start's arena).
    ``start`` (an order) and ``start_offsets`` (bytes per buffer) are the MIP start.
    """
    import pulp

    n = dag.num_ops
    arena = alignment is not None
    unit, step = size_unit(dag.sizes, alignment if arena else 1)
    sizes = [size // unit for size in dag.sizes]
    lp = pulp.LpProblem("schedule_offsets" if arena else "schedule", pulp.LpMinimize)
    index = StepIndex(dag, {(v, s): lp.add_variable(f"D_{v}_{s}", cat="Binary")
                            for v, (low, high) in enumerate(dag.windows)
                            for s in range(low, high)})
    done = index.done

    def post(constraint, name: str) -> None:   # constraints between constants hold already
        if not isinstance(constraint, bool) and len(constraint):
            lp.addConstraint(constraint, name)

    for v, (low, high) in enumerate(dag.windows):
        for s in range(low + 1, high):
            post(done(v, s) >= done(v, s - 1), f"monotone_{v}_{s}")
    for s in range(n - 1):
        post(pulp.lpSum(done(v, s) for v in range(n)) == s + 1, f"count_{s}")
    for c, preds in enumerate(dag.preds):
        for p in preds:
            for s in range(dag.windows[c][0], dag.windows[p][1] + 1):
                post(done(c, s) <= done(p, s - 1), f"after_{p}_{c}_{s}")

    choose = {(k, a, b): lp.add_variable(f"y_{k}_{a}_{b}", cat="Binary")
              for k, a, b in dag.pairs}
    for (k, a, b), var in choose.items():
        for c in dag.consumers[a]:
            if c != k:
                for s in range(dag.windows[k][0], dag.windows[k][1] + 1):
                    post(done(c, s - 1) >= done(k, s) - (1 - var), f"last_{k}_{a}_{b}_{c}_{s}")
        if dag.output[a]:
            post(var <= 1 - done(k, n - 2), f"last_{k}_{a}_{b}")
    for source in {a for _, a, _ in choose}:
        lp += pulp.lpSum(v for key, v in choose.items() if key[1] == source) <= 1
    for target in {b for _, _, b in choose}:
        lp += pulp.lpSum(v for key, v in choose.items() if key[2] == target) <= 1

    live: dict = {}
    at_step: list[list] = [[] for _ in range(n)]
    for b in range(dag.num_buffers):
        p = dag.producer[b]
        shared = pulp.lpSum(v for key, v in choose.items() if key[2] == b)
        first, last = _lifetime_window(dag, b)
        for s in range(first, last + 1):
            var = live[b, s] = lp.add_variable(f"L_{b}_{s}", 0, 1)
            at_step[s].append((sizes[b], var))
            for c in dag.consumers[b]:
                post(var >= done(p, s - 1) - done(c, s - 1), f"read_{b}_{c}_{s}")
            if dag.output[b]:
                post(var >= done(p, s - 1), f"output_{b}_{s}")
            post(var >= index.runs(p, s) - shared, f"written_{b}_{s}")

    def live_bytes(s):
        return pulp.lpSum(size * var for size, var in at_step[s])

    low, high = objective_range(lower, upper, unit, step, arena)
    start_values = _start_values(dag, index, choose, live, start)
    if not arena:
        objective = lp.add_variable("peak", min(low, high), high)
        for s in range(n):
            lp += objective >= live_bytes(s), f"peak_{s}"
        lp += objective
        start_values["peak"] = high
        return _milp(lp, dict(index.variables) | _named(choose, live) | {"peak": objective},
                     start_values, big_m=1, magnitude=high)

    objective = lp.add_variable("arena", min(low, high), high, cat="Integer")
    lp += objective
    slot = {b: lp.add_variable(f"q_{b}", 0, max(0, (high * step - size) // step),
                               cat="Integer") for b, size in enumerate(sizes)}
    for b, size in enumerate(sizes):
        lp += step * slot[b] + size <= step * objective, f"arena_{b}"
    for s in range(n):
        lp += step * objective >= live_bytes(s), f"breadth_{s}"
    big_m = step * high
    apart = {}
    windows = [_lifetime_window(dag, b) for b in range(dag.num_buffers)]
    for i in range(dag.num_buffers):
        for j in range(i + 1, dag.num_buffers):
            common = range(max(windows[i][0], windows[j][0]), min(windows[i][1], windows[j][1]) + 1)
            if not common:
                continue
            below = apart[i, j] = lp.add_variable(f"z_{i}_{j}", cat="Binary")
            above = apart[j, i] = lp.add_variable(f"z_{j}_{i}", cat="Binary")
            for s in common:
                lp += below + above >= live[i, s] + live[j, s] - 1, f"apart_{i}_{j}_{s}"
            lp += step * slot[i] + sizes[i] <= step * slot[j] + big_m * (1 - below), f"b_{i}_{j}"
            lp += step * slot[j] + sizes[j] <= step * slot[i] + big_m * (1 - above), f"b_{j}_{i}"
    for (k, a, b), var in choose.items():
        lp += slot[a] - slot[b] <= high * (1 - var), f"same_{k}_{a}_{b}"
        lp += slot[b] - slot[a] <= high * (1 - var), f"same_{k}_{b}_{a}"
    if start_offsets is not None:
        start_slot = [offset // (unit * step) for offset in start_offsets]
        start_values |= {("q", b): value for b, value in enumerate(start_slot)}
        for (i, j) in apart:
            start_values[("z", i, j)] = int(step * start_slot[i] + sizes[i]
                                            <= step * start_slot[j])
    start_values["arena"] = high
    variables = (dict(index.variables) | _named(choose, live) | {"arena": objective}
                 | {("q", b): var for b, var in slot.items()}
                 | {("z", i, j): var for (i, j), var in apart.items()})
    return _milp(lp, variables, start_values, big_m=big_m, magnitude=big_m)


def _milp(lp, variables: dict, start_values: dict, *, big_m: int, magnitude: int) -> Milp:
    """The model with its MIP start as ``{variable: value}`` and the numbers that decide
    whether the solver's proofs are taken (:func:`optplan.exact.scaling.milp_proof_trusted`)."""
    start = {variables[key]: value for key, value in start_values.items() if key in variables}
    return Milp(lp, variables, start, big_m=big_m, magnitude=magnitude)


def _named(choose: dict, live: dict) -> dict:
    return {("y",) + key: var for key, var in choose.items()} | {
        ("L",) + key: var for key, var in live.items()}


def _start_values(dag: Dag, index: StepIndex, choose: dict, live: dict, start) -> dict:
    """The MIP start of the order ``start``: steps, liveness, usable in-place pairs."""
    step_of = {v: s for s, v in enumerate(start)}
    first, last = lifetimes_of(dag, start)
    values = {(v, s): int(step_of[v] <= s) for (v, s) in index.variables}
    used_sources, used_targets, trimmed = set(), set(), set()
    for (k, a, b) in choose:
        usable = (last[a] == step_of[k] and a not in used_sources and b not in used_targets)
        if usable:
            used_sources.add(a)
            used_targets.add(b)
            trimmed.add(b)
        values[("y", k, a, b)] = int(usable)
    for (b, s) in live:
        values[("L", b, s)] = int(first[b] + (b in trimmed) <= s <= last[b])
    return values


def _order(dag: Dag, milp: Milp) -> list[int]:
    """The ops by the first step each is done at."""
    def step_of(v):
        low, high = dag.windows[v]
        return next((s for s in range(low, high)
                     if (milp.variables[v, s].varValue or 0) > 0.5), high)

    return sorted(range(dag.num_ops), key=step_of)


def _ceil(bound: float | None, unit: int) -> int | None:
    return None if bound is None else math.ceil(bound - 1e-6) * unit


def milp_segment(backend: str, dag: Dag, start: list[int], target: int, time_limit,
                 on_progress, *, workers, seed, params) -> PartOutcome:
    """The peak program on ``dag`` from ``start`` down to ``target`` (bytes), by ``backend``
    (``milp_highs`` or ``milp_cbc``)."""
    budget = Budget(time_limit)
    upper = peak(dag, start)
    if dag.has_one_order:   # nothing to decide (and HiGHS reports no MIP bound for an LP)
        return PartOutcome(None, upper, upper, True, {"proof": "one topological order"})
    terms = estimated_terms(dag)
    if terms > MODEL_TERMS_LIMIT:
        return PartOutcome(None, upper, target, False,
                           {"model": f"not built: ~{terms} terms > {MODEL_TERMS_LIMIT}"})
    milp = build_schedule_milp(dag, lower=target, upper=upper, start=start)
    run = BACKENDS[backend](milp, seconds=budget.remaining(), workers=workers, seed=seed,
                            params=params)
    unit = size_unit(dag.sizes, 1)[0]
    info = {"solver_status": run.status, "bound_trusted": milp.trusted}
    bound = max(target, (_ceil(run.bound, unit) if milp.trusted else None) or 0)
    order, objective = None, upper
    if run.has_solution:
        candidate = _order(dag, milp)
        if peak(dag, candidate) <= upper:
            order, objective = candidate, peak(dag, candidate)
    on_progress(objective, bound)
    return PartOutcome(order, objective, bound, objective <= bound, info)


def milp_joint(backend: str, instance: ScheduleInstance, dag: Dag, start: ScheduleSolution,
               lower: int, time_limit, on_progress, *, workers, seed, params) -> PartOutcome:
    """The joint program from the plan ``start`` down to ``lower`` (arena bytes)."""
    budget = Budget(time_limit)   # building the program counts against the time
    upper = arena_of(instance, start)
    terms = estimated_terms(dag, placement=True)
    if terms > MODEL_TERMS_LIMIT:
        return PartOutcome(None, upper, lower, False,
                           {"model": f"not built: ~{terms} terms > {MODEL_TERMS_LIMIT}"})
    milp = build_schedule_milp(dag, lower=lower, upper=upper,
                               start=order_indices(dag, start.order),
                               alignment=instance.alignment,
                               start_offsets=[start.offsets[name] for name in dag.buffer_names])
    run = BACKENDS[backend](milp, seconds=budget.remaining(), workers=workers, seed=seed,
                            params=params)
    unit, step = size_unit(dag.sizes, instance.alignment)
    info = {"solver_status": run.status, "bound_trusted": milp.trusted}
    bound = max(lower, (_ceil(run.bound, unit * step) if milp.trusted else None) or 0)
    if not run.has_solution:
        on_progress(upper, bound)
        return PartOutcome(None, upper, bound, upper <= bound, info)
    offsets = {name: round(milp.variables["q", b].varValue or 0) * unit * step
               for b, name in enumerate(dag.buffer_names)}
    order = _order(dag, milp)
    objective = arena_of(instance, ScheduleSolution(order_names(dag, order), offsets))
    on_progress(None, bound)    # the plan is recorded once the driver has validated it
    return PartOutcome(order, objective, bound, objective <= bound, info, offsets)


def relaxation_bound(instance: ScheduleInstance, *, time_limit=None) -> int:
    """The LP relaxation of the peak program (HiGHS), rounded up: a lower bound on every
    order's peak. Solved per segment; the largest segment value is the bound."""
    import pulp

    from optplan.schedule.bounds import must_live_bound
    from optplan.schedule.dag import dag_of
    from optplan.schedule.decompose import reduce_dag, segments

    dag = dag_of(instance)
    kept = reduce_dag(dag).kept
    best = must_live_bound(dag)
    for part in segments(kept.dag):
        sub = part.dag
        if estimated_terms(sub) > MODEL_TERMS_LIMIT:
            continue
        start = list(sub.topological)
        milp = build_schedule_milp(sub, lower=0, upper=peak(sub, start), start=start)
        milp.problem.solve(pulp.HiGHS(msg=False, mip=False, timeLimit=time_limit))
        value = pulp.value(milp.problem.objective)
        if value is not None:
            best = max(best, _ceil(value, size_unit(sub.sizes, 1)[0]))
    return best


def _flagged(solve, backend: str, workers, seed, params):
    """``solve`` for ``backend`` with the run's threads (default 1), seed (default 0) and
    options."""
    return partial(solve, backend, workers=DEFAULT_WORKERS if workers is None else workers,
                   seed=0 if seed is None else seed, params=params)


def _check(backend: str, params: dict) -> None:
    if backend == "milp_highs":
        check_highs_options(params)


def _schedule(backend: str, instance: ScheduleInstance, *, time_limit, workers, seed,
              warm_start, initial_solution, decompose, params) -> SolverOutcome:
    _check(backend, params)
    return solve_schedule(instance, _flagged(milp_segment, backend, workers, seed, params),
                          solver=backend, version=milp_version(backend),
                          time_limit=time_limit, workers=workers, seed=seed,
                          warm_start=warm_start, initial_solution=initial_solution,
                          decompose=decompose, default_workers=DEFAULT_WORKERS)


def _schedule_offsets(backend: str, instance: ScheduleInstance, *, time_limit, workers, seed,
                      warm_start, initial_solution, decompose, params) -> SolverOutcome:
    _check(backend, params)
    return solve_schedule_offsets(instance,
                                  _flagged(milp_segment, backend, workers, seed, params),
                                  _flagged(milp_joint, backend, workers, seed, params),
                                  placement=backend,
                                  solver=backend, version=milp_version(backend),
                                  time_limit=time_limit, workers=workers, seed=seed,
                                  warm_start=warm_start, initial_solution=initial_solution,
                                  decompose=decompose, default_workers=DEFAULT_WORKERS)


@register("milp_highs", "schedule", kind="exact", reference=_REFERENCE)
def milp_highs_schedule(instance: ScheduleInstance, *, time_limit=None, workers=None,
                        seed=None, warm_start=True, initial_solution=None,
                        decompose: bool = True, **solver_params) -> SolverOutcome:
    """Least peak by HiGHS on the time-indexed program, per segment.

    Parameters
    ----------
    time_limit, workers, seed
        HiGHS's time limit (for the whole call), threads (default 1) and random seed.
    warm_start, initial_solution
        Candidates for the start (:mod:`optplan.warm_start`), the MIP start.
    decompose
        Solve the segments between cut ops apart.
    **solver_params
        HiGHS options, e.g. ``presolve="off"``.
    """
    return _schedule("milp_highs", instance, time_limit=time_limit, workers=workers, seed=seed,
                     warm_start=warm_start, initial_solution=initial_solution,
                     decompose=decompose, params=solver_params)


@register("milp_highs", "schedule-offsets", kind="exact", reference=_REFERENCE)
def milp_highs_schedule_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                                seed=None, warm_start=True, initial_solution=None,
                                decompose: bool = True, **solver_params) -> SolverOutcome:
    """Least arena by HiGHS: the least peak as the bound, the least-peak order placed by the
    fixed-order ``milp_highs`` offsets method, then the joint program.

    Parameters as for :func:`milp_highs_schedule`.
    """
    return _schedule_offsets("milp_highs", instance, time_limit=time_limit, workers=workers,
                             seed=seed, warm_start=warm_start,
                             initial_solution=initial_solution, decompose=decompose,
                             params=solver_params)


@register("milp_cbc", "schedule", kind="exact", reference=_REFERENCE)
def milp_cbc_schedule(instance: ScheduleInstance, *, time_limit=None, workers=None, seed=None,
                      warm_start=True, initial_solution=None, decompose: bool = True,
                      **solver_params) -> SolverOutcome:
    """Least peak by CBC on the time-indexed program, per segment.

    Parameters as for :func:`milp_highs_schedule`; ``**solver_params`` are CBC
    command-line options, e.g. ``cuts="off"``.
    """
    return _schedule("milp_cbc", instance, time_limit=time_limit, workers=workers, seed=seed,
                     warm_start=warm_start, initial_solution=initial_solution,
                     decompose=decompose, params=solver_params)


@register("milp_cbc", "schedule-offsets", kind="exact", reference=_REFERENCE)
def milp_cbc_schedule_offsets(instance: ScheduleInstance, *, time_limit=None, workers=None,
                              seed=None, warm_start=True, initial_solution=None,
                              decompose: bool = True, **solver_params) -> SolverOutcome:
    """Least arena by CBC: the least peak as the bound, the least-peak order placed by the
    fixed-order ``milp_cbc`` offsets method, then the joint program.

    Parameters as for :func:`milp_cbc_schedule`.
    """
    return _schedule_offsets("milp_cbc", instance, time_limit=time_limit, workers=workers,
                             seed=seed, warm_start=warm_start,
                             initial_solution=initial_solution, decompose=decompose,
                             params=solver_params)
