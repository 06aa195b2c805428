"""Layer slicing (issue 21) in a preload run's rows: the latency/budget curves without and with
slicing, and the table of minimum budgets and of FlexNN's gap to the proven optimum.

The series of a run such as ``experiments/slicing.toml``: ``flexnn`` (FlexNN on the instance
as it is), ``flexnn_sliced`` (FlexNN with its slicing), and the exact method (``cpsat``)
without and with ``params.slicing``. A row's budget is its ``budget`` column; its series is
its method plus whether its params ask for slicing.

    >>> from optplan.analysis.load import load_results
    >>> rows = load_results("paper/results/slicing")            # doctest: +SKIP
    >>> save_figure(slicing_figure(rows), "out", "slicing")      # doctest: +SKIP
    >>> print(render_slicing_markdown(slicing_table(rows)))      # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from optplan.analysis.style import apply_style, line_colour, plt
from optplan.experiments.budgets import CACHE_FILE

__all__ = ["SERIES", "Series", "slicing_rows", "slicing_figure", "slicing_table",
           "render_slicing_markdown", "render_slicing_latex", "sweep_minimums"]


@dataclass(frozen=True)
class Series:
    """One curve: rows of ``method`` with ``params.slicing`` equal to ``slicing``."""

    key: str
    label: str
    method: str
    slicing: bool
    colour: int
    marker: str
    exact: bool


SERIES = (Series("flexnn", "FlexNN", "flexnn", False, 1, "s", False),
          Series("flexnn_sliced", "FlexNN, sliced", "flexnn_sliced", False, 3, "D", False),
          Series("exact", "exact (CP-SAT)", "cpsat", False, 0, "o", True),
          Series("exact_sliced", "exact, sliced", "cpsat", True, 2, "^", True))
"""The four series, in legend order (the exact ones: filled where proven optimal)."""


def _network(instance: str) -> str:
    """The network part of an instance name (``vgg19_fused_onnx_224_phone_kernels`` ->
    ``vgg19``)."""
    return str(instance).split("_fused")[0].split("_raw")[0]


def slicing_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The preload rows with a budget, one ``series`` (:data:`SERIES` key) each; columns
    ``network``, ``budget``, ``series``, ``status``, ``objective`` (µs; ``None`` without a
    valid plan), ``best_bound``, ``proven``."""
    rows = results[results["problem"] == "preload"].copy()
    if "budget" not in rows or rows["budget"].isna().all():
        rows["budget"] = rows["params"].map(lambda p: (p or {}).get("budget"))
    rows = rows[rows["budget"].notna()]
    sliced = rows["params"].map(lambda p: bool((p or {}).get("slicing", False)))
    series = pd.Series(None, index=rows.index, dtype=object)
    for entry in SERIES:
        series[(rows["method"] == entry.method) & (sliced == entry.slicing)] = entry.key
    rows["series"] = series
    rows = rows[rows["series"].notna()].copy()
    rows["network"] = rows["instance"].map(_network)
    rows["budget"] = rows["budget"].astype(int)
    valid = rows["valid"].fillna(False).astype(bool)
    rows["objective"] = rows["objective"].where(valid)
    rows["proven"] = rows["status"] == "OPTIMAL"
    return rows[["network", "instance", "budget", "series", "status", "objective",
                 "best_bound", "proven", "wall_time_s", "lower_bound"]]


def slicing_figure(results: pd.DataFrame, networks=None):
    """Latency vs memory budget, one panel per network (log budget axis): FlexNN and the
    exact method (CP-SAT), each without and with slicing; exact points filled where proven
    optimal, hollow where only the best plan found is known; the dotted line is the
    unlimited-memory latency bound, the grey band left of the dashed line the budgets where
    no plan fits without slicing."""
    apply_style()
    rows = slicing_rows(results)
    networks = list(networks or sorted(rows["network"].unique()))
    figure, axes = plt.subplots(1, max(1, len(networks)), figsize=(7.0, 2.4), squeeze=False)
    handles = {}
    for axis, network in zip(axes[0], networks):
        group = rows[rows["network"] == network]
        for entry in SERIES:
            curve = group[(group["series"] == entry.key) & group["objective"].notna()]
            curve = curve.sort_values("budget")
            if curve.empty:
                continue
            budget = curve["budget"].to_numpy(float) / 2**20
            latency = curve["objective"].to_numpy(float) / 1000
            colour = line_colour(entry.colour)
            line, = axis.plot(budget, latency, color=colour, marker=entry.marker,
                              markersize=5 if entry.key == "flexnn" else 3.5,
                              label=entry.label, linestyle="-" if entry.exact else "--")
            handles[entry.label] = line
            if entry.exact:
                open_points = ~curve["proven"].to_numpy(bool)
                axis.scatter(budget[open_points], latency[open_points], s=16, zorder=3,
                             marker=entry.marker, facecolors="white", edgecolors=colour)
        unsliced = group[(group["series"] == "exact") & group["objective"].notna()]
        if len(unsliced) and unsliced["budget"].min() > group["budget"].min():
            start = unsliced["budget"].min() / 2**20
            axis.axvspan(group["budget"].min() / 2**20, start, color="0.93", zorder=0)
            axis.axvline(start, color="0.5", linestyle="--", linewidth=0.6)
        bound = pd.to_numeric(group["lower_bound"], errors="coerce").max()
        if not pd.isna(bound):
            handles["unlimited-memory bound"] = axis.axhline(
                bound / 1000, color="grey", linestyle=":", label="unlimited-memory bound")
        _log_budget_axis(axis, group["budget"].to_numpy(float) / 2**20)
        axis.set_title(network.replace("_", " "))
        axis.set_xlabel("budget (MiB)")
    axes[0][0].set_ylabel("latency (ms)")
    if handles:
        figure.legend(handles.values(), handles.keys(), frameon=False, loc="upper center",
                      ncol=len(handles), bbox_to_anchor=(0.5, -0.02))
    figure.subplots_adjust(wspace=0.3)
    return figure


def _log_budget_axis(axis, budgets) -> None:
    """A log budget axis with plain numbers; the minor ticks labelled too on a short span."""
    axis.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    axis.xaxis.set_major_formatter(plain)
    short = len(budgets) and budgets.max() < 4 * budgets.min()
    axis.xaxis.set_minor_formatter(plain if short else NullFormatter())


def sweep_minimums(run_dir) -> dict[str, dict]:
    """The minimum budgets a sliced sweep froze (``RUN/preload_budgets.json``) by network:
    ``minimum`` with slicing, ``unsliced_minimum`` without, with their statuses."""
    path = Path(run_dir) / CACHE_FILE
    if not path.is_file():
        return {}
    found = {}
    for identity, entry in json.loads(path.read_text(encoding="utf-8")).items():
        name = Path(identity.split("@")[0]).stem
        found[_network(name)] = entry
    return found


def _gaps(sliced: pd.DataFrame, exact: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """FlexNN-with-slicing's latency over the exact one at the same budget, in percent, and
    whether that exact latency is proven optimal."""
    merged = sliced.merge(exact, on=["network", "budget"], suffixes=("", "_exact"))
    merged = merged[merged["objective"].notna() & merged["objective_exact"].notna()]
    gaps = 100 * (merged["objective"].astype(float) / merged["objective_exact"].astype(float)
                  - 1)
    return gaps, merged["proven_exact"].astype(bool)


def slicing_table(results: pd.DataFrame, minimums: dict | None = None) -> pd.DataFrame:
    """Per network: the minimum feasible budget without and with slicing (bytes, with the
    status of its solve; from ``minimums``, :func:`sweep_minimums`, else the least budget of
    the sweep where the exact method found a plan), the budgets swept, how many of them the
    exact method proved without and with slicing, FlexNN-with-slicing's gap (%, largest and
    mean) to the proven optimum over the budgets where it is proven and to the best plan
    found over all, and the exact method's solve times with slicing."""
    rows = slicing_rows(results)
    minimums = minimums or {}
    table = []
    for network in sorted(rows["network"].unique()):
        group = rows[rows["network"] == network]
        sliced = group[group["series"] == "flexnn_sliced"]
        exact = group[group["series"] == "exact_sliced"]
        plain = group[group["series"] == "exact"]
        gaps, proven = _gaps(sliced, exact)
        swept = minimums.get(network, {})

        def least(frame):
            found = frame[frame["objective"].notna()]
            return int(found["budget"].min()) if len(found) else None

        table.append({
            "network": network,
            "minimum_budget": swept.get("unsliced_minimum") or least(plain),
            "minimum_budget_status": swept.get("unsliced_minimum_status"),
            "minimum_budget_sliced": swept.get("minimum") or least(exact),
            "minimum_budget_sliced_status": swept.get("minimum_status"),
            "budgets": int(group["budget"].nunique()),
            "proven_unsliced": int(plain["proven"].sum()),
            "proven_sliced": int(exact["proven"].sum()),
            "flexnn_sliced_gap_max": gaps[proven].max() if proven.any() else None,
            "flexnn_sliced_gap_mean": gaps[proven].mean() if proven.any() else None,
            "flexnn_sliced_gap_best_max": gaps.max() if len(gaps) else None,
            "flexnn_sliced_gap_best_mean": gaps.mean() if len(gaps) else None,
            "exact_sliced_time_median_s": exact["wall_time_s"].median() if len(exact) else None,
            "exact_sliced_time_max_s": exact["wall_time_s"].max() if len(exact) else None,
        })
    return pd.DataFrame(table)


def _bytes(value) -> str:
    if value is None or pd.isna(value):
        return "-"
    return f"{value / 2**20:,.1f}"


def _percent(value) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.1f}"


def _status(value) -> str:
    return "" if value in (None, "OPTIMAL") or pd.isna(value) else " (best found)"


_COLUMNS = ("network", "min. budget (MiB)", "sliced (MiB)", "proven: plain, sliced / budgets",
            "FlexNN sliced vs optimum: max, mean (%)", "vs best found: max, mean (%)")


def _cells(row) -> list[str]:
    return [str(row["network"]).replace("_", " "),
            _bytes(row["minimum_budget"]) + _status(row["minimum_budget_status"]),
            _bytes(row["minimum_budget_sliced"]) + _status(row["minimum_budget_sliced_status"]),
            f"{row['proven_unsliced']}, {row['proven_sliced']} / {row['budgets']}",
            f"{_percent(row['flexnn_sliced_gap_max'])}, "
            f"{_percent(row['flexnn_sliced_gap_mean'])}",
            f"{_percent(row['flexnn_sliced_gap_best_max'])}, "
            f"{_percent(row['flexnn_sliced_gap_best_mean'])}"]


def render_slicing_markdown(table: pd.DataFrame, caption: str = "") -> str:
    """:func:`slicing_table` as a Markdown table."""
    lines = [f"**{caption}**", ""] if caption else []
    lines.append("| " + " | ".join(_COLUMNS) + " |")
    lines.append("|" + "---|" * len(_COLUMNS))
    lines += ["| " + " | ".join(_cells(row)) + " |" for _, row in table.iterrows()]
    return "\n".join(lines) + "\n"


def render_slicing_latex(table: pd.DataFrame, caption: str = "", label: str = "") -> str:
    """:func:`slicing_table` as a LaTeX ``table`` (booktabs)."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * (len(_COLUMNS) - 1) + "}", r"\toprule",
             " & ".join(_COLUMNS).replace("%", r"\%") + r" \\", r"\midrule"]
    lines += [" & ".join(_cells(row)).replace("%", r"\%") + r" \\"
              for _, row in table.iterrows()]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{caption}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
