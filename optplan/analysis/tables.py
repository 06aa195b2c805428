"""Paper tables in the shape of Pisarchyk & Lee 2020 (Tables 1 and 2), with the proven optimum.

One row per instance, one column per heuristic (its objective and its gap to the optimum, or
to the best proven bound when no optimum is known — then marked with ``≥``), plus the
combinatorial lower bound and the optimum.
"""

from __future__ import annotations

import math

import pandas as pd

from optplan.analysis.load import optimum_table

__all__ = ["strategy_table", "render_markdown", "render_latex", "UNITS"]

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20}


def strategy_table(results: pd.DataFrame, problem: str, methods=None) -> pd.DataFrame:
    """Long → wide: per instance, each heuristic's objective (median over repetitions/seeds)
    and its gap to the optimum (``gap:<method>``), the lower bound and the optimum."""
    rows = results[(results["problem"] == problem) & (results["kind"] == "heuristic")
                   & (results["valid"] == True)]  # noqa: E712
    optima = optimum_table(results[results["problem"] == problem]).set_index("instance")
    if methods is None:
        methods = sorted(rows["method"].unique())
    table = []
    for instance in optima.index:
        reference = optima.loc[instance, "optimum"]
        proven = reference is not None and not pd.isna(reference)
        if not proven:
            reference = optima.loc[instance, "best_bound"]
        entry = {"instance": instance, "tensors": optima.loc[instance, "num_tensors"],
                 "lower_bound": optima.loc[instance, "lower_bound"],
                 "optimum": int(optima.loc[instance, "optimum"]) if proven else None,
                 "best_bound": optima.loc[instance, "best_bound"], "proven": proven}
        for method in methods:
            values = rows[(rows["instance"] == instance) & (rows["method"] == method)]["objective"]
            value = None if values.empty else int(values.median())
            entry[method] = value
            entry[f"gap:{method}"] = (None if value is None or not reference
                                      else (value - reference) / reference)
        table.append(entry)
    frame = pd.DataFrame(table)
    frame.attrs["methods"] = list(methods)
    return frame


def _unit(value) -> str:
    """The unit of one row: MiB from 1 MiB on, KiB from 1 KiB on, else bytes."""
    largest = 0 if value is None or pd.isna(value) else value
    return "MiB" if largest >= 2**20 else "KiB" if largest >= 2**10 else "B"


def _fmt(value, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    scaled = value / UNITS[unit]
    return f"{scaled:.0f}" if unit == "B" else f"{scaled:.3f}"


def _cells(table: pd.DataFrame, methods, percent: str = "%"):
    for _, row in table.iterrows():
        unit = _unit(row["lower_bound"])
        cells = [str(row["instance"]), unit, _fmt(row["lower_bound"], unit)]
        for method in methods:
            gap = row[f"gap:{method}"]
            text = _fmt(row[method], unit)
            if gap is not None and not pd.isna(gap):
                text += f" ({'' if row['proven'] else '≥'}+{100 * gap:.1f}{percent})"
            cells.append(text)
        optimum = row["optimum"] if row["proven"] else None
        cells.append(_fmt(optimum, unit) if optimum is not None else
                     f"[{_fmt(row['best_bound'], unit)}, …]")
        yield cells


def render_markdown(table: pd.DataFrame, methods, title: str) -> str:
    header = ["instance", "unit", "lower bound", *methods, "optimum"]
    lines = [f"**{title}** (gap to the proven optimum in parentheses, "
             "≥ marks a gap to the best proven bound where no optimum is known)", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in _cells(table, methods)]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return (text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%")
            .replace("&", r"\&").replace("#", r"\#").replace("≥", r"$\geq$")
            .replace("–", "--").replace("…", r"\dots"))


def render_latex(table: pd.DataFrame, methods, caption: str, label: str) -> str:
    header = ["instance", "unit", "LB", *methods, "optimum"]
    lines = [r"\begin{table*}[t]", r"\centering", r"\scriptsize",
             rf"\caption{{{_latex_escape(caption)} Gap to the proven optimum in "
             r"parentheses ($\geq$: to the best proven bound).}", rf"\label{{{label}}}",
             r"\resizebox{\textwidth}{!}{%", r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
             r"\toprule", " & ".join(_latex_escape(h) for h in header) + r" \\", r"\midrule"]
    for cells in _cells(table, methods, percent="%"):
        lines.append(" & ".join(_latex_escape(c) for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table*}"]
    return "\n".join(lines) + "\n"
