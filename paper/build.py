"""Regenerate the paper's tables, figures and number macros from the committed results.

Usage::

    python paper/build.py [--results DIR ...] [--out paper/generated]

Reads the run directories under ``paper/results/`` (every folder holding a ``results.jsonl``:
``default``, ``paper``, ``minimalloc``, ``preload``) and writes

* ``generated/tables/`` and ``generated/figures/`` through
  :func:`optplan.analysis.report.make_report` over all of them: the full tables, the layout and
  gap figures, solve time vs size (every suite, MiniMalloc's marked), anytime curves on the
  hard instances (:func:`optplan.analysis.report.hard_instances`) and the preload
  latency/budget figure (from the preload run's rows);
* ``generated/tables/paper_table{1,2}.tex`` — the paper's Tables 1 and 2: one row per network
  (``data/networks``, plain problems), Pisarchyk & Lee's six networks first, then the others;
* ``generated/tables/hashes.tex`` — the appendix: every instance's content SHA-256
  (:func:`optplan.instances.content_hash`; preload instances: their canonical JSON;
  MiniMalloc's CSVs when the shared folder is present),
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
from optplan.analysis.names import instance_title, is_paper_network, network_label  # noqa: E402
from optplan.analysis.report import hard_instances, make_report  # noqa: E402
from optplan.analysis.tables import preload_table, render_latex, strategy_table  # noqa: E402

PROBLEMS = {"shared-objects": "SO", "offsets": "OC"}
# The paper's Tables 1 and 2: the strategies of Pisarchyk & Lee 2020 (plus strip packing for
# offsets) in their order; the report's full tables (every heuristic) stay in generated/tables.
PAPER_METHODS = {
    "shared-objects": ["naive", "greedy_in_order", "greedy_by_breadth", "greedy_by_size",
                       "greedy_best", "min_cost_flow", "equality"],
    "offsets": ["naive", "greedy_in_order", "greedy_by_breadth", "greedy_by_size", "greedy_best",
                "strip_packing_best_fit"],
}
PAPER_TABLES = {"shared-objects": ("paper_table1", "Shared objects (Table 1 of Pisarchyk & Lee "
                                   "2020) with the proven optimum.", "tab:shared_objects"),
                "offsets": ("paper_table2", "Offset calculation (Table 2 of Pisarchyk & Lee "
                            "2020) with the proven optimum.", "tab:offsets")}
COLUMN_HEADS = {"naive": "naive", "greedy_in_order": "greedy\nin order",
                "greedy_by_breadth": "greedy by\nbreadth", "greedy_by_size": "greedy\nby size",
                "greedy_best": "greedy\nbest", "min_cost_flow": "min-cost\nflow",
                "equality": "equality", "strip_packing_best_fit": "strip packing\nbest fit"}
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


def network_groups(names) -> list[tuple[str, list[str]]]:
    """The tables' two blocks: Pisarchyk & Lee's six networks, then the others."""
    names = sorted(names)
    six = [n for n in names if is_paper_network(n)]
    return [("Pisarchyk & Lee's six networks", six),
            ("Other networks", [n for n in names if n not in six])]


def network_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's tables: networks (``data/networks``), plain problems."""
    return results[(results["suite"] == "networks") & ~results["inplace"]
                   & results["problem"].isin(list(PROBLEMS))]


def run_directories(results_root: Path) -> list[Path]:
    """Every committed run directory (a folder with ``results.jsonl``), sorted by name."""
    return sorted(p.parent for p in results_root.glob("*/results.jsonl"))


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def problem_macros(results: pd.DataFrame, problem: str, inplace: bool = False
                   ) -> dict[str, str]:
    """Per problem: instance counts, proven optima, per-heuristic hits and gaps, bound tightness
    (in-place variant: the ``IP`` macros, e.g. ``NumProvenSOIP``)."""
    tag = PROBLEMS[problem] + ("IP" if inplace else "")
    table = strategy_table(results, problem, inplace=inplace)
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
        macros[f"WorstInstanceBest{tag}"] = network_label(str(worst["instance"])).replace(
            "_", r"\_")
        macros[f"WorstGapBest{tag}"] = _percent(gaps.max())
    # Heuristics optimal on every proven instance.
    always = [m for m in methods
              if len(proven) and (pd.to_numeric(proven[f"gap:{m}"], errors="coerce") <= 0).all()]
    macros[f"NumAlwaysOptimal{tag}"] = str(len(always))
    macros[f"NumHeuristics{tag}"] = str(len(methods))
    return macros


def exact_macros(results: pd.DataFrame, tag: str = "") -> dict[str, str]:
    """Solve times and statuses of the exact methods on the SO/OC problems (``tag`` suffixes
    the names: ``NumRunsCpsatMiniMalloc``)."""
    exact = results[(results["kind"] == "exact") & results["problem"].isin(list(PROBLEMS))]
    macros = {}
    for method, rows in exact.groupby("method"):
        name = macro_name(method) + tag
        optimal = rows[rows["status"] == "OPTIMAL"]
        macros[f"NumRuns{name}"] = str(len(rows))
        macros[f"NumOptimalRuns{name}"] = str(len(optimal))
        macros[f"MaxTime{name}"] = (f"{optimal['wall_time_s'].max():.1f}" if len(optimal)
                                    else "--")
    time_limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    macros[f"TimeLimits{tag}"] = ", ".join(f"{t:g}" for t in time_limits) or "--"
    return macros


_MINIMALLOC_MACROS = ("NumMiniMalloc", "NumProvenMiniMalloc", "NumOpenMiniMalloc",
                      "OpenMiniMalloc", "MaxTimeProofMiniMalloc", "TimeLimitsMiniMalloc",
                      "NumRunsSearchMiniMalloc", "NumOptimalRunsSearchMiniMalloc",
                      "NumRunsCpsatMiniMalloc", "NumOptimalRunsCpsatMiniMalloc")
"""Defined (as --) without a MiniMalloc run, so that main.tex still builds."""


def minimalloc_macros(results: pd.DataFrame) -> dict[str, str]:
    """MiniMalloc's challenging suite: instances, proven by any exact method, the open ones,
    the slowest proof (and the per-method counts of :func:`exact_macros`)."""
    rows = results[(results["suite"] == "minimalloc") & (results["problem"] == "offsets")]
    if rows.empty:
        return {name: "--" for name in _MINIMALLOC_MACROS}
    optima = optimum_table(rows)
    proven = optima[optima["optimum"].notna()]
    attempted = set(rows.loc[rows["kind"] == "exact", "instance"])
    open_names = sorted(attempted - set(proven["instance"]))
    exact = rows[(rows["kind"] == "exact") & (rows["status"] == "OPTIMAL")]
    fastest = exact.groupby("instance")["wall_time_s"].min()
    macros = {"NumMiniMalloc": str(len(optima)), "NumProvenMiniMalloc": str(len(proven)),
              "NumOpenMiniMalloc": str(len(open_names)),
              "OpenMiniMalloc": ", ".join(open_names) or "none",
              "MaxTimeProofMiniMalloc": f"{fastest.max():.1f}" if len(fastest) else "--"}
    return macros | exact_macros(rows, "MiniMalloc")


_PRELOAD_MACROS = ("PreloadNumBudgets", "PreloadNumProven", "PreloadNumNetworks",
                   "PreloadFlexNNOptimal", "PreloadFlexNNMaxGap", "PreloadFlexNNMeanGap",
                   "PreloadNoPreloadMeanGap", "PreloadTimeLimit", "PreloadMaxTime")


def preload_macros(results: pd.DataFrame) -> dict[str, str]:
    """FlexNN vs the proven optimum at each budget of the preload run: how often it is
    optimal, its worst and mean gap; the no-preload baseline's mean gap; CP-SAT's time."""
    table = preload_table(results) if (results["problem"] == "preload").any() else None
    if table is None or table.empty:
        return {name: "--" for name in _PRELOAD_MACROS} | {"PreloadStatus": "pending"}
    proven = table[table["proven"]]
    flexnn = pd.to_numeric(proven["gap:flexnn"], errors="coerce").dropna()
    baseline = pd.to_numeric(proven["gap:no_preload"], errors="coerce").dropna()
    exact = results[(results["problem"] == "preload") & (results["method"] == "cpsat")]
    limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    return {"PreloadStatus": "done", "PreloadNumBudgets": str(len(table)),
            "PreloadNumProven": str(len(proven)),
            "PreloadNumNetworks": str(table["instance"].nunique()),
            "PreloadFlexNNOptimal": str(int((flexnn <= 0).sum())),
            "PreloadFlexNNMaxGap": _percent(flexnn.max()) if len(flexnn) else "--",
            "PreloadFlexNNMeanGap": _percent(flexnn.mean()) if len(flexnn) else "--",
            "PreloadNoPreloadMeanGap": _percent(baseline.mean()) if len(baseline) else "--",
            "PreloadTimeLimit": ", ".join(f"{t:g}" for t in limits) or "--",
            "PreloadMaxTime": f"{pd.to_numeric(exact['wall_time_s']).max():.1f}"}


def instance_hash(key: str) -> str | None:
    """The content SHA-256 of the instance a row names: :func:`optplan.instances.content_hash`
    for usage records, the canonical JSON (layers, tensors, window, budget) for a preload
    instance; ``None`` when the file is not here (MiniMalloc's CSVs without the shared folder)."""
    import hashlib

    from optplan.instances import content_hash
    from optplan.preload import PreloadInstance, instance_to_dict

    try:
        instance = instance_for_key(key)
    except (OSError, ValueError):
        return None
    if isinstance(instance, PreloadInstance):
        data = instance_to_dict(instance)
        canonical = {k: data[k] for k in ("layers", "tensors", "window", "budget") if k in data}
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()
    return content_hash(instance)


def hash_table(results: pd.DataFrame) -> str:
    """The appendix table: instance name, tensors, content SHA-256."""
    lines = [r"\scriptsize", r"\begin{tabular}{lrl}", r"\toprule",
             r"instance & tensors & SHA-256 \\", r"\midrule"]
    keys = results.drop_duplicates("instance").sort_values("instance")
    for _, row in keys.iterrows():
        digest = instance_hash(row["instance_key"])
        name = str(row["instance"]).replace("_", r"\_")
        if digest is None:
            lines.append(rf"{name} & {int(row['num_tensors'])} & (file not present) \\")
            continue
        lines.append(rf"{name} & {int(row['num_tensors'])} & \texttt{{{digest}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_macros(macros: dict[str, str], path: Path) -> None:
    """One ``\\newcommand`` per macro; a value using ``#1``/``#2`` takes two arguments."""
    text = "% Generated by paper/build.py from paper/results/ — do not edit.\n"
    for name, value in sorted(macros.items()):
        arguments = "[2]" if "#2" in value or "#1" in value else ""
        text += rf"\newcommand{{\{name}}}{arguments}{{{value}}}" + "\n"
    path.write_text(text)


def build(run_dirs, out_dir: Path) -> dict[str, str]:
    """Write tables, figures, hashes and macros into ``out_dir``; return the macros."""
    out_dir = Path(out_dir)
    (out_dir / "tables").mkdir(parents=True, exist_ok=True)
    make_report(run_dirs, out_dir)
    results = load_results(run_dirs)
    networks = network_rows(results)
    groups = network_groups(networks["instance"].unique())
    labels = {name: network_label(name) for name in networks["instance"].unique()}
    macros: dict[str, str] = {}
    for problem in PROBLEMS:
        if not (networks["problem"] == problem).any():
            continue
        macros.update(problem_macros(networks, problem))
        stem, caption, label = PAPER_TABLES[problem]
        present = set(networks.loc[networks["problem"] == problem, "method"])
        methods = [m for m in PAPER_METHODS[problem] if m in present]
        table = strategy_table(networks, problem, methods)
        (out_dir / "tables" / f"{stem}.tex").write_text(
            render_latex(table, methods, caption, label, groups=groups, labels=labels,
                         header_labels=COLUMN_HEADS, unit="MiB"))
    macros.update(inplace_macros(results))
    planning = results[results["suite"].isin(["networks", "examples"])]
    macros.update(exact_macros(planning))
    macros["NumJobs"] = str(len(results))
    macros["NumNetworks"] = str(networks["instance"].nunique())
    macros["NumPaperNetworks"] = str(len(groups[0][1]))
    macros["NumOtherNetworks"] = str(len(groups[1][1]))
    macros.update(minimalloc_macros(results))
    planning_all = results[results["problem"] != "preload"]
    hard = hard_instances(planning_all)
    suites = planning_all.drop_duplicates("instance").set_index("instance")["suite"]
    macros["HardInstances"] = ", ".join(
        instance_title(h, suites.get(h), width=1000) for h in hard).replace("_", r"\_") or "--"
    cores = sorted({session.get("core_budget") for run_dir in map(Path, run_dirs)
                    for session in json.loads((run_dir / "manifest.json").read_text())["sessions"]
                    if session.get("core_budget")})
    macros["CoreBudget"] = "/".join(map(str, cores)) or "--"
    optima = optimum_table(results)
    macros["NumConflicts"] = str(int(optima["conflict"].sum()))
    macros.update(preload_macros(results))
    (out_dir / "tables" / "hashes.tex").write_text(hash_table(results))
    write_macros(macros, out_dir / "macros.tex")
    return macros


def inplace_macros(results: pd.DataFrame) -> dict[str, str]:
    """The in-place variants (SO-IP, OC-IP) on the networks: ``NumProvenSOIP``, ... and
    ``\\IfInplace{with}{without}``, which picks the text for whether such rows exist."""
    rows = results[(results["suite"] == "networks") & results["inplace"]
                   & results["problem"].isin(list(PROBLEMS))]
    macros = {"IfInplace": "#2"}
    for problem, tag in PROBLEMS.items():
        # The names main.tex uses stay defined (as --) when a run has no in-place rows.
        macros.update({f"{name}{tag}IP": "--" for name in _INPLACE_NAMES})
        if (rows["problem"] == problem).any():
            macros.update(problem_macros(rows, problem, inplace=True))
            macros["IfInplace"] = "#1"
    return macros


_INPLACE_NAMES = ("NumInstances", "NumProven", "NumOptimumAtBound", "MaxBoundSlack")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", nargs="*", type=Path,
                        help="run directories (default: every one under paper/results/)")
    parser.add_argument("--out", type=Path, default=PAPER / "generated")
    args = parser.parse_args(argv)
    run_dirs = args.results or run_directories(PAPER / "results")
    if not run_dirs:
        print("no run directories under paper/results/", file=sys.stderr)
        return 1
    macros = build(run_dirs, args.out)
    print(f"wrote {args.out} ({len(macros)} macros from {', '.join(map(str, run_dirs))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
