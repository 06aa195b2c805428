"""``optplan report RUN --html``: one self-contained HTML page of a run, to explore in a
browser without a server or a network.

The page holds the optima table, a gap table per problem (every heuristic against the proven
optimum, or the best proven bound) and the *layout explorer*: for every instance of the
run (shared objects and offsets, plain and in place) a Plotly figure with the layout of a
method on the left, chosen from a drop-down menu, next to the proven optimum on the right.
A layout is the time × address picture of a plan: one rectangle per tensor over its
lifetime ``[first_op, last_op + 1)`` and its addresses ``[offset, offset + size)``, with the
tensor, its size, lifetime and offset on hover. Shared objects are drawn stacked in object
order (TFLite's objects-to-offsets conversion). Instances are picked from the contents list.

Everything is drawn by Plotly (``plotly`` package; its JavaScript is inlined once), so the
page works from a file. Layouts need the runs' solution files; methods with the same layout
share one trace.
"""

from __future__ import annotations

import html
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from optplan.analysis.load import (instance_for_key, load_results, optimum_table,
                                   solution_path)
from optplan.analysis.tables import strategy_table
from optplan.errors import InputError
from optplan.model import Instance, OffsetsSolution
from optplan.problems import Problem

__all__ = ["write_html_report", "LayoutChoice", "layout_choices", "MAX_TENSORS"]

MAX_TENSORS = 5000
"""Instances with more tensors are listed but not drawn (their page would be too heavy)."""

_PROBLEM_TITLES = {"shared-objects": "shared objects", "offsets": "offsets"}


@dataclass(frozen=True)
class LayoutChoice:
    """One method's plan of one instance, ready to draw (shared objects already stacked)."""

    method: str
    status: str
    objective: int
    layout: OffsetsSolution
    gap: float | None  # to the instance's reference (the optimum, or the best proven bound)


def _require_plotly() -> None:
    if importlib.util.find_spec("plotly") is None:
        raise InputError("the HTML report needs plotly: pip install 'optplan[html]'",
                         field="--html")


def _as_layout(instance: Instance, problem: Problem, solution) -> OffsetsSolution:
    if problem is Problem.OFFSETS:
        return solution
    from optplan.heuristics.tflite_offsets import objects_to_offsets

    return objects_to_offsets(instance, solution)


def layout_choices(group: pd.DataFrame, run_dirs: list[Path], instance: Instance,
                   problem: Problem, reference: int | None) -> list[LayoutChoice]:
    """Every valid plan of one (instance, problem, inplace) group whose solution file is at
    hand: one per method (its first row), best objective first."""
    from optplan.formats import read_solution_csv

    rows = group[(group["valid"] == True) & group["objective"].notna()]  # noqa: E712
    choices = []
    for _, row in rows.drop_duplicates("method").iterrows():
        path = solution_path(run_dirs, row["job_id"])
        if path is None:
            continue
        solution = read_solution_csv(instance, problem, path)
        objective = int(row["objective"])
        gap = None if not reference else (objective - reference) / reference
        choices.append(LayoutChoice(row["method"], row["status"], objective,
                                    _as_layout(instance, problem, solution), gap))
    return sorted(choices, key=lambda c: (c.objective, c.method))


def _gap_text(gap: float | None, proven: bool = True) -> str:
    if gap is None or (isinstance(gap, float) and math.isnan(gap)):
        return "–"
    text = "0.0%" if gap == 0 else f"+{100 * gap:.1f}%" if gap >= 0.0005 else "<0.1%"
    return text if proven else f"≥ {text}"


def _tensor_colours(instance: Instance) -> list[str]:
    """A colour per tensor, by size rank (largest first) over a qualitative palette: the same
    tensor has the same colour in both panels, and neighbours in size differ."""
    from plotly.colors import qualitative

    palette = qualitative.Dark24
    order = sorted(range(len(instance)), key=lambda i: (-instance.records[i].size, i))
    colours = [""] * len(instance)
    for rank, index in enumerate(order):
        colours[index] = palette[rank % len(palette)]
    return colours


def _bars(instance: Instance, layout: OffsetsSolution, colours: list[str], *, visible: bool,
          name: str):
    import plotly.graph_objects as go

    records = instance.records
    return go.Bar(
        x=[(r.first_op + r.last_op + 1) / 2 for r in records],
        width=[r.last_op + 1 - r.first_op for r in records],
        base=list(layout.offsets), y=[r.size for r in records],
        customdata=[[r.id, r.size, r.first_op, r.last_op, offset]
                    for r, offset in zip(records, layout.offsets)],
        hovertemplate=("tensor %{customdata[0]}<br>size %{customdata[1]:,} B<br>"
                       "lifetime ops %{customdata[2]}–%{customdata[3]}<br>"
                       "offset %{customdata[4]:,}<extra></extra>"),
        # White edges separate neighbours; on hundreds of thin bars they would hide them.
        marker=dict(color=colours, line=dict(color="white",
                                             width=0.5 if len(records) <= 300 else 0)),
        visible=visible, showlegend=False, name=name)


def layout_figure(instance: Instance, choices: list[LayoutChoice], reference: LayoutChoice,
                  reference_label: str, *, selected: str | None = None):
    """The explorer figure of one instance: a drop-down of ``choices`` on the left panel, the
    ``reference`` plan (the proven optimum) on the right."""
    from plotly.subplots import make_subplots

    titles = [_choice_title(choices[0]), f"{reference_label}: {reference.objective:,} B"]
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=titles)
    colours = _tensor_colours(instance)
    traces: dict[tuple[int, ...], int] = {}  # one trace per distinct layout
    trace_of = []
    for choice in choices:
        key = choice.layout.offsets
        if key not in traces:
            traces[key] = len(traces)
            figure.add_trace(_bars(instance, choice.layout, colours, visible=False,
                                   name=choice.method), row=1, col=1)
        trace_of.append(traces[key])
    figure.add_trace(_bars(instance, reference.layout, colours, visible=True,
                           name=reference.method), row=1, col=2)

    def address_range(choice: LayoutChoice) -> list[float]:
        return [0, 1.04 * max(choice.layout.arena_size, reference.layout.arena_size, 1)]

    first = next((i for i, c in enumerate(choices) if c.method == selected), 0)
    figure.data[trace_of[first]].visible = True
    figure.layout.annotations[0].text = _choice_title(choices[first])
    buttons = []
    for choice, trace in zip(choices, trace_of):
        visible = [index == trace for index in range(len(traces))] + [True]
        buttons.append(dict(label=f"{choice.method} ({_gap_text(choice.gap)})",
                            method="update",
                            args=[{"visible": visible},
                                  {"annotations[0].text": _choice_title(choice),
                                   "yaxis.range": address_range(choice)}]))
    figure.update_layout(
        barmode="overlay", bargap=0, height=480, margin=dict(l=70, r=20, t=90, b=50),
        updatemenus=[dict(buttons=buttons, active=first, direction="down", x=0, xanchor="left",
                          y=1.22, yanchor="top", showactive=True)],
        hoverlabel=dict(align="left"), plot_bgcolor="white")
    figure.update_xaxes(title_text="operator", range=[0, instance.num_ops], showgrid=False,
                        linecolor="black")
    figure.update_yaxes(range=address_range(choices[first]), showgrid=True, gridcolor="#e5e5e5",
                        linecolor="black", tickformat="~s")
    figure.update_yaxes(title_text="address (bytes)", row=1, col=1)
    return figure


def _first_shown(choices: list[LayoutChoice], group: pd.DataFrame) -> str:
    """The method shown first: TFLite's greedy_by_size when it ran, else the median
    heuristic (the worst one would squash the optimum beside it)."""
    heuristics = set(group.loc[group["kind"] == "heuristic", "method"])
    ranked = [c.method for c in choices if c.method in heuristics] or [c.method for c in choices]
    return "greedy_by_size" if "greedy_by_size" in ranked else ranked[len(ranked) // 2]


def _choice_title(choice: LayoutChoice) -> str:
    return f"{choice.method}: {choice.objective:,} B ({_gap_text(choice.gap)}, {choice.status})"


# --- tables ---------------------------------------------------------------------------------


def _optima_html(optima: pd.DataFrame) -> str:
    rows = []
    for row in optima.itertuples():
        optimum = "–" if pd.isna(row.optimum) else f"{int(row.optimum):,}"
        rows.append([row.instance, _PROBLEM_TITLES.get(row.problem, row.problem)
                     + (" (in place)" if row.inplace else ""),
                     f"{int(row.num_tensors)}" if pd.notna(row.num_tensors) else "",
                     f"{int(row.lower_bound):,}", optimum,
                     "–" if pd.isna(row.best_bound) else f"{int(row.best_bound):,}",
                     row.proved_by or "–"])
    return _table(["instance", "problem", "tensors", "lower bound", "optimum", "best bound",
                   "proved by"], rows, numeric=range(2, 6))


def _gap_table_html(results: pd.DataFrame, problem: str, inplace: bool) -> str:
    table = strategy_table(results, problem, inplace=inplace)
    if table.empty:
        return ""
    methods = table.attrs["methods"]
    header = ["method"] + list(table["instance"])
    rows = [["optimum"] + [f"{int(v):,}" if pd.notna(v) else "–" for v in table["optimum"]]]
    for method in methods:
        rows.append([method] + [_gap_text(gap, bool(proven)) if pd.notna(value) else "–"
                                for value, gap, proven in zip(table[method],
                                                              table[f"gap:{method}"],
                                                              table["proven"])])
    title = _PROBLEM_TITLES[problem] + (" in place" if inplace else "")
    return (f"<h3>{html.escape(title)}: gap of every heuristic to the optimum</h3>"
            + _table(header, rows, numeric=range(1, len(header))))


def _table(header: list[str], rows: list[list[str]], *, numeric=()) -> str:
    numeric = set(numeric)

    def cell(tag: str, index: int, text: str) -> str:
        align = ' class="num"' if index in numeric else ""
        return f"<{tag}{align}>{html.escape(str(text))}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table></div>')


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left;
         white-space: nowrap; }
th { position: sticky; top: 0; background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow: auto; max-height: 32em; margin-bottom: 1em; }
nav ul { columns: 2; font-size: 0.9em; } .note { color: #666; font-size: 0.9em; }
section.layout { margin-bottom: 2.5em; }
"""


# --- the page -------------------------------------------------------------------------------


def _unsolved_note(labels: list[str]) -> str:
    if not labels:
        return ""
    return (f'<p class="note">Not drawn, no solution file at hand ({len(labels)}): '
            f'{html.escape("; ".join(labels))}.</p>')


def write_html_report(run_dirs, out_path, *, max_tensors: int = MAX_TENSORS) -> Path:
    """Write the page for ``run_dirs`` to ``out_path`` and return its path."""
    _require_plotly()
    import plotly.io as pio

    run_dirs = [Path(d) for d in run_dirs]
    results = load_results(run_dirs)
    planning = (results[results["problem"].isin(list(_PROBLEM_TITLES))]
                if not results.empty else results)
    optima = optimum_table(planning) if not planning.empty else pd.DataFrame()
    sections, contents, notes, unsolved = [], [], [], []
    include_js = True
    for row in optima.itertuples():
        problem = Problem.parse(row.problem)
        group = planning[(planning["instance"] == row.instance)
                         & (planning["problem"] == row.problem)
                         & (planning["inplace"] == row.inplace)]
        label = (f"{row.instance} — {_PROBLEM_TITLES[row.problem]}"
                 + (" (in place)" if row.inplace else ""))
        if row.num_tensors and row.num_tensors > max_tensors:
            notes.append(f"{label}: {int(row.num_tensors)} tensors, not drawn "
                         f"(more than {max_tensors})")
            continue
        try:
            instance = instance_for_key(group["instance_key"].iloc[0])
        except (OSError, InputError) as error:
            notes.append(f"{label}: instance not at hand ({error})")
            continue
        proven = pd.notna(row.optimum)
        reference = int(row.optimum) if proven else (
            int(row.best_bound) if pd.notna(row.best_bound) else None)
        choices = layout_choices(group, run_dirs, instance, problem, reference)
        if not choices:
            unsolved.append(label)
            continue
        optimal = [c for c in choices if c.status == "OPTIMAL" and c.objective == reference]
        right = optimal[0] if optimal else choices[0]
        right_label = (f"optimum (proven by {right.method})" if optimal
                       else f"best found ({right.method}, optimum not proven)")
        figure = layout_figure(instance, choices, right, right_label,
                               selected=_first_shown(choices, group))
        anchor = f"layout-{len(sections)}"
        contents.append(f'<li><a href="#{anchor}">{html.escape(label)}</a> '
                        f'({len(instance)} tensors, {len(choices)} methods)</li>')
        sections.append(f'<section class="layout" id="{anchor}"><h3>{html.escape(label)}</h3>'
                        + pio.to_html(figure, full_html=False, include_plotlyjs=include_js,
                                      config={"displaylogo": False, "responsive": True})
                        + "</section>")
        include_js = False
    gap_tables = "".join(_gap_table_html(planning, problem, inplace)
                         for problem in _PROBLEM_TITLES for inplace in (False, True)
                         if not planning.empty)
    names = ", ".join(html.escape(str(d)) for d in run_dirs)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>optplan report: {names}</title><style>{_STYLE}</style></head>
<body>
<h1>optplan report: {names}</h1>
<p class="note">{len(results)} results; gaps are to the proven optimum, or (≥) to the best
proven bound where no method proved one.</p>
<h2>Optima</h2>
{_optima_html(optima) if not optima.empty else '<p>No shared-objects or offsets results.</p>'}
<h2>Gaps</h2>
{gap_tables or '<p>No heuristic results.</p>'}
<h2>Layouts</h2>
<p class="note">Pick an instance below and a method from the menu above its left panel; the
right panel is the proven optimum. Hover a rectangle for its tensor, size, lifetime and
offset; drag to zoom, double-click to reset.</p>
<nav><ul>{''.join(contents)}</ul></nav>
{''.join(f'<p class="note">{html.escape(n)}</p>' for n in notes)}
{_unsolved_note(unsolved)}
{''.join(sections) or '<p>No layouts: the runs have no solution files.</p>'}
</body></html>
"""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return out_path
