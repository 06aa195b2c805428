"""``optplan report``: tables and figures from a run directory's rows."""

from __future__ import annotations

import json
from pathlib import Path

from optplan import methods, solve
from optplan.analysis import strategy_table
from optplan.analysis.load import load_results
from optplan.analysis.tables import render_latex, render_markdown
from optplan.cli import main
from optplan.formats import load_instance, write_solution_csv

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "data" / "examples").glob("*.json"))
HEURISTICS = ["greedy_by_size", "greedy_by_breadth", "naive"]


def _write_run(run_dir: Path, exact: str | None) -> None:
    """A run directory written the way the pipeline writes it: one JSON row per job and the
    job's solution file."""
    (run_dir / "solutions").mkdir(parents=True)
    names = HEURISTICS + ([exact] if exact else [])
    with open(run_dir / "results.jsonl", "w") as handle:
        for path in EXAMPLES:
            instance = load_instance(path)
            for problem in ("shared_objects", "offsets"):
                for method in names:
                    result = solve(instance, method, problem, time_limit=10, workers=1, seed=0)
                    job_id = f"{instance.name}-{problem}-{method}"
                    row = result.to_dict()
                    row.pop("solution")
                    row.update(job_id=job_id, instance_key=str(path.relative_to(REPO)),
                               num_tensors=len(instance), kind=methods()[method].kind)
                    handle.write(json.dumps(row) + "\n")
                    write_solution_csv(instance, problem, result.solution,
                                       run_dir / "solutions" / f"{job_id}.csv")
        handle.write('{"job_id": "cut-short", "stat')  # a line cut by a kill is ignored


def test_tables_have_the_optimum_and_gaps(tmp_path):
    exact = "cpsat" if "cpsat" in methods() else None
    _write_run(tmp_path / "run", exact)
    results = load_results(tmp_path / "run")
    assert "cut-short" not in set(results["job_id"])
    table = strategy_table(results, "offsets")
    row = table.set_index("instance").loc["tflite_complex"]
    assert row["lower_bound"] == 96 and row["greedy_by_size"] == 96
    assert row["naive"] == 192
    if exact:
        assert row["optimum"] == 96 and row["gap:naive"] == 1.0
    markdown = render_markdown(table, table.attrs["methods"], "Table 2")
    assert "| tflite_complex | B | 96 |" in markdown
    latex = render_latex(table, table.attrs["methods"], "Table 2.", "tab:offsets")
    assert r"\begin{tabular}" in latex and "tflite\\_complex" in latex


def test_report_command_writes_tables_and_figures(tmp_path, capsys):
    exact = "cpsat" if "cpsat" in methods() else None
    _write_run(tmp_path / "run", exact)
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out.split()
    for name in ("tables/table1_shared_objects.md", "tables/table2_offsets.tex",
                 "figures/profile_offsets.pdf", "figures/profile_offsets.png"):
        assert str(tmp_path / "out" / name) in printed
        assert (tmp_path / "out" / name).stat().st_size > 0
    if exact:
        assert (tmp_path / "out" / "figures" / "layout.png").is_file()


def test_anytime_legend_lists_the_proof_marker_only_when_one_is_drawn():
    """An unproven run draws no floor marker, so its legend has no "proven optimal" entry;
    a proven run draws one, and the entry appears."""
    import pandas as pd

    from optplan.analysis.figures import anytime_figure

    def legend_labels(status):
        row = {"kind": "exact", "instance": "J", "method": "search", "problem": "offsets",
               "status": status, "wall_time_s": 2.0, "repetition": 0,
               "trajectory": [[0.1, 120, 100], [1.0, 110, 100 if status != "OPTIMAL" else 110]]}
        figure = anytime_figure(pd.DataFrame([row]), ["J"])
        return [text.get_text() for legend in figure.legends for text in legend.get_texts()]

    assert "proven optimal" not in legend_labels("FEASIBLE")
    assert "proven optimal" in legend_labels("OPTIMAL")
