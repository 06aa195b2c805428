"""Paper tables in the shape of Pisarchyk & Lee 2020 (Tables 1 and 2), with the proven optimum.

One row per instance, one column per heuristic (its objective and its gap to the optimum, or
to the best proven bound when no optimum is known — then marked with ``≥``), plus the
combinatorial lower bound and the optimum. Where no solver proved the optimum, the optimum
column shows the best proven bound marked with a dagger (†) and a footnote says so: never a
value that looks like an optimum. Rows may be grouped in titled blocks and relabelled.

:func:`preload_table` is the preload counterpart: per network and budget, each method's
latency next to the proven optimum (or the best bound, marked likewise).

:func:`search_table` and :func:`search_runs_table` read ``bench/search.py``'s rows: the
offsets search on MiniMalloc's suite before and after its compiled core, and long runs.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from optplan.analysis.load import optimum_table
from optplan.analysis.names import latex_escape

__all__ = ["order_table", "strategy_table", "render_markdown", "render_latex", "preload_table",
           "render_preload_markdown", "UNITS", "UNPROVEN_NOTE", "planning_problem_key",
           "duplicate_instances", "drop_duplicates", "summary_table", "render_summary_markdown",
           "exact_table", "SEARCH_RUNS", "search_table", "search_runs_table",
           "inplace_table", "latex_table", "bold_best", "percent_cell", "seconds_cell",
           "mib_cell"]

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20}
UNPROVEN_NOTE = ("no optimum proven within the time limit: the best proven lower bound is "
                 "shown, and gaps (≥) are to that bound")


def strategy_table(results: pd.DataFrame, problem: str, methods=None, *,
                   inplace: bool = False, instances=None) -> pd.DataFrame:
    """Long → wide: per instance, each heuristic's objective (median over repetitions/seeds)
    and its gap to the optimum (``gap:<method>``), the lower bound and the optimum.

    ``inplace`` picks the rows of the plain problem (default) or of its in-place variant;
    ``instances`` keeps only those instances (in the table's sorted order)."""
    if "inplace" in results:
        results = results[results["inplace"].fillna(False).astype(bool) == inplace]
    elif inplace:
        results = results.iloc[:0]
    if instances is not None:
        results = results[results["instance"].isin(list(instances))]
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


def _percent(gap: float) -> str:
    """A gap in percent: one decimal below 100 %, whole percents above (they are wide), and
    "<0.1" for a gap that is not zero but would print as 0.0 (never mistaken for optimal)."""
    value = 100 * gap
    if 0 < value < 0.05:
        return "<0.1"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _cells(table: pd.DataFrame, methods, percent: str = "%", labels=None, unit=None):
    """Each row's cells; with a fixed ``unit`` there is no unit column."""
    labels = labels or {}
    for _, row in table.iterrows():
        row_unit = unit or _unit(row["lower_bound"])
        cells = [labels.get(row["instance"], str(row["instance"]))]
        cells += [] if unit else [row_unit]
        cells.append(_fmt(row["lower_bound"], row_unit))
        for method in methods:
            gap = row[f"gap:{method}"]
            text = _fmt(row[method], row_unit)
            if gap is not None and not pd.isna(gap):
                text += f" ({'' if row['proven'] else '≥'}+{_percent(gap)}{percent})"
            cells.append(text)
        cells.append(_fmt(row["optimum"], row_unit) if row["proven"] else
                     f"≥{_fmt(row['best_bound'], row_unit)}†")
        yield cells


def _blocks(table: pd.DataFrame, groups):
    """``[(title, rows)]``: the table in the given titled blocks (empty ones dropped), or one
    untitled block."""
    if not groups:
        return [("", table)]
    blocks = []
    for title, names in groups:
        rows = table[table["instance"].isin(list(names))]
        if len(rows):
            blocks.append((title, rows))
    return blocks


def render_markdown(table: pd.DataFrame, methods, title: str, *, groups=None,
                    labels=None) -> str:
    """A Markdown table; ``groups`` = ``[(title, instance names)]`` splits it into blocks,
    ``labels`` maps instance names to the names shown."""
    header = ["instance", "unit", "lower bound", *methods, "optimum"]
    lines = [f"**{title}** (gap to the proven optimum in parentheses, "
             "≥ marks a gap to the best proven bound where no optimum is known)", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for block_title, rows in _blocks(table, groups):
        if block_title:
            lines.append(f"| *{block_title}* |" + " |" * (len(header) - 1))
        lines += ["| " + " | ".join(cells) + " |" for cells in _cells(rows, methods,
                                                                      labels=labels)]
    if not table["proven"].all():
        lines += ["", f"† {UNPROVEN_NOTE}."]
    return "\n".join(lines) + "\n"




def render_latex(table: pd.DataFrame, methods, caption: str, label: str, *, groups=None,
                 labels=None, header_labels=None, unit: str | None = None) -> str:
    """A ``table*`` (booktabs) that shrinks to the text width only when wider than it;
    ``groups`` and ``labels`` as in :func:`render_markdown`, ``header_labels`` maps method
    names to column heads (a newline in one breaks it over two lines); ``unit`` (a key of
    :data:`UNITS`) prints every size in that unit, named in the caption, instead of a unit
    per row."""
    header_labels = header_labels or {}
    heads = ["instance", *([] if unit else ["unit"]), "LB", *methods, "optimum"]
    head_cells = []
    for head in heads:
        text = header_labels.get(head, head)
        parts = [latex_escape(part) for part in text.split("\n")]
        head_cells.append(parts[0] if len(parts) == 1 else
                          r"\begin{tabular}[b]{@{}c@{}}" + r"\\".join(parts) + r"\end{tabular}")
    columns = len(heads)
    lines = [r"\begin{table*}[t]", r"\centering", r"\scriptsize", r"\setlength{\tabcolsep}{2pt}",
             rf"\caption{{{latex_escape(caption)} "
             + (f"Sizes in {unit}; gap" if unit else "Gap") + r" to the proven optimum in "
             r"parentheses ($\geq$: to the best proven bound).}", rf"\label{{{label}}}",
             r"\begin{adjustbox}{max width=\textwidth}",
             r"\begin{tabular}{l" + "r" * (columns - 1) + "}",
             r"\toprule", " & ".join(head_cells) + r" \\"]
    for block_title, rows in _blocks(table, groups):
        lines.append(r"\midrule")
        if block_title:
            lines.append(rf"\multicolumn{{{columns}}}{{l}}{{\emph{{{latex_escape(block_title)}}}}}"
                         r" \\")
        for cells in _cells(rows, methods, percent="%", labels=labels, unit=unit):
            lines.append(" & ".join(latex_escape(c) for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{adjustbox}"]
    if not table["proven"].all():
        lines += [r"\par\smallskip", rf"$^\dagger$\,{latex_escape(UNPROVEN_NOTE)}."]
    lines.append(r"\end{table*}")
    return "\n".join(lines) + "\n"


_PRELOAD_METHODS = ("flexnn", "flexnn_sliced", "no_preload")
_SLICED_METHODS = ("flexnn_sliced",)
"""The preload heuristics whose plans may slice layers: their gap is to the optimum with
slicing (``exact`` with ``params.slicing``), the others' to the optimum without."""


def _sliced_params(params) -> bool:
    return isinstance(params, dict) and bool(params.get("slicing"))


def _exact_entry(group: pd.DataFrame, exact: str, sliced: bool) -> dict:
    """``exact``'s rows of one (instance, budget) without or with slicing: the optimum when
    proven, the best bound, the best plan, status and time."""
    solved = group[(group["method"] == exact)
                   & (group["params"].map(_sliced_params) == sliced)]
    valid = solved[solved["valid"] == True]  # noqa: E712
    proven_rows = valid[valid["status"] == "OPTIMAL"]
    bound = pd.to_numeric(solved["best_bound"], errors="coerce").max()
    return {"optimum": int(proven_rows["objective"].min()) if len(proven_rows) else None,
            "best_bound": None if pd.isna(bound) else int(bound),
            "exact_objective": int(valid["objective"].min()) if len(valid) else None,
            "exact_status": solved["status"].iloc[0] if len(solved) else None,
            "exact_time_s": float(solved["wall_time_s"].max()) if len(solved) else None,
            "proven": len(proven_rows) > 0}


def preload_table(results: pd.DataFrame, exact: str = "cpsat") -> pd.DataFrame:
    """Per (instance, budget) of the preload rows: the unlimited-memory latency bound, each
    heuristic's latency and gap to the optimum (``gap:<method>``), and ``exact``'s result
    without slicing: ``optimum`` when proven, else ``best_bound`` (with ``proven`` False);
    the same with slicing in the ``*_sliced`` columns (``exact`` with ``params.slicing``),
    the reference of :data:`_SLICED_METHODS`."""
    rows = results[(results["problem"] == "preload")] if len(results) else results
    records = []
    if rows.empty:
        return pd.DataFrame(records)
    budgets = pd.to_numeric(rows["budget"], errors="coerce")
    for (instance, budget), group in rows.assign(budget=budgets).dropna(
            subset=["budget"]).groupby(["instance", "budget"], sort=True):
        valid = group[group["valid"] == True]  # noqa: E712
        plain, sliced = _exact_entry(group, exact, False), _exact_entry(group, exact, True)
        entry = {"instance": instance, "budget": int(budget),
                 "lower_bound": int(pd.to_numeric(group["lower_bound"], errors="coerce").max()),
                 **plain, **{f"{key}_sliced": value for key, value in sliced.items()}}
        for method in _PRELOAD_METHODS:
            own = sliced if method in _SLICED_METHODS else plain
            reference = own["optimum"] if own["proven"] else own["best_bound"]
            values = valid[valid["method"] == method]["objective"]
            value = None if values.empty else int(values.median())
            entry[method] = value
            entry[f"gap:{method}"] = (None if value is None or not reference
                                      else (value - reference) / reference)
        records.append(entry)
    return pd.DataFrame(records)


def render_preload_markdown(table: pd.DataFrame, title: str) -> str:
    """The preload table as Markdown: budgets in MiB, latencies in µs; the columns with
    slicing only when the table has exact rows with slicing."""
    sliced = bool(table["exact_status_sliced"].notna().any()) if len(table) else False
    exact_columns = [("", "optimum", "exact time (s)")] + (
        [("_sliced", "optimum with slicing", "time with slicing (s)")] if sliced else [])
    header = ["instance", "budget", "latency bound", *_PRELOAD_METHODS,
              *(name for _, *names in exact_columns for name in names)]
    lines = [f"**{title}** (latency in µs; gap to the optimum in parentheses)", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        unit = _unit(row["budget"])
        cells = [str(row["instance"]), f"{_fmt(row['budget'], unit)} {unit}",
                 str(row["lower_bound"])]
        for method in _PRELOAD_METHODS:
            proven = row["proven_sliced" if method in _SLICED_METHODS else "proven"]
            value, gap = row[method], row[f"gap:{method}"]
            text = "–" if value is None or pd.isna(value) else str(int(value))
            if gap is not None and not pd.isna(gap):
                text += f" ({'' if proven else '≥'}+{_percent(gap)}%)"
            cells.append(text)
        for suffix, _, _ in exact_columns:
            bound = row[f"best_bound{suffix}"]
            cells.append(str(int(row[f"optimum{suffix}"])) if row[f"proven{suffix}"] else
                         "–" if bound is None or pd.isna(bound) else f"≥{int(bound)}†")
            seconds = row[f"exact_time_s{suffix}"]
            cells.append("–" if seconds is None or pd.isna(seconds) else f"{seconds:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    if len(table) and not table["proven"].all():
        lines += ["", f"† {UNPROVEN_NOTE}."]
    return "\n".join(lines) + "\n"


# --- The paper's evaluation tables: frames, then one booktabs renderer for all of them. ---

def planning_problem_key(instance) -> str:
    """SHA-256 of what the planning problems see: the records, the in-place pairs and the
    alignment (not the graph, not provenance). Two networks with the same key are the same
    instance for every SO/OC method, whatever importer produced them."""
    import hashlib
    import json

    data = {"records": [[r.first_op, r.last_op, r.size] for r in instance.records],
            "inplace": sorted(map(list, instance.inplace_pairs)),
            "alignment": instance.alignment}
    return hashlib.sha256(json.dumps(data, separators=(",", ":")).encode()).hexdigest()


def duplicate_instances(results: pd.DataFrame, prefer=("tflite", "onnx", "torch", "keras")
                        ) -> dict[str, list[str]]:
    """``{kept: [duplicates]}`` over the rows' networks whose planning problems are identical
    (:func:`planning_problem_key`); the kept one is the first by importer preference, then
    name. Instances whose file is not at hand are never merged."""
    from optplan.analysis.load import instance_for_key

    keys = results.drop_duplicates("instance")[["instance", "instance_key"]]
    groups: dict[str, list[str]] = {}
    for name, key in zip(keys["instance"], keys["instance_key"]):
        try:
            instance = instance_for_key(str(key))
        except (OSError, ValueError):
            continue
        if hasattr(instance, "records"):
            groups.setdefault(planning_problem_key(instance), []).append(str(name))

    def rank(name: str):
        source = next((i for i, s in enumerate(prefer) if f"_{s}_" in name), len(prefer))
        return source, name

    duplicates = {}
    for names in groups.values():
        if len(names) > 1:
            kept, *rest = sorted(names, key=rank)
            duplicates[kept] = rest
    return duplicates


def drop_duplicates(results: pd.DataFrame, duplicates: dict[str, list[str]]) -> pd.DataFrame:
    """The rows without those of the duplicate instances (each reported once, by its kept
    twin)."""
    dropped = {name for rest in duplicates.values() for name in rest}
    return results[~results["instance"].isin(dropped)]


JOB_FIELDS = ("run", "instance", "problem", "method", "inplace", "time_limit", "seed", "budget")
"""The fields that name a job apart from its repetition (with its ``params``)."""


def median_runs(results: pd.DataFrame) -> pd.DataFrame:
    """One row per job over its repetitions: the run with the median wall time (the lower
    middle of an even count), so that a table cell's status, objective and time all come from
    one and the same run. Rows without a ``repetition`` column pass through."""
    if results.empty or "repetition" not in results:
        return results
    fields = [f for f in JOB_FIELDS if f in results]
    params = (results["params"] if "params" in results else pd.Series(None, index=results.index)
              ).map(lambda p: json.dumps(p if isinstance(p, dict) else {}, sort_keys=True))
    key = pd.Series([repr(job) for job in zip(*(results[f] for f in fields), params)],
                    index=results.index)
    ordered = results.assign(_job=key).sort_values(["_job", "wall_time_s", "repetition"],
                                                   kind="stable")
    position = ordered.groupby("_job", sort=False).cumcount()
    count = ordered.groupby("_job", sort=False)["_job"].transform("size")
    picked = ordered[position == (count - 1) // 2]
    return picked.drop(columns="_job").sort_index()


def summary_table(results: pd.DataFrame, problem: str, *, kinds=("heuristic",)) -> pd.DataFrame:
    """Per method of ``problem`` (plain, not in place): on the instances with a proven
    optimum where it ran, how many, how often optimal, mean/max gap to the optimum, and its
    median and largest run time (each the median of its repetitions). Methods in ``kinds``;
    sorted by mean gap. ``attrs``: ``proven`` (instances with an optimum) and ``instances``."""
    rows = results[(results["problem"] == problem) & ~results["inplace"].astype(bool)]
    optima = optimum_table(rows).set_index("instance")
    proven = optima[optima["optimum"].notna()]
    valid = rows[(rows["kind"].isin(kinds)) & (rows["valid"] == True)]  # noqa: E712
    objective = valid.groupby(["instance", "method"])["objective"].median()
    times = valid.groupby(["instance", "method"])["wall_time_s"].median()
    records = []
    for method in sorted(valid["method"].unique()):
        values = objective.xs(method, level="method")
        values = values[values.index.isin(proven.index)]
        gaps = (values - proven.loc[values.index, "optimum"].astype(float)) / proven.loc[
            values.index, "optimum"].astype(float)
        run = times.xs(method, level="method")
        records.append({"method": method, "instances": len(gaps),
                        "optimal": int((gaps <= 0).sum()),
                        "mean_gap": float(gaps.mean()) if len(gaps) else None,
                        "max_gap": float(gaps.max()) if len(gaps) else None,
                        "median_time_s": float(run.median()) if len(run) else None,
                        "max_time_s": float(run.max()) if len(run) else None})
    frame = pd.DataFrame(records)
    if len(frame):
        frame = frame.sort_values(["mean_gap", "method"], na_position="last").reset_index(
            drop=True)
    frame.attrs["proven"] = len(proven)
    frame.attrs["instances"] = len(optima)
    return frame


def render_summary_markdown(table: pd.DataFrame, title: str) -> str:
    """:func:`summary_table` as Markdown, human method names, gaps in percent."""
    from optplan.analysis.names import method_label

    lines = [f"**{title}** (on the {table.attrs.get('proven', 0)} instances with a proven "
             "optimum; run time: median over repetitions, then over instances)", "",
             "| method | instances | optimal | mean gap % | max gap % | median time (s) |",
             "|---|---|---|---|---|---|"]
    for _, row in table.iterrows():
        cells = [method_label(row["method"]), str(row["instances"]), str(row["optimal"]),
                 "–" if row["mean_gap"] is None or pd.isna(row["mean_gap"])
                 else _percent(row["mean_gap"]),
                 "–" if row["max_gap"] is None or pd.isna(row["max_gap"])
                 else _percent(row["max_gap"]),
                 "–" if row["median_time_s"] is None or pd.isna(row["median_time_s"])
                 else f"{row['median_time_s']:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def exact_table(results: pd.DataFrame, problem: str, *, inplace: bool = False) -> pd.DataFrame:
    """Per exact method of ``problem``: jobs, proven optimal, median and largest time to the
    proof (median over repetitions first)."""
    rows = results[(results["problem"] == problem) & (results["kind"] == "exact")
                   & (results["inplace"].astype(bool) == inplace)]
    records = []
    for method, group in rows.groupby("method"):
        per_instance = group.groupby("instance")
        proven = per_instance["status"].agg(lambda s: (s == "OPTIMAL").all())
        times = per_instance["wall_time_s"].median()
        records.append({"method": method, "instances": len(proven),
                        "optimal": int(proven.sum()),
                        "median_time_s": float(times[proven].median()) if proven.any() else None,
                        "max_time_s": float(times[proven].max()) if proven.any() else None})
    return pd.DataFrame(records)


def inplace_table(results: pd.DataFrame, problem: str, heuristic: str = "mxnet") -> pd.DataFrame:
    """Per network with both variants: the plain optimum, the in-place lower bound and
    optimum (or best bound), the saving of the in-place optimum over the plain one, and
    ``heuristic``'s in-place plan with its gap to the in-place optimum."""
    rows = results[results["problem"] == problem]
    optima = optimum_table(rows).set_index(["instance", "inplace"])
    records = []
    for instance in sorted({i for i, inplace in optima.index if inplace}):
        if (instance, False) not in optima.index:
            continue
        plain, inplace = optima.loc[(instance, False)], optima.loc[(instance, True)]
        value = rows[(rows["instance"] == instance) & rows["inplace"].astype(bool)
                     & (rows["method"] == heuristic) & (rows["valid"] == True)]  # noqa: E712
        heuristic_value = None if value.empty else int(value["objective"].median())
        reference = inplace["optimum"] if not pd.isna(inplace["optimum"]) else None
        records.append({
            "instance": instance, "tensors": plain["num_tensors"],
            "plain_optimum": None if pd.isna(plain["optimum"]) else int(plain["optimum"]),
            "lower_bound": int(inplace["lower_bound"]),
            "optimum": None if reference is None else int(reference),
            "best_bound": inplace["best_bound"],
            "saving": (None if reference is None or pd.isna(plain["optimum"])
                       else 1 - reference / plain["optimum"]),
            heuristic: heuristic_value,
            f"gap:{heuristic}": (None if heuristic_value is None or reference is None
                                 else heuristic_value / reference - 1)})
    return pd.DataFrame(records, columns=[
        "instance", "tensors", "plain_optimum", "lower_bound", "optimum", "best_bound",
        "saving", heuristic, f"gap:{heuristic}"])


def _best_valid(rows: pd.DataFrame):
    """The least valid objective of ``rows`` (``None``: none)."""
    valid = rows[(rows["valid"] == True) & rows["objective"].notna()]  # noqa: E712
    return None if valid.empty else int(valid["objective"].min())


def order_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per network of the free-order rows (``schedule``, ``schedule-offsets``, not in place):
    the fixed-order figures of the engine order — the best ``offsets`` heuristic and the
    ``offsets`` optimum (``fixed_proven``: proven), both from the rows of the fixed-order runs
    in ``results`` — the engine order's peak (``engine_peak``), the least peak over the
    orders (``least_peak``, with ``peak_proven``) and the must-live bound (``peak_bound``), and the least arena over the orders and
    placements (``free``: the best exact plan, ``free_proven``, its ``free_bound``, ``gap``
    and ``seconds``: the fastest proof, else the longest exact run), with ``saving`` =
    1 - free / fixed-order optimum and ``peak_saving`` = 1 - least peak / engine peak."""
    plain_rows = results[~results["inplace"].astype(bool)]
    order = plain_rows[plain_rows["problem"] == "schedule-offsets"]
    records = []
    for instance in sorted(order["instance"].unique()):
        mine = plain_rows[plain_rows["instance"] == instance]
        fixed = mine[mine["problem"] == "offsets"]
        arena = mine[mine["problem"] == "schedule-offsets"]
        peak = mine[mine["problem"] == "schedule"]
        fixed_optimal = fixed[(fixed["kind"] == "exact") & (fixed["status"] == "OPTIMAL")]
        fixed_optimum = _best_valid(fixed_optimal)
        exact = arena[arena["kind"] == "exact"]
        proven = exact[(exact["status"] == "OPTIMAL") & (exact["valid"] == True)]  # noqa: E712
        free = _best_valid(exact)
        bound = pd.to_numeric(arena["best_bound"], errors="coerce").max()
        seconds = (proven["wall_time_s"].min() if len(proven)
                   else exact["wall_time_s"].max() if len(exact) else None)
        peak_exact = peak[(peak["kind"] == "exact") & (peak["status"] == "OPTIMAL")]
        engine_peak = _best_valid(peak[peak["method"] == "original_order"])
        peak_bound = pd.to_numeric(peak[peak["kind"] == "bound"]["best_bound"],
                                   errors="coerce").max()
        least_peak = _best_valid(peak[peak["kind"] != "bound"])
        fixed_reference = fixed_optimum if fixed_optimum is not None else _best_valid(
            fixed[fixed["kind"] == "exact"])
        records.append({
            "instance": instance,
            "fixed_heuristic": _best_valid(fixed[fixed["kind"] == "heuristic"]),
            "fixed": fixed_reference, "fixed_proven": fixed_optimum is not None,
            "engine_peak": engine_peak, "least_peak": least_peak,
            "peak_bound": None if pd.isna(peak_bound) else int(peak_bound),
            "peak_proven": len(peak_exact) > 0,
            "free": free, "free_proven": len(proven) > 0,
            "free_bound": None if pd.isna(bound) else int(bound),
            "gap": (None if free is None or pd.isna(bound) or not bound
                    else free / bound - 1),
            "seconds": None if seconds is None or pd.isna(seconds) else float(seconds),
            "saving": (None if free is None or not fixed_reference
                       else 1 - free / fixed_reference),
            "peak_saving": (None if least_peak is None or not engine_peak
                            else 1 - least_peak / engine_peak)})
    return pd.DataFrame(records, columns=[
        "instance", "fixed_heuristic", "fixed", "fixed_proven", "engine_peak",
        "least_peak", "peak_bound", "peak_proven", "free", "free_proven", "free_bound", "gap", "seconds",
        "saving", "peak_saving"])


SEARCH_RUNS = ("before", "after")
"""The runs of each ``bench/search.py`` row: the search on its Python engine (one worker),
then on the compiled engine (two workers)."""


def _search_run(result: dict) -> dict:
    """One ``search`` result row's figures: status, objective, lower bound (max breadth),
    best bound, gap, wall time, nodes, validity, workers, engine, time limit (when recorded),
    and the last probe of its *prove* loop (``prove_capacity``, ``prove_result``: how far the
    upward refutation got, and how that probe ended)."""
    prove = [p for p in result.get("probes") or () if p.get("loop") == "prove"]
    return {"status": result.get("status"), "objective": result.get("objective"),
            "lower_bound": result.get("lower_bound"), "best_bound": result.get("best_bound"),
            "gap": result.get("gap"), "seconds": result.get("wall_time_s"),
            "nodes": result.get("nodes"), "valid": result.get("valid"),
            "workers": result.get("workers"), "engine": result.get("engine"),
            "time_limit": result.get("time_limit"),
            "prove_capacity": prove[-1]["capacity"] if prove else None,
            "prove_result": prove[-1]["result"] if prove else None}


def search_runs_table(rows) -> pd.DataFrame:
    """One row per ``search`` result row of ``rows`` (dicts, e.g. the JSON lines of
    ``paper/results/search/long_runs.jsonl``): its ``instance``, its ``seed`` (0 when not
    recorded) and the figures of :func:`_search_run`, sorted by instance and seed."""
    frame = pd.DataFrame([{"instance": row["instance"], "seed": row.get("seed", 0)}
                          | _search_run(row) for row in rows])
    return (frame.sort_values(["instance", "seed"]).reset_index(drop=True) if len(frame)
            else frame)


def search_table(rows) -> pd.DataFrame:
    """Per instance of ``bench/search.py --jsonl``'s rows (dicts): the figures of
    :func:`_search_run` for each of :data:`SEARCH_RUNS` (columns ``before_status``, ...,
    ``after_nodes``), and both engines' nodes per second on the same probe (``rates``:
    ``python_rate``, ``compiled_rate``, ``speedup`` = compiled / python; ``rate_finished``:
    both probes ran to their end rather than to the probe's time limit). Sorted by instance."""
    records = []
    for row in rows:
        entry = {"instance": row["instance"], "tensors": row.get("tensors")}
        for run in SEARCH_RUNS:
            entry |= {f"{run}_{key}": value
                      for key, value in _search_run(row.get(run) or {}).items()}
        rates = row.get("rates") or {}
        python, compiled = rates.get("python") or {}, rates.get("compiled") or {}
        entry["python_rate"] = python.get("nodes_per_second")
        entry["compiled_rate"] = compiled.get("nodes_per_second")
        entry["speedup"] = (entry["compiled_rate"] / entry["python_rate"]
                            if entry["python_rate"] and entry["compiled_rate"] else None)
        entry["rate_seconds"] = max(python.get("seconds") or 0, compiled.get("seconds") or 0)
        entry["rate_finished"] = bool(python.get("finished") and compiled.get("finished"))
        records.append(entry)
    frame = pd.DataFrame(records)
    return frame.sort_values("instance").reset_index(drop=True) if len(frame) else frame


def bold_best(values, *, larger: bool = False) -> set[int]:
    """Indices of the best of ``values`` (smallest, or largest), ties included; None skipped."""
    present = [(i, v) for i, v in enumerate(values) if v is not None and not pd.isna(v)]
    if not present:
        return set()
    best = (max if larger else min)(v for _, v in present)
    return {i for i, v in present if v == best}


def latex_table(header, rows, *, caption: str, label: str, align: str, wide: bool = False,
                bold=(), notes: str = "", size: str = r"\small", placement: str = "t",
                groups=None, spans=None) -> str:
    """A booktabs table (``table*`` when ``wide``) at ``size`` (8 pt in acmart's sigconf:
    ``\\small``); ``rows`` are lists of cell strings (already LaTeX), ``bold`` holds the
    ``(row, column)`` cells to set in bold, ``groups`` maps a row index to a block title
    printed above it, ``notes`` go under the table, ``spans`` = ``[(title, first column,
    last column)]`` head column groups above the header. Header cells may contain ``\\\\``
    (two lines)."""
    environment = "table*" if wide else "table"
    bold = set(bold)
    groups = groups or {}

    def head(cell: str) -> str:
        return (r"\begin{tabular}[b]{@{}c@{}}" + cell + r"\end{tabular}" if r"\\" in cell
                else cell)

    lines = [rf"\begin{{{environment}}}[{placement}]", r"\centering", size,
             rf"\caption{{{caption}}}", rf"\label{{{label}}}",
             r"\setlength{\tabcolsep}{3pt}", rf"\begin{{tabular}}{{{align}}}", r"\toprule"]
    if spans:
        cells, rules, column = [], [], 1
        for title, first, last in spans:
            cells += [""] * (first - column)
            cells.append(rf"\multicolumn{{{last - first + 1}}}{{c}}{{{title}}}")
            rules.append(rf"\cmidrule(lr){{{first}-{last}}}")
            column = last + 1
        lines += [" & ".join(cells) + r" \\", "".join(rules)]
    lines += [" & ".join(head(c) for c in header) + r" \\", r"\midrule"]
    for r, cells in enumerate(rows):
        if r in groups:
            if r:
                lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{len(header)}}}{{@{{}}l}}{{\emph{{{groups[r]}}}}} \\")
        lines.append(" & ".join(rf"\textbf{{{c}}}" if (r, i) in bold and c not in ("", "--")
                                else c for i, c in enumerate(cells)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if notes:
        lines += [r"\par\smallskip", r"\parbox{\linewidth}{" + notes + "}"]
    lines.append(rf"\end{{{environment}}}")
    return "\n".join(lines) + "\n"


def percent_cell(gap) -> str:
    """A gap as a LaTeX cell: ``0`` for optimal, ``<0.1`` for a tiny nonzero one."""
    if gap is None or pd.isna(gap):
        return "--"
    if gap <= 0:
        return "0"
    return _percent(gap).replace("<", r"$<$")


def seconds_cell(seconds) -> str:
    """Seconds as a cell: milliseconds below 1 s (``12\\,ms``), else one decimal."""
    if seconds is None or pd.isna(seconds):
        return "--"
    if seconds < 1:
        return f"{1000 * seconds:.1f}\\,ms" if seconds < 0.1 else f"{1000 * seconds:.0f}\\,ms"
    return f"{seconds:.1f}\\,s"


def mib_cell(value) -> str:
    """Bytes as MiB with three decimals."""
    if value is None or pd.isna(value):
        return "--"
    return f"{value / 2**20:.3f}"
