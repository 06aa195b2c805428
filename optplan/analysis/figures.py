"""Paper figures from a results table: layouts, gap distributions, solve times, anytime curves,
preload latency/budget curves. Every function returns a matplotlib figure (the caller saves it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from optplan.analysis.load import SUITES, optimum_table
from optplan.analysis.style import apply_style, colour_for, line_colour, plt

__all__ = ["layout_figure", "gap_distribution_figure", "solve_time_figure", "anytime_figure",
           "preload_figure"]

_WIDTH = 7.0  # inches: a two-column paper's text width


def layout_figure(instance, solutions: dict, title: str = ""):
    """Time × address rectangles of several offsets solutions of one instance, side by side."""
    apply_style()
    count = len(solutions)
    figure, axes = plt.subplots(1, count, figsize=(_WIDTH, 2.6), sharey=True, squeeze=False)
    top = max((s.arena_size for s in solutions.values()), default=1) or 1
    order = np.argsort(-instance.sizes, kind="stable")
    rank = np.empty(len(instance), dtype=int)
    rank[order] = np.arange(len(instance))
    scale, unit = (2**20, "MiB") if top >= 2**20 else (2**10, "KiB") if top >= 2**10 else (1, "B")
    for axis, (label, solution) in zip(axes[0], solutions.items()):
        for index, record in enumerate(instance.records):
            axis.add_patch(plt.Rectangle(
                (record.first_op, solution.offsets[index] / scale),
                record.last_op + 1 - record.first_op, record.size / scale,
                facecolor=colour_for(int(rank[index])), edgecolor="white", linewidth=0.3))
        axis.axhline(solution.arena_size / scale, color="black", linewidth=0.6, linestyle="--")
        axis.set_xlim(0, instance.num_ops)
        axis.set_ylim(0, top / scale * 1.05)
        size_text = (f"{solution.arena_size}" if scale == 1
                     else f"{solution.arena_size / scale:.3f}")
        axis.set_title(f"{label}: {size_text} {unit}")
        axis.set_xlabel("operator")
    axes[0][0].set_ylabel(f"address ({unit})")
    if title:
        figure.suptitle(title, y=1.04)
    return figure


def _gap_to_reference(results: pd.DataFrame, problem: str) -> pd.DataFrame:
    """Heuristic rows of the plain ``problem`` with their gap to the optimum (or best bound)."""
    if "inplace" in results:
        results = results[~results["inplace"].fillna(False).astype(bool)]
    rows = results[(results["problem"] == problem) & (results["kind"] == "heuristic")
                   & (results["valid"] == True)].copy()  # noqa: E712
    optima = optimum_table(results[results["problem"] == problem]).set_index("instance")
    reference = optima["optimum"].fillna(optima["best_bound"]).fillna(optima["lower_bound"])
    rows["reference"] = rows["instance"].map(reference).astype(float)
    rows["gap_percent"] = 100 * (rows["objective"].astype(float) - rows["reference"]) / rows[
        "reference"]
    return rows


def gap_distribution_figure(results: pd.DataFrame, problem: str):
    """Per heuristic, its gap to the optimum (or best bound) over all instances: box + points."""
    apply_style()
    rows = _gap_to_reference(results, problem)
    methods = (rows.groupby("method")["gap_percent"].median().sort_values().index.tolist())
    figure, axis = plt.subplots(figsize=(_WIDTH, max(2.8, 0.6 + 0.13 * len(methods))))
    data = [rows[rows["method"] == m]["gap_percent"].to_numpy() for m in methods]
    if methods:
        axis.boxplot(data, orientation="horizontal", widths=0.6, showfliers=False,
                     medianprops={"color": "black"})
        rng = np.random.default_rng(0)  # jitter only; fixed so figures are reproducible
        for position, values in enumerate(data, 1):
            axis.scatter(values, position + rng.uniform(-0.18, 0.18, len(values)), s=6,
                         color=colour_for(0), alpha=0.7, zorder=3)
        axis.set_yticks(range(1, len(methods) + 1), methods)
    axis.set_xscale("symlog", linthresh=1.0)  # small gaps matter most; naive ones run to 1000 %
    axis.set_xlim(left=-0.05)                 # gaps are never negative (a sliver shows 0)
    axis.set_xlabel("gap to the optimum (%, symmetric log scale)")
    axis.set_title(problem.replace("-", " "))
    return figure


_SUITE_MARKERS = {"networks": "o", "examples": "D", "minimalloc": "^", "synthetic": "s",
                  "other": "v"}


def solve_time_figure(results: pd.DataFrame):
    """Exact methods on the SO/OC problems: wall time vs tensors (log–log). Colour: method and
    problem; marker: the suite (real networks, MiniMalloc's benchmarks, ...); filled = proven
    optimal, hollow = not proven within the time limit."""
    from matplotlib.lines import Line2D

    apply_style()
    rows = results[(results["kind"] == "exact") & results["wall_time_s"].notna()
                   & (results["problem"] != "preload")]
    if "suite" not in rows:
        rows = rows.assign(suite="other")
    figure, axis = plt.subplots(figsize=(_WIDTH * 0.7, 2.8))
    series = sorted({(m, p) for m, p in zip(rows["method"], rows["problem"])})
    handles = []
    for index, (method, problem) in enumerate(series):
        colour = line_colour(index)
        group = rows[(rows["method"] == method) & (rows["problem"] == problem)]
        for suite, part in group.groupby("suite"):
            proven = part["status"] == "OPTIMAL"
            marker = _SUITE_MARKERS.get(suite, "v")
            axis.scatter(part[proven]["num_tensors"], part[proven]["wall_time_s"], s=12,
                         color=colour, marker=marker, linewidths=0.8)
            axis.scatter(part[~proven]["num_tensors"], part[~proven]["wall_time_s"], s=12,
                         facecolors="none", edgecolors=colour, marker=marker, linewidths=0.8)
        handles.append(Line2D([], [], color=colour, marker="o", linestyle="",
                              label=f"{method} ({problem.replace('-', ' ')})"))
    suites = [s for s in _SUITE_MARKERS if (rows["suite"] == s).any()]
    handles += [Line2D([], [], color="grey", marker=_SUITE_MARKERS[s], linestyle="",
                       label=SUITES.get(s, s)) for s in suites]
    handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor="none",
                          linestyle="", label="not proven (hollow)"))
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("tensors")
    axis.set_ylabel("wall time (s)")
    if len(rows):  # outside the axes, so it hides no point
        axis.legend(handles=handles, frameon=False, loc="upper left",
                    bbox_to_anchor=(1.02, 1.0))
    return figure


def anytime_figure(results: pd.DataFrame, instances, titles: dict | None = None):
    """Incumbent (solid) and bound (dashed) over time, in percent above the combinatorial lower
    bound; one colour per exact method and problem, one legend for the figure; ``titles``
    names the panels (default: the instance names)."""
    from matplotlib.ticker import NullFormatter

    apply_style()
    figure, axes = plt.subplots(1, max(1, len(instances)), figsize=(_WIDTH, 2.4), squeeze=False)
    rows = results[results["kind"] == "exact"]
    if "inplace" in rows:
        rows = rows[~rows["inplace"].fillna(False).astype(bool)]
    series = sorted({(m, p) for m, p in zip(rows["method"], rows["problem"])})
    colours = {key: line_colour(index) for index, key in enumerate(series)}
    handles = {}
    for axis, instance in zip(axes[0], instances):
        for _, row in rows[rows["instance"] == instance].iterrows():
            samples = [s for s in (row["trajectory"] or []) if s[0] is not None]
            if not samples:
                continue
            end = row["wall_time_s"]
            if end is not None and not pd.isna(end) and end > samples[-1][0]:
                # Hold the last incumbent and bound until the run ended (its limit or proof).
                samples.append([float(end), samples[-1][1], samples[-1][2]])
            times = [max(s[0], 1e-3) for s in samples]
            base = float(row["lower_bound"]) or 1.0
            incumbents = [np.nan if s[1] is None else 100 * (s[1] / base - 1) for s in samples]
            bounds = [np.nan if s[2] is None else 100 * (s[2] / base - 1) for s in samples]
            key = (row["method"], row["problem"])
            line, = axis.step(times, incumbents, where="post", color=colours[key])
            axis.step(times, bounds, where="post", color=colours[key], linestyle="--")
            handles[f"{key[0]} ({key[1].replace('-', ' ')})"] = line
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short spans
        axis.ticklabel_format(axis="y", useOffset=False)  # no "+1" offset on tiny gaps
        axis.set_title((titles or {}).get(instance, str(instance)))
        axis.set_xlabel("time (s)")
    axes[0][0].set_ylabel("above the lower bound (%)")
    if handles:
        figure.legend(handles.values(), handles.keys(), frameon=False, loc="upper center",
                      ncol=min(4, len(handles)), bbox_to_anchor=(0.5, -0.02))
    figure.subplots_adjust(wspace=0.4)
    return figure


_PRELOAD_SERIES = (("flexnn", "FlexNN", 1), ("no_preload", "no preload", 3),
                   ("cpsat", "optimum (CP-SAT)", 0))


def preload_figure(results: pd.DataFrame):
    """Latency vs memory budget, one panel per network: FlexNN, the no-preload baseline and
    CP-SAT's latency (filled: proven optimal, hollow: best found), CP-SAT's proven bound
    (dashed) and the unlimited-memory latency bound (dotted)."""
    apply_style()
    rows = results[(results["problem"] == "preload") & (results["valid"] == True)].copy()  # noqa
    every = results[results["problem"] == "preload"].copy()
    for frame in (rows, every):
        if "budget" not in frame or frame["budget"].isna().all():
            frame["budget"] = frame["params"].map(lambda p: (p or {}).get("budget"))
    rows = rows[rows["budget"].notna()]
    every = every[every["budget"].notna()]
    instances = sorted(every["instance"].unique())
    figure, axes = plt.subplots(1, max(1, len(instances)), figsize=(_WIDTH, 2.5),
                                squeeze=False)
    handles = {}
    for axis, instance in zip(axes[0], instances):
        group = rows[rows["instance"] == instance]
        for method, label, colour_index in _PRELOAD_SERIES:
            curve = group[group["method"] == method].sort_values("budget")
            if curve.empty:
                continue
            budget = curve["budget"].astype(float) / 2**20
            latency = curve["objective"].astype(float) / 1000
            colour = line_colour(colour_index)
            line, = axis.plot(budget, latency, color=colour, marker="o", markersize=3,
                              label=label)
            handles[label] = line
            proven = (curve["status"] == "OPTIMAL").to_numpy()
            if method == "cpsat" and not proven.all():
                axis.scatter(budget[~proven], latency[~proven], s=14, facecolors="white",
                             edgecolors=colour, zorder=3)
        exact = every[(every["instance"] == instance) & (every["method"] == "cpsat")]
        exact = exact[exact["best_bound"].notna()].sort_values("budget")
        if len(exact) and (exact["status"] != "OPTIMAL").any():
            line, = axis.plot(exact["budget"].astype(float) / 2**20,
                              exact["best_bound"].astype(float) / 1000, color=line_colour(0),
                              linestyle="--", label="CP-SAT bound")
            handles["CP-SAT bound"] = line
        bound = pd.to_numeric(every[every["instance"] == instance]["lower_bound"],
                              errors="coerce").max()
        if not pd.isna(bound):
            line = axis.axhline(bound / 1000, color="grey", linestyle=":",
                                label="unlimited-memory bound")
            handles["unlimited-memory bound"] = line
        axis.set_title(str(instance).replace("_", " "))
        axis.set_xlabel("budget (MiB)")
    axes[0][0].set_ylabel("latency (ms)")
    if handles:
        figure.legend(handles.values(), handles.keys(), frameon=False, loc="upper center",
                      ncol=len(handles), bbox_to_anchor=(0.5, -0.02))
    figure.subplots_adjust(wspace=0.3)
    return figure
