"""``make_report``: every table and figure of one or more run directories, written to a folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from optplan.analysis import figures
from optplan.analysis.load import instance_for_key, load_results, optimum_table
from optplan.analysis.style import save_figure
from optplan.analysis.tables import render_latex, render_markdown, strategy_table

__all__ = ["make_report"]

_TABLES = {"shared_objects": ("table1_shared_objects", "Table 1: shared objects."),
           "offsets": ("table2_offsets", "Table 2: offset calculation.")}


def make_report(run_dirs, out_dir, *, layout_instance: str | None = None,
                layout_method: str = "greedy_by_size") -> list[str]:
    """Write tables (Markdown, LaTeX) and figures (PDF, PNG); return the written paths."""
    run_dirs = [Path(d) for d in run_dirs]
    out_dir = Path(out_dir)
    results = load_results(run_dirs)
    written: list[str] = []
    tables_dir, figures_dir = out_dir / "tables", out_dir / "figures"
    tables_dir.mkdir(parents=True, exist_ok=True)

    for problem, (stem, title) in _TABLES.items():
        if results.empty or not (results["problem"] == problem).any():
            continue
        table = strategy_table(results, problem)
        methods = table.attrs["methods"]
        (tables_dir / f"{stem}.md").write_text(render_markdown(table, methods, title))
        (tables_dir / f"{stem}.tex").write_text(
            render_latex(table, methods, title, f"tab:{problem}"))
        table.to_csv(tables_dir / f"{stem}.csv", index=False)
        written += [str(tables_dir / f"{stem}.{s}") for s in ("md", "tex", "csv")]
        written += save_figure(figures.gap_distribution_figure(results, problem), figures_dir,
                               f"gaps_{problem}")
    optima = optimum_table(results) if not results.empty else pd.DataFrame()
    if not optima.empty:
        optima.to_csv(tables_dir / "optima.csv", index=False)
        written.append(str(tables_dir / "optima.csv"))

    if not results.empty and (results["kind"] == "exact").any():
        written += save_figure(figures.solve_time_figure(results), figures_dir, "solve_time")
        hard = _hard_instances(results)
        if hard:
            written += save_figure(figures.anytime_figure(results, hard), figures_dir, "anytime")
    if not results.empty and (results["problem"] == "preload").any():
        written += save_figure(figures.preload_figure(results), figures_dir, "preload")
    layout = _layout(results, run_dirs, layout_instance, layout_method)
    if layout is not None:
        written += save_figure(layout, figures_dir, "layout")
    return written


def _hard_instances(results: pd.DataFrame, count: int = 3) -> list[str]:
    """The instances whose exact runs took longest and have anytime samples."""
    rows = results[(results["kind"] == "exact")
                   & results["trajectory"].map(lambda t: bool(t) and len(t) > 1)]
    if rows.empty:
        return []
    slowest = rows.groupby("instance")["wall_time_s"].max().sort_values(ascending=False)
    return slowest.index[:count].tolist()


def _solution_of(row, run_dirs, instance):
    from optplan.formats import read_solution_csv

    for run_dir in run_dirs:
        path = run_dir / "solutions" / f"{row['job_id']}.csv"
        if path.is_file():
            return read_solution_csv(instance, row["problem"], path)
    return None


def _layout(results, run_dirs, instance_name, method):
    """Heuristic vs proven optimum on one offsets instance (default: the largest gap)."""
    if results.empty:
        return None
    rows = results[(results["problem"] == "offsets") & (results["valid"] == True)]  # noqa
    optimal = rows[rows["status"] == "OPTIMAL"]
    heuristic = rows[rows["method"] == method]
    candidates = sorted(set(optimal["instance"]) & set(heuristic["instance"]))
    if instance_name is not None:
        candidates = [c for c in candidates if c == instance_name]
    if not candidates:
        return None

    def gap(name):
        best = optimal[optimal["instance"] == name]["objective"].min()
        return heuristic[heuristic["instance"] == name]["objective"].min() / best

    chosen = max(candidates, key=gap) if instance_name is None else candidates[0]
    opt_row = optimal[optimal["instance"] == chosen].sort_values("wall_time_s").iloc[0]
    heur_row = heuristic[heuristic["instance"] == chosen].iloc[0]
    instance = instance_for_key(opt_row["instance_key"])
    solutions = {}
    for label, row in ((method, heur_row), (f"optimum ({opt_row['method']})", opt_row)):
        solution = _solution_of(row, run_dirs, instance)
        if solution is None:
            return None
        solutions[label] = solution
    return figures.layout_figure(instance, solutions, title=chosen)
