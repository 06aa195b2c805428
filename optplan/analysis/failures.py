"""Why a heuristic plan is above the optimum: a failure mode per (heuristic, instance) pair.

Offsets plans (``classify_offsets``), from the tensor whose top edge sets the arena:

* ``stacked objects`` — the plan is a shared-objects plan stacked into one arena (its arena
  equals the method's shared-objects total): each object keeps its largest tensor's height
  over its whole lifetime, so the stack is as tall as the sum of the objects;
* ``fragmented peak`` — the arena-setting tensor is live at an operator of maximum breadth:
  the heuristic left holes in the peak itself;
* ``off-peak fragmentation`` — the arena-setting tensor is live only at operators below the
  maximum breadth: placements made elsewhere pushed it above the optimum.

Shared-objects plans (``classify_shared_objects``), against the positional maximums (the
i-th largest tensor size over all profiles, Pisarchyk & Lee 2020):

* ``extra objects`` — more objects than the largest profile has tensors;
* ``oversized objects`` — no more objects than that, but some object is larger than its
  positional maximum: a small tensor shares with a large one although a better grouping
  exists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from optplan.bounds import positional_maximums
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution
from optplan.profiles import breadths, compressed_times

__all__ = ["OFFSETS_MODES", "SHARED_OBJECTS_MODES", "FAILURES_FILE", "classify_offsets",
           "classify_shared_objects", "failure_table", "read_failures"]

FAILURES_FILE = "failures.csv"
"""A run directory's failure modes (``instance, problem, method, job_id, mode``), written while
the solution files are at hand (``paper/prune.py``), so that they need not be kept."""

OFFSETS_MODES = ("stacked objects", "fragmented peak", "off-peak fragmentation")
SHARED_OBJECTS_MODES = ("extra objects", "oversized objects")


def classify_offsets(instance: Instance, solution: OffsetsSolution,
                     shared_objects_total: int | None = None) -> str:
    """The failure mode of an offsets plan above the optimum (module docstring);
    ``shared_objects_total`` is the same method's shared-objects objective, if it has one."""
    if shared_objects_total is not None and solution.arena_size == shared_objects_total:
        return "stacked objects"
    top = int(np.argmax(np.asarray(solution.offsets) + instance.sizes))
    first, last, _ = compressed_times(instance)
    profile = breadths(instance)
    at_peak = (profile[first[top]:last[top] + 1] == profile.max()).any()
    return "fragmented peak" if at_peak else "off-peak fragmentation"


def classify_shared_objects(instance: Instance, solution: SharedObjectsSolution) -> str:
    """The failure mode of a shared-objects plan above the optimum (module docstring)."""
    maxima = positional_maximums(instance)
    sizes = sorted(solution.object_sizes, reverse=True)
    if len(sizes) > len(maxima):
        return "extra objects"
    return "oversized objects"


def failure_table(results: pd.DataFrame, run_dirs) -> pd.DataFrame:
    """Every heuristic plan above the proven optimum on the real networks (plain problems,
    first repetition) whose solution file is in ``run_dirs``, with its failure mode."""
    from optplan.analysis.load import instance_for_key, optimum_table, solution_path
    from optplan.formats import read_solution_csv

    part = results[(results["suite"] == "networks") & ~results["inplace"].astype(bool)
                   & results["problem"].isin(["shared-objects", "offsets"])]
    optima = optimum_table(part).dropna(subset=["optimum"]).set_index(["instance", "problem"])
    rows = part[(part["kind"] == "heuristic") & (part["valid"] == True)  # noqa: E712
                & (part["repetition"].fillna(0) == 0)]
    totals = rows[rows["problem"] == "shared-objects"].set_index(["instance", "method"])[
        "objective"]
    records, instances = [], {}
    for _, row in rows.iterrows():
        key = (row["instance"], row["problem"])
        if key not in optima.index or row["objective"] <= optima.loc[key, "optimum"]:
            continue
        path = solution_path(run_dirs, row["job_id"])
        if path is None:
            continue
        if row["instance"] not in instances:
            instances[row["instance"]] = instance_for_key(str(row["instance_key"])
                                                          ).without_inplace()
        instance = instances[row["instance"]]
        solution = read_solution_csv(instance, row["problem"], path)
        mode = (classify_offsets(instance, solution, totals.get((row["instance"], row["method"])))
                if row["problem"] == "offsets" else classify_shared_objects(instance, solution))
        records.append({"instance": row["instance"], "problem": row["problem"],
                        "method": row["method"], "job_id": row["job_id"], "mode": mode})
    return pd.DataFrame(records, columns=["instance", "problem", "method", "job_id", "mode"])


def read_failures(run_dirs) -> pd.DataFrame:
    """The ``failures.csv`` of every run directory that has one, concatenated; problems in the
    problem table's spelling (files written before it say ``shared_objects``)."""
    from optplan.problems import canonical_name

    frames = [pd.read_csv(Path(d) / FAILURES_FILE) for d in run_dirs
              if (Path(d) / FAILURES_FILE).is_file()]
    table = (pd.concat(frames, ignore_index=True) if frames else
             pd.DataFrame(columns=["instance", "problem", "method", "job_id", "mode"]))
    table["problem"] = table["problem"].map(canonical_name)
    return table
