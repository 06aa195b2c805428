"""Reading a run directory's results into one long table (one row per job)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from optplan.errors import InputError
from optplan.problems import canonical_name

__all__ = ["load_results", "read_jsonl", "optimum_table", "instance_for_key", "solution_path",
           "suite_of", "SUITES"]

_NESTED = ("violations", "params", "trajectory", "info")
_EXACT_STATUSES = ("OPTIMAL",)
_RECORD_PROBLEMS = ("shared-objects", "offsets")

SUITES = {"networks": "real networks", "examples": "worked examples",
          "minimalloc": "MiniMalloc suite", "synthetic": "synthetic", "preload": "preload",
          "other": "other"}
"""Where an instance comes from (:func:`suite_of`), with a label for legends."""


def suite_of(instance_key: str) -> str:
    """The suite of a row's ``instance_key``: ``networks`` (``data/networks``), ``examples``,
    ``minimalloc`` (MiniMalloc's benchmark CSVs), ``synthetic`` (generators), ``preload``
    (``data/preload``) or ``other``."""
    key = str(instance_key)
    if key.startswith("generator:"):
        return "synthetic"
    if "/minimalloc/" in key or key.startswith("${shared}/peer/minimalloc"):
        return "minimalloc"
    for folder in ("networks", "examples", "preload"):
        if key.startswith(f"data/{folder}/") or f"/data/{folder}/" in key:
            return folder
    return "other"


def load_results(run_dirs) -> pd.DataFrame:
    """All rows of one or more run directories (``results.jsonl``; every complete line).

    Nested columns (params, trajectory, info, violations) come back as Python objects.
    Rows of older runs get the columns newer ones have: ``inplace`` (False), ``budget`` (a
    preload row's ``params.budget``), the problem in the table's spelling (``shared-objects``
    for the older ``shared_objects``); every row gets its ``suite`` (:func:`suite_of`).
    """
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    frames = []
    for run_dir in map(Path, run_dirs):
        path = run_dir / "results.jsonl"
        if not path.is_file():
            raise InputError("not a run directory (no results.jsonl)", file=str(run_dir))
        rows = []
        with open(path, "rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    continue  # a line cut short by a kill
                try:
                    row = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    continue
                if isinstance(row, dict) and isinstance(row.get("job_id"), str):
                    rows.append(row)  # what the run's own reader takes (store.read_rows)
        frame = pd.DataFrame(rows)
        if "job_id" in frame:  # a job retried after a crash: its last row stands
            frame = frame.drop_duplicates("job_id", keep="last")
        frame["run"] = run_dir.name
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    for column in _NESTED:
        if column in table:
            table[column] = table[column].map(lambda v: json.loads(v) if isinstance(v, str) else v)
    if "job_id" in table:
        table = table.drop_duplicates("job_id", keep="first").reset_index(drop=True)
    if table.empty:
        return table
    table["inplace"] = (table["inplace"].fillna(False).astype(bool) if "inplace" in table
                        else False)
    if "problem" in table:
        table["problem"] = table["problem"].map(canonical_name)
    from_params = (table["params"] if "params" in table else pd.Series(None, table.index)).map(
        lambda p: p.get("budget") if isinstance(p, dict) else None)
    table["budget"] = (table["budget"].where(table["budget"].notna(), from_params)
                       if "budget" in table else from_params)
    table["suite"] = (table["instance_key"].map(suite_of) if "instance_key" in table
                      else "other")
    return table


def read_jsonl(path: str | Path) -> list[dict]:
    """The objects of a JSON-lines file, one per non-empty line (the benchmarks' outputs,
    e.g. ``paper/results/search/*.jsonl``, rather than a run directory's rows)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def optimum_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (instance, problem, inplace) of the shared-objects and offsets problems: the lower
    bound, the proven optimum (when a valid OPTIMAL row exists), the best valid objective, the
    best proven bound, and which exact methods proved it. (Preload rows, one optimum per
    budget, are :func:`optplan.analysis.tables.preload_table`'s.)

    Two OPTIMAL rows that disagree are a bug somewhere; the row says so in ``conflict``.
    """
    records = []
    results = results[results["problem"].isin(_RECORD_PROBLEMS)] if len(results) else results
    if "inplace" not in results:
        results = results.assign(inplace=False)
    for (instance, problem, inplace), group in results.groupby(
            ["instance", "problem", "inplace"], sort=True):
        valid = group[group["valid"] == True]  # noqa: E712 (pandas element-wise)
        optimal = valid[valid["status"].isin(_EXACT_STATUSES)]
        objectives = sorted(set(optimal["objective"].dropna().astype(int)))
        best_bound = pd.to_numeric(group["best_bound"], errors="coerce").max()
        records.append({
            "instance": instance, "problem": problem, "inplace": bool(inplace),
            "num_tensors": int(group["num_tensors"].max()) if "num_tensors" in group else None,
            "lower_bound": int(pd.to_numeric(group["lower_bound"], errors="coerce").max()),
            "optimum": objectives[0] if objectives else None,
            "best_objective": (int(valid["objective"].min()) if valid["objective"].notna().any()
                               else None),
            "best_bound": None if pd.isna(best_bound) else int(best_bound),
            "proved_by": ",".join(sorted(set(optimal["method"]))),
            "conflict": len(objectives) > 1,
        })
    return pd.DataFrame(records, columns=None if records else [
        "instance", "problem", "inplace", "num_tensors", "lower_bound", "optimum",
        "best_objective", "best_bound", "proved_by", "conflict"])


def solution_path(run_dirs, job_id: str) -> Path | None:
    """The solution file of job ``job_id`` in the first of ``run_dirs`` that has it."""
    for run_dir in map(Path, run_dirs):
        path = run_dir / "solutions" / f"{job_id}.csv"
        if path.is_file():
            return path
    return None


def instance_for_key(key: str, repo: Path | None = None):
    """Load the instance a results row names by its ``instance_key`` (a preload instance
    file gives a :class:`~optplan.preload.PreloadInstance`)."""
    from optplan.formats import load_instance

    def load_instance_file(path: Path):
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and "layers" in data and "records" not in data:
                from optplan.preload import instance_from_dict

                return instance_from_dict(data)
        return load_instance(path)

    if key.startswith("generator:"):
        from optplan.generators import generate

        _, kind, tensors, seed = key.split(":")
        return generate(kind, int(tensors), seed=int(seed))
    repo = repo or Path(__file__).resolve().parents[2]
    if key.startswith("${shared}"):
        import os

        shared = Path(os.environ.get("OPTPLAN_SHARED", repo.parent / "shared"))
        return load_instance_file(shared / key.removeprefix("${shared}").lstrip("/"))
    path = Path(key)
    return load_instance_file(path if path.is_absolute() else repo / path)
