"""Layer slicing (issue 21) in a preload run's rows: per network the minimum feasible budget
without and with slicing and FlexNN-with-slicing's gap to the exact method with slicing.

The rows are those of a run such as ``experiments/slicing.toml`` (``flexnn``, ``flexnn_sliced``,
``cpsat`` without and with ``params.slicing``), read through
:func:`~optplan.analysis.tables.preload_table` (one row per instance and budget); the curves
are :func:`~optplan.analysis.figures.preload_figure`'s.

    >>> from optplan.analysis.load import load_results
    >>> rows = load_results(["paper/results/slicing"])                      # doctest: +SKIP
    >>> table = slicing_table(rows, sweep_minimums("paper/results/slicing"))  # doctest: +SKIP
    >>> print(render_slicing_markdown(table))                                 # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from optplan.analysis.tables import preload_table
from optplan.experiments.budgets import CACHE_FILE

__all__ = ["network_of", "sweep_minimums", "slicing_table", "render_slicing_markdown"]


def network_of(instance: str) -> str:
    """The network part of an instance name (``vgg19_fused_onnx_224_phone_kernels`` ->
    ``vgg19``)."""
    return str(instance).split("_fused")[0].split("_raw")[0]


def sweep_minimums(run_dir) -> dict[str, dict]:
    """The minimum budgets a sliced sweep froze (``RUN/preload_budgets.json``) by network:
    ``minimum`` with slicing, ``unsliced_minimum`` without, with their statuses."""
    path = Path(run_dir) / CACHE_FILE
    if not path.is_file():
        return {}
    found = {}
    for identity, entry in json.loads(path.read_text(encoding="utf-8")).items():
        found[network_of(Path(identity.split("@")[0]).stem)] = entry
    return found


def _ratio(values: pd.Series, reference: pd.Series) -> pd.Series:
    """``values / reference - 1`` where both are known."""
    both = values.notna() & reference.notna() & (reference.astype(float) > 0)
    return values[both].astype(float) / reference[both].astype(float) - 1


def slicing_table(results: pd.DataFrame, minimums: dict | None = None) -> pd.DataFrame:
    """Per instance with exact rows with slicing (``network`` its name's prefix): the minimum feasible budget without and with
    slicing (bytes, with its solve's status; from ``minimums`` (:func:`sweep_minimums`), else
    the least budget where the exact method found a plan), the budgets swept, how many the
    exact method proved without and with slicing, ``flexnn_sliced``'s gap (fractions; max
    and median) to the proven optimum with slicing where it is proven, and over every budget
    where both have a plan its bracket: at least the gap to the best plan found, at most the
    gap to the proven bound; the exact method's solve times with slicing (median, max)."""
    table = preload_table(results)
    records = []
    if table.empty or not table["exact_status_sliced"].notna().any():
        return pd.DataFrame(records)
    minimums = minimums or {}
    for instance, group in table.groupby("instance", sort=True):
        if not group["exact_status_sliced"].notna().any():
            continue
        network = network_of(instance)
        swept = minimums.get(network, {})
        proven = group[group["proven_sliced"].astype(bool)]
        exact_gap = _ratio(proven["flexnn_sliced"], proven["optimum_sliced"])
        found_gap = _ratio(group["flexnn_sliced"], group["exact_objective_sliced"])
        bound_gap = _ratio(group["flexnn_sliced"], group["best_bound_sliced"])
        times = pd.to_numeric(group["exact_time_s_sliced"], errors="coerce").dropna()

        def least(column):
            found = group[group[column].notna()]
            return int(found["budget"].min()) if len(found) else None

        records.append({
            "network": network, "instance": instance,
            "minimum_budget": swept.get("unsliced_minimum") or least("exact_objective"),
            "minimum_budget_status": swept.get("unsliced_minimum_status"),
            "minimum_budget_sliced": swept.get("minimum") or least("exact_objective_sliced"),
            "minimum_budget_sliced_status": swept.get("minimum_status"),
            "budgets": len(group),
            "proven_unsliced": int(group["proven"].astype(bool).sum()),
            "proven_sliced": len(proven),
            "gap_max": exact_gap.max() if len(exact_gap) else None,
            "gap_median": exact_gap.median() if len(exact_gap) else None,
            "gap_found_max": found_gap.max() if len(found_gap) else None,
            "gap_found_median": found_gap.median() if len(found_gap) else None,
            "gap_bound_max": bound_gap.max() if len(bound_gap) else None,
            "gap_bound_median": bound_gap.median() if len(bound_gap) else None,
            "time_median_s": times.median() if len(times) else None,
            "time_max_s": times.max() if len(times) else None,
        })
    return pd.DataFrame(records)


def _mib(value) -> str:
    return "-" if value is None or pd.isna(value) else f"{value / 2**20:,.1f}"


def _pct(value) -> str:
    return "-" if value is None or pd.isna(value) else f"{100 * value:.1f}"


def _status(value) -> str:
    return "" if value is None or pd.isna(value) or value == "OPTIMAL" else " (best found)"


def render_slicing_markdown(table: pd.DataFrame, caption: str = "") -> str:
    """:func:`slicing_table` as Markdown (MiB, percent)."""
    columns = ("network", "min. budget (MiB)", "with slicing (MiB)",
               "proven: plain, sliced / budgets", "FlexNN sliced vs optimum: max, median (%)",
               "vs best found / bound: max (%)", "exact sliced time: median, max (s)")
    lines = [f"**{caption}**", ""] if caption else []
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in table.iterrows():
        cells = [row["network"],
                 _mib(row["minimum_budget"]) + _status(row["minimum_budget_status"]),
                 _mib(row["minimum_budget_sliced"])
                 + _status(row["minimum_budget_sliced_status"]),
                 f"{row['proven_unsliced']}, {row['proven_sliced']} / {row['budgets']}",
                 f"{_pct(row['gap_max'])}, {_pct(row['gap_median'])}",
                 f"{_pct(row['gap_found_max'])} / {_pct(row['gap_bound_max'])}",
                 f"{row['time_median_s']:.1f}, {row['time_max_s']:.1f}"
                 if row["time_max_s"] is not None and not pd.isna(row["time_max_s"]) else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
