"""Paper figures from a results table: layouts, gap distributions, solve times, anytime curves,
preload latency/budget curves. Every function returns a matplotlib figure (the caller saves it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from optplan.analysis.load import optimum_table
from optplan.analysis.style import apply_style, colour_for, plt

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
    figure, axis = plt.subplots(figsize=(_WIDTH, 2.8))
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
    axis.set_xlabel("gap to the optimum (%, symmetric log scale)")
    axis.set_title(problem.replace("_", " "))
    return figure


def solve_time_figure(results: pd.DataFrame):
    """Exact methods: wall time vs tensors (log–log); filled = proven optimal, hollow = not."""
    apply_style()
    rows = results[(results["kind"] == "exact") & results["wall_time_s"].notna()]
    figure, axis = plt.subplots(figsize=(_WIDTH * 0.7, 2.6))
    for index, ((method, problem), group) in enumerate(rows.groupby(["method", "problem"])):
        proven = group["status"] == "OPTIMAL"
        colour = colour_for(index)
        label = f"{method} ({problem.replace('_', ' ')})"
        axis.scatter(group[proven]["num_tensors"], group[proven]["wall_time_s"], s=10,
                     color=colour, label=label)
        axis.scatter(group[~proven]["num_tensors"], group[~proven]["wall_time_s"], s=10,
                     facecolors="none", edgecolors=colour)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("tensors")
    axis.set_ylabel("wall time (s)")
    if len(rows):  # outside the axes, so it hides no point
        axis.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return figure


def anytime_figure(results: pd.DataFrame, instances):
    """Incumbent (solid) and bound (dashed) over time, relative to the lower bound; one colour
    per exact method and problem, one legend for the figure."""
    from matplotlib.ticker import NullFormatter

    apply_style()
    figure, axes = plt.subplots(1, max(1, len(instances)), figsize=(_WIDTH, 2.4), squeeze=False)
    rows = results[results["kind"] == "exact"]
    series = sorted({(m, p) for m, p in zip(rows["method"], rows["problem"])})
    colours = {key: colour_for(index) for index, key in enumerate(series)}
    handles = {}
    for axis, instance in zip(axes[0], instances):
        for _, row in rows[rows["instance"] == instance].iterrows():
            samples = [s for s in (row["trajectory"] or []) if s[0] is not None]
            if not samples:
                continue
            times = [max(s[0], 1e-3) for s in samples]
            base = float(row["lower_bound"]) or 1.0
            incumbents = [np.nan if s[1] is None else s[1] / base for s in samples]
            bounds = [np.nan if s[2] is None else s[2] / base for s in samples]
            key = (row["method"], row["problem"])
            line, = axis.step(times, incumbents, where="post", color=colours[key])
            axis.step(times, bounds, where="post", color=colours[key], linestyle="--")
            handles[f"{key[0]} ({key[1].replace('_', ' ')})"] = line
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short spans
        axis.set_title(str(instance))
        axis.set_xlabel("time (s)")
    axes[0][0].set_ylabel("objective / lower bound")
    if handles:
        figure.legend(handles.values(), handles.keys(), frameon=False, loc="upper center",
                      ncol=min(4, len(handles)), bbox_to_anchor=(0.5, -0.02))
    figure.subplots_adjust(wspace=0.4)
    return figure


def preload_figure(results: pd.DataFrame):
    """Latency vs memory budget per network: each method's curve (heuristic vs optimum)."""
    apply_style()
    rows = results[(results["problem"] == "preload") & (results["valid"] == True)].copy()  # noqa
    rows["budget"] = rows["params"].map(lambda p: (p or {}).get("budget"))
    rows = rows[rows["budget"].notna()]
    instances = sorted(rows["instance"].unique())
    figure, axes = plt.subplots(1, max(1, len(instances)), figsize=(_WIDTH, 2.4), squeeze=False)
    for axis, instance in zip(axes[0], instances):
        group = rows[rows["instance"] == instance]
        for index, (method, curve) in enumerate(group.groupby("method")):
            curve = curve.sort_values("budget")
            axis.plot(curve["budget"] / 2**20, curve["objective"] / 1000, marker="o",
                      markersize=2.5, color=colour_for(index), label=method)
        axis.set_title(str(instance))
        axis.set_xlabel("budget (MiB)")
        axis.legend(frameon=False)
    axes[0][0].set_ylabel("latency (ms)")
    return figure
