"""Paper figures from a results table: layouts, performance profiles, solve times, anytime
curves, preload latency/budget curves. Every function returns a matplotlib figure (the caller
saves it); every label is a human name (:mod:`optplan.analysis.names`)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from optplan.analysis.load import SUITES, optimum_table
from optplan.analysis.names import method_label, network_label, problem_label
from optplan.analysis.style import LINE_STYLES, apply_style, colour_for, line_colour, plt

__all__ = ["order_figure", "layout_figure", "layout_colours", "performance_profile_figure",
           "solve_time_figure", "anytime_figure", "preload_figure", "gap_feature_figure"]

_WIDTH = 7.0  # inches: a two-column paper's text width


def layout_colours(instance, offsets, count: int) -> list[int]:
    """A palette index per record such that two rectangles that touch or overlap in the
    layout (common operators, adjacent or overlapping addresses) never share a colour when
    ``count`` colours allow it: greedy colouring, largest first."""
    first, last = instance.first_ops, instance.last_ops
    sizes = instance.sizes
    offsets = np.asarray(offsets)
    order = np.argsort(-sizes, kind="stable")
    colours = [-1] * len(instance)
    for index in order:
        touching = ((first <= last[index]) & (last >= first[index])
                    & (offsets <= offsets[index] + sizes[index])
                    & (offsets + sizes >= offsets[index]))
        used = {colours[j] for j in np.flatnonzero(touching) if colours[j] >= 0}
        free = [c for c in range(count) if c not in used]
        colours[index] = free[0] if free else int(index) % count
    return colours


def layout_figure(instance, solutions: dict, title: str = ""):
    """Time × address rectangles of several offsets solutions of one instance, side by side;
    neighbouring rectangles get different colours (:func:`layout_colours`)."""
    apply_style()
    count = len(solutions)
    figure, axes = plt.subplots(1, count, figsize=(_WIDTH, 2.4), sharey=True, squeeze=False)
    top = max((s.arena_size for s in solutions.values()), default=1) or 1
    scale, unit = (2**20, "MiB") if top >= 2**20 else (2**10, "KiB") if top >= 2**10 else (1, "B")
    for axis, (label, solution) in zip(axes[0], solutions.items()):
        colours = layout_colours(instance, solution.offsets, 8)
        for index, record in enumerate(instance.records):
            axis.add_patch(plt.Rectangle(
                (record.first_op, solution.offsets[index] / scale),
                record.last_op + 1 - record.first_op, record.size / scale,
                facecolor=colour_for(colours[index]), edgecolor="white", linewidth=0.3))
        axis.axhline(solution.arena_size / scale, color="black", linewidth=0.6, linestyle="--")
        axis.set_xlim(0, instance.num_ops)
        axis.set_ylim(0, top / scale * 1.05)
        size_text = (f"{solution.arena_size}" if scale == 1
                     else f"{solution.arena_size / scale:.3f}")
        axis.set_title(f"{label}: {size_text} {unit}")
        axis.set_xlabel("operator")
    axes[0][0].set_ylabel(f"address ({unit})")
    if title:
        figure.suptitle(title, y=1.03)
    return figure


def profile_ratios(results: pd.DataFrame, problem: str) -> dict[str, np.ndarray]:
    """Per heuristic of the plain ``problem``: objective / proven optimum on every instance
    with a proven optimum where it ran (median objective over repetitions)."""
    rows = results[(results["problem"] == problem) & (results["kind"] == "heuristic")
                   & (results["valid"] == True)]  # noqa: E712
    if "inplace" in rows:
        rows = rows[~rows["inplace"].fillna(False).astype(bool)]
    optima = optimum_table(results[(results["problem"] == problem)
                                   & ~results["inplace"].fillna(False).astype(bool)])
    optimum = optima.dropna(subset=["optimum"]).set_index("instance")["optimum"].astype(float)
    objective = rows.groupby(["method", "instance"])["objective"].median()
    ratios = {}
    for method in sorted(rows["method"].unique()):
        values = objective.xs(method)
        values = values[values.index.isin(optimum.index)]
        ratios[method] = np.sort((values / optimum.loc[values.index]).to_numpy(dtype=float))
    return ratios


_PROFILE_FLOOR = 0.1  # percent: gaps at or below it are drawn at the left edge


def performance_profile_figure(results: pd.DataFrame, problem: str, methods=None,
                               max_lines: int = 8, title: str = ""):
    """Empirical distribution of each heuristic's gap to the proven optimum (a performance
    profile against the optimum): the share of instances on which the method is within x %
    of the optimum, x on a log scale; the left edge (``≤0.1``) holds the optimal plans, so a
    curve starts at the share a method solves optimally. ``methods`` (default: the
    ``max_lines`` with the smallest mean log ratio to the optimum) are drawn, each with its
    own colour and dash pattern; the legend lists exactly those."""
    from matplotlib.ticker import NullFormatter

    apply_style()
    ratios = profile_ratios(results, problem)
    if methods is None:
        score = {m: float(np.mean(np.log(r))) for m, r in ratios.items() if len(r)}
        methods = sorted(score, key=lambda m: (score[m], m))[:max_lines]
    figure, axis = plt.subplots(figsize=(_WIDTH / 2, 3.3))
    figure.subplots_adjust(left=0.14, right=0.97, top=0.92, bottom=0.42)
    gaps = {m: np.maximum(100 * (ratios[m] - 1), _PROFILE_FLOOR) for m in methods
            if len(ratios.get(m, ()))}
    right = max([_PROFILE_FLOOR * 10] + [g[-1] * 1.3 for g in gaps.values()])
    for index, method in enumerate(methods):
        if method not in gaps:
            continue
        values = gaps[method]
        xs = np.concatenate([[_PROFILE_FLOOR], values, [right]])
        ys = np.concatenate([[np.mean(values <= _PROFILE_FLOOR)],
                             np.arange(1, len(values) + 1) / len(values), [1.0]])
        axis.step(xs, ys, where="post", color=line_colour(index),
                  linestyle=LINE_STYLES[index % len(LINE_STYLES)], label=method_label(method))
    axis.set_xscale("log")
    axis.set_xlim(_PROFILE_FLOOR, right)
    axis.set_ylim(0, 1.02)
    ticks = [t for t in (0.1, 1, 10, 100, 1000) if t <= right]
    axis.set_xticks(ticks, ["≤0.1" if t == _PROFILE_FLOOR else f"{t:g}" for t in ticks])
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.set_xlabel("gap to the proven optimum (%)")
    axis.set_ylabel("share of instances")
    axis.set_title(title or problem_label(problem))
    axis.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.45, -0.22), ncol=2,
                columnspacing=1.0, handlelength=2.4)
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
    figure, axis = plt.subplots(figsize=(_WIDTH / 2, 2.3))
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
                              label=f"{method_label(method)} ({problem_label(problem)})"))
    suites = [s for s in _SUITE_MARKERS if (rows["suite"] == s).any()]
    handles += [Line2D([], [], color="grey", marker=_SUITE_MARKERS[s], linestyle="",
                       label=SUITES.get(s, s)) for s in suites]
    handles.append(Line2D([], [], color="grey", marker="o", markerfacecolor="none",
                          linestyle="", label="not proven (hollow)"))
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("tensors")
    axis.set_ylabel("wall time (s)")
    if len(rows):  # below the axes, so it hides no point
        axis.legend(handles=handles, frameon=False, loc="upper center", ncol=2,
                    bbox_to_anchor=(0.45, -0.22), columnspacing=1.0)
    return figure


_GAP_FLOOR = 1e-3  # percent: where a closed gap is drawn on the log scale


def anytime_figure(results: pd.DataFrame, instances, titles: dict | None = None):
    """The remaining gap over time, ``(incumbent - bound) / incumbent`` in percent, of every
    exact run on each instance: one colour and dash pattern per method and problem, on one
    logarithmic scale shared by all panels (so a 0.005 % gap and a 30 % gap read alike); a
    run that proves the optimum ends in a marker on the floor of the axis. The legend lists
    exactly the lines drawn."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullFormatter

    apply_style()
    figure, axes = plt.subplots(1, max(1, len(instances)), figsize=(_WIDTH, 2.3),
                                squeeze=False, sharey=True)
    rows = results[results["kind"] == "exact"]
    if "inplace" in rows:
        rows = rows[~rows["inplace"].fillna(False).astype(bool)]
    if "repetition" in rows:
        rows = rows[rows["repetition"].fillna(0) == 0]
    series = sorted({(m, p) for m, p in zip(rows["method"], rows["problem"])})
    style = {key: (line_colour(i), LINE_STYLES[i % len(LINE_STYLES)])
             for i, key in enumerate(series)}
    drawn: dict[tuple, None] = {}
    marked = False   # a proof marker drawn (the legend lists only what is drawn)
    for axis, instance in zip(axes[0], instances):
        for _, row in rows[rows["instance"] == instance].iterrows():
            samples = [s for s in (row["trajectory"] or [])
                       if s[0] is not None and s[1] is not None and s[2] is not None]
            if not samples:
                continue
            end = row["wall_time_s"]
            if end is not None and not pd.isna(end) and end > samples[-1][0]:
                samples.append([float(end), samples[-1][1], samples[-1][2]])
            times = [max(s[0], 1e-3) for s in samples]
            gaps = [max(100 * (s[1] - s[2]) / s[1], _GAP_FLOOR) if s[1] else np.nan
                    for s in samples]
            key = (row["method"], row["problem"])
            colour, dashes = style[key]
            axis.step(times, gaps, where="post", color=colour, linestyle=dashes)
            if row["status"] == "OPTIMAL":
                axis.plot(times[-1], _GAP_FLOOR, marker="v", color=colour, markersize=4,
                          clip_on=False)
                marked = True
            drawn[key] = None
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())
        axis.set_title("\n".join(textwrap.wrap((titles or {}).get(instance, str(instance)), 22)))
        axis.set_xlabel("time (s)")
    axes[0][0].set_ylim(_GAP_FLOOR, 100)
    axes[0][0].set_ylabel("remaining gap (%)")
    handles = [Line2D([], [], color=style[k][0], linestyle=style[k][1],
                      label=f"{method_label(k[0])} ({problem_label(k[1])})") for k in drawn]
    if marked:
        handles.append(Line2D([], [], color="grey", marker="v", linestyle="",
                              label="proven optimal"))
    if handles:
        figure.legend(handles=handles, frameon=False, loc="upper center",
                      ncol=min(5, len(handles)), bbox_to_anchor=(0.5, -0.02))
    figure.subplots_adjust(wspace=0.15)
    return figure


_PRELOAD_SERIES = (("flexnn", False, "FlexNN", 1, "o", "-"),
                   ("flexnn_sliced", False, "FlexNN with slicing", 4, "D", "--"),
                   ("no_preload", False, "no preload", 3, "o", "-"),
                   ("cpsat", False, "optimum (CP-SAT)", 0, "o", "-"),
                   ("cpsat", True, "optimum with slicing", 2, "^", "-"))
"""The preload curves: (method, ``params.slicing``, label, colour, marker, line style); the
exact ones (``cpsat``) hollow where not proven, their proven bound dashed and thin."""
_PRELOAD_SUFFIXES = ("_kernels", "_phone")  # the cost model in the preload instances' names


def preload_title(instance: str) -> str:
    """A preload panel's title: the network without the cost model's suffixes
    (``vgg19_fused_onnx_224_phone_kernels`` -> ``VGG-19 (ONNX), kernels``)."""
    name = str(instance)
    kernels = name.endswith("_kernels")
    for suffix in _PRELOAD_SUFFIXES:
        name = name.removesuffix(suffix)
    return network_label(name) + (", kernels" if kernels else "")


def _is_sliced(params) -> bool:
    return bool((params or {}).get("slicing")) if isinstance(params, dict) else False


def _budget_axis(axis, budgets) -> None:
    """A log budget axis (MiB) with plain numbers when the budgets span more than a factor of
    four (a sweep below the minimum budget without slicing), else linear."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if len(budgets) and budgets.max() > 4 * budgets.min():
        axis.set_xscale("log")
        axis.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.xaxis.set_minor_formatter(NullFormatter())
    axis.set_xlabel("budget (MiB)")


def preload_figure(results: pd.DataFrame):
    """Latency vs memory budget, one panel per instance (the kernel-aware instances of a
    layer-slicing sweep in a second row): FlexNN without and with its slicing, the no-preload
    baseline and CP-SAT's latency without and with slicing (filled: proven optimal, hollow:
    best found; dashed: its proven bound), the unlimited-memory latency bound (dotted)."""
    apply_style()
    rows = results[(results["problem"] == "preload") & (results["valid"] == True)].copy()  # noqa
    every = results[results["problem"] == "preload"].copy()
    for frame in (rows, every):
        if "budget" not in frame or frame["budget"].isna().all():
            frame["budget"] = frame["params"].map(lambda p: (p or {}).get("budget"))
        frame["sliced"] = frame["params"].map(_is_sliced)
    rows = rows[rows["budget"].notna()]
    every = every[every["budget"].notna()]
    instances = sorted(every["instance"].unique())
    panels = [group for group in ([i for i in instances if not str(i).endswith("_kernels")],
                                  [i for i in instances if str(i).endswith("_kernels")])
              if group] or [[]]
    columns = max(len(group) for group in panels)
    figure, axes = plt.subplots(len(panels), max(1, columns),
                                figsize=(_WIDTH, 2.5 * len(panels)), squeeze=False)
    handles = {}
    for row, group_instances in enumerate(panels):
        for axis in axes[row][len(group_instances):]:
            axis.set_visible(False)
        for axis, instance in zip(axes[row], group_instances):
            handles |= _preload_panel(axis, rows[rows["instance"] == instance],
                                      every[every["instance"] == instance])
            axis.set_title(preload_title(instance))
        axes[row][0].set_ylabel("latency (ms)")
    if handles:
        order = [entry[2] for entry in _PRELOAD_SERIES]
        labels = sorted(handles, key=lambda label: (order.index(label) if label in order
                                                    else len(order), label))
        figure.legend([handles[label] for label in labels], labels, frameon=False,
                      loc="upper center", ncol=min(4, len(labels)), bbox_to_anchor=(0.5, 0.0))
    figure.subplots_adjust(wspace=0.3, hspace=0.45)
    return figure


def _preload_panel(axis, rows: pd.DataFrame, every: pd.DataFrame) -> dict:
    """One instance's curves (see :func:`preload_figure`); returns the legend handles."""
    handles = {}
    for method, sliced, label, colour_index, marker, style in _PRELOAD_SERIES:
        colour = line_colour(colour_index)
        curve = rows[(rows["method"] == method) & (rows["sliced"] == sliced)]
        curve = curve.sort_values("budget")
        if not curve.empty:
            budget = curve["budget"].astype(float) / 2**20
            latency = curve["objective"].astype(float) / 1000
            line, = axis.plot(budget, latency, color=colour, marker=marker, markersize=3,
                              linestyle=style, label=label)
            handles[label] = line
            proven = (curve["status"] == "OPTIMAL").to_numpy()
            if method == "cpsat" and not proven.all():
                axis.scatter(budget[~proven], latency[~proven], s=14, marker=marker,
                             facecolors="white", edgecolors=colour, zorder=3)
        exact = every[(every["method"] == method) & (every["sliced"] == sliced)]
        exact = exact[exact["best_bound"].notna()].sort_values("budget")
        if method == "cpsat" and len(exact) and (exact["status"] != "OPTIMAL").any():
            bound_label = "CP-SAT bound" + (" with slicing" if sliced else "")
            line, = axis.plot(exact["budget"].astype(float) / 2**20,
                              exact["best_bound"].astype(float) / 1000, color=colour,
                              linestyle="--", linewidth=0.8, label=bound_label)
            handles[bound_label] = line
    bound = pd.to_numeric(every["lower_bound"], errors="coerce").max()
    if not pd.isna(bound):
        handles["unlimited-memory bound"] = axis.axhline(
            bound / 1000, color="grey", linestyle=":", label="unlimited-memory bound")
    _budget_axis(axis, every["budget"].astype(float).to_numpy() / 2**20)
    return handles


_VARIANTS = (("fused", "fused inference graph", "o"), ("raw", "raw inference graph", "s"),
             ("train", "training graph", "^"))


def gap_feature_figure(frame: pd.DataFrame, feature: str, label: str,
                       second: str = "greedy_by_size_gap", second_label: str = "greedy by size"):
    """One point per network: an instance feature (log x) against the median heuristic gap
    to the proven optimum (``median_gap``, filled) and a second gap column (hollow), log y
    with a gap of 0 drawn on the floor at 0.01 %; marker: the graph's variant."""
    from matplotlib.lines import Line2D

    apply_style()
    figure, axis = plt.subplots(figsize=(_WIDTH / 2, 2.6))
    floor = 0.01
    for variant, _, marker in _VARIANTS:
        part = frame[frame["variant"] == variant]
        x = part[feature].astype(float)
        axis.scatter(x, np.maximum(100 * part["median_gap"].astype(float), floor), marker=marker,
                     s=14, color=line_colour(0), linewidths=0.6)
        axis.scatter(x, np.maximum(100 * part[second].astype(float), floor), marker=marker,
                     s=16, facecolors="none", edgecolors=line_colour(1), linewidths=0.7)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_ylim(floor * 0.7, None)
    axis.set_xlabel(label)
    axis.set_ylabel("gap to the optimum (%)")
    handles = [Line2D([], [], color=line_colour(0), marker="o", linestyle="",
                      label="median of all heuristics"),
               Line2D([], [], color=line_colour(1), marker="o", markerfacecolor="none",
                      linestyle="", label=f"{second_label} (0 on the floor)")]
    handles += [Line2D([], [], color="grey", marker=m, linestyle="", label=text)
                for v, text, m in _VARIANTS if (frame["variant"] == v).any()]
    axis.legend(handles=handles, frameon=False, loc="upper center", ncol=2,
                bbox_to_anchor=(0.45, -0.22), columnspacing=1.0)
    return figure


def order_figure(table: pd.DataFrame, labels: dict[str, str]):
    """Per network of :func:`optplan.analysis.tables.order_table` (``labels``: network ->
    its label, in the order drawn, top to bottom), over the fixed-order optimum (the line at
    one): the fixed-order best heuristic, the free-order arena (hollow where not proven: the
    best plan found) and the free-order lower bound."""
    apply_style()
    rows = table.set_index("instance").loc[list(labels)]
    figure, axis = plt.subplots(figsize=(_WIDTH / 2, 0.6 + 0.24 * len(rows)))
    y = np.arange(len(rows))[::-1]
    reference = rows["fixed"].astype(float)
    proven = rows["free_proven"].astype(bool).to_numpy()
    free = rows["free"].astype(float) / reference
    axis.axvline(1.0, color="grey", linewidth=0.6, zorder=1, label="fixed order, optimum")
    axis.scatter(rows["fixed_heuristic"].astype(float) / reference, y, marker="s", s=30,
                 facecolors="none", edgecolors=line_colour(1), linewidths=0.8, zorder=2,
                 label="fixed order, best heuristic")
    axis.scatter(rows["free_bound"].astype(float) / reference, y, marker="|", s=60,
                 color=line_colour(2), zorder=2, label="free order, lower bound")
    axis.scatter(free[proven], y[proven], marker="o", s=16, color=line_colour(0), zorder=3,
                 label="free order, optimum")
    axis.scatter(free[~proven], y[~proven], marker="o", s=16, facecolors="none",
                 edgecolors=line_colour(0), linewidths=0.9, zorder=3,
                 label="free order, best plan (not proven)")
    axis.set_yticks(y, list(labels.values()))
    axis.set_ylim(-0.6, len(rows) - 0.4)
    axis.set_xlabel("arena over the fixed-order optimum")
    axis.legend(frameon=False, loc="upper left", bbox_to_anchor=(-0.9, -0.16), ncol=2,
                columnspacing=1.0, handletextpad=0.3)
    return figure
