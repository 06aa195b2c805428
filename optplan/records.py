"""The two problems over usage records on the problem table: shared objects and offsets.

Their pieces live in the core: records and solutions in :mod:`optplan.model`, files in
:mod:`optplan.formats`, the validator in :mod:`optplan.validate`, the bounds in
:mod:`optplan.bounds`. Definitions: ``docs/problems.md``.
"""

from __future__ import annotations

from optplan.bounds import offsets_bound, shared_objects_bound
from optplan.formats import load_instance, read_solution_csv, write_solution_csv
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, round_up
from optplan.problems import Problem, ProblemSpec, register_problem
from optplan.validate import validate_offsets, validate_shared_objects

__all__ = ["SHARED_OBJECTS", "OFFSETS"]


def _without_pairs_unless(instance: Instance, *, inplace: bool = False) -> Instance:
    """In-place pairs are used only when asked for; otherwise every pair conflicts as usual."""
    return instance if inplace else instance.without_inplace()


def _arena(instance: Instance, solution: OffsetsSolution) -> int:
    return round_up(solution.arena_size, instance.alignment)


SHARED_OBJECTS = register_problem(ProblemSpec(
    name=Problem.SHARED_OBJECTS, title="shared objects",
    instance_type=Instance, solution_type=SharedObjectsSolution,
    load_instance=load_instance,
    read_solution=lambda instance, path: read_solution_csv(instance, Problem.SHARED_OBJECTS,
                                                           path),
    write_solution=lambda instance, solution, path: write_solution_csv(
        instance, Problem.SHARED_OBJECTS, solution, path),
    validate=validate_shared_objects, lower_bound=shared_objects_bound,
    objective=lambda instance, solution: solution.total_size,
    objective_name="sum of object sizes", unit="bytes",
    options=("alignment", "inplace"), prepare=_without_pairs_unless,
    warm_start=("greedy_by_breadth", "greedy_by_size", "greedy_in_order", "greedy_best"),
    inplace_warm_start=("mxnet",),
    aliases=("shared_objects",)))

OFFSETS = register_problem(ProblemSpec(
    name=Problem.OFFSETS, title="offsets",
    instance_type=Instance, solution_type=OffsetsSolution,
    load_instance=load_instance,
    read_solution=lambda instance, path: read_solution_csv(instance, Problem.OFFSETS, path),
    write_solution=lambda instance, solution, path: write_solution_csv(
        instance, Problem.OFFSETS, solution, path),
    validate=validate_offsets, lower_bound=offsets_bound, objective=_arena,
    objective_name="arena size", unit="bytes",
    options=("alignment", "inplace"), prepare=_without_pairs_unless,
    warm_start=("greedy_by_size", "strip_packing_best_fit", "xla_best_fit", "tflite_arena",
                "greedy_by_breadth", "nntrainer_v3", "best_fit", "first_fit"),
    inplace_warm_start=("mxnet",)))
