"""``make_report``: every table and figure of one or more run directories, written to a folder."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from optplan.analysis import figures, slicing
from optplan.analysis.load import (instance_for_key, load_results, optimum_table,
                                   solution_path)
from optplan.analysis.names import instance_title, method_label, network_label, problem_label
from optplan.analysis.style import save_figure
from optplan.analysis.tables import (preload_table, render_latex, render_markdown,
                                     render_preload_markdown, render_summary_markdown,
                                     strategy_table, summary_table)

__all__ = ["make_report", "hard_instances"]

_TABLES = {"shared-objects": ("table1_shared_objects", "Table 1: shared objects."),
           "offsets": ("table2_offsets", "Table 2: offset calculation.")}
_INPLACE_TABLES = {"shared-objects": ("table1_shared_objects_inplace",
                                      "Table 1 (in place): shared objects with in-place pairs."),
                   "offsets": ("table2_offsets_inplace",
                               "Table 2 (in place): offsets with in-place pairs.")}


def _snake(problem: str) -> str:
    """A problem's name in file names and LaTeX labels (``shared_objects``)."""
    return problem.replace("-", "_")


def make_report(run_dirs, out_dir, *, results: pd.DataFrame | None = None,
                layout_instance: str | None = None,
                layout_method: str = "greedy_by_size") -> list[str]:
    """Write tables (Markdown, LaTeX) and figures (PDF, PNG); return the written paths.

    ``results`` (default: every row of ``run_dirs``) are the rows to report on, e.g. a
    selection of them; solution files are looked up in ``run_dirs``."""
    run_dirs = [Path(d) for d in run_dirs]
    out_dir = Path(out_dir)
    results = load_results(run_dirs) if results is None else results
    written: list[str] = []
    tables_dir, figures_dir = out_dir / "tables", out_dir / "figures"
    tables_dir.mkdir(parents=True, exist_ok=True)

    for problem in _TABLES:
        if results.empty or not (results["problem"] == problem).any():
            continue
        for inplace, (stem, title) in ((False, _TABLES[problem]),
                                       (True, _INPLACE_TABLES[problem])):
            table = strategy_table(results, problem, inplace=inplace)
            if table.empty:
                continue
            methods = table.attrs["methods"]
            label = f"tab:{_snake(problem)}" + ("_inplace" if inplace else "")
            (tables_dir / f"{stem}.md").write_text(render_markdown(table, methods, title))
            (tables_dir / f"{stem}.tex").write_text(render_latex(table, methods, title, label))
            table.to_csv(tables_dir / f"{stem}.csv", index=False)
            written += [str(tables_dir / f"{stem}.{s}") for s in ("md", "tex", "csv")]
        summary = summary_table(results, problem)
        stem = f"summary_{_snake(problem)}"
        if len(summary):
            (tables_dir / f"{stem}.md").write_text(render_summary_markdown(
                summary, f"Per-method summary: {problem_label(problem)}."))
            summary.to_csv(tables_dir / f"{stem}.csv", index=False)
            written += [str(tables_dir / f"{stem}.{s}") for s in ("md", "csv")]
        written += save_figure(figures.performance_profile_figure(results, problem),
                               figures_dir, f"profile_{_snake(problem)}", tight=False)
    optima = optimum_table(results) if not results.empty else pd.DataFrame()
    if not optima.empty:
        optima.to_csv(tables_dir / "optima.csv", index=False)
        written.append(str(tables_dir / "optima.csv"))

    planning = results[results["problem"] != "preload"] if not results.empty else results
    if not planning.empty and (planning["kind"] == "exact").any():
        written += save_figure(figures.solve_time_figure(planning), figures_dir, "solve_time")
        hard = hard_instances(planning)
        if hard:
            suites = planning.drop_duplicates("instance").set_index("instance")["suite"]
            titles = {name: instance_title(name, suites.get(name, "other")) for name in hard}
            written += save_figure(figures.anytime_figure(planning, hard, titles), figures_dir,
                                   "anytime")
    if not results.empty and (results["problem"] == "preload").any():
        written += save_figure(figures.preload_figure(results), figures_dir, "preload")
        written += _slicing_report(results, run_dirs, tables_dir)
        table = preload_table(results)
        if not table.empty:
            (tables_dir / "preload.md").write_text(
                render_preload_markdown(table, "Preload: latency vs budget."))
            table.to_csv(tables_dir / "preload.csv", index=False)
            written += [str(tables_dir / "preload.md"), str(tables_dir / "preload.csv")]
    layout = _layout(results, run_dirs, layout_instance, layout_method)
    if layout is not None:
        written += save_figure(layout, figures_dir, "layout")
    return written


def _slicing_report(results: pd.DataFrame, run_dirs, tables_dir: Path) -> list[str]:
    """The table of layer slicing (:func:`optplan.analysis.slicing.slicing_table`) when exact
    rows with ``params.slicing`` are among the results."""
    minimums = {}
    for run_dir in run_dirs:
        minimums |= slicing.sweep_minimums(run_dir)
    table = slicing.slicing_table(results, minimums)
    if table.empty:
        return []
    caption = "Layer slicing: minimum budgets and FlexNN's gap."
    (tables_dir / "slicing.md").write_text(slicing.render_slicing_markdown(table, caption))
    table.to_csv(tables_dir / "slicing.csv", index=False)
    return [str(tables_dir / f"slicing.{suffix}") for suffix in ("md", "csv")]


def hard_instances(results: pd.DataFrame, count: int = 4, *,
                   quick_s: float = 1.0) -> list[str]:
    """The instances on which the exact methods did not close quickly, hardest first, taken in
    turn from each suite (so MiniMalloc's benchmarks and the networks both appear).

    Over the exact runs of an instance's plain problems: an instance no run proved is open and
    ranks above every proven one (the larger its smallest remaining gap, the higher); a proven
    one ranks by its time to the first proof. Instances proved within ``quick_s`` seconds, and
    those without anytime samples (no run with a trajectory of two points or more), are left
    out.
    """
    if results.empty or "trajectory" not in results:
        return []
    rows = results[(results["kind"] == "exact") & results["wall_time_s"].notna()]
    if "inplace" in rows:
        rows = rows[~rows["inplace"].fillna(False).astype(bool)]
    sampled = rows["trajectory"].map(lambda t: isinstance(t, list) and len(t) > 1)
    rows = rows[rows["instance"].isin(set(rows.loc[sampled, "instance"]))]
    ranking = []
    for instance, group in rows.groupby("instance"):
        optimal = group[group["status"] == "OPTIMAL"]
        if optimal.empty:
            gap = pd.to_numeric(group["gap"], errors="coerce").fillna(1.0).min()
            ranking.append((1, float(gap), math.inf, instance))
        elif optimal["wall_time_s"].min() > quick_s:
            ranking.append((0, 0.0, float(optimal["wall_time_s"].min()), instance))
    ranking.sort(reverse=True)
    suite = (rows.drop_duplicates("instance").set_index("instance")["suite"]
             if "suite" in rows else pd.Series(dtype=object))
    queues: dict[str, list[str]] = {}
    for *_, instance in ranking:
        queues.setdefault(suite.get(instance, "other"), []).append(instance)
    chosen: list[str] = []
    while len(chosen) < count and any(queues.values()):
        for queue in queues.values():
            if queue and len(chosen) < count:
                chosen.append(queue.pop(0))
    return chosen


def _layout(results, run_dirs, instance_name, method):
    """Heuristic vs proven optimum on one offsets instance: ``instance_name``, or the one with
    the largest gap among those whose two solution files are at hand (a real network when
    there is one: committed runs keep only the networks' solution files)."""
    from optplan.formats import read_solution_csv

    if results.empty:
        return None
    rows = results[(results["problem"] == "offsets") & (results["valid"] == True)  # noqa
                   & ~results["inplace"].astype(bool)]
    if instance_name is not None:
        rows = rows[rows["instance"] == instance_name]
    present = pd.Series([solution_path(run_dirs, row["job_id"]) is not None
                         for _, row in rows.iterrows()], index=rows.index, dtype=bool)
    rows = rows[present]
    optimal = rows[rows["status"] == "OPTIMAL"]
    heuristic = rows[rows["method"] == method]
    candidates = sorted(set(optimal["instance"]) & set(heuristic["instance"]))
    networks = [c for c in candidates
                if (rows.loc[rows["instance"] == c, "suite"] == "networks").any()]
    candidates = networks or candidates
    if not candidates:
        return None

    def gap(name):
        best = optimal[optimal["instance"] == name]["objective"].min()
        return heuristic[heuristic["instance"] == name]["objective"].min() / best

    chosen = max(candidates, key=gap)
    opt_row = optimal[optimal["instance"] == chosen].sort_values("wall_time_s").iloc[0]
    heur_row = heuristic[heuristic["instance"] == chosen].iloc[0]
    instance = instance_for_key(opt_row["instance_key"])
    solutions = {label: read_solution_csv(instance, "offsets",
                                          solution_path(run_dirs, row["job_id"]))
                 for label, row in ((method_label(method), heur_row),
                                    (f"optimum ({method_label(opt_row['method'])})", opt_row))}
    return figures.layout_figure(instance, solutions, title=network_label(chosen))
