"""Shared helpers of the gap-analysis notebooks: where the committed results live.

Set ``OPTPLAN_PAPER_RESULTS`` to analyse other run directories (one folder holding them)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

PAPER = Path(__file__).resolve().parents[1]
REPO = PAPER.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

RESULTS_ROOT = Path(os.environ.get("OPTPLAN_PAPER_RESULTS", PAPER / "results"))


def run_dirs() -> list[Path]:
    """The run directories of the paper's evaluation, as ``paper/build.py`` reads them
    (its ``EVALUATION_RUNS``: not the peers run, not ``make run``'s default run)."""
    spec = importlib.util.spec_from_file_location("paper_build", PAPER / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    found = build.run_directories(RESULTS_ROOT)
    assert found, f"no run directories under {RESULTS_ROOT}"
    return found


def raw_rows() -> list[dict]:
    """Every complete row of every run, read with plain ``json`` (independent of pandas),
    first occurrence of a job id kept and the problem in the table's spelling (as
    :func:`optplan.analysis.load.load_results` does)."""
    from optplan.problems import canonical_name

    rows, seen = [], set()
    for run_dir in run_dirs():
        for line in (run_dir / "results.jsonl").read_text().splitlines(keepends=True):
            if not line.endswith("\n"):
                continue
            row = json.loads(line)
            if row["job_id"] not in seen:
                seen.add(row["job_id"])
                row["run_dir"] = str(run_dir)
                row["problem"] = canonical_name(row["problem"])
                rows.append(row)
    return rows


PLANNING_PROBLEMS = ("shared-objects", "offsets")


def proven_optima(rows: list[dict], inplace: bool = False) -> dict[tuple[str, str], int]:
    """(instance, problem) -> the objective of a valid OPTIMAL row of the shared-objects or
    offsets problem, plain (default) or in place (all such rows must agree). Preload rows have
    one optimum per budget and are not here."""
    optima: dict[tuple[str, str], set[int]] = {}
    for row in rows:
        if (row["problem"] in PLANNING_PROBLEMS and bool(row.get("inplace")) == inplace
                and row["status"] == "OPTIMAL" and row["valid"]
                and row["objective"] is not None):
            optima.setdefault((row["instance"], row["problem"]), set()).add(int(row["objective"]))
    for key, values in optima.items():
        assert len(values) == 1, f"solvers disagree on the optimum of {key}: {values}"
    return {key: values.pop() for key, values in optima.items()}


def instance_available(key: str) -> bool:
    """Whether the instance file a row names is here (MiniMalloc's CSVs live in the shared
    folder, which a fresh clone does not have)."""
    from optplan.analysis.load import instance_for_key

    try:
        instance_for_key(key)
    except (OSError, ValueError):
        return False
    return True
