"""Regenerate the paper's tables, figures and number macros from the committed results.

Usage::

    python paper/build.py [--results DIR ...] [--out paper/generated]

Reads the run directories of optplan's own evaluation under ``paper/results/``
(:data:`EVALUATION_RUNS`; paper/README.md names the config behind each), the peers run
(:data:`PEERS_RUN`, read apart: other systems' allocators never enter optplan's heuristic
aggregates), the runtimes' rows (:data:`RUNTIMES_RUN`) and the offsets search's rows before
and after its compiled core (:data:`SEARCH_RUN`), and writes

* ``generated/figures/``: the report's figures (:func:`optplan.analysis.report.make_report`)
  over the networks, the MiniMalloc suite and the preload sweep: layout, performance
  profiles per problem, solve times, anytime curves on the hard instances, preload curves;
* ``generated/tables/*.tex``: every table the paper inputs (booktabs, 8 pt, best in bold),
  built from :mod:`optplan.analysis.tables` and, for the peers, from the per-instance and
  per-method frames of :mod:`optplan.analysis.peers`;
* ``generated/macros.tex``: every number the prose states, as a LaTeX macro, so that the
  text cannot drift from the data; ``generated/runtimes_macros.tex`` and
  ``generated/tables/runtimes.tex`` from :func:`optplan.analysis.runtimes.write`.

Networks whose planning problems are identical (the same records, pairs and alignment from
two importers) are reported once (:func:`optplan.analysis.tables.duplicate_instances`); the
real networks, the generated instances and MiniMalloc's suite are kept apart. No solver runs
here: only the committed rows are read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

PAPER = Path(__file__).resolve().parent
REPO = PAPER.parent
if str(REPO) not in sys.path:  # running as ``python paper/build.py`` from a fresh clone
    sys.path.insert(0, str(REPO))

from optplan.analysis.load import (instance_for_key, load_results, optimum_table,  # noqa: E402
                                  read_jsonl)
from optplan.analysis.names import (is_paper_network, latex_escape, method_label,  # noqa: E402
                                    network_label, problem_label)
from optplan.analysis.figures import gap_feature_figure, order_figure  # noqa: E402
from optplan.analysis.report import hard_instances, make_report  # noqa: E402
from optplan.analysis.slicing import slicing_table, sweep_minimums  # noqa: E402
from optplan.analysis.style import save_figure  # noqa: E402
from optplan.analysis.tables import (bold_best, drop_duplicates,  # noqa: E402
                                     duplicate_instances, exact_table, inplace_table,
                                     latex_table, mib_cell, order_table, percent_cell,
                                     preload_table, SEARCH_RUNS, search_runs_table,
                                     search_table, seconds_cell, summary_table,
                                     median_runs)
from optplan.exact.budget import SPLIT  # noqa: E402
from optplan.exact.search import (BOUND_ROUND, IMPROVE_SLICE, REPACK_AFTER,  # noqa: E402
                                  REPACK_STALL, REPACKS, SearchParams, random_draw)

PROBLEMS = {"shared-objects": "SO", "offsets": "OC"}
PAPER_ORDER = ("mobilenet_v1", "mobilenet_v2", "deeplab_v3", "inception_v3", "posenet",
               "blazeface")
# Rows of the six-network table: Pisarchyk & Lee's strategies, then the best arena planners.
SIX_METHODS = {
    "shared-objects": ["naive", "equality", "greedy_in_order", "greedy_by_breadth",
                       "greedy_by_size", "greedy_best", "min_cost_flow", "mxnet"],
    "offsets": ["greedy_in_order", "greedy_by_breadth", "greedy_by_size", "greedy_best",
                "strip_packing_best_fit", "tflite_arena", "xla_best_fit", "usmp_hill_climb",
                "mxnet"],
}
# Families of the per-method summary, in this order.
FAMILIES = [
    ("TFLite GPU strategies (Pisarchyk \\& Lee)",
     ["naive", "equality", "greedy_in_order", "greedy_by_breadth", "greedy_by_size",
      "greedy_best", "min_cost_flow"]),
    ("Arena planners", ["strip_packing_best_fit", "tflite_arena", "xla_best_fit",
                        "usmp_greedy_by_size", "usmp_greedy_by_conflicts", "usmp_hill_climb",
                        "nntrainer_basic", "nntrainer_v1", "nntrainer_v3", "first_fit",
                        "best_fit"]),
    ("Graph simulation", ["mxnet"]),
    ("Interference-graph colouring", ["coloring_largest_first", "coloring_smallest_last",
                                      "coloring_saturation_largest_first",
                                      "coloring_independent_set",
                                      "coloring_connected_sequential_bfs",
                                      "coloring_connected_sequential_dfs",
                                      "coloring_random_sequential", "coloring_size_weighted"]),
]
GENERATOR_NAMES = {"random_dag": "random DAG", "chain_skip": "chain with skips",
                   "transformer": "transformer-like", "minimalloc": "MiniMalloc-like"}
SOLVER_SHORT = {"cpsat": "CP-SAT", "milp_highs": "HiGHS", "search": "search"}
PREFERENCE = {m: i for i, m in enumerate(dict.fromkeys(
    ["greedy_by_size", "greedy_by_breadth", "greedy_best", "tflite_arena", "xla_best_fit",
     "strip_packing_best_fit", "usmp_hill_climb"] + [m for _, ms in FAMILIES for m in ms]))}
"""Which of several equally good heuristics a table names: the widely deployed ones first."""
PEER_FAMILIES = [
    ("optplan's exact methods", ["search", "cpsat"]),
    ("Exact peers", ["minimalloc", "omnimalloc_supermalloc"]),
    ("OmniMalloc's searches", ["omnimalloc_telamalloc", "omnimalloc_simulated_annealing",
                               "omnimalloc_tabu_search", "omnimalloc_hill_climb",
                               "omnimalloc_genetic", "omnimalloc_random"]),
    ("OmniMalloc's greedy allocators", [
        "omnimalloc_omni", "omnimalloc_greedy_by_all", "omnimalloc_greedy_by_size",
        "omnimalloc_greedy_by_area", "omnimalloc_greedy_by_conflict_size",
        "omnimalloc_greedy_by_conflict", "omnimalloc_greedy_by_duration",
        "omnimalloc_greedy_by_start", "omnimalloc_greedy", "omnimalloc_best_fit",
        "omnimalloc_naive"]),
]
"""Rows of the peers table, by family (the methods of :data:`optplan.analysis.peers.PEER_METHODS`)."""
PEER_EXACT = ("minimalloc", "omnimalloc_supermalloc")
"""The peers that search for a proven optimum: their columns join the MiniMalloc table."""
PEER_GROUPS = {"minimalloc": ("MiniMalloc suite", "Suite"), "networks": ("networks", "Networks"),
               "training": ("training graphs", "Training")}
"""The peers table's column groups (:data:`optplan.analysis.peers.GROUPS`): title, macro tag."""
SEARCH_SWITCHES = SearchParams.switch_names()
"""The search ablation's rows, one per switch switched off (:class:`SearchParams`)."""
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


EVALUATION_RUNS = ("paper", "paper_inplace", "paper_generated", "minimalloc", "paper_ablation",
                   "paper_search_ablation", "preload", "slicing", "order")
"""The run directories of optplan's own evaluation (``make paper-runs`` re-makes them)."""
PEERS_RUN = "peers"
"""optplan's exact methods beside MiniMalloc and OmniMalloc's allocators (issue 19)."""
RUNTIMES_RUN = "runtimes"
"""``bench/runtimes.py``'s rows (``runtimes.jsonl``): plans measured inside the runtimes."""
SEARCH_RUN = "search"
"""``bench/search.py``'s rows on MiniMalloc's suite before and after the compiled core
(:data:`SEARCH_FILES`; see ``paper/results/search/README.md``)."""
SEARCH_FILES = ("minimalloc_before_after.jsonl", "long_runs.jsonl", "windows.jsonl",
                "seeds.jsonl", "orders.jsonl", "complete.jsonl", "bands.jsonl", "layers.jsonl")


def run_directories(results_root: Path, names=EVALUATION_RUNS) -> list[Path]:
    """The run directories ``names`` under ``results_root`` that exist (a folder with
    ``results.jsonl``), in that order. Other folders there (the ``default`` run that
    ``make run``'s experiment committed, the peers) are not part of the evaluation."""
    return [results_root / name for name in names
            if (results_root / name / "results.jsonl").is_file()]


def _pct(value) -> str:
    return "--" if value is None or pd.isna(value) else f"{100 * value:.1f}"


def _words(names) -> str:
    """``A, B and C``."""
    names = list(names)
    return (", ".join(names[:-1]) + " and " + names[-1]) if len(names) > 1 else "".join(names)


def file_name_tt(name: str) -> str:
    """A file name in typewriter type that may break at its dots (hyperref's ``\\nolinkurl``
    in the ``tt`` style), for names too long for a column."""
    return "{\\urlstyle{tt}\\nolinkurl{" + name + "}}"


def long_run_names(rows) -> list[str]:
    """The name of each long run of ``rows`` (dicts, in order): its instance, and its seed
    when the instance ran at more than one (``J (seed 1)``)."""
    runs = Counter(row["instance"] for row in rows)
    return [row["instance"] + (f" (seed {row.get('seed', 0)})" if runs[row["instance"]] > 1
                               else "") for row in rows]


def runs_by_instance(rows) -> dict[str, list[dict]]:
    """The long runs of ``rows`` (dicts) per instance, in the order they come."""
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["instance"], []).append(row)
    return grouped


def long_run_tally(runs: list[dict]) -> str:
    """At how many of its seeds an instance's long runs ``runs`` prove it optimal, when it
    ran at more than one: `` at 1 of its 2 seeds``; else ``""``."""
    proven = sum(row["status"] == "OPTIMAL" for row in runs)
    return f" at {proven} of its {len(runs)} seeds" if len(runs) > 1 else ""


def _few(names, limit: int = 5) -> str:
    """At most ``limit`` names, then how many more: ``A, B and 3 others``."""
    names = list(names)
    if len(names) <= limit:
        return _words(names) or "none"
    return ", ".join(names[:limit]) + f" and {len(names) - limit} others"


# --- The suites ------------------------------------------------------------------------------

def plain(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[~rows["inplace"].astype(bool)]


def suites(results: pd.DataFrame):
    """(networks without duplicates, the duplicates, generated, MiniMalloc, preload rows)."""
    planning = results[results["problem"].isin(list(PROBLEMS))]
    networks = planning[planning["suite"] == "networks"]
    duplicates = duplicate_instances(networks)
    return (drop_duplicates(networks, duplicates), duplicates,
            planning[planning["suite"] == "synthetic"],
            planning[planning["suite"] == "minimalloc"],
            results[results["problem"] == "preload"])


# --- Tables -----------------------------------------------------------------------------------

def six_networks_table(networks: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """Methods as rows, Pisarchyk & Lee's six networks as columns, gaps to the proven optimum
    (both problems, plain); the optimum in MiB heads each block; best per column in bold."""
    six = sorted({n for n in networks["instance"] if is_paper_network(n) and "_tflite_" in n},
                 key=lambda n: next(i for i, f in enumerate(PAPER_ORDER) if n.startswith(f)))
    header = ["method"] + [network_label(n, source=False).replace(" ", r"\\", 1) for n in six]
    rows, bold, groups, macros = [], [], {}, {}
    for problem, tag in PROBLEMS.items():
        part = plain(networks[networks["problem"] == problem])
        optima = optimum_table(part).set_index("instance")
        objective = part[part["kind"] == "heuristic"].groupby(["method", "instance"])[
            "objective"].median()
        groups[len(rows)] = problem_label(problem) + " (gap to the optimum, \\%)"
        rows.append(["optimum (MiB)"] + [mib_cell(optima.loc[n, "optimum"]) if n in optima.index
                                         else "--" for n in six])
        first = len(rows)
        gaps_by_method = {}
        for method in SIX_METHODS[problem]:
            gaps = []
            for name in six:
                optimum = optima.loc[name, "optimum"] if name in optima.index else None
                value = objective.get((method, name))
                gaps.append(None if value is None or optimum is None or pd.isna(optimum)
                            else value / optimum - 1)
            gaps_by_method[method] = gaps
            rows.append([method_label(method)] + [percent_cell(g) for g in gaps])
        for column in range(len(six)):
            for r in bold_best([gaps_by_method[m][column] for m in SIX_METHODS[problem]]):
                bold.append((first + r, column + 1))
        optimal = {m: sum(g is not None and g <= 0 for g in gaps_by_method[m])
                   for m in SIX_METHODS[problem]}
        macros[f"SixOptimalGreedyBySize{tag}"] = str(optimal["greedy_by_size"])
    caption = ("Pisarchyk \\& Lee's six networks (TFLite, fused): each heuristic's gap to "
               "the proven optimum in percent (0: optimal), best per network in bold.")
    return latex_table(header, rows, caption=caption, label="tab:six", wide=True,
                       align="l" + "r" * len(six), bold=bold, groups=groups), macros


def summary_latex(networks: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """The per-method summary over the real networks: both problems side by side."""
    frames = {p: summary_table(networks, p).set_index("method") for p in PROBLEMS}
    header = ["method"] + [c for _ in PROBLEMS for c in
                           ("opt.", r"mean\\gap \%", r"max\\gap \%", r"median\\time")]
    rows, groups, order = [], {}, []
    for title, members in FAMILIES:
        present = [m for m in members if any(m in f.index for f in frames.values())]
        if present:
            groups[len(order)] = title
            order += present
    for method in order:
        cells = [method_label(method)]
        for problem in PROBLEMS:
            frame = frames[problem]
            if method not in frame.index:
                cells += ["", "", "", ""]
                continue
            entry = frame.loc[method]
            cells += [f"{int(entry['optimal'])}/{int(entry['instances'])}",
                      percent_cell(entry["mean_gap"]), percent_cell(entry["max_gap"]),
                      seconds_cell(entry["median_time_s"])]
        rows.append(cells)
    bold = []
    for offset, problem in enumerate(PROBLEMS):
        frame = frames[problem].reindex(order)
        base = 1 + 4 * offset
        for column, key, larger in ((0, "optimal", True), (1, "mean_gap", False),
                                    (2, "max_gap", False)):
            bold += [(r, base + column) for r in bold_best(list(frame[key]), larger=larger)]
    proven = {p: frames[p].attrs["proven"] for p in PROBLEMS}
    caption = (f"Every heuristic on the distinct real networks with a proven optimum "
               f"({proven['shared-objects']} for shared objects, {proven['offsets']} for "
               "offsets): plans that are optimal, mean and largest gap to the optimum, median "
               f"run time (each the median of {runs_phrase(repetitions(networks))}). Best per "
               "column in bold.")
    macros = {}
    for problem, tag in PROBLEMS.items():
        frame = frames[problem]
        complete = frame[frame["instances"] == frame.attrs["proven"]]
        best = complete.iloc[0] if len(complete) else None
        macros[f"NumHeuristics{tag}"] = str(len(frame))
        macros[f"NumAlwaysOptimal{tag}"] = str(int((complete["optimal"]
                                                     == complete["instances"]).sum()))
        if best is not None:
            macros[f"BestHeuristic{tag}"] = latex_escape(method_label(best.name))
            macros[f"BestHeuristicMeanGap{tag}"] = _pct(best["mean_gap"])
            macros[f"BestHeuristicMaxGap{tag}"] = _pct(best["max_gap"])
            macros[f"BestHeuristicOptimal{tag}"] = str(int(best["optimal"]))
        for method, entry in frame.iterrows():
            name = macro_name(method)
            macros[f"NumOptimal{name}{tag}"] = str(int(entry["optimal"]))
            macros[f"MeanGap{name}{tag}"] = _pct(entry["mean_gap"])
            macros[f"MaxGap{name}{tag}"] = _pct(entry["max_gap"])
        slowest = frame["max_time_s"].idxmax() if frame["max_time_s"].notna().any() else None
        if slowest is not None:
            macros[f"SlowestHeuristic{tag}"] = latex_escape(method_label(slowest))
            macros[f"SlowestHeuristicTime{tag}"] = f"{frame.loc[slowest, 'max_time_s']:.0f}"
    spans = [("shared objects", 2, 5), ("offsets", 6, 9)]
    timeouts = plain(networks[(networks["kind"] == "heuristic")
                              & (networks["status"] == "TIMEOUT")
                              & (networks["repetition"].fillna(0) == 0)])
    notes = "; ".join(
        f"{latex_escape(method_label(method))} was stopped by the watchdog on "
        f"{_words(sorted({latex_escape(network_label(n)) for n in part['instance']}))} "
        f"({_words(sorted({problem_label(p) for p in part['problem']}))})"
        for method, part in timeouts.groupby("method"))
    macros["NumHeuristicTimeouts"] = str(len(timeouts))
    return latex_table(header, rows, caption=caption, label="tab:summary", wide=True,
                       align="l" + "rrrr" * len(PROBLEMS), bold=bold, groups=groups,
                       spans=spans, notes=(notes + ".") if notes else ""), macros


def network_appendix(networks: pd.DataFrame, problem: str) -> str:
    """One row per distinct network: size, bound, optimum, the fastest proof, the best
    heuristic and how many heuristics are optimal."""
    part = plain(networks[networks["problem"] == problem])
    optima = optimum_table(part).set_index("instance")
    heuristics = part[(part["kind"] == "heuristic") & (part["valid"] == True)]  # noqa: E712
    objective = heuristics.groupby(["instance", "method"])["objective"].median()
    exact = part[(part["kind"] == "exact") & (part["status"] == "OPTIMAL")]
    proof = exact.groupby(["instance", "method"])["wall_time_s"].median()
    rows = []
    order = sorted(optima.index, key=lambda n: (not is_paper_network(n), network_label(n)))
    for name in order:
        entry = optima.loc[name]
        values = objective.xs(name) if name in objective.index.get_level_values(0) else None
        proven = not pd.isna(entry["optimum"])
        reference = entry["optimum"] if proven else entry["best_bound"]
        best_method = (min(values.index, key=lambda m: (values[m], PREFERENCE.get(m, 99), m))
                       if values is not None else None)
        fastest = proof.xs(name) if name in proof.index.get_level_values(0) else None
        optimal = int((values <= reference).sum()) if values is not None and proven else None
        rows.append([
            latex_escape(network_label(name)), str(int(entry["num_tensors"])),
            mib_cell(entry["lower_bound"]),
            mib_cell(entry["optimum"]) if proven else f"$\\geq${mib_cell(reference)}$^\\dagger$",
            "--" if fastest is None else
            f"{seconds_cell(fastest.min())} ({SOLVER_SHORT.get(fastest.idxmin(), '?')})",
            "--" if best_method is None else latex_escape(method_label(best_method)),
            "--" if best_method is None else
            percent_cell(values.min() / reference - 1),
            "--" if optimal is None else f"{optimal}/{len(values)}"])
    header = ["network", "tensors", r"lower\\bound", "optimum",
              rf"fastest proof\\(median of {repetitions(part)})",
              r"best\\heuristic", r"its gap\\\%", r"heuristics\\optimal"]
    label = f"tab:networks-{PROBLEMS[problem].lower()}"
    what = problem_label(problem).capitalize()
    notes = "Sizes in MiB." + (" $^\\dagger$: no optimum proven within the time limit; the "
                               "best proven lower bound is shown."
                               if optima["optimum"].isna().any() else "")
    return latex_table(header, rows, caption=f"{what} on every distinct real network.",
                       label=label, wide=True, align="lrrrlllr", notes=notes,
                       size=r"\small", placement="p")


def inplace_latex(networks: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """Per distinct network: plain optimum, in-place bound and optimum, saving, MXNet."""
    header, rows, macros = (["network"] + [c for _ in PROBLEMS for c in (
        r"plain\\optimum", r"in-place\\bound", r"in-place\\optimum", r"saving\\\%",
        r"MXNet\\gap \%")]), [], {}
    frames = {p: inplace_table(networks, p).set_index("instance") for p in PROBLEMS}
    names = sorted(set().union(*[f.index for f in frames.values()]),
                   key=lambda n: (not is_paper_network(n), network_label(n)))
    for name in names:
        cells = [latex_escape(network_label(name))]
        for problem in PROBLEMS:
            frame = frames[problem]
            if name not in frame.index:
                cells += ["--"] * 5
                continue
            entry = frame.loc[name]
            cells += [mib_cell(entry["plain_optimum"]), mib_cell(entry["lower_bound"]),
                      mib_cell(entry["optimum"]) if not pd.isna(entry["optimum"])
                      else f"$\\geq${mib_cell(entry['best_bound'])}$^\\dagger$",
                      percent_cell(entry["saving"]), percent_cell(entry["gap:mxnet"])]
        rows.append(cells)
    for problem, tag in PROBLEMS.items():
        frame = frames[problem]
        proven = frame[frame["optimum"].notna()]
        saving = pd.to_numeric(proven["saving"], errors="coerce").dropna()
        mxnet = pd.to_numeric(proven["gap:mxnet"], errors="coerce").dropna()
        at_bound = (proven["optimum"] == proven["lower_bound"]).sum() if len(proven) else 0
        macros |= {f"NumInstances{tag}IP": str(len(frame)), f"NumProven{tag}IP": str(len(proven)),
                   f"NumOptimumAtBound{tag}IP": str(int(at_bound)),
                   f"MeanSaving{tag}IP": _pct(saving.mean() if len(saving) else None),
                   f"MaxSaving{tag}IP": _pct(saving.max() if len(saving) else None),
                   f"MaxSavingNetwork{tag}IP": latex_escape(network_label(saving.idxmax()))
                   if len(saving) else "--",
                   f"NumSaving{tag}IP": str(int((saving > 0).sum())),
                   f"MxnetMeanGap{tag}IP": _pct(mxnet.mean() if len(mxnet) else None),
                   f"MxnetOptimal{tag}IP": str(int((mxnet <= 0).sum()))}
    caption = ("In-place pairs (SO-IP, OC-IP) on every distinct real network: the plain "
               "optimum, the in-place lower bound and optimum (MiB), what the pairs save, and "
               "MXNet's in-place reuse against the in-place optimum.")
    unproven = any(frame["optimum"].isna().any() for frame in frames.values())
    return latex_table(header, rows, caption=caption, label="tab:inplace", wide=True,
                       align="l" + "rrrrr" * 2, placement="p",
                       spans=[("shared objects", 2, 6), ("offsets", 7, 11)],
                       notes="$^\\dagger$: best proven bound, optimum not proven." if unproven
                       else ""), macros


def _single(values: pd.Series) -> str:
    """The one value a column holds (``--`` when none; the values joined when several)."""
    found = sorted({f"{float(v):g}" for v in values.dropna()})
    return "/".join(found) or "--"


def schedule_latex(results: pd.DataFrame, duplicates: dict[str, list[str]]
                   ) -> tuple[str, dict[str, str], pd.DataFrame]:
    """Per distinct network of the free-order run: the engine order's peak and the least
    peak, the fixed-order best heuristic and optimum (from the fixed-order runs), the
    free-order arena (proven, or with its gap), the time and the saving; the macros the
    section cites; and the table itself (for the figure)."""
    table = order_table(drop_duplicates(results, duplicates))
    if table.empty:
        return "", {"NumOrderNetworks": "0"}, table
    table = table.assign(paper=table["instance"].map(
        lambda n: is_paper_network(n) and "_tflite_" in n))   # as the six-network table
    table = table.sort_values("instance", key=lambda c: c.map(
        lambda n: (not (is_paper_network(n) and "_tflite_" in n), network_label(n)))
    ).reset_index(drop=True)
    rows = []
    for _, entry in table.iterrows():
        free = (mib_cell(entry["free"]) if entry["free_proven"]
                else f"{mib_cell(entry['free'])}$^\\dagger$")
        rows.append([latex_escape(network_label(entry["instance"])),
                     mib_cell(entry["engine_peak"]),
                     mib_cell(entry["least_peak"]) + ("" if entry["peak_proven"]
                                                      else "$^\\dagger$"),
                     mib_cell(entry["fixed_heuristic"]),
                     mib_cell(entry["fixed"]) + ("" if entry["fixed_proven"]
                                                 else "$^\\ddagger$"),
                     free, "0" if entry["free_proven"] else percent_cell(entry["gap"]),
                     seconds_cell(entry["seconds"]), percent_cell(entry["saving"])])
    header = ["network", r"engine\\peak", r"least\\peak", r"best\\heuristic",
              "optimum", "optimum", r"gap\\\%", "time", r"saving\\\%"]
    notes = ("Sizes in MiB; peak: live bytes at the worst step; the arena columns hold "
             "offsets' arena sizes. Time: the fastest proof of the free-order arena (else the "
             "longest exact run). Saving: the free-order optimum under the fixed-order "
             "optimum.")
    if not table["free_proven"].all() or not table["peak_proven"].all():
        notes += " $^\\dagger$: not proven within the time limit (the best plan found)."
    if not table["fixed_proven"].all():
        notes += " $^\\ddagger$: fixed-order optimum not proven (the best exact plan)."
    caption = ("Free execution order on every distinct real network: the least peak and the "
               "least arena over every topological order (CP-SAT and HiGHS, "
               "\\OrderTimeLimit\\,s each), against the engine's order.")
    text = latex_table(header, rows, caption=caption, label="tab:order", wide=True,
                       align="lrrrrrrrr", placement="p", notes=notes,
                       spans=[("peak", 2, 3), ("fixed order", 4, 5),
                              ("free order", 6, 8)])
    saving = pd.to_numeric(table["saving"], errors="coerce")
    peak_saving = pd.to_numeric(table["peak_saving"], errors="coerce")
    six = table[table["paper"]]
    proven = table[table["free_proven"]]
    changed = table[(saving > 0) | (peak_saving > 0)]
    best = saving.idxmax() if saving.notna().any() else None
    best_peak = peak_saving.idxmax() if peak_saving.notna().any() else None
    exact = results[results["problem"].isin(["schedule", "schedule-offsets"])
                    & (results["kind"] == "exact")]
    macros = {
        "OrderTimeLimit": _single(exact["time_limit"]),
        "OrderWorkers": _single(exact["workers"]),
        "OrderSeed": _single(exact["seed"]),
        "NumOrderNetworks": str(len(table)),
        "NumOrderProven": str(len(proven)),
        "NumOrderPeakProven": str(int(table["peak_proven"].sum())),
        "NumOrderPaperNetworks": str(len(six)),
        "NumOrderPaperProven": str(int(six["free_proven"].sum())),
        "OrderPaperMaxSeconds": seconds_cell(six["seconds"].max()) if len(six) else "--",
        "NumOrderChanged": str(len(changed)),
        "OrderChanged": _words(latex_escape(network_label(n)) for n in changed["instance"])
        or "none",
        "NumOrderAtFixed": str(int((saving == 0).sum())),
        "NumOrderEngineAtBound": str(int((table["engine_peak"] == table["peak_bound"]).sum())),
        "OrderMaxSaving": _pct(saving.max() if best is not None else None),
        "OrderMaxSavingNetwork": (latex_escape(network_label(table.loc[best, "instance"]))
                                  if best is not None else "--"),
        "OrderMaxPeakSaving": _pct(peak_saving.max() if best_peak is not None else None),
        "OrderMaxPeakSavingNetwork": (
            latex_escape(network_label(table.loc[best_peak, "instance"]))
            if best_peak is not None else "--"),
        "OrderMaxGap": _pct(pd.to_numeric(table["gap"], errors="coerce").max())}
    return text, macros, table


def minimalloc_latex(rows: pd.DataFrame, peers: pd.DataFrame | None = None,
                     long_runs: list[dict] = ()) -> tuple[str, dict[str, str]]:
    """MiniMalloc's challenging suite, one row per instance: the capacity its benchmark
    asks for, the max-breadth bound, the best heuristic, each exact method of optplan and,
    from the peers run (``peers``), each exact peer (:data:`PEER_EXACT`). The optima, the
    best heuristic and the macros come from optplan's own rows. An instance left open within
    the time limit that a long run of the search proved (``long_runs``: the rows of
    ``long_runs.jsonl``) is named in the table's note and in ``LongClosedMiniMalloc``."""
    if rows.empty:
        return "", {name: "--" for name in (
            "NumMiniMalloc", "NumProvenMiniMalloc", "NumOpenMiniMalloc", "OpenMiniMalloc",
            "NumBelowCapacityMiniMalloc", "NumAtCapacityMiniMalloc", "MaxTimeProofMiniMalloc",
            "TimeLimitsMiniMalloc", "MaxOpenGapMiniMalloc", "NumOptimalRunsSearchMiniMalloc",
            "NumOptimalRunsCpsatMiniMalloc", "NumRepetitionsMiniMalloc")} | {
                "LongClosedMiniMalloc": "", "OpenMiniMallocNote": "",
                "OpenMiniMallocInsight": "", "OpenMiniMallocClause": "the suite was not run"}
    repeated = plain(rows)
    optima = optimum_table(repeated).set_index("instance")
    rows = median_runs(repeated)  # a cell: the run of median time of a job's repetitions
    peers = plain(peers) if peers is not None and len(peers) else rows.iloc[:0]
    heuristics = rows[(rows["kind"] == "heuristic") & (rows["valid"] == True)]  # noqa: E712
    exact_methods = [m for m in ("cpsat", "search") if (rows["method"] == m).any()]
    peer_methods = [m for m in PEER_EXACT if (peers["method"] == m).any()]
    columns = [(m, rows) for m in exact_methods] + [(m, peers) for m in peer_methods]
    header = ["instance", "buffers", r"capacity\\(benchmark)", r"lower\\bound",
              r"best\\heuristic"] + [c for m, _ in columns
                                     for c in (method_label(m), r"time\\(s)")]
    table_rows, bold, best_heuristic = [], [], {}
    for r, name in enumerate(sorted(optima.index)):
        entry = optima.loc[name]
        key = rows.loc[rows["instance"] == name, "instance_key"].iloc[0]
        capacity = re.search(r"\.(\d+)\.csv$", str(key))
        values = heuristics[heuristics["instance"] == name].groupby("method")["objective"].min()
        if len(values):
            best_heuristic.setdefault(min(values.index, key=lambda m: (
                values[m], PREFERENCE.get(m, 99), m)), []).append(name)
        cells = [name, str(int(entry["num_tensors"])),
                 capacity.group(1) if capacity else "--", str(int(entry["lower_bound"])),
                 str(int(values.min())) if len(values) else "--"]
        objectives = []
        for method, source in columns:
            run = source[(source["instance"] == name) & (source["method"] == method)]
            if run.empty:
                cells += ["--", "--"]
                objectives.append(None)
                continue
            run = run.iloc[0]
            proven = run["status"] == "OPTIMAL"
            objective = None if pd.isna(run["objective"]) else int(run["objective"])
            objectives.append(objective)
            cells += [("--" if objective is None else str(objective)) + ("" if proven else "*"),
                      f"{run['wall_time_s']:.1f}"]
        for i in bold_best(objectives):
            bold.append((r, 5 + 2 * i))
        table_rows.append(cells)
    proven = optima[optima["optimum"].notna()]
    open_names = sorted(set(optima.index) - set(proven.index))
    exact = rows[(rows["kind"] == "exact") & (rows["status"] == "OPTIMAL")]
    capacities = {name: int(m.group(1)) for name, key in zip(rows["instance"], rows["instance_key"])
                  if (m := re.search(r"\.(\d+)\.csv$", str(key)))}
    below = sum(proven.loc[n, "optimum"] < capacities[n] for n in proven.index if n in capacities)
    at = sum(proven.loc[n, "optimum"] == capacities[n] for n in proven.index if n in capacities)
    macros = {"NumMiniMalloc": str(len(optima)), "NumProvenMiniMalloc": str(len(proven)),
              "NumRepetitionsMiniMalloc": str(repetitions(repeated)),
              "NumOpenMiniMalloc": str(len(open_names)),
              "OpenMiniMalloc": _words(open_names) or "none",
              "NumBelowCapacityMiniMalloc": str(int(below)),
              "NumAtCapacityMiniMalloc": str(int(at)),
              "MaxTimeProofMiniMalloc": f"{exact.groupby('instance')['wall_time_s'].min().max():.1f}"
              if len(exact) else "--",
              "TimeLimitsMiniMalloc": ", ".join(f"{t:g}" for t in sorted(set(pd.to_numeric(
                  rows.loc[rows['kind'] == 'exact', 'time_limit'], errors='coerce').dropna())))}
    for method, source in columns:
        part = source[source["method"] == method]
        macros[f"NumOptimalRuns{macro_name(method)}MiniMalloc"] = str(
            int((part["status"] == "OPTIMAL").sum()))
        macros[f"NumRuns{macro_name(method)}MiniMalloc"] = str(len(part))
    gaps = []
    for name in open_names:
        entry = optima.loc[name]
        gaps.append((entry["best_objective"] / entry["best_bound"] - 1) if entry["best_bound"]
                    else None)
    macros["MaxOpenGapMiniMalloc"] = _pct(max((g for g in gaps if g is not None), default=None))
    macros |= open_sentences(open_names)
    caption = ("MiniMalloc's challenging suite: the capacity its benchmark files ask for, the "
               "max-breadth bound, the best heuristic arena, and each exact method's arena "
               "(* not proven optimal within the time limit) and wall time"
               + (", optplan's and the peers' (MiniMalloc's own solver under a capacity "
                  "bisection, OmniMalloc's SuperMalloc; the peers run, same limit and threads)"
                  if peer_methods else "") + ". Best in bold.")
    spans = ([("optplan", 6, 5 + 2 * len(exact_methods)),
              ("peers", 6 + 2 * len(exact_methods), 5 + 2 * len(columns))]
             if peer_methods else None)
    notes = "The best heuristic: " + "; ".join(
        f"{latex_escape(method_label(method))} on {_words(names)}"
        for method, names in sorted(best_heuristic.items(), key=lambda kv: kv[1][0])) + "."
    by_instance = runs_by_instance(long_runs)
    closed = [min((row for row in runs if row["status"] == "OPTIMAL"),  # the fastest proof
                  key=lambda row: row["wall_time_s"])
              for name, runs in sorted(by_instance.items()) if name in open_names
              and any(row["status"] == "OPTIMAL" for row in runs)]
    tally = {row["instance"]: long_run_tally(by_instance[row["instance"]]) for row in closed}
    proofs = [f"{row['instance']} optimal at {int(row['objective'])} after "
              f"{row['wall_time_s']:.0f}\\,s" + tally[row["instance"]] for row in closed]
    if proofs:
        notes += (" A run of the offsets search of up to "
                  + ", ".join(sorted({f"{row['time_limit']:g}" for row in closed}))
                  + "\\,s proves " + _words(proofs) + " (Table~\\ref{tab:search}).")
    where = "; ".join([name + said for name, said in tally.items() if said]
                      + ["Table~\\ref{tab:search}"])
    macros["LongClosedMiniMalloc"] = (
        f" Run longer, the offsets search proves {_words([row['instance'] for row in closed])} "
        f"optimal too ({where})." if closed else "")
    return latex_table(header, table_rows, caption=caption, label="tab:minimalloc", wide=True,
                       align="lrrrr" + "rr" * len(columns), bold=bold, spans=spans,
                       notes=notes if best_heuristic or proofs else ""), macros


def open_sentences(open_names: list[str]) -> dict[str, str]:
    """What the evaluation, the insight and the peers section say of the suite's instances
    that no exact method proved within the limit (``open_names``), or of none being left:
    ``OpenMiniMallocNote``, ``OpenMiniMallocInsight`` and ``OpenMiniMallocClause``."""
    if not open_names:
        return {"OpenMiniMallocNote": "No instance is left open within the limit.",
                "OpenMiniMallocInsight": "Even so, every optimum is proven within the limit "
                                         "(Table~\\ref{tab:minimalloc}).",
                "OpenMiniMallocClause": "every optimum is proven within the limit"}
    names = _words(open_names)
    return {"OpenMiniMallocNote": f"Still open within the limit: {names}, with a remaining gap "
                                  "of at most \\MaxOpenGapMiniMalloc\\,\\% between the best "
                                  "arena and the best bound.",
            "OpenMiniMallocInsight": f"There the bound is not reached on the open instances "
                                     f"({names}), whose best arenas stay up to "
                                     "\\MaxOpenGapMiniMalloc\\,\\% above the best proven "
                                     "bound; whether the gap lies in the bound or in the arena "
                                     "is open at that limit. \\SearchLongClosedNote",
            "OpenMiniMallocClause": f"no method closes {names} within the limit"}


SEARCH_STATUS = {"OPTIMAL": "opt.", "FEASIBLE": "feas."}
SEARCH_ENGINES = {"python": "Python engine", "compiled": "compiled core"}


def _spent(seconds: pd.Series) -> str:
    """The time limit of runs that ended unproven, as they spent it (whole seconds): the rows
    record no limit, and a run that proves nothing runs to its limit."""
    seconds = pd.to_numeric(seconds, errors="coerce").dropna()
    return f"{int(seconds.max())}" if len(seconds) else "--"


def _thousands(value) -> str:
    return "--" if value is None or pd.isna(value) else f"{int(value):,}".replace(",", "\\,")


def _bound_note(runs: pd.DataFrame) -> str:
    """What the upward refutation proved on ``runs`` (``best_bound`` against the max breadth
    ``lower_bound``), as a clause for the text."""
    raised = sorted(set(runs.loc[runs["best_bound"] > runs["lower_bound"], "instance"]))
    if raised:
        return ("the upward refutation raised the bound above the max breadth on "
                + _words(raised))
    stuck = (runs["prove_result"] == "timeout") & (runs["prove_capacity"] == runs["lower_bound"])
    return ("the refutation of the first capacity, the max breadth itself, did not finish: "
            if len(runs) and stuck.all() else "") + "the best bound is still the max breadth"


def search_latex(table: pd.DataFrame, long_runs: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """The offsets search on MiniMalloc's suite before and after its compiled core, one row
    per instance (:func:`optplan.analysis.tables.search_table`: each run's status, arena,
    best bound, time and nodes, and the nodes-per-second speed-up on the same probe), then
    the long runs of the instances left open (``long_runs``,
    :func:`optplan.analysis.tables.search_runs_table`); and the macros the text cites."""
    if table.empty:
        return "", {"SearchNumInstances": "0"}
    runs = SEARCH_RUNS
    speedup = table.set_index("instance")["speedup"].dropna()

    def part(entry, run: str) -> dict:
        return {key.removeprefix(f"{run}_"): value for key, value in entry.items()
                if key.startswith(f"{run}_")}

    def cells(run: dict) -> list[str]:
        status = SEARCH_STATUS.get(run["status"], str(run["status"]).lower())
        return [status + ("" if run["valid"] else "$^\\ddagger$"),
                _thousands(run["objective"]), _thousands(run["best_bound"]),
                seconds_cell(run["seconds"]), _thousands(run["nodes"])]

    rows, groups = [], {}
    for _, entry in table.iterrows():
        ratio = ("--" if pd.isna(entry["speedup"]) else f"{entry['speedup']:.0f}$\\times$"
                 + ("" if entry["rate_finished"] else "$^\\dagger$"))
        rows.append([entry["instance"], *cells(part(entry, "before")),
                     *cells(part(entry, "after")), ratio])
    limits = pd.to_numeric(long_runs.get("time_limit", pd.Series(dtype=float)),
                           errors="coerce").dropna()
    long_seconds = (f"{int(limits.max())}" if len(limits) else
                    _spent(long_runs.loc[long_runs["status"] != "OPTIMAL", "seconds"]
                           if len(long_runs) else pd.Series(dtype=float)))
    long_named = list(zip(long_run_names(long_runs.to_dict("records")),
                          long_runs.to_dict("records")))
    if len(long_runs):
        groups[len(rows)] = (f"{_words(dict.fromkeys(long_runs['instance']))}, "
                             f"{long_seconds}\\,s each (as after)")
        rows += [[name, *[""] * 5, *cells(entry), ""] for name, entry in long_named]
    limit = _spent(pd.concat([table.loc[table[f"{run}_status"] != "OPTIMAL", f"{run}_seconds"]
                              for run in runs]))
    rate_limit = _spent(table.loc[~table["rate_finished"], "rate_seconds"])
    workers = {run: _single(table[f"{run}_workers"]) for run in runs}
    engines = {run: "/".join(SEARCH_ENGINES.get(e, e) for e in sorted(set(
        table[f"{run}_engine"].dropna()))) for run in runs}
    spans = [(f"{run}: {engines[run]}, {workers[run]} worker"
              + ("" if workers[run] == "1" else "s"), 2 + 5 * i, 6 + 5 * i)
             for i, run in enumerate(runs)]
    header = ["instance"] + [c for _ in runs for c in (
        "status", "arena", r"best\\bound", "time", "nodes")] + [r"speed-\\up"]
    caption = ("The offsets search on MiniMalloc's challenging suite before and after its "
               f"compiled core, {limit}\\,s per instance: each run's status (opt.: proven "
               "optimal), arena and best bound (bytes), wall time and search nodes (every "
               "probe's, of both loops when they run side by side); speed-up: the compiled core's nodes per second "
               "over the Python engine's on the same probe (the max-breadth capacity, one "
               "thread each).")
    notes = (f"Median speed-up: {speedup.median():.0f}$\\times$. "
             + ("" if table["rate_finished"].all() else
                f"$^\\dagger$: the probe did not finish within {rate_limit}\\,s; the rate "
                "is over the nodes each engine searched by then. ")
             + ("" if all(table[f"{run}_valid"].all() for run in runs)
                and (long_runs.empty or long_runs["valid"].all())
                else "$^\\ddagger$: the validator rejected the plan."))
    text = latex_table(header, rows, caption=caption, label="tab:search", wide=True,
                       align="llrrrr" + r"@{\hspace{12pt}}lrrrr@{\hspace{12pt}}r",
                       spans=spans, groups=groups, notes=notes.strip())

    proven = {run: table[table[f"{run}_status"] == "OPTIMAL"] for run in runs}
    open_after = table[table["after_status"] != "OPTIMAL"]
    macros = {"SearchNumInstances": str(len(table)), "SearchTimeLimit": limit,
              "SearchRateSeconds": rate_limit, "SearchLongSeconds": long_seconds,
              "SearchSpeedupMedian": f"{speedup.median():.0f}",
              "SearchSpeedupMin": f"{speedup.min():.0f}",
              "SearchSpeedupMax": f"{speedup.max():.0f}",
              "SearchSpeedupMinInstance": str(speedup.idxmin()),
              "SearchSpeedupMaxInstance": str(speedup.idxmax()),
              "SearchRatePython": f"{table['python_rate'].median() / 1e3:.0f}",
              "SearchRateCompiled": f"{table['compiled_rate'].median() / 1e3:.0f}",
              "SearchOpenAfter": _words(open_after["instance"]) or "none",
              "SearchNumOpenAfter": str(len(open_after)),
              "SearchLongOpen": (_words(dict.fromkeys(long_runs["instance"])) if len(long_runs)
                                 else "none")}
    for run in runs:
        tag = macro_name(run)
        macros |= {f"SearchProven{tag}": str(len(proven[run])),
                   f"SearchWorkers{tag}": workers[run],
                   f"SearchMaxProof{tag}": seconds_cell(proven[run][f"{run}_seconds"].max())}
    for _, entry in open_after.iterrows():
        name = macro_name(entry["instance"])
        macros |= {f"SearchObjectiveBefore{name}": _thousands(entry["before_objective"]),
                   f"SearchObjectiveAfter{name}": _thousands(entry["after_objective"]),
                   f"SearchBound{name}": _thousands(entry["after_best_bound"]),
                   f"SearchGapAfter{name}": _pct(entry["after_gap"])}
    for label, entry in long_named:
        name = macro_name(label)
        macros |= {f"SearchLongObjective{name}": _thousands(entry["objective"]),
                   f"SearchLongBound{name}": _thousands(entry["best_bound"]),
                   f"SearchLongGap{name}": _pct(entry["gap"]),
                   f"SearchLongNodes{name}": f"{entry['nodes'] / 1e6:.0f}"}
    macros["SearchAfterBoundNote"] = _bound_note(pd.DataFrame(
        [{"instance": entry["instance"]} | part(entry, "after")
         for _, entry in open_after.iterrows()],
        columns=["instance", "best_bound", "lower_bound", "prove_result", "prove_capacity"]))
    moves = [f"{entry['instance']}, whose arena goes from {_thousands(entry['before_objective'])}"
             f" to {_thousands(entry['after_objective'])} bytes (best bound "
             f"{_thousands(entry['after_best_bound'])}, a gap of {_pct(entry['after_gap'])}"
             "\\,\\%)" for _, entry in open_after.iterrows()]
    macros["SearchOpenAfterNote"] = (
        "Left open after: " + _words(moves) + f"; {macros['SearchAfterBoundNote']}" if moves
        else "No instance is left open after")
    macros["SearchLongBoundNote"] = _bound_note(long_runs)
    return text, macros


def search_windows_macros(rows) -> dict[str, str]:
    """The macros of ``bench/search_windows.py``'s rows (dicts, one per instance): its probe
    time limit, and ``SearchWindowNote``, a clause on what the time windows proved at the max
    breadth (the windows each instance packed, refuted or left open)."""
    if not rows:
        return {"SearchWindowSeconds": "--", "SearchWindowBeams": "",
                "SearchWindowNote": "no windows were probed",
                "SearchTightNote": search_tight_note(rows)}
    windows = [(row["instance"], window) for row in rows for window in row["windows"]]
    refuted = [name for name, window in windows if window["result"] == "refuted"]
    packed = {row["instance"]: max((w["tensors"] for w in row["windows"]
                                    if w["result"] == "packed"), default=0) for row in rows}
    if refuted:
        verb = "refutes" if len(refuted) == 1 else "refute"
        note = (f"{len(refuted)} of the {len(windows)} windows {verb} it, on "
                f"{_words(sorted(set(refuted)))}, raising the bound by one granule")
    else:
        note = (f"none of the {len(windows)} windows refutes it: windows of up to "
                + _words([f"{packed[row['instance']]} of {row['instance']}'s "
                          f"{row['tensors']} tensors" for row in rows])
                + " pack at it" + _by_beams([window for _, window in windows])
                + _open_windows([(name, window) for name, window in windows
                                 if window["result"] == "open"]))
    seconds = max(float(row["probe_seconds"]) for row in rows)
    beams = max(float(row.get("beam_seconds", 0)) for row in rows)
    return {"SearchWindowSeconds": f"{seconds:g}",
            "SearchWindowBeams": (f", then, while still open, beam-searched for at most "
                                  f"{beams:g}\\,s" if beams else ""),
            "SearchWindowNote": note, "SearchTightNote": search_tight_note(rows)}


def search_complete_macros(rows) -> dict[str, str]:
    """``SearchCompleteNote``: what ``bench/search_complete.py``'s rows (one per run) packed,
    a window of sections grown by CP-SAT from a beam's packing of a smaller one."""
    def sections(window) -> str:
        return f"sections {window[0]} to {window[1] - 1}"

    grown = []
    for row in (row for row in rows if row["packed"]):
        steps = sum(step["status"] in ("OPTIMAL", "FEASIBLE") for step in row["steps"])
        grown.append(f"{row['instance']}'s {sections(row['reached'])} ({row['packed']} of its "
                     f"{row['tensors']} tensors) from its {sections(row['window'])} in "
                     f"{steps} step{'s' if steps != 1 else ''}")
    unpacked = [f"{row['instance']}'s {sections(row['window'])}" for row in rows
                if not row["packed"]]
    note = _words(grown) if grown else "no window was grown"
    if unpacked:
        note += f" (no beam packed {_words(unpacked)})"
    return {"SearchCompleteNote": note}


def _repack_clause(row, seeds=None) -> str:
    """What one run of ``bench/search_bands.py`` did to its packing, for the notes; a run
    that left it names ``seeds`` when given (runs like it with those seeds)."""
    name, minutes = row["instance"], f"{row['seconds'] / 60:.0f} minutes"
    if row["best_bytes"] >= row["start_bytes"]:
        seeds = [row["seed"]] if seeds is None else seeds
        return (f"leaves {name}'s packing at {_thousands(row['start_bytes'])} bytes for "
                f"{minutes} (seed{'s' * (len(seeds) > 1)} {_words(map(str, seeds))})")
    gap = 100 * (row["best_bytes"] - row["max_breadth"]) / row["max_breadth"]
    where = ("its max breadth, so optimal" if gap == 0
             else f"{gap:.2f}\\,\\% above its max breadth")
    return (f"lowers {name}'s packing from {_thousands(row['start_bytes'])} to "
            f"{_thousands(row['best_bytes'])} bytes ({where}) "
            f"{row['packings'][-1]['seconds']:.0f}\\,s into a run of {minutes} "
            f"(seed {row['seed']})")


def search_bands_macros(rows) -> dict[str, str]:
    """``SearchBandsNote``: what ``bench/search_bands.py``'s band-repacking runs (rows, one
    per run, in the order they ran) did to the packing each started from, in how long, with
    which seed; ``SearchSkylineNote`` and ``SearchLayersNote`` the same of its skyline
    repacking and layer search runs; and ``SearchSkylineClosedNote``, the optima that a run's
    packing at the max breadth proved."""
    banded = [row for row in rows if row.get("repack", "bands") == "bands"]
    macros = {"SearchBandsNote": "no packing was repacked by bands",
              "SearchSkylineNote": "no packing was repacked from a skyline",
              "SearchLayersNote": "no packing was lowered by layer search"}
    if banded:
        workers = _words(sorted({str(row["workers"]) for row in banded}))
        macros["SearchBandsNote"] = ("band repacking "
                                     + ", then ".join(map(_repack_clause, banded))
                                     + f" ({workers} CP-SAT workers)")
    for repack, name, what in (("skyline", "SearchSkylineNote", "skyline repacking"),
                               ("layers", "SearchLayersNote", "layer search")):
        runs = [row for row in rows if row.get("repack") == repack]
        if runs:
            widths = _words(sorted({str(w) for row in runs for w in row["widths"]}, key=int))
            macros[name] = (f"{what} " + ", then ".join(map(_repack_clause, runs))
                            + f" (beams {widths} states wide, one thread)")
    closed = [row for row in rows if row["best_bytes"] == row["max_breadth"]]
    macros["SearchSkylineClosedNote"] = "; ".join(
        f"A packing at the max breadth is optimal: {row['instance']}'s optimum is "
        f"{_thousands(row['best_bytes'])} bytes, and its packing is committed "
        f"(\\texttt{{{row['instance']}.{row['best_bytes']}.offsets.csv}})"
        for row in closed) or "No repacking reached a max breadth"
    return macros


def search_layers_macros(rows) -> dict[str, str]:
    """``SearchLayersSkylineNote``: what skyline repacking did, for comparison, from the
    packing the layer searches of ``layers.jsonl`` (``rows``) started from; and
    ``SearchLayersChainNote``, what skyline and band repacking did from the packings that
    runs of the file reached (a layer search's, then their own); ``SearchLayersPathNote``,
    the runs that led to the lowest packing, one from another (``_path_note``)."""
    layered = [row for row in rows if row["repack"] == "layers"]
    reached = {_reached(row) for row in rows}
    starts = {row["start"] for row in layered} - reached  # no run of the file reached them
    skyline = [row for row in rows if row["repack"] == "skyline"]
    what = {"skyline": "skyline repacking ", "bands": "band repacking "}
    chained = [row for row in rows if row["repack"] in what and row["start"] in reached - starts]
    return {"SearchLayersSkylineNote": "; ".join(
        "from the same packing, skyline repacking " + _repack_clause(row)
        for row in skyline if row["start"] in starts)
        or "skyline repacking was not run from that packing",
        "SearchLayersChainNote": "; ".join(
            what[row["repack"]] + clause for row, clause in _grouped_clauses(chained))
        or "skyline repacking was not run from a packing that a run reached",
        "SearchLayersPathNote": _path_note(rows)}


def _reached(row) -> str:
    """The name a run's best packing is kept under: ``<instance>.<arena>.offsets.csv``."""
    return f"{row['instance']}.{row['best_bytes']}.offsets.csv"


def _path_note(rows) -> str:
    """The runs that led from a start no run reached to the lowest packing of ``rows``, each
    from the packing the one before it passed on (the first run to reach an arena passed
    it on), and the time they took to find those packings."""
    first = {}
    for row in rows:
        if row["best_bytes"] < row["start_bytes"]:
            first.setdefault(_reached(row), row)
    if not first:
        return "no run lowered a packing"
    path = [first[min(first, key=lambda name: first[name]["best_bytes"])]]
    while path[-1]["start"] in first:
        path.append(first[path[-1]["start"]])
    path.reverse()
    minutes = f"{sum(row['packings'][-1]['seconds'] for row in path) / 60:.0f}"
    return (f"a chain of {len(path)} run{'s' * (len(path) > 1)} led from "
            f"{_thousands(path[0]['start_bytes'])} to {_thousands(path[-1]['best_bytes'])} "
            f"bytes, with {minutes} minute{'s' * (minutes != '1')} of running until the "
            f"packings they passed on")


def _grouped_clauses(rows) -> list[tuple[dict, str]]:
    """Each run in ``rows`` with its ``_repack_clause``, but one clause for the runs of one
    kind that left the same packing for the same time (with all their seeds), at the first."""
    def alike(row):
        return row.get("repack"), row["start"], round(row["seconds"] / 60)
    left = {}
    for row in rows:
        if row["best_bytes"] >= row["start_bytes"]:
            left.setdefault(alike(row), []).append(row)
    clauses = []
    for row in rows:
        if row["best_bytes"] < row["start_bytes"]:
            clauses.append((row, _repack_clause(row)))
        elif (group := left[alike(row)])[0] is row:
            clauses.append((row, _repack_clause(row, [other["seed"] for other in group])))
    return clauses



def _open_windows(windows) -> str:
    """A clause naming the windows (instance, row) left open; empty when none."""
    if not windows:
        return ""
    named = _words([f"{name}'s window of sections {window['start']} to "
                    f"{window['start'] + window['width'] - 1} ({window['tensors']} tensors)"
                    for name, window in windows])
    if len(windows) == 1:
        return f", and the other one, {named}, stays open"
    return f", and the other {len(windows)} stay open: {named}"


def _by_beams(subsets) -> str:
    """A parenthesis on how many of ``subsets`` (rows of ``bench/search_windows.py``) only a
    beam packed, after the depth-first probe ran out of time; empty when none."""
    count = sum("beam_width" in subset for subset in subsets)
    if not count:
        return ""
    return f" ({count} of them only by a beam)"


def search_tight_note(rows) -> str:
    """A clause on what ``bench/search_windows.py``'s tight-section subsets (the buffers live
    in the sections within a slack of the max breadth) proved at the max breadth."""
    subsets = [(row["instance"], subset) for row in rows for subset in row.get("tight", [])]
    if not subsets:
        return "no tight-section subsets were probed"
    refuted = sorted({name for name, subset in subsets if subset["result"] == "refuted"})
    if refuted:
        count = sum(subset["result"] == "refuted" for _, subset in subsets)
        verb = "refutes" if count == 1 else "refute"
        return (f"{count} of the {len(subsets)} subsets {verb} it, on {_words(refuted)}, "
                f"raising the bound by one granule")
    largest = []
    for row in rows:
        packed = [subset for subset in row.get("tight", []) if subset["result"] == "packed"]
        if packed:
            widest = max(packed, key=lambda subset: subset["tensors"])
            largest.append(f"{widest['tensors']} of {row['instance']}'s {row['tensors']} "
                           f"tensors (slack {widest['slack_percent']:g}\\,\\%)")
    unfinished = [subset for _, subset in subsets if subset["result"] == "open"]
    note = f"none of the {len(subsets)} subsets refutes it"
    if largest:
        note += (": subsets of up to " + _words(largest) + " pack at it"
                 + _by_beams([subset for _, subset in subsets]))
    if unfinished:
        note += (f", and the other {len(unfinished)}, from a slack of "
                 f"{min(subset['slack_percent'] for subset in unfinished):g}\\,\\% on, "
                 f"stay open")
    return note


def orders_subject(row: dict) -> str:
    """What a row of ``bench/search_orders.py`` sampled: the instance, or with ``--window``
    the buffers of its sections FIRST..END-1; with its (their) chains merged with
    ``--chains``."""
    window = row.get("window")
    if window:
        return (f"the buffers of {row['instance']}'s sections {window[0]}--{window[1] - 1}"
                + (" with their chains merged" if row.get("chains") else ""))
    return row["instance"] + (" with its chains merged" if row.get("chains") else "")


def orders_name(row: dict) -> str:
    """What the orders note calls a row's sample: its subject (:func:`orders_subject`), and
    "in failure-directed orders" for a row made with ``--learn`` (its kind,
    :func:`orders_kind`)."""
    return orders_subject(row) + (f" in {orders_kind(row)} orders" if row.get("learn") else "")


def orders_kind(row: dict) -> str:
    """The orders a row of ``bench/search_orders.py`` searched: ``"failure-directed"`` with
    ``--learn`` (:mod:`optplan.exact.failures`), ``"prefix-keeping failure-directed"`` with
    ``--prefixes`` too, else ``"random"``."""
    if not row.get("learn"):
        return "random"
    return ("prefix-keeping " if row.get("prefixes") else "") + "failure-directed"


def orders_completion(entry: dict, row: dict) -> str:
    """A clause on what CP-SAT made of the window packings of ``entry`` (a capacity of a row
    of ``bench/search_orders.py --complete``): how many it completed to a packing of the
    whole instance, refuted (none fits around them) or left open; empty without
    completions."""
    counts = entry.get("completions")
    if not counts:
        return ""
    done, refuted, unknown = (counts[key] for key in ("completed", "refuted", "open"))
    seconds = f"{float(row['complete_seconds']):g}\\,s"
    around = f"{row['instance']}'s other buffers"
    if done:
        return f", and CP-SAT places {around} around {done} of them"
    if not unknown:
        who = {1: "refuted", 2: "both refuted"}.get(refuted, f"all {refuted} refuted")
        each = " each" if refuted > 1 else ""
        return f", around none of which CP-SAT places {around} ({who} within {seconds}{each})"
    return (f", around none of which CP-SAT places {around} in {seconds} each ({refuted} "
            f"refuted, {unknown} open)")


def search_orders_macros(rows) -> dict[str, str]:
    """``SearchOrdersNote``: how often one random order packs the open instances near their
    bound (``bench/search_orders.py``'s rows, one per run of an instance and probe length).
    Per probe length, how many orders were searched (per row when the rows differ), and per
    row how many packed at the least capacity above the max breadth where any did, and the
    largest capacity below that where none did (in percent above the max breadth). A row
    made with ``--chains`` speaks of the instance "with its chains merged", one made with
    ``--window`` of the buffers of those sections (at the whole instance's max breadth), one
    made with ``--learn`` says its orders were failure-directed."""
    if not rows:
        return {"SearchOrdersNote": "no random orders were probed"}

    def within(entry, row) -> str:
        percent = entry["above_percent"]
        if percent:
            return f"within {percent:g}\\,\\%"
        return f"at {row['instance']}'s max breadth" if row.get("window") else "at its max breadth"

    lengths = []
    for seconds in sorted({float(row["probe_seconds"]) for row in rows}):
        mine = sorted((row for row in rows if float(row["probe_seconds"]) == seconds),
                      key=lambda row: (row["instance"], tuple(row.get("window") or ()),
                                       bool(row.get("chains")), bool(row.get("learn")),
                                       max(entry["probes"] for entry in row["capacities"])))
        probes = sorted({entry["probes"] for row in mine for entry in row["capacities"]})
        per_row = len(probes) > 1  # the rows searched different numbers of orders
        parts = []
        for row in mine:
            entries = sorted(row["capacities"], key=lambda entry: entry["above_percent"])
            first = next((entry for entry in entries if entry["packed"]), None)
            empty = [entry for entry in entries if first is None
                     or entry["above_percent"] < first["above_percent"]]
            found = first or empty[-1]
            among = f" of {_thousands(found['probes'])}" if per_row else ""
            name = orders_name(row)
            if first is None:
                parts.append(f"none{among} packs {name} {within(found, row)}")
                continue
            verb = "packs" if first["packed"] == 1 else "pack"
            parts.append(f"{first['packed']}{among} {verb} {name} {within(first, row)}"
                         + (f" (none {within(empty[-1], row)})" if empty else "")
                         + orders_completion(first, row))
        lead = (f"searching random orders for {seconds:g}\\,s each, " if per_row else
                f"of {_thousands(probes[0])} random orders searched for {seconds:g}\\,s each, ")
        lengths.append(lead + _words(parts))
    return {"SearchOrdersNote": "; ".join(lengths)}


def search_orders_bound_macros(rows) -> dict[str, str]:
    """``SearchOrdersBoundNote``: the rows of ``bench/search_orders.py`` (whole instances,
    not windows) in which a random order packed the instance at its max breadth, a packing
    that proves its optimum by the depth-first search alone: how many of how many orders
    (random or failure-directed), of how long, and in how many nodes."""
    parts = []
    for row in sorted(rows, key=lambda row: (row["instance"], bool(row.get("chains")),
                                             bool(row.get("learn")),
                                             bool(row.get("prefixes")))):
        if row.get("window"):
            continue
        for entry in row["capacities"]:
            if entry["above_percent"] == 0 and entry["packed"]:
                verb = "packs" if entry["packed"] == 1 else "pack"
                nodes = _words(_thousands(count) for count in sorted(entry["packing_nodes"]))
                parts.append(f"{entry['packed']} of {_thousands(entry['probes'])} "
                             f"{orders_kind(row)} orders of {orders_subject(row)}, searched for "
                             f"{float(row['probe_seconds']):g}\\,s each, {verb} it at its "
                             f"max breadth, in {nodes} nodes")
    return {"SearchOrdersBoundNote": "; ".join(parts) if parts else
            "no random order packs an instance at its max breadth"}


def search_seed_macros(before_after, seeds) -> dict[str, str]:
    """``SearchSeeds`` and ``SearchSeedNote``: the compiled runs of the instances that
    ``seeds`` (``bench/search.py --seed``'s rows) re-ran with other seeds of the random
    orders, together with their run in ``before_after`` (its seed, 0 when unrecorded): per
    instance, the range of the arenas and of the gaps over the seeds."""
    runs = [row for row in list(before_after) + list(seeds) if "after" in row]
    names = sorted({row["instance"] for row in seeds})
    if not names:
        return {"SearchSeeds": "--", "SearchSeedNote": "no other seed was run"}
    used, parts = set(), []
    for name in names:
        mine = [row["after"] for row in runs if row["instance"] == name]
        used |= {run.get("seed", 0) for run in mine}
        arenas = sorted(run["objective"] for run in mine)
        gaps = sorted(run["objective"] / run["best_bound"] - 1 for run in mine)
        proven = sum(run["status"] == "OPTIMAL" for run in mine)
        if proven == len(mine):
            times = sorted(run["wall_time_s"] for run in mine)
            parts.append(f"{name} is proven optimal in all of them ({_thousands(arenas[-1])} "
                         f"bytes, in {times[0]:.1f}--{times[-1]:.1f}\\,s)")
            continue
        parts.append(f"from {_thousands(arenas[0])} to {_thousands(arenas[-1])} bytes on "
                     f"{name} (gaps {_pct(gaps[0])}--{_pct(gaps[-1])}\\,\\%"
                     + (f", {proven} proven" if proven else "") + ")")
    ordered = sorted(used)
    seeds_text = (f"{ordered[0]}--{ordered[-1]}" if ordered == list(range(ordered[0],
                                                                          ordered[-1] + 1))
                  else ", ".join(map(str, ordered)))
    return {"SearchSeeds": seeds_text,
            "SearchSeedNote": f"in the {len(ordered)} runs, " + _words(ranged(parts, names))}


def ranged(parts: list[str], names: list[str]) -> list[str]:
    """``parts`` with "the arenas range " before the first one that is a range (the others
    start with an instance's name)."""
    first = next((i for i, part in enumerate(parts) if not part.startswith(tuple(names))),
                 None)
    return [("the arenas range " if i == first else "") + part for i, part in enumerate(parts)]


def closing_probe(run: dict) -> dict:
    """The probe of a proven run (a search result's dict with ``probes``) whose packing met
    the bound: the last packing at the run's arena; ``{}`` for a run that is not proven."""
    if run.get("status") != "OPTIMAL":
        return {}
    found = [probe for probe in run.get("probes") or ()
             if probe["result"] == "feasible" and probe["capacity"] == run["objective"]]
    return found[-1] if found else {}


def search_beam_macros(before_after) -> dict[str, str]:
    """``SearchBeamNote``: the instances whose compiled run (``after`` of
    ``bench/search.py``'s rows) a beam closed, with a packing at the proven bound, and when,
    as a clause for the text."""
    closed = []
    for row in before_after:
        run = row.get("after") or {}
        if closing_probe(run).get("loop") == "beam":
            closed.append(f"{row['instance']} after {run['wall_time_s']:.1f}\\,s")
    return {"SearchBeamNote": ("a beam at the bound closed " + _words(closed)) if closed
            else "no beam closed an instance"}


REPACKINGS = {"layers": "layer search", "skyline": "skyline repacking",
              "bands": "band repacking"}
"""The search's repackings (``optplan.exact.search.REPACKS``) as the text names them."""


def _repacked(row: dict) -> str:
    """For an unproven run whose repacking rounds lowered its incumbent (``row``: a search
    result's dict with ``probes``), a clause saying how far its probes and beams got and
    which repackings took it on; "" otherwise."""
    probes = row.get("probes") or []
    found = [probe["capacity"] for probe in probes
             if probe["result"] == "feasible" and probe["loop"] != "repack"]
    lowered = [probe for probe in probes
               if probe["loop"] == "repack" and probe["result"] == "feasible"]
    if not found or not lowered or min(found) <= row["objective"]:
        return ""
    methods = list(dict.fromkeys(REPACKINGS[probe["method"]] for probe in lowered))
    return (f"; its probes and beams got to {_thousands(min(found))} bytes, and its "
            f"repacking rounds lowered that "
            f"{ {1: 'once', 2: 'twice'}.get(len(lowered), f'{len(lowered)} times')} "
            f"({_words(methods)})")


def round_order_kind(closing: dict) -> str:
    """The orders of a round at the bound, by its record, in :func:`orders_kind`'s words:
    failure-directed when it keeps the ``scores`` its last order was drawn with,
    prefix-keeping when the ``prefix`` too, else random (a round before either)."""
    return orders_kind({"learn": "scores" in closing, "prefixes": "prefix" in closing})


def search_long_macros(rows, folder: Path | None = None) -> dict[str, str]:
    """``SearchLongNote``, ``SearchLongClosedNote``, ``SearchLongSeed`` and
    ``SearchLongCertificates``: what the long runs of the open
    instances (``long_runs.jsonl``'s rows, dicts) reached, each named by
    :func:`long_run_names`. A proven run names its time, its
    nodes and, when a random-order probe found the packing that met the bound, that probe's
    length and which draw from the seed its order was (the order replays from the seed); an
    unproven run its arena and gap. A beam that packed it is named with its width, length
    and seed (it replays from those). The closed note names the instances packed at their max
    breadth, where the gap lay in the arena, not in the bound; the seeds say which seeds the
    runs had; the certificates are the packings of proven runs committed in ``folder`` as
    ``NAME.ARENA.seedSEED.offsets.csv`` (:func:`file_name_tt`)."""
    parts, closed, certificates = [], [], []
    rows = sorted(rows, key=lambda row: (row["instance"], row.get("seed", 0)))
    for name, row in zip(long_run_names(rows), rows):
        nodes = _thousands(round(row["nodes"] / 1e6))
        if row["status"] != "OPTIMAL":
            parts.append(f"{name} ends at {_thousands(row['objective'])} bytes, "
                         f"{_pct(row['gap'])}\\,\\% above its bound, after {nodes} million nodes"
                         + _repacked(row))
            continue
        at_breadth = row["objective"] == row["lower_bound"]
        certificate = f"{row['instance']}.{row['objective']}.seed{row.get('seed', 0)}.offsets.csv"
        if folder is not None and (Path(folder) / certificate).is_file():
            certificates.append(file_name_tt(certificate))
        closed += [row["instance"]] if at_breadth and row["instance"] not in closed else []
        probes = row.get("probes") or []
        closing = closing_probe(row)
        draw = (random_draw(probes, probes.index(closing))
                if closing.get("loop") == "improve" else None)
        how = (f": a beam {_thousands(closing['width'])} states wide, of "
               f"{closing['seconds']:.1f}\\,s and tie-order seed {closing['seed']}, packed it"
               if closing.get("loop") == "beam" else
               f": a round of {REPACKINGS[closing['method']]} (seed {closing['seed']}), "
               f"{_thousands(closing['steps'])} steps in, packed it"
               if closing.get("loop") == "repack" else
               f": a round at the bound packed it, in {round_order_kind(closing)} order "
               f"{_thousands(closing['draws'])} drawn from the round's seed {closing['seed']} "
               f"(probes of {IMPROVE_SLICE:g}\\,s)"
               if closing.get("loop") == BOUND_ROUND else "" if draw is None else
               f": a probe of {closing['seconds']:.2f}\\,s in random order "
               f"{_thousands(draw)} drawn from seed {row.get('seed', 0)} packed it")
        parts.append(f"{name} is proven optimal"
                     + (" at its max breadth" if at_breadth else "")
                     + f", {_thousands(row['objective'])} bytes, after "
                     f"{row['wall_time_s']:.0f}\\,s and {nodes} million nodes" + how)
    note = "; ".join(parts) if parts else "no instance was run longer"
    closed_note = (f"On {_words(closed)} it lay in the arena: a longer run packs "
                   + ("it" if len(closed) == 1 else "them")
                   + " at the max breadth (Section~\\ref{sec:minimalloc}). ") if closed else ""
    by_instance = runs_by_instance(rows)
    seeds = {name: [row.get("seed", 0) for row in runs] for name, runs in by_instance.items()}

    def said(numbers) -> str:
        return ("seeds " if len(numbers) > 1 else "seed~") + _words(map(str, numbers))
    tallies = []
    for name, runs in by_instance.items():
        rounds = [probe for row in runs
                  for probe in row.get("probes") or () if probe.get("loop") == BOUND_ROUND]
        if tally := long_run_tally(runs):
            packed = sum(probe["result"] == "feasible" for probe in rounds)
            tallies.append(f"{name} is proven{tally}" + (
                f", its rounds at the bound drawing {_thousands(sum(p['draws'] for p in rounds))}"
                f" orders in all, of which {packed} packed it" if rounds else ""))
    return {"SearchLongNote": note, "SearchLongClosedNote": closed_note,
            "SearchLongTally": _words(tallies) or "no instance was run at more than one seed",
            "SearchLongSeed": ("--" if not seeds else said(next(iter(seeds.values())))
                               if len(set(map(tuple, seeds.values()))) == 1 else
                               _words(f"{said(numbers)} for {name}"
                                      for name, numbers in seeds.items())),
            "SearchLongCertificates": _words(certificates) or "none",
            "SearchRepackAfter": f"{REPACK_AFTER:g}", "SearchRepackStall": f"{REPACK_STALL:g}",
            "SearchRefuteShare": f"{100 * SPLIT.search_refute:g}",
            "SearchRepackings": _words(REPACKINGS[name] for name in REPACKS)}


def generated_latex(rows: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """Generated instances by generator and size: how many proven, the best heuristic's mean
    gap per problem."""
    if rows.empty:
        return "", {"NumGenerated": "--", "NumProvenGeneratedSO": "--",
                    "NumProvenGeneratedOC": "--", "NumRepetitionsGenerated": "--"}
    rows = plain(rows)
    rows = rows.assign(kind_size=rows["instance"].str.replace(r"[_-]s(?:eed)?\d+$", "",
                                                              regex=True))
    header = ["generator", "instances"] + [c for _ in PROBLEMS for c in (
        "proven", r"best heuristic\\(mean gap \%)")]
    table_rows, macros = [], {"NumGenerated": str(rows["instance"].nunique()),
                              "NumRepetitionsGenerated": str(repetitions(rows))}
    for group, part in rows.groupby("kind_size", sort=True):
        kind, size = re.split(r"[_-](?=\d+$)", group)
        cells = [f"{GENERATOR_NAMES.get(kind, kind.replace('_', ' '))}, {size} tensors",
                 str(part["instance"].nunique())]
        for problem in PROBLEMS:
            frame = summary_table(part, problem)
            optima = optimum_table(part[part["problem"] == problem])
            proven = int(optima["optimum"].notna().sum())
            complete = frame[frame["instances"] == frame.attrs["proven"]] if len(frame) else frame
            cells += [f"{proven}/{len(optima)}",
                      f"{latex_escape(method_label(complete.iloc[0]['method']))} "
                      f"({percent_cell(complete.iloc[0]['mean_gap'])})"
                      if len(complete) and frame.attrs["proven"] else "--"]
        table_rows.append(cells)
    for problem, tag in PROBLEMS.items():
        optima = optimum_table(rows[rows["problem"] == problem])
        macros[f"NumProvenGenerated{tag}"] = str(int(optima["optimum"].notna().sum()))
        frame = summary_table(rows, problem)
        complete = frame[frame["instances"] == frame.attrs["proven"]]
        if len(complete):
            macros[f"BestHeuristicGenerated{tag}"] = latex_escape(
                method_label(complete.iloc[0]["method"]))
            macros[f"BestHeuristicMeanGapGenerated{tag}"] = _pct(complete.iloc[0]["mean_gap"])
    caption = ("Generated instances (three seeds per row): proven optima and the heuristic with "
               "the smallest mean gap to them.")
    return latex_table(header, table_rows, caption=caption, label="tab:generated", wide=True,
                       align="lr" + "rl" * len(PROBLEMS),
                       spans=[("shared objects", 3, 4), ("offsets", 5, 6)]), macros


def peers_latex(peers: pd.DataFrame, duplicates: dict[str, list[str]]
                ) -> tuple[str, dict[str, str]]:
    """Every method of the peers run, per group of instances (MiniMalloc's suite, the
    distinct inference networks, the training graphs): plans at the proven optimum, proofs by
    the method itself, mean gap to the optimum, median seconds
    (:func:`optplan.analysis.peers.peer_summary`); best per column in bold."""
    from optplan.analysis.peers import peer_summary, peer_table

    if peers.empty:
        return "", {"PeersStatus": "pending"}
    table = peer_table(drop_duplicates(peers, duplicates))
    methods = [m for _, members in PEER_FAMILIES for m in members if m in table.attrs["methods"]]
    groups = [g for g in PEER_GROUPS if (table["group"] == g).any()]
    summaries = {g: peer_summary(table[table["group"] == g], methods).set_index("method")
                 for g in groups}
    header = ["method"] + [c for _ in groups for c in
                           (r"at\\optimum", "proven", r"mean\\gap \%", r"median\\time")]
    rows, bold, row_groups = [], [], {}
    for title, members in PEER_FAMILIES:
        present = [m for m in members if m in methods]
        if present:
            row_groups[len(rows)] = title
        for method in present:
            cells = [latex_escape(method_label(method).removeprefix("OmniMalloc "))]
            for group in groups:
                entry = summaries[group].loc[method]
                exact = method in ("search", "cpsat", *PEER_EXACT)
                cells += [f"{int(entry['at_optimum'])}/{int(entry['with_optimum'])}",
                          str(int(entry["proven"])) if exact else "--",
                          percent_cell(entry["mean_gap"]), seconds_cell(entry["median_s"])]
            rows.append(cells)
    order = [m for _, members in PEER_FAMILIES for m in members if m in methods]
    for offset, group in enumerate(groups):
        frame = summaries[group].reindex(order)
        base = 1 + 4 * offset
        bold += [(r, base) for r in bold_best(list(frame["at_optimum"]), larger=True)]
        bold += [(r, base + 2) for r in bold_best(list(frame["mean_gap"]))]
    macros = peers_macros(table, summaries, peers)
    caption = ("optplan's exact methods beside the peers on one run (every method "
               f"{macros['PeersTimeLimit']}\\,s and {macros['PeersThreads']} threads): per group "
               "of instances, the plans at the proven optimum (of the instances with one), the "
               "optima the method proved itself, the mean gap to the optimum and the median "
               "wall time. Best per column in bold.")
    spans = [(PEER_GROUPS[g][0], 2 + 4 * i, 5 + 4 * i) for i, g in enumerate(groups)]
    return latex_table(header, rows, caption=caption, label="tab:peers", wide=True,
                       align="l" + "rrrr" * len(groups), bold=bold, groups=row_groups,
                       spans=spans), macros


def peers_macros(table: pd.DataFrame, summaries: dict[str, pd.DataFrame],
                 peers: pd.DataFrame) -> dict[str, str]:
    """The numbers the peers section states: the run's limits; per group of instances and
    exact method (``search``, ``cpsat``, :data:`PEER_EXACT`) its proofs, mean gap and median
    time; per group and family of OmniMalloc's allocators (``Search``: its searches,
    ``Greedy``: its greedy allocators) how many are at the optimum on every instance, and
    the one with the smallest mean gap (its gaps and the instances it solves optimally)."""
    limits = sorted(set(pd.to_numeric(peers["time_limit"], errors="coerce").dropna()))
    threads = sorted(set(pd.to_numeric(peers["workers"], errors="coerce").dropna()))
    macros = {"PeersStatus": "done", "PeersTimeLimit": ", ".join(f"{t:g}" for t in limits),
              "PeersThreads": ", ".join(f"{t:g}" for t in threads),
              "PeersNumAllocators": str(sum(m.startswith("omnimalloc_")
                                            for m in table.attrs["methods"])),
              "PeersNumJobs": str(len(peers))}
    families = {"Search": PEER_FAMILIES[2][1], "Greedy": PEER_FAMILIES[3][1]}
    for group, frame in summaries.items():
        tag = PEER_GROUPS[group][1]
        part = table[table["group"] == group]
        macros[f"PeersNum{tag}"] = str(len(part))
        macros[f"PeersNumProven{tag}"] = str(int(part["proven"].sum()))
        for method in ("search", "cpsat", *PEER_EXACT):
            if method not in frame.index:
                continue
            entry, name = frame.loc[method], macro_name(method)
            macros |= {f"Peers{name}{tag}Proven": str(int(entry["proven"])),
                       f"Peers{name}{tag}MeanGap": _pct(entry["mean_gap"]),
                       f"Peers{name}{tag}MedianTime": seconds_cell(entry["median_s"])}
        for family, members in families.items():
            allocators = frame.reindex([m for m in members if m in frame.index])
            complete = allocators[allocators["at_optimum"] == allocators["with_optimum"]]
            macros[f"Peers{family}AtOptimum{tag}"] = str(len(complete))
            ranked = allocators.dropna(subset=["mean_gap"]).sort_values(["mean_gap", "median_s"])
            if len(ranked):
                best = ranked.iloc[0]
                macros |= {f"PeersBest{family}{tag}": latex_escape(method_label(ranked.index[0])),
                           f"PeersBest{family}MeanGap{tag}": _pct(best["mean_gap"]),
                           f"PeersBest{family}MaxGap{tag}": _pct(best["max_gap"]),
                           f"PeersBest{family}Optimal{tag}": str(int(best["at_optimum"]))}
    return macros


def ablation_lp_latex(rows: pd.DataFrame) -> tuple[str, dict[str, str]]:
    """CP-SAT as shipped vs the compact models alone, shared objects, training graphs."""
    rows = plain(rows[(rows["problem"] == "shared-objects") & (rows["method"] == "cpsat")])
    if rows.empty:
        return "", {"AblationLpProven": "--", "AblationCompactProven": "--",
                    "AblationNumGraphs": "--", "AblationLpRaised": "--",
                    "AblationCompactRaised": "--"}
    def variant(params) -> str:
        params = params or {}
        if params.get("column_generation") == 0.0:
            return f"{params.get('model', 'colour')} model alone"
        return "colouring + configuration LP"

    rows = rows.assign(variant=rows["params"].map(variant))
    variants = sorted(rows["variant"].unique(), key=lambda v: (not v.startswith("colouring +"), v))
    names = sorted(rows["instance"].unique())
    header = ["variant"] + [c for n in names for c in (
        network_label(n, source=False).replace(" training", r"\\training"), r"time\\(s)")]
    table_rows, macros, proven_count, raised = [], {}, {}, {}
    bounds = rows.groupby("instance")["lower_bound"].max()
    for v in variants:
        cells = [v]
        proven_count[v], raised[v] = 0, 0
        for name in names:
            run = rows[(rows["variant"] == v) & (rows["instance"] == name)]
            if run.empty:
                cells += ["--", "--"]
                continue
            run = run.iloc[0]
            proven = run["status"] == "OPTIMAL"
            proven_count[v] += bool(proven)
            lower = bounds.get(name)
            raised[v] += bool(lower is not None and run["best_bound"] > lower)
            cells += ["proven" if proven else
                      f"{percent_cell(run['objective'] / run['best_bound'] - 1)} open",
                      f"{run['wall_time_s']:.1f}"]
        table_rows.append(cells)
    shipped = variants[0]
    macros["AblationLpProven"] = str(proven_count[shipped])
    macros["AblationCompactProven"] = str(max((c for v, c in proven_count.items()
                                               if v != shipped), default=0))
    macros["AblationNumGraphs"] = str(len(names))
    macros["AblationLpRaised"] = str(raised[shipped])
    macros["AblationCompactRaised"] = str(max((c for v, c in raised.items() if v != shipped),
                                              default=0))
    caption = ("Shared objects on the training graphs: CP-SAT as shipped (colouring model, "
               "configuration LP by column generation, model again) against the compact "
               "models alone, 60 s each; an open run shows its remaining gap between incumbent "
               "and bound (\\%).")
    return latex_table(header, table_rows, caption=caption, label="tab:ablation-lp", wide=True,
                       align="l" + "rr" * len(names)), macros


def ablation_search_latex(ablation: pd.DataFrame, minimalloc: pd.DataFrame
                          ) -> tuple[str, dict[str, str]]:
    """The offsets search on MiniMalloc's suite with each technique off, against all on: the
    ablation run's own all-on rows (the same worker count as its other rows), else the suite
    run's."""
    def switched_off(params) -> str:
        off = [k for k, v in (params or {}).items() if k in SEARCH_SWITCHES and v is False]
        return off[0] if off else "all on"

    searches = plain(ablation[ablation["method"] == "search"])
    if not searches["params"].map(switched_off).eq("all on").any():
        searches = pd.concat([plain(minimalloc[minimalloc["method"] == "search"]), searches],
                             ignore_index=True)
    runs = median_runs(searches)
    if ablation.empty or runs.empty:
        return "", {f"SearchProven{macro_name(s)}": "--" for s in ("all on", *SEARCH_SWITCHES)} \
            | {"SearchMostNeeded": "--", "SearchMostNeededProven": "--", "SearchNotNeeded": "--"}

    runs = runs.assign(setting=runs["params"].map(switched_off),
                       nodes=runs["info"].map(lambda i: (i or {}).get("nodes")))
    reference = runs[runs["setting"] == "all on"]
    closed = set(reference.loc[reference["status"] == "OPTIMAL", "instance"])
    header = ["switched off", "proven", r"time on all-on's\\proofs (s)",
              r"nodes\\(millions)"]
    table_rows, macros = [], {}
    for setting in ["all on", *SEARCH_SWITCHES]:
        part = runs[runs["setting"] == setting]
        if part.empty:
            continue
        same = part[part["instance"].isin(closed)]
        table_rows.append([setting.replace("_", " ") if setting != "all on" else "none (all on)",
                           f"{int((part['status'] == 'OPTIMAL').sum())}/{len(part)}",
                           f"{same['wall_time_s'].sum():.1f}",
                           f"{pd.to_numeric(same['nodes'], errors='coerce').sum() / 1e6:.2f}"])
        macros[f"SearchProven{macro_name(setting)}"] = str(int((part["status"]
                                                               == "OPTIMAL").sum()))
    off = runs[runs["setting"] != "all on"]
    if len(off):
        proven = off.groupby("setting")["status"].agg(lambda s: int((s == "OPTIMAL").sum()))
        fewest = proven.min()
        macros["SearchMostNeeded"] = _words(s.replace("_", " ")
                                            for s in SEARCH_SWITCHES if proven.get(s) == fewest)
        macros["SearchMostNeededProven"] = str(fewest)
        same = [s.replace("_", " ") for s in SEARCH_SWITCHES if proven.get(s) == len(closed)]
        macros["SearchNotNeeded"] = _words(same) or "none"
    workers = " or ".join(str(int(w)) for w in sorted(set(runs["workers"].dropna())))
    caption = ("The offsets search on MiniMalloc's suite with one technique switched off at a "
               f"time (60 s and {workers} worker{'' if workers == '1' else 's'} per job): "
               "instances proven, and time and "
               "nodes on the instances the full search proves.")
    return latex_table(header, table_rows, caption=caption, label="tab:ablation-search",
                       align="lrrr", wide=True), macros


def hash_table(results: pd.DataFrame, duplicates: dict[str, list[str]], per_page: int = 54
               ) -> str:
    """The appendix tables: every instance by its key (file stem), its name, tensor count and
    the first 16 hex digits of its content SHA-256 (:func:`optplan.instances.content_hash`);
    a duplicate network is marked. Full-width tables of ``per_page`` rows."""
    from optplan.analysis.names import instance_title
    from optplan.instances import content_hash

    twins = {d for rest in duplicates.values() for d in rest}
    rows = []
    for _, row in results.drop_duplicates("instance").sort_values("instance").iterrows():
        try:
            instance = instance_for_key(str(row["instance_key"]))
            digest = content_hash(instance)[:16] if hasattr(instance, "records") else "--"
        except (OSError, ValueError):
            digest = "(file not present)"
        name = latex_escape(row["instance"]) + (r"$^\ast$" if row["instance"] in twins else "")
        rows.append([rf"\texttt{{{name}}}",
                     latex_escape(instance_title(row["instance"], row["suite"], width=1000)),
                     str(int(row["num_tensors"])), rf"\texttt{{{digest}}}"])
    header = ["instance key", "name", "tensors", "SHA-256 (prefix)"]
    parts = []
    for start in range(0, len(rows), per_page):
        first = start == 0
        parts.append(latex_table(
            header, rows[start:start + per_page],
            caption="Instances and content hashes." if first else "Instances (continued).",
            label="tab:hashes" if first else f"tab:hashes-{start}", wide=True,
            align="llrl", placement="p"))
    return "".join(parts)


# --- Macros beyond the tables -----------------------------------------------------------------

def bound_macros(networks: pd.DataFrame) -> dict[str, str]:
    """How often the combinatorial bound is the optimum, and how loose it is otherwise."""
    macros = {}
    for problem, tag in PROBLEMS.items():
        optima = optimum_table(plain(networks[networks["problem"] == problem]))
        proven = optima[optima["optimum"].notna()]
        slack = proven["optimum"].astype(float) / proven["lower_bound"].astype(float) - 1
        loose = proven[slack > 0]
        macros |= {f"NumInstances{tag}": str(len(optima)), f"NumProven{tag}": str(len(proven)),
                   f"NumOptimumAtBound{tag}": str(int((slack <= 0).sum())),
                   f"MaxBoundSlack{tag}": _pct(slack.max() if len(slack) else None),
                   f"MaxBoundSlackNetwork{tag}": latex_escape(network_label(
                       proven.loc[slack.idxmax(), "instance"])) if len(loose) else "none",
                   f"LooseBound{tag}": _few(latex_escape(network_label(n))
                                            for n in loose["instance"]),
                   f"NumLooseBound{tag}": str(len(loose)),
                   f"ProvenShare{tag}": f"{100 * len(proven) / max(1, len(optima)):.0f}"}
    return macros


def runs_phrase(count: int) -> str:
    """``"1 run"``, ``"3 runs"``."""
    return f"{count} run" + ("" if count == 1 else "s")


def repetitions(rows: pd.DataFrame) -> int:
    """How many times each job ran (the largest repetition index + 1)."""
    return int(rows["repetition"].fillna(0).astype(int).max()) + 1 if len(rows) else 0


def exact_macros(networks: pd.DataFrame) -> dict[str, str]:
    macros = {}
    for problem, tag in PROBLEMS.items():
        for _, row in exact_table(networks, problem).iterrows():
            name = macro_name(row["method"]) + tag
            macros |= {f"NumRuns{name}": str(row["instances"]),
                       f"NumOptimalRuns{name}": str(row["optimal"]),
                       f"MedianTime{name}": "--" if pd.isna(row["median_time_s"])
                       else f"{row['median_time_s']:.2f}",
                       f"MaxTime{name}": "--" if pd.isna(row["max_time_s"])
                       else f"{row['max_time_s']:.1f}"}
    exact = networks[networks["kind"] == "exact"]
    not_built = exact[exact["info"].map(lambda i: str((i or {}).get("model", "")).startswith(
        "not built"))]
    macros["NumMilpNotBuilt"] = str(not_built[["instance", "problem"]].drop_duplicates().shape[0])
    macros["MilpNotBuilt"] = _words(sorted({latex_escape(network_label(n))
                                            + f" ({problem_label(p)})"
                                            for n, p in zip(not_built["instance"],
                                                            not_built["problem"])})) or "none"
    limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    macros["TimeLimits"] = ", ".join(f"{t:g}" for t in limits) or "--"
    macros["NumRepetitions"] = str(repetitions(networks))
    return macros


def feature_frame(networks: pd.DataFrame) -> pd.DataFrame:
    """Per distinct network with a proven offsets optimum: its features
    (:func:`optplan.instances.features`, the tensor count, the variant), the median and best
    gap of all heuristics to the optimum, and greedy by size's."""
    from optplan.instances import features as instance_features

    part = plain(networks[networks["problem"] == "offsets"])
    optima = optimum_table(part).set_index("instance")
    proven = optima[optima["optimum"].notna()]
    heuristics = part[(part["kind"] == "heuristic") & (part["valid"] == True)]  # noqa: E712
    objective = heuristics.groupby(["instance", "method"])["objective"].median()
    records = []
    for name in proven.index:
        key = part.loc[part["instance"] == name, "instance_key"].iloc[0]
        gaps = objective.xs(name) / proven.loc[name, "optimum"] - 1
        variant = re.search(r"_(fused|raw|train)_", name)
        records.append(instance_features(instance_for_key(str(key)))
                       | {"instance": name, "tensors": proven.loc[name, "num_tensors"],
                          "variant": variant.group(1) if variant else "other",
                          "median_gap": gaps.median(), "best_gap": gaps.min(),
                          "greedy_by_size_gap": gaps.get("greedy_by_size")})
    return pd.DataFrame(records)


FEATURES = ["tensors", "peak_live_count", "mean_live_count", "overlap_density",
            "largest_tensor_share"]


def feature_macros(frame: pd.DataFrame) -> dict[str, str]:
    """Spearman rank correlations between each feature and the median heuristic gap
    (``FeatureRho<Feature>``), the strongest one, and how often some heuristic is optimal."""
    macros = {"NumBestHeuristicOptimalOC": str(int((frame["best_gap"] <= 0).sum()))
              if len(frame) else "--"}
    correlations = {c: frame["median_gap"].rank().corr(frame[c].rank()) for c in FEATURES
                    if len(frame) > 2}
    for name in FEATURES:
        rho = correlations.get(name)
        macros[f"FeatureRho{macro_name(name)}"] = "--" if rho is None or pd.isna(rho) \
            else f"{rho:.2f}"
    present = {c: r for c, r in correlations.items() if not pd.isna(r)}
    strongest = max(present, key=lambda c: abs(present[c])) if present else None
    macros["FeatureStrongest"] = strongest.replace("_", " ") if strongest else "--"
    macros["FeatureStrongestRho"] = f"{present[strongest]:.2f}" if strongest else "--"
    return macros


def failure_macros(networks: pd.DataFrame, run_dirs) -> dict[str, str]:
    """How many failing plans were classified (each run directory's ``failures.csv``, written
    by ``paper/prune.py``), and the share of each failure mode."""
    from optplan.analysis.failures import OFFSETS_MODES, SHARED_OBJECTS_MODES, read_failures

    table = read_failures(run_dirs)
    table = table[table["instance"].isin(set(networks["instance"]))]
    macros = {}
    modes = {"shared-objects": SHARED_OBJECTS_MODES, "offsets": OFFSETS_MODES}
    for problem, tag in PROBLEMS.items():
        part = table[table["problem"] == problem]
        macros[f"NumFailures{tag}"] = str(len(part))
        for mode in modes[problem]:
            count = int((part["mode"] == mode).sum())
            macros[f"Failures{macro_name(mode)}{tag}"] = str(count)
            macros[f"FailureShare{macro_name(mode)}{tag}"] = (
                f"{100 * count / len(part):.0f}" if len(part) else "--")
    native = table[(table["problem"] == "offsets") & (table["mode"] != "stacked objects")]
    macros["NumNativeFailuresOC"] = str(len(native))
    off_peak = (native["mode"] == "off-peak fragmentation").sum()
    macros["NativeOffPeakShareOC"] = f"{100 * off_peak / len(native):.0f}" if len(native) else "--"
    return macros


def preload_macros(results: pd.DataFrame) -> dict[str, str]:
    """FlexNN vs the proven optimum at each budget; where FlexNN's latency rises with the
    budget."""
    table = preload_table(results) if (results["problem"] == "preload").any() else None
    if table is None or table.empty:
        return {"PreloadStatus": "pending"}
    proven = table[table["proven"]]
    flexnn = pd.to_numeric(proven["gap:flexnn"], errors="coerce").dropna()
    baseline = pd.to_numeric(proven["gap:no_preload"], errors="coerce").dropna()
    exact = results[(results["problem"] == "preload") & (results["method"] == "cpsat")]
    limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    macros = {"PreloadStatus": "done", "PreloadNumBudgets": str(len(table)),
              "PreloadNumProven": str(len(proven)),
              "PreloadNumNetworks": str(table["instance"].nunique()),
              "PreloadFlexNNOptimal": str(int((flexnn <= 0).sum())),
              "PreloadFlexNNMaxGap": _pct(flexnn.max() if len(flexnn) else None),
              "PreloadFlexNNMeanGap": _pct(flexnn.mean() if len(flexnn) else None),
              "PreloadNoPreloadMeanGap": _pct(baseline.mean() if len(baseline) else None),
              "PreloadTimeLimit": ", ".join(f"{t:g}" for t in limits) or "--",
              "PreloadMaxTime": f"{pd.to_numeric(exact['wall_time_s']).max():.1f}"}
    # The largest rise of FlexNN's latency from one budget to the next larger one.
    rises = []
    for instance, part in table.sort_values("budget").groupby("instance"):
        latency = part["flexnn"].astype(float).to_numpy()
        budgets = part["budget"].to_numpy()
        for i in range(1, len(latency)):
            if latency[i] > latency[i - 1]:
                rises.append((latency[i] - latency[i - 1], instance, budgets[i - 1], budgets[i],
                              latency[i - 1], latency[i]))
    macros["PreloadFlexNNNumRises"] = str(len(rises))
    if rises:
        _, instance, low, high, before, after = max(rises)
        macros |= {"PreloadRiseNetwork": latex_escape(network_label(
                       str(instance).removesuffix("_phone"))),
                   "PreloadRiseLowBudget": f"{low / 2**20:.1f}",
                   "PreloadRiseHighBudget": f"{high / 2**20:.1f}",
                   "PreloadRiseLowLatency": f"{before / 1000:.1f}",
                   "PreloadRiseHighLatency": f"{after / 1000:.1f}"}
    return macros


def slicing_latex(results: pd.DataFrame, run_dirs) -> tuple[str, dict[str, str]]:
    """Layer slicing (the ``slicing`` run): per network the minimum feasible budget without
    and with slicing, the budgets proven with slicing, FlexNN-with-slicing's gap to the
    proven optimum with slicing and the exact solve times; macros for the text."""
    minimums = {}
    for run_dir in run_dirs:
        minimums |= sweep_minimums(run_dir)
    table = slicing_table(results, minimums) if len(results) else pd.DataFrame()
    if table.empty:
        return "% no layer-slicing run\n", {"SlicingStatus": "pending"}
    header = ["network", r"min.\\budget", r"with\\slicing", r"proven\\plain", r"proven\\sliced",
              r"gap\\max", r"gap\\median", r"gap\\bracket", r"time\\median", r"time\\max"]
    rows = []
    for _, row in table.iterrows():
        name = row["instance"]
        bracket = (f"{percent_cell(row['gap_found_max'])}--{percent_cell(row['gap_bound_max'])}"
                   if not pd.isna(row["gap_bound_max"]) else "--")
        rows.append([latex_escape(network_label(str(name).split("_phone")[0], source=False)),
                     f"{row['minimum_budget'] / 2**20:.1f}",
                     f"{row['minimum_budget_sliced'] / 2**20:.1f}",
                     f"{row['proven_unsliced']}/{row['budgets']}",
                     f"{row['proven_sliced']}/{row['budgets']}",
                     percent_cell(row["gap_max"]), percent_cell(row["gap_median"]), bracket,
                     seconds_cell(row["time_median_s"]), seconds_cell(row["time_max_s"])])
    exact = results[(results["method"] == "cpsat")
                    & results["params"].map(lambda p: bool((p or {}).get("slicing")))]
    limits = sorted(set(pd.to_numeric(exact["time_limit"], errors="coerce").dropna()))
    gaps = table["gap_max"].dropna()
    macros = {"SlicingStatus": "done", "SlicingNumNetworks": str(len(table)),
              "SlicingNumBudgets": str(int(table["budgets"].sum())),
              "SlicingNumProven": str(int(table["proven_sliced"].sum())),
              "SlicingNumProvenPlain": str(int(table["proven_unsliced"].sum())),
              "SlicingTimeLimit": ", ".join(f"{t:g}" for t in limits) or "--",
              "SlicingGapMax": _pct(gaps.max() if len(gaps) else None),
              "SlicingGapFoundMax": _pct(table["gap_found_max"].max()),
              "SlicingGapBoundMax": _pct(table["gap_bound_max"].max()),
              "SlicingMaxTime": f"{table['time_max_s'].max():.1f}",
              "SlicingMaxSlicings": str(int(pd.to_numeric(exact["info"].map(
                  lambda i: (i or {}).get("slicings_solved")), errors="coerce").max()))}
    ratios = table["minimum_budget"] / table["minimum_budget_sliced"]
    best = table.loc[ratios.idxmax()]
    name = best["instance"]
    macros |= {"SlicingBestNetwork": latex_escape(network_label(str(name).split("_phone")[0],
                                                                source=False)),
               "SlicingBestRatio": f"{ratios.max():.1f}",
               "SlicingBestMin": f"{best['minimum_budget'] / 2**20:.1f}",
               "SlicingBestMinSliced": f"{best['minimum_budget_sliced'] / 2**20:.1f}",
               "SlicingNumShrunk": str(int((ratios > 1).sum()))}
    caption = ("Layer slicing: minimum feasible budget (MiB) without and with slicing, budgets "
               "proven without and with slicing, FlexNN-with-slicing's gap to the proven "
               "optimum with slicing (\\%; bracket over every budget: to the best plan found "
               "and to the proven bound), exact solve time with slicing.")
    return latex_table(header, rows, caption=caption, label="tab:slicing", wide=True,
                       align="l" + "r" * (len(header) - 1)), macros


def model_macros() -> dict[str, str]:
    """Constants of the models the text names: the phone cost profile, the MILP size cap, the
    search's improve-loop probe length, random-order spread and time per doubling."""
    from optplan.exact._search_core import RANK_JITTER
    from optplan.exact.milp import MODEL_TERMS_LIMIT
    from optplan.exact.search import IMPROVE_SLICE, RANDOM_LEVEL_SECONDS
    from optplan.preload.costmodel import PROFILES

    phone = PROFILES["phone"]
    return {"PhoneGflops": f"{phone.gflops:g}", "PhoneStorage": f"{phone.storage_mb_per_s:g}",
            "MilpTermsLimit": f"{MODEL_TERMS_LIMIT:,}".replace(",", "\\,"),
            "SearchProbeSeconds": f"{IMPROVE_SLICE:g}", "SearchJitter": f"{RANK_JITTER:g}",
            "SearchLevelSeconds": f"{RANDOM_LEVEL_SECONDS:g}"}


def machine_macros(run_dirs) -> dict[str, str]:
    """The machine the runs were timed on and their total wall time (from the manifests)."""
    from datetime import datetime

    cores, cpus, seconds = set(), set(), 0.0
    for run_dir in map(Path, run_dirs):
        manifest = json.loads((run_dir / "manifest.json").read_text())
        for session in manifest.get("sessions", []):
            machine = (session.get("provenance") or {}).get("machine") or {}
            if machine.get("cores"):
                cores.add(machine["cores"])
            if machine.get("cpu"):
                cpus.add(machine["cpu"])
            if session.get("started_at") and session.get("ended_at"):
                seconds += (datetime.fromisoformat(session["ended_at"])
                            - datetime.fromisoformat(session["started_at"])).total_seconds()
    deadline = None
    paper_manifest = next((Path(d) / "manifest.json" for d in run_dirs if Path(d).name == "paper"),
                          None)
    if paper_manifest is not None and paper_manifest.is_file():
        watchdog = json.loads(paper_manifest.read_text())["settings"].get("watchdog") or {}
        if watchdog:
            deadline = watchdog["factor"] * watchdog["heuristic_limit"] + watchdog["grace"]
    return {"HeuristicDeadline": "--" if deadline is None else f"{deadline:g}",
            "CoreBudget": "/".join(map(str, sorted(cores))) or "--",
            "Machine": latex_escape(" / ".join(sorted(cpus))) or "--",
            "RunHours": f"{seconds / 3600:.1f}"}


def write_macros(macros: dict[str, str], path: Path) -> None:
    """One ``\\newcommand`` per macro."""
    text = "% Generated by paper/build.py from paper/results/ — do not edit.\n"
    for name, value in sorted(macros.items()):
        text += rf"\newcommand{{\{name}}}{{{value}}}" + "\n"
    path.write_text(text)


def build(run_dirs, out_dir: Path, *, peers_dir: Path | None = None,
          runtimes_dir: Path | None = None, search_dir: Path | None = None) -> dict[str, str]:
    """Write tables, figures and macros into ``out_dir`` from the evaluation's ``run_dirs``,
    the peers run ``peers_dir``, the runtimes' rows in ``runtimes_dir`` and the search's
    before/after rows in ``search_dir`` (each optional); return the macros."""
    from optplan.analysis import runtimes

    out_dir = Path(out_dir)
    tables = out_dir / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    results = load_results(run_dirs)
    peers = load_results([peers_dir]) if peers_dir is not None else pd.DataFrame()
    networks, duplicates, generated, minimalloc, preload = suites(results)
    ablation = results[results["run"] == "paper_ablation"]
    search_ablation = results[results["run"] == "paper_search_ablation"]
    # the free-order run has its own table and figure (schedule_latex), not the report's
    main = results[~results["run"].isin(["paper_ablation", "paper_search_ablation", "order"])]
    report_rows = main[main["suite"].isin(["networks", "minimalloc", "preload"])]
    report_rows = drop_duplicates(report_rows, duplicates)
    make_report(run_dirs, out_dir, results=report_rows)

    macros: dict[str, str] = {}
    before_after, long_runs, windows, seeds, orders, completed, banded, layered = (
        read_jsonl(Path(search_dir) / name)
        if search_dir is not None and (Path(search_dir) / name).is_file() else []
        for name in SEARCH_FILES)
    plain_networks = networks[~networks["run"].isin(["paper_ablation"])]
    writers = {"six.tex": six_networks_table(plain_networks),
               "summary.tex": summary_latex(plain_networks),
               "inplace.tex": inplace_latex(plain_networks),
               "minimalloc.tex": minimalloc_latex(
                   minimalloc[minimalloc["run"] != "paper_search_ablation"],
                   peers[peers["suite"] == "minimalloc"] if len(peers) else None,
                   long_runs),
               "peers.tex": peers_latex(peers, duplicates),
               "generated.tex": generated_latex(generated),
               # The shipped CP-SAT job is the same job in paper and paper_ablation (one
               # job id, kept once), so the ablation reads every run's rows of its graphs.
               "ablation_lp.tex": ablation_lp_latex(
                   results[results["instance"].isin(set(ablation["instance"]))
                           & (results["repetition"].fillna(0) == 0)]),
               "ablation_search.tex": ablation_search_latex(search_ablation, minimalloc[
                   minimalloc["run"] != "paper_search_ablation"]),
               "slicing.tex": slicing_latex(preload[preload["run"] == "slicing"], run_dirs)}
    if search_dir is not None:
        writers["search.tex"] = search_latex(search_table(before_after),
                                             search_runs_table(long_runs))
        macros |= (search_windows_macros(windows) | search_seed_macros(before_after, seeds)
                   | search_long_macros(long_runs, search_dir) | search_orders_macros(orders)
                   | search_orders_bound_macros(orders)
                   | search_beam_macros(before_after) | search_complete_macros(completed)
                   | search_bands_macros(banded + [row for row in layered
                                                   if row["repack"] == "layers"])
                   | search_layers_macros(layered))
    for name, (text, found) in writers.items():
        (tables / name).write_text(text)
        macros |= found
    order_text, order_macros, order = schedule_latex(
        results[results["suite"] == "networks"], duplicates)
    (tables / "order.tex").write_text(order_text)
    macros |= order_macros
    if len(order):
        drawn = order[order["paper"] | (pd.to_numeric(order["saving"], errors="coerce") > 0)
                      | (pd.to_numeric(order["peak_saving"], errors="coerce") > 0)]
        save_figure(order_figure(order, {n: network_label(n) for n in drawn["instance"]}),
                    out_dir / "figures", "order")
    for problem in PROBLEMS:
        stem = f"networks_{PROBLEMS[problem].lower()}.tex"
        (tables / stem).write_text(network_appendix(plain_networks, problem))
    macros |= bound_macros(plain_networks) | exact_macros(plain_networks)
    features = feature_frame(plain_networks)
    macros |= feature_macros(features) | failure_macros(plain_networks, run_dirs)
    if len(features):
        save_figure(gap_feature_figure(features, "peak_live_count", "tensors live at the peak"),
                    out_dir / "figures", "features")
    macros |= preload_macros(preload[preload["run"] == "preload"]) | model_macros()
    macros |= machine_macros([*run_dirs, *([peers_dir] if peers_dir is not None else [])])
    if runtimes_dir is not None:  # tables/runtimes.tex and runtimes_macros.tex (main.tex inputs it)
        runtimes.write(runtimes_dir, out_dir)
    names = plain_networks["instance"].unique()
    macros |= {"NumNetworks": str(results.loc[results["suite"] == "networks",
                                              "instance"].nunique()),
               "NumDistinctNetworks": str(len(names)),
               "NumPaperNetworks": str(sum(map(is_paper_network, names))),
               "NumTrainingGraphs": str(sum("_train_" in n for n in names)),
               "NumDuplicates": str(sum(map(len, duplicates.values()))),
               "Duplicates": _words(f"{latex_escape(network_label(d))} = "
                                    f"{latex_escape(network_label(k))}"
                                    for k, rest in sorted(duplicates.items()) for d in rest)
               or "none",
               "NumJobs": str(len(results)),
               "NumConflicts": str(int(optimum_table(results)["conflict"].sum()))}
    hard = hard_instances(report_rows[report_rows["problem"] != "preload"])
    macros["HardInstances"] = _words(
        latex_escape(network_label(h)) if not re.fullmatch(r"[A-K]", h) else f"MiniMalloc {h}"
        for h in hard) or "--"
    (tables / "hashes.tex").write_text(hash_table(results[results["problem"] != "preload"],
                                                  duplicates))
    write_macros(macros, out_dir / "macros.tex")
    return macros


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = PAPER / "results"
    parser.add_argument("--results", nargs="*", type=Path,
                        help="the evaluation's run directories (default: those of "
                             "EVALUATION_RUNS under paper/results/)")
    parser.add_argument("--peers", type=Path, default=root / PEERS_RUN,
                        help="the peers run directory (default: %(default)s, when present)")
    parser.add_argument("--runtimes", type=Path, default=root / RUNTIMES_RUN,
                        help="the folder holding runtimes.jsonl (default: %(default)s, when "
                             "present)")
    parser.add_argument("--search", type=Path, default=root / SEARCH_RUN,
                        help="the folder holding the search's before/after rows (default: "
                             "%(default)s, when present)")
    parser.add_argument("--out", type=Path, default=PAPER / "generated")
    args = parser.parse_args(argv)
    run_dirs = args.results or run_directories(root)
    if not run_dirs:
        print("no run directories under paper/results/", file=sys.stderr)
        return 1
    peers = args.peers if (args.peers / "results.jsonl").is_file() else None
    runtimes = args.runtimes if (args.runtimes / "runtimes.jsonl").is_file() else None
    search = args.search if (args.search / SEARCH_FILES[0]).is_file() else None
    macros = build(run_dirs, args.out, peers_dir=peers, runtimes_dir=runtimes,
                   search_dir=search)
    print(f"wrote {args.out} ({len(macros)} macros from {len(run_dirs)} run directories"
          + (", the peers" if peers else "") + (", the runtimes" if runtimes else "")
          + (", the search's before/after" if search else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
