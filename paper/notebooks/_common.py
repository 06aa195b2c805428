"""Shared helpers of the gap-analysis notebooks: where the committed results live.

Set ``OPTPLAN_PAPER_RESULTS`` to analyse other run directories (one folder holding them)."""

from __future__ import annotations

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
    """Every committed run directory (a folder with ``results.jsonl``)."""
    found = sorted(p.parent for p in RESULTS_ROOT.glob("*/results.jsonl"))
    assert found, f"no run directories under {RESULTS_ROOT}"
    return found


def raw_rows() -> list[dict]:
    """Every complete row of every run, read with plain ``json`` (independent of pandas),
    first occurrence of a job id kept (as :func:`optplan.analysis.load.load_results` does)."""
    rows, seen = [], set()
    for run_dir in run_dirs():
        for line in (run_dir / "results.jsonl").read_text().splitlines(keepends=True):
            if not line.endswith("\n"):
                continue
            row = json.loads(line)
            if row["job_id"] not in seen:
                seen.add(row["job_id"])
                row["run_dir"] = str(run_dir)
                rows.append(row)
    return rows


def proven_optima(rows: list[dict]) -> dict[tuple[str, str], int]:
    """(instance, problem) -> the objective of a valid OPTIMAL row (all such rows must agree)."""
    optima: dict[tuple[str, str], set[int]] = {}
    for row in rows:
        if row["status"] == "OPTIMAL" and row["valid"] and row["objective"] is not None:
            optima.setdefault((row["instance"], row["problem"]), set()).add(int(row["objective"]))
    for key, values in optima.items():
        assert len(values) == 1, f"solvers disagree on the optimum of {key}: {values}"
    return {key: values.pop() for key, values in optima.items()}
