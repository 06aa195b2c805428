"""Peer columns: optplan's exact methods and the peer allocators side by side, per instance.

The pieces the paper's MiniMalloc table and its gap tables take their peer columns from
(``paper/build.py`` decides where they go):

* :func:`peer_table` — per instance, each method's objective, gap to the proven optimum (or,
  where none is proven, to the best proven bound: marked ``≥``), whether the method itself
  proved it, and its seconds. Its frame has the columns of
  :func:`optplan.analysis.tables.strategy_table`, so that module's renderers take it too;
* :func:`render_peer_markdown`, :func:`render_peer_latex` — that table with a cell per method
  showing proof or gap, and seconds;
* :func:`peer_summary` — per method over a group of instances: proven, at the optimum, mean and
  largest gap, seconds.

Groups (:func:`peer_group`): MiniMalloc's challenging suite, the networks, and the training
graphs among them (``*_train_*``).
"""

from __future__ import annotations

import pandas as pd

from optplan.analysis.load import optimum_table

__all__ = ["PEER_METHODS", "GROUPS", "peer_group", "peer_table", "peer_summary",
           "render_peer_markdown", "render_peer_latex", "render_summary_markdown"]

PEER_METHODS = (
    "search", "cpsat", "minimalloc", "omnimalloc_supermalloc", "omnimalloc_telamalloc",
    "omnimalloc_simulated_annealing", "omnimalloc_tabu_search", "omnimalloc_hill_climb",
    "omnimalloc_genetic", "omnimalloc_random", "omnimalloc_omni", "omnimalloc_greedy_by_all",
    "omnimalloc_greedy_by_size", "omnimalloc_greedy_by_area",
    "omnimalloc_greedy_by_conflict_size", "omnimalloc_greedy_by_conflict",
    "omnimalloc_greedy_by_duration", "omnimalloc_greedy_by_start", "omnimalloc_greedy",
    "omnimalloc_best_fit", "omnimalloc_naive")
"""The side-by-side methods in column order: optplan's exact methods, MiniMalloc, SuperMalloc,
then OmniMalloc's searches and its one-pass allocators."""

GROUPS = {"minimalloc": "MiniMalloc's challenging suite", "networks": "networks",
          "training": "training graphs"}


def peer_group(instance: str, suite: str) -> str:
    """``minimalloc``, ``training`` (a network named ``*_train_*``), ``networks`` or the
    suite itself."""
    if suite == "networks" and "_train_" in str(instance):
        return "training"
    return suite


def peer_table(results: pd.DataFrame, methods=None, *, problem: str = "offsets",
               instances=None) -> pd.DataFrame:
    """Per instance (plain problem, no in-place pairs): lower bound, optimum or best bound,
    and per method ``<method>`` (objective, the median over seeds and repetitions),
    ``gap:<method>``, ``proven:<method>`` (a valid OPTIMAL row of that method),
    ``time:<method>`` (median seconds) and ``status:<method>``.

    ``methods`` defaults to the :data:`PEER_METHODS` that have rows; rows whose solution the
    validator rejected, and failed jobs, give no objective (their status says why)."""
    rows = results[(results["problem"] == problem)
                   & ~results["inplace"].fillna(False).astype(bool)]
    if instances is not None:
        rows = rows[rows["instance"].isin(list(instances))]
    if methods is None:
        methods = [m for m in PEER_METHODS if (rows["method"] == m).any()]
    suites = rows.drop_duplicates("instance").set_index("instance")["suite"]
    table = []
    for _, optimum in optimum_table(rows).iterrows():
        instance = optimum["instance"]
        proven = optimum["optimum"] is not None and not pd.isna(optimum["optimum"])
        reference = optimum["optimum"] if proven else optimum["best_bound"]
        entry = {"instance": instance, "group": peer_group(instance, suites.get(instance)),
                 "tensors": optimum["num_tensors"], "lower_bound": optimum["lower_bound"],
                 "optimum": int(optimum["optimum"]) if proven else None,
                 "best_bound": optimum["best_bound"], "proven": proven}
        for method in methods:
            runs = rows[(rows["instance"] == instance) & (rows["method"] == method)]
            valid = runs[runs["valid"] == True]  # noqa: E712 (pandas element-wise)
            value = int(valid["objective"].median()) if len(valid) else None
            entry[method] = value
            entry[f"gap:{method}"] = (None if value is None or not reference
                                      else (value - reference) / reference)
            entry[f"proven:{method}"] = bool((valid["status"] == "OPTIMAL").any())
            entry[f"time:{method}"] = (float(runs["wall_time_s"].median())
                                       if runs["wall_time_s"].notna().any() else None)
            entry[f"status:{method}"] = (runs["status"].mode().iloc[0] if len(runs)
                                         else None)
        table.append(entry)
    frame = pd.DataFrame(table)
    frame.attrs["methods"] = list(methods)
    return frame


def peer_summary(table: pd.DataFrame, methods=None) -> pd.DataFrame:
    """Per method over the rows of ``table`` (a :func:`peer_table`): instances run, valid
    answers, proven by the method, at the proven optimum, mean and largest gap to it (over
    instances with a proven optimum), and median and largest seconds."""
    methods = table.attrs.get("methods", []) if methods is None else methods
    records = []
    for method in methods:
        ran = table[table[f"status:{method}"].notna()]
        closed = ran[ran["proven"] & ran[method].notna()]
        gaps = closed[f"gap:{method}"].astype(float)
        times = ran[f"time:{method}"].dropna().astype(float)
        records.append({
            "method": method, "instances": len(ran), "valid": int(ran[method].notna().sum()),
            "proven": int(ran[f"proven:{method}"].sum()),
            "at_optimum": int((closed[method] == closed["optimum"]).sum()),
            "with_optimum": len(closed),
            "mean_gap": float(gaps.mean()) if len(gaps) else None,
            "max_gap": float(gaps.max()) if len(gaps) else None,
            "median_s": float(times.median()) if len(times) else None,
            "max_s": float(times.max()) if len(times) else None})
    return pd.DataFrame(records)


def _percent(gap) -> str:
    value = 100 * gap
    return "<0.1" if 0 < value < 0.05 else f"{value:.1f}"


def _cell(row, method: str, check: str = "✓") -> str:
    """``✓ 0.3s`` (proven by the method), ``+3.6% 60.0s`` (gap), or the failure status."""
    value, status, seconds = row[method], row[f"status:{method}"], row[f"time:{method}"]
    if status is None or (isinstance(status, float) and pd.isna(status)):
        return "–"
    time = "" if seconds is None or pd.isna(seconds) else f" {seconds:.1f}s"
    if value is None or pd.isna(value):
        return f"{status}{time}"
    if row[f"proven:{method}"]:
        return f"{check}{time}"
    gap = row[f"gap:{method}"]
    mark = "" if row["proven"] else "≥"
    return f"{mark}+{_percent(gap)}%{time}" if gap is not None and not pd.isna(gap) else \
        f"{int(value)}{time}"


def _reference(row) -> str:
    return str(int(row["optimum"])) if row["proven"] else f"≥{int(row['best_bound'])}†"


_LEGEND = ("✓: the method proved the optimum itself; +g%: its gap to the proven optimum "
           "(≥: to the best proven bound, † where no optimum is proven); seconds are wall "
           "time on a shared machine (upper bounds)")


def render_peer_markdown(table: pd.DataFrame, methods, title: str) -> str:
    """A Markdown table: one row per instance, a cell per method (:data:`_LEGEND`)."""
    header = ["instance", "tensors", "lower bound", "optimum", *methods]
    lines = [f"**{title}** ({_LEGEND})", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        cells = [str(row["instance"]), str(row["tensors"]), str(int(row["lower_bound"])),
                 _reference(row), *(_cell(row, method) for method in methods)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return (text.replace("_", r"\_").replace("%", r"\%").replace("≥", r"$\geq$")
            .replace("†", r"$^\dagger$").replace("–", "--"))


def render_peer_latex(table: pd.DataFrame, methods, caption: str, label: str, *,
                      header_labels=None, labels=None) -> str:
    """A ``table*`` (booktabs, shrunk to the text width when wider): instance, lower bound,
    optimum, then per method ``\\checkmark`` or the gap, and the seconds."""
    header_labels, labels = header_labels or {}, labels or {}
    heads = ["instance", "LB", "optimum"] + [header_labels.get(m, m) for m in methods]
    lines = [r"\begin{table*}[t]", r"\centering", r"\scriptsize", r"\setlength{\tabcolsep}{2pt}",
             rf"\caption{{{_escape(caption)} $\checkmark$: proved by the method; +g\%: gap to "
             r"the proven optimum ($\geq$: to the best proven bound); seconds of wall time.}",
             rf"\label{{{label}}}", r"\begin{adjustbox}{max width=\textwidth}",
             r"\begin{tabular}{l" + "r" * (len(heads) - 1) + "}", r"\toprule",
             " & ".join(_escape(h) for h in heads) + r" \\", r"\midrule"]
    for _, row in table.iterrows():
        cells = [labels.get(row["instance"], str(row["instance"])), str(int(row["lower_bound"])),
                 _reference(row), *(_cell(row, m, check="✓") for m in methods)]
        lines.append(" & ".join(_escape(c).replace("✓", r"$\checkmark$") for c in cells)
                     + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{adjustbox}"]
    if not table["proven"].all():
        lines += [r"\par\smallskip", r"$^\dagger$\,no optimum proven within the time limit."]
    lines.append(r"\end{table*}")
    return "\n".join(lines) + "\n"


def render_summary_markdown(summary: pd.DataFrame, title: str) -> str:
    """:func:`peer_summary` as a Markdown table (gaps in percent)."""
    header = ["method", "instances", "valid", "proven", "at optimum", "mean gap %",
              "max gap %", "median s", "max s"]
    lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in summary.iterrows():
        def number(value, digits=1):
            return "–" if value is None or pd.isna(value) else f"{value:.{digits}f}"
        cells = [row["method"], str(row["instances"]), str(row["valid"]), str(row["proven"]),
                 f"{row['at_optimum']}/{row['with_optimum']}",
                 "–" if row["mean_gap"] is None or pd.isna(row["mean_gap"])
                 else _percent(row["mean_gap"]),
                 "–" if row["max_gap"] is None or pd.isna(row["max_gap"])
                 else _percent(row["max_gap"]),
                 number(row["median_s"], 2), number(row["max_s"], 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
