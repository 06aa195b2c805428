"""Brute-force oracles for tiny instances (at most :data:`MAX_RECORDS` records).

They share no model with the CP-SAT and MILP formulations and serve as the reference in the
cross-check tests. Both are exhaustive depth-first searches with bound pruning, so the
``OPTIMAL`` they report is a proof by enumeration.

* Shared objects: every partition of the records into groups whose members may share
  (pairwise no conflict, or an in-place pair); an object's size is its largest member.
* Offsets: a packing is *left-justified* when no record can move down. Taking any optimal
  packing, re-placing the records in increasing order of their offsets, each at its lowest
  feasible aligned offset, never moves a record up, so some order of left-justified placement
  is optimal (the argument of Sekiyama et al. 2018 / MiniMalloc's canonical solutions). With
  in-place pairs the argument holds for *groups* of records that share one offset, so the
  search also enumerates which pairs share.

They take the keyword contract of every exact method; the warm start is off by default (an
oracle should owe nothing to the heuristics it checks), and when the time limit stops the
enumeration the best partition or packing found is returned, FEASIBLE.
"""

from __future__ import annotations

from itertools import combinations

from optplan import __version__
from optplan.bounds import offsets_bound, shared_objects_bound
from optplan.errors import InputError
from optplan.exact.run import ExactRun
from optplan.heuristics.constructions import can_share
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up
from optplan.problems import Problem
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["MAX_RECORDS", "brute_force_shared_objects", "brute_force_offsets"]

MAX_RECORDS = 8
SOLVER = "brute_force"


def _begin(instance: Instance, problem: Problem, bound: int, *, max_records: int,
           time_limit, workers, seed, warm_start, initial_solution,
           solver_params: dict) -> ExactRun:
    """The checks, the bound and the warm start of a brute-force call."""
    if solver_params:
        name = next(iter(solver_params))
        raise InputError(f"brute force takes no solver parameter {name!r}", field=name)
    if len(instance) > max_records:
        raise InputError(f"brute force handles at most {max_records} tensors, the instance has "
                         f"{len(instance)}", field="records")
    run = ExactRun(instance, problem, solver=SOLVER, version=__version__,
                   time_limit=time_limit, workers=workers, seed=seed, default_workers=1)
    run.raise_bound(bound)
    run.start(warm_start, initial_solution)
    return run


@register("brute_force", Problem.SHARED_OBJECTS, kind="exact",
          reference="enumeration of set partitions (max-colouring definition)")
def brute_force_shared_objects(instance: Instance, *, time_limit=None, workers=None,
                               seed=None, warm_start=False, initial_solution=None,
                               max_records: int = MAX_RECORDS, **solver_params) -> SolverOutcome:
    """Optimal shared objects by enumerating partitions into conflict-free groups.

    Records are taken by decreasing size, so a new group costs the record's size and joining
    a group costs nothing; branches whose cost reaches the best found (or the warm start) are
    cut, and the search stops at the positional-maximums bound. O(Bell(n)) in the worst case;
    ``max_records`` (default 8) guards against accidental use on larger instances.
    """
    bound = shared_objects_bound(instance)
    run = _begin(instance, Problem.SHARED_OBJECTS, bound, max_records=max_records,
                 time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start,
                 initial_solution=initial_solution, solver_params=solver_params)
    if not len(instance):
        run.offer(SharedObjectsSolution((), ()))
        return run.finished("an instance without records")
    if run.meets_bound():
        return run.finished("the bound is met")
    records = instance.records
    order = sorted(range(len(records)), key=lambda i: (-records[i].size, i))
    best_cost = sum(r.size for r in records) + 1 if run.objective is None else run.objective
    best_ids: list[int] = []
    groups: list[list[int]] = []
    ids = [0] * len(records)
    nodes = 0

    def search(depth: int, cost: int) -> bool:
        nonlocal best_cost, best_ids, nodes
        nodes += 1
        if cost >= best_cost or run.out_of_time():
            return False
        if depth == len(order):
            best_cost, best_ids = cost, list(ids)
            return best_cost <= bound
        record = order[depth]
        for number, members in enumerate(groups):
            if all(can_share(instance, record, other) for other in members):
                members.append(record)
                ids[record] = number
                done = search(depth + 1, cost)
                members.pop()
                if done:
                    return True
        groups.append([record])
        ids[record] = len(groups) - 1
        done = search(depth + 1, cost + records[record].size)
        groups.pop()
        return done

    search(0, 0)
    if best_ids:
        run.offer(SharedObjectsSolution.from_object_ids(instance, best_ids), best_cost)
    run.info["nodes"] = nodes
    return run.outcome(proven="stopped" not in run.info)


def _sharing_groups(instance: Instance) -> list[list[list[int]]]:
    """Every distinct way to merge records into groups along in-place pairs, such that all
    members of a group may share one offset (conflicting members must be in-place pairs)."""
    pairs = instance.inplace_pairs
    seen = set()
    result = []
    for count in range(len(pairs) + 1):
        for chosen in combinations(pairs, count):
            parent = list(range(len(instance)))

            def find(i):
                while parent[i] != i:
                    parent[i] = parent[parent[i]]
                    i = parent[i]
                return i

            for a, b in chosen:
                parent[find(a)] = find(b)
            classes: dict[int, list[int]] = {}
            for i in range(len(instance)):
                classes.setdefault(find(i), []).append(i)
            groups = sorted(classes.values())
            key = tuple(map(tuple, groups))
            if key in seen:
                continue
            seen.add(key)
            if all(can_share(instance, i, j) for group in groups
                   for i, j in combinations(group, 2)):
                result.append(groups)
    return result


@register("brute_force", Problem.OFFSETS, kind="exact",
          reference="enumeration of left-justified packings (Sekiyama et al. 2018)")
def brute_force_offsets(instance: Instance, *, time_limit=None, workers=None,
                        seed=None, warm_start=False, initial_solution=None,
                        max_records: int = MAX_RECORDS, **solver_params) -> SolverOutcome:
    """Optimal offsets by enumerating placement orders of left-justified packings.

    For every sharing choice of the in-place pairs, a depth-first search over the order in
    which groups are placed, each at its lowest feasible aligned offset; branches whose
    arena reaches the best found are cut, and the search stops at the max-breadth bound.
    O(2^p · n! · n^2) in the worst case; ``max_records`` (default 8) guards against
    accidental use on larger instances.
    """
    bound = offsets_bound(instance)
    run = _begin(instance, Problem.OFFSETS, bound, max_records=max_records,
                 time_limit=time_limit, workers=workers, seed=seed, warm_start=warm_start,
                 initial_solution=initial_solution, solver_params=solver_params)
    if not len(instance):
        run.offer(OffsetsSolution((), 0))
        return run.finished("an instance without records")
    if run.meets_bound():
        return run.finished("the bound is met")
    records = instance.records
    alignment = instance.alignment
    best_arena = run.objective
    best_offsets: list[int] = []
    nodes = 0

    for groups in _sharing_groups(instance):
        heights = [max(records[i].size for i in group) for group in groups]
        # Conflicting member pairs between groups: (size of mine, other group, size of its).
        clashes = [[(records[i].size, m, records[j].size)
                    for m, other in enumerate(groups) if m != k
                    for i in group for j in other if records[i].conflicts_with(records[j])]
                   for k, group in enumerate(groups)]
        offsets = [0] * len(groups)
        placed: list[int] = []
        remaining = set(range(len(groups)))

        def search(arena: int) -> bool:
            nonlocal best_arena, best_offsets, nodes
            nodes += 1
            if (best_arena is not None and round_up(arena, alignment) >= best_arena
                    or run.out_of_time()):
                return False
            if not remaining:
                best_arena = round_up(arena, alignment)
                best_offsets = [0] * len(records)
                for group, offset in zip(groups, offsets):
                    for i in group:
                        best_offsets[i] = offset
                return best_arena <= bound
            for group in sorted(remaining):
                blockers = [(size, offsets[other], offsets[other] + other_size)
                            for size, other, other_size in clashes[group] if other in placed]
                candidates = sorted({0} | {round_up(end, alignment) for _, _, end in blockers})
                offset = next(c for c in candidates
                              if all(c + size <= start or end <= c
                                     for size, start, end in blockers))
                offsets[group] = offset
                placed.append(group)
                remaining.discard(group)
                done = search(max(arena, offset + heights[group]))
                remaining.add(group)
                placed.pop()
                if done:
                    return True
            return False

        if search(0):
            break

    if best_offsets:
        run.offer(OffsetsSolution.from_offsets(instance, best_offsets), best_arena)
    run.info["nodes"] = nodes
    return run.outcome(proven="stopped" not in run.info)
