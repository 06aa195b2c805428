"""What the shared-objects models share: the index sets of the representative formulation,
its conflict encodings, and the steps every shared-objects exact method takes first."""

from __future__ import annotations

from dataclasses import dataclass

from optplan.bounds import (inplace_positional_maximums, maximal_profiles, shared_objects_bound,
                            trimmed_lifetimes)
from optplan.errors import InputError
from optplan.exact.geometry import conflict_pairs, explicit_conflicts
from optplan.exact.run import ExactRun
from optplan.exact.scaling import Scaling, check_range, scaling
from optplan.heuristics.constructions import decreasing_size_objects, stacked_objects
from optplan.model import Instance
from optplan.result import SolverOutcome

__all__ = ["RepresentativeStructure", "representative_structure", "CONFLICT_ENCODINGS",
           "CLIQUE_TERMS_LIMIT", "check_conflict_encoding", "choose_conflict_encoding",
           "start_shared_objects"]


@dataclass(frozen=True)
class RepresentativeStructure:
    """Index sets of the representative formulation (see ``build_shared_objects_model``).

    ``candidates[i]``: the representatives record ``i`` may join (higher-ranked records it
    may share with, then itself). ``groups``: ``(j, members)`` rows
    :math:`\\sum_{i \\in members} x_{ij} \\le y_j`. ``positional``: per position k (1-based),
    the representatives at least as large as the k-th positional maximum.
    """

    ranked: list[int]
    candidates: dict[int, list[int]]
    groups: list[tuple[int, list[int]]]
    positional: list[list[int]]

    def representatives_of(self, object_ids) -> dict[int, int]:
        """Per record, the top-ranked member of its object under ``object_ids``."""
        top: dict[int, int] = {}
        for i in self.ranked:
            top.setdefault(object_ids[i], i)
        return {i: top[object_ids[i]] for i in self.ranked}


CONFLICT_ENCODINGS = ("auto", "cliques", "pairs", "no_overlap")
CLIQUE_TERMS_LIMIT = 2_000_000
"""``auto`` switches from clique rows to per-representative NoOverlap above this estimate of
the number of clique-row terms (training graphs: millions of terms, minutes to build)."""


def representative_structure(instance: Instance, *, conflicts: str = "cliques",
                             positional_cuts: bool = True) -> RepresentativeStructure:
    """Build the index sets of the representative formulation.

    ``conflicts`` says how "members of one object do not conflict" is written:
    ``cliques``: one row per maximal trimmed profile and representative, plus rows for the
    explicit conflicts; ``pairs``: the textbook model, one row per conflicting pair and
    representative; ``no_overlap``: only the explicit-conflict rows (the caller posts a
    NoOverlap of each representative's candidates' trimmed lifetimes).
    """
    if conflicts not in CONFLICT_ENCODINGS[1:]:
        raise InputError(f"unknown encoding {conflicts!r}; valid: "
                         f"{', '.join(CONFLICT_ENCODINGS)}", field="conflicts")
    ranked = sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))
    conflicting = set(conflict_pairs(instance))
    candidates: dict[int, list[int]] = {}
    for position, i in enumerate(ranked):
        candidates[i] = [j for j in ranked[:position]
                         if (min(i, j), max(i, j)) not in conflicting
                         or (i, j) in instance.inplace_set] + [i]
    groups: list[tuple[int, list[int]]] = []
    if conflicts == "cliques":
        for profile in maximal_profiles(trimmed_lifetimes(instance)):
            by_representative: dict[int, list[int]] = {}
            for i in profile:
                for j in candidates[i][:-1]:
                    by_representative.setdefault(j, []).append(i)
            groups.extend((j, members) for j, members in by_representative.items()
                          if len(members) > 1)
    if conflicts == "pairs":
        apart = [pair for pair in conflicting if pair not in instance.inplace_set]
    else:
        apart = [pair for pair in explicit_conflicts(instance)
                 if pair not in instance.inplace_set]
    for u, v in sorted(apart):
        common = set(candidates[u][:-1]) & set(candidates[v][:-1])
        groups.extend((j, [u, v]) for j in sorted(common))
    positional = []
    if positional_cuts:
        for value in inplace_positional_maximums(instance):
            positional.append([j for j in ranked if instance.records[j].size >= value])
    return RepresentativeStructure(ranked, candidates, groups, positional)


def check_conflict_encoding(conflicts: str) -> None:
    """An InputError naming the valid encodings unless ``conflicts`` is one."""
    if conflicts not in CONFLICT_ENCODINGS:
        raise InputError(f"unknown encoding {conflicts!r}; valid: "
                         f"{', '.join(CONFLICT_ENCODINGS)}", field="conflicts")


def choose_conflict_encoding(instance: Instance, conflicts: str, *, no_overlap: bool) -> str:
    """Resolve ``auto``: clique rows unless their estimated size exceeds
    :data:`CLIQUE_TERMS_LIMIT` and the solver has a NoOverlap constraint."""
    check_conflict_encoding(conflicts)
    if conflicts == "no_overlap" and not no_overlap:
        raise InputError("no_overlap needs CP-SAT; use cliques or pairs", field="conflicts")
    if conflicts != "auto":
        return conflicts
    profiles = maximal_profiles(trimmed_lifetimes(instance))
    estimate = sum(len(profile) for profile in profiles) * len(instance) // 2
    return "no_overlap" if no_overlap and estimate > CLIQUE_TERMS_LIMIT else "cliques"


def start_shared_objects(run: ExactRun, *, warm_start, initial_solution, stop_at_bound: bool,
                         value_limit: int, solver_label: str
                         ) -> tuple[Scaling, SolverOutcome | None]:
    """The steps every shared-objects method takes first: scaling and its range check, the
    positional-maximums bound, the warm start, and the early answer when the warm start meets
    the bound or the budget is spent (``None`` when the model is to run)."""
    instance = run.instance
    scale = scaling(instance, with_alignment=False)
    check_range(instance, scale, value_limit, solver_label)
    bound = shared_objects_bound(instance)
    run.info["combinatorial_bound"] = bound
    run.raise_bound(bound)
    run.start(warm_start, initial_solution, construction=decreasing_size_objects,
              fallback=stacked_objects)
    if not len(instance):
        return scale, run.finished("an instance without records")
    if stop_at_bound and run.meets_bound():
        return scale, run.finished("warm start meets the combinatorial bound")
    if run.out_of_time():
        return scale, run.outcome()
    return scale, None
