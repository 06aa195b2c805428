"""Regenerate the paper's tables, figures and number macros from the committed results.

Usage::

    python paper/build.py [--results DIR ...] [--out paper/generated]

Reads the run directories under ``paper/results/`` (every folder holding a ``results.jsonl``;
``paper/results/preload/pareto.jsonl`` for the preload section) and writes

* ``generated/tables/`` and ``generated/figures/`` through
  :func:`optplan.analysis.report.make_report` (Tables 1 and 2 in the shape of Pisarchyk &
  Lee 2020; layout, gap, solve-time and anytime figures), and
  ``generated/figures/preload.{pdf,png}`` through
  :func:`optplan.analysis.figures.preload_figure`,
* ``generated/tables/hashes.tex`` — the appendix: every instance's content SHA-256
  (:func:`optplan.instances.content_hash`),
* ``generated/macros.tex`` — every number the prose of ``main.tex`` states, as a LaTeX macro, so
  the text cannot drift from the data.

No solver runs here: only the committed rows are read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

PAPER = Path(__file__).resolve().parent
REPO = PAPER.parent
if str(REPO) not in sys.path:  # running as ``python paper/build.py`` from a fresh clone
    sys.path.insert(0, str(REPO))

from optplan.analysis.load import instance_for_key, load_results, optimum_table  # noqa: E402
from optplan.analysis.report import make_report  # noqa: E402
from optplan.analysis.tables import render_latex, strategy_table  # noqa: E402

PROBLEMS = {"shared_objects": "SO", "offsets": "OC"}
# The paper's Tables 1 and 2: the strategies of Pisarchyk & Lee 2020 (plus strip packing for
# offsets) in their order; the report's full tables (every heuristic) stay in generated/tables.
PAPER_METHODS = {
    "shared_objects": ["naive", "greedy_in_order", "greedy_by_breadth", "greedy_by_size",
                       "greedy_best", "min_cost_flow", "equality"],
    "offsets": ["naive", "greedy_in_order", "greedy_by_breadth", "greedy_by_size", "greedy_best",
                "strip_packing_best_fit"],
}
PAPER_TABLES = {"shared_objects": ("paper_table1", "Shared objects (Table 1 of Pisarchyk & Lee "
                                   "2020) with the proven optimum.", "tab:shared_objects"),
                "offsets": ("paper_table2", "Offset calculation (Table 2 of Pisarchyk & Lee "
                            "2020) with the proven optimum.", "tab:offsets")}
_DIGITS = dict(zip("0123456789", ["Zero", "One", "Two", "Three", "Four", "Five", "Six",
                                  "Seven", "Eight", "Nine"]))


def macro_name(*parts: str) -> str:
    """A LaTeX control word from free text: CamelCase letters only (digits spelled out)."""
    words = []
    for part in parts:
        for word in re.split(r"[^A-Za-z0-9]+", str(part)):
            word = "".join(_DIGITS.get(c, c) for c in word)
            if word:
                words.append(word[0].upper() + word[1:])
    return "".join(words)


def run_directories(results_root: Path) -> list[Path]:
    """Every committed run directory (a folder with ``results.jsonl``), sorted by name."""
    return sorted(p.parent for p in results_root.glob("*/results.jsonl"))


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def problem_macros(results: pd.DataFrame, problem: str) -> dict[str, str]:
    """Per problem: instance counts, proven optima, per-heuristic hits and gaps, bound tightness."""
    tag = PROBLEMS[problem]
    table = strategy_table(results, problem)
    methods = table.attrs["methods"]
    proven = table[table["proven"]]
    macros = {f"NumInstances{tag}": str(len(table)), f"NumProven{tag}": str(len(proven))}
    at_bound = (proven["optimum"].astype(float) == proven["lower_bound"].astype(float))
    macros[f"NumOptimumAtBound{tag}"] = str(int(at_bound.sum()))
    slack = (proven["optimum"].astype(float) / proven["lower_bound"].astype(float) - 1)
    macros[f"MaxBoundSlack{tag}"] = _percent(slack.max()) if len(slack) else "--"
    best_mean, best_method = None, None
    for method in methods:
        gaps = pd.to_numeric(proven[f"gap:{method}"], errors="coerce").dropna()
        name = macro_name(method)
        macros[f"NumOptimal{name}{tag}"] = str(int((gaps <= 0).sum()))
        macros[f"NumRun{name}{tag}"] = str(len(gaps))
        macros[f"MaxGap{name}{tag}"] = _percent(gaps.max()) if len(gaps) else "--"
        macros[f"MeanGap{name}{tag}"] = _percent(gaps.mean()) if len(gaps) else "--"
        complete = len(gaps) == len(proven) and len(gaps) > 0
        if complete and (best_mean is None or gaps.mean() < best_mean):
            best_mean, best_method = gaps.mean(), method
    if best_method is not None:
        macros[f"BestHeuristic{tag}"] = best_method.replace("_", r"\_")
        macros[f"BestHeuristicMeanGap{tag}"] = _percent(best_mean)
    # The instance where the best heuristic of the table falls furthest from the optimum.
    if best_method is not None:
        gaps = pd.to_numeric(proven[f"gap:{best_method}"], errors="coerce")
        worst = proven.loc[gaps.idxmax()]
        macros[f"WorstInstanceBest{tag}"] = str(worst["instance"]).replace("_", r"\_")
        macros[f"WorstGapBest{tag}"] = _percent(gaps.max())
    # Heuristics optimal on every proven instance.
    always = [m for m in methods
              if len(proven) and (pd.to_numeric(proven[f"gap:{m}"], errors="coerce") <= 0).all()]
    macros[f"NumAlwaysOptimal{tag}"] = str(len(always))
    macros[f"NumHeuristics{tag}"] = str(len(methods))
    return macros


def exact_macros(results: pd.DataFrame) -> dict[str, str]:
    """Solve times and statuses of the exact methods."""
    exact = results[results["kind"] == "exact"]
    macros = {}
    for method, rows in exact.groupby("method"):
        name = macro_name(method)
        optimal = rows[rows["status"] == "OPTIMAL"]
        macros[f"NumRuns{name}"] = str(len(rows))
        macros[f"NumOptimalRuns{name}"] = str(len(optimal))
        macros[f"MaxTime{name}"] = (f"{optimal['wall_time_s'].max():.1f}" if len(optimal)
                                    else "--")
    time_limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    macros["TimeLimits"] = ", ".join(f"{t:g}" for t in time_limits) or "--"
    macros["NumJobs"] = str(len(results))
    macros["NumNetworks"] = str(results["instance"].nunique())
    return macros


def load_preload(path: Path) -> pd.DataFrame:
    """Preload sweep rows — ``bench/preload.py --jsonl`` (``objective``) or
    :func:`optplan.preload.pareto.pareto_curve` (``latency_us``) — in the shape
    :func:`optplan.analysis.figures.preload_figure` reads (problem, params.budget, objective)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    frame = pd.DataFrame(rows)
    if "latency_us" not in frame:
        frame["latency_us"] = frame["objective"]
    frame["problem"] = "preload"
    frame["objective"] = frame["latency_us"]
    frame["params"] = frame["budget"].map(lambda b: {"budget": int(b)})
    return frame.drop_duplicates(["instance", "budget", "method"], keep="last")


_PRELOAD_MACROS = ("PreloadNumBudgets", "PreloadNumProven", "PreloadNumNetworks",
                   "PreloadFlexNNOptimal", "PreloadFlexNNMaxGap", "PreloadFlexNNMeanGap")


def preload_macros(frame: pd.DataFrame | None) -> dict[str, str]:
    """FlexNN vs the proven optimum at each budget: how often it is optimal, its worst gap."""
    if frame is None or frame.empty:
        return {name: "--" for name in _PRELOAD_MACROS} | {"PreloadStatus": "pending"}
    pivot = frame[frame["valid"] == True].pivot_table(  # noqa: E712
        index=["instance", "budget"], columns="method", values="latency_us")
    statuses = frame[frame["method"] == "cpsat"].set_index(["instance", "budget"])["status"]
    proven = pivot[statuses.reindex(pivot.index) == "OPTIMAL"].dropna(subset=["flexnn", "cpsat"])
    gaps = (proven["flexnn"] - proven["cpsat"]) / proven["cpsat"]
    macros = {"PreloadStatus": "done", "PreloadNumBudgets": str(len(pivot)),
              "PreloadNumProven": str(len(proven)),
              "PreloadNumNetworks": str(frame["instance"].nunique()),
              "PreloadFlexNNOptimal": str(int((gaps <= 0).sum())),
              "PreloadFlexNNMaxGap": _percent(gaps.max()) if len(gaps) else "--",
              "PreloadFlexNNMeanGap": _percent(gaps.mean()) if len(gaps) else "--"}
    return macros


def hash_table(results: pd.DataFrame) -> str:
    """The appendix table: instance name, tensors, content SHA-256 (split in two lines)."""
    from optplan.instances import content_hash

    lines = [r"\begin{tabular}{lrl}", r"\toprule", r"instance & tensors & SHA-256 \\",
             r"\midrule"]
    keys = results.drop_duplicates("instance").sort_values("instance")
    for _, row in keys.iterrows():
        digest = content_hash(instance_for_key(row["instance_key"]))
        name = str(row["instance"]).replace("_", r"\_")
        lines.append(rf"{name} & {int(row['num_tensors'])} & "
                     rf"\texttt{{\scriptsize {digest[:32]}}} \\")
        lines.append(rf" & & \texttt{{\scriptsize {digest[32:]}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_macros(macros: dict[str, str], path: Path) -> None:
    text = "% Generated by paper/build.py from paper/results/ — do not edit.\n"
    text += "".join(rf"\newcommand{{\{name}}}{{{value}}}" + "\n"
                    for name, value in sorted(macros.items()))
    path.write_text(text)


def build(run_dirs, out_dir: Path, preload_file: Path | None = None) -> dict[str, str]:
    """Write tables, figures, hashes and macros into ``out_dir``; return the macros."""
    from optplan.analysis import figures
    from optplan.analysis.style import save_figure

    out_dir = Path(out_dir)
    (out_dir / "tables").mkdir(parents=True, exist_ok=True)
    make_report(run_dirs, out_dir)
    results = load_results(run_dirs)
    macros: dict[str, str] = {}
    for problem in PROBLEMS:
        if (results["problem"] == problem).any():
            macros.update(problem_macros(results, problem))
            stem, caption, label = PAPER_TABLES[problem]
            present = set(results.loc[results["problem"] == problem, "method"])
            methods = [m for m in PAPER_METHODS[problem] if m in present]
            table = strategy_table(results, problem, methods)
            (out_dir / "tables" / f"{stem}.tex").write_text(
                render_latex(table, methods, caption, label))
    macros.update(exact_macros(results))
    cores = sorted({session.get("core_budget") for run_dir in map(Path, run_dirs)
                    for session in json.loads((run_dir / "manifest.json").read_text())["sessions"]
                    if session.get("core_budget")})
    macros["CoreBudget"] = "/".join(map(str, cores)) or "--"
    optima = optimum_table(results)
    macros["NumConflicts"] = str(int(optima["conflict"].sum()))
    preload = load_preload(preload_file) if preload_file and preload_file.is_file() else None
    macros.update(preload_macros(preload))
    if preload is not None and not preload.empty:
        save_figure(figures.preload_figure(preload), out_dir / "figures", "preload")
    (out_dir / "tables" / "hashes.tex").write_text(hash_table(results))
    write_macros(macros, out_dir / "macros.tex")
    return macros


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", nargs="*", type=Path,
                        help="run directories (default: every one under paper/results/)")
    parser.add_argument("--out", type=Path, default=PAPER / "generated")
    parser.add_argument("--preload", type=Path,
                        default=PAPER / "results" / "preload" / "pareto.jsonl")
    args = parser.parse_args(argv)
    run_dirs = args.results or run_directories(PAPER / "results")
    if not run_dirs:
        print("no run directories under paper/results/", file=sys.stderr)
        return 1
    macros = build(run_dirs, args.out, args.preload)
    print(f"wrote {args.out} ({len(macros)} macros from {', '.join(map(str, run_dirs))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
