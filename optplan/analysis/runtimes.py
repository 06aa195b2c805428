"""The runtimes table: each runtime's own memory planner against optplan's plan, measured
inside ExecuTorch and TensorFlow Lite Micro (rows of ``bench/runtimes.py``).

A results directory (``paper/results/runtimes``) holds ``runtimes.jsonl``, one row per network
and runtime: ``runtime_planner_bytes``, ``optplan_bytes``, ``lower_bound``, ``status``,
``outputs_equal``, ``max_abs_diff``, or ``error`` (the op the runtime cannot run).
:func:`runtimes_table` gives the table, :func:`render_markdown` / :func:`render_latex` render
it, :func:`runtimes_macros` gives the numbers the paper's prose states, and :func:`write`
writes all three::

    python -m optplan.analysis.runtimes paper/results/runtimes --out paper/generated
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from optplan.analysis.load import read_jsonl
from optplan.analysis.names import FAMILY_NAMES

__all__ = ["RUNTIME_NAMES", "load_runtime_results", "runtimes_table", "unsupported",
           "render_markdown", "render_latex", "runtimes_macros", "write"]

RUNTIME_NAMES = {"executorch": "ExecuTorch", "tflm": "TFLite Micro"}
RESULTS_FILE = "runtimes.jsonl"
_MIB = float(1 << 20)


def load_runtime_results(directory: str | Path) -> pd.DataFrame:
    """The rows of ``directory/runtimes.jsonl`` (one per network and runtime)."""
    results = pd.DataFrame(read_jsonl(Path(directory) / RESULTS_FILE))
    if "error" not in results:
        results["error"] = None
    return results


def _label(network: str) -> str:
    return FAMILY_NAMES.get(network, network.replace("_", " "))


def runtimes_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per network a runtime ran: the runtime's planner and optplan's bytes, the lower
    bound, ``saved`` (share of the runtime's bytes), the status, and the outputs check; sorted
    by runtime (ExecuTorch first), then by saving, largest first."""
    ran = results[results["error"].isna()].copy()
    ran["saved"] = 1 - ran["optplan_bytes"] / ran["runtime_planner_bytes"]
    ran["order"] = ran["runtime"].map(list(RUNTIME_NAMES).index)
    ran = ran.sort_values(["order", "saved", "network"], ascending=[True, False, True])
    columns = ["runtime", "network", "runtime_planner_bytes", "optplan_bytes", "lower_bound",
               "saved", "status", "outputs_equal", "max_abs_diff"]
    return ran[columns].reset_index(drop=True)


def unsupported(results: pd.DataFrame) -> pd.DataFrame:
    """The networks a runtime could not run, with the op it names."""
    failed = results[results["error"].notna()].copy()
    failed["op"] = failed["error"].str.extract(r"op (\S+)", expand=False).fillna("?")
    return failed[["runtime", "network", "op"]].reset_index(drop=True)


def _outputs(row) -> str:
    if row["outputs_equal"]:
        return "bit-identical"
    return f"max |diff| {row['max_abs_diff']:.3g}"


def _mib(value) -> str:
    return f"{value / _MIB:.2f}"


def render_markdown(results: pd.DataFrame) -> str:
    """The table as Markdown, sizes in MiB, then the networks that did not run."""
    table = runtimes_table(results)
    lines = ["| runtime | network | runtime's planner (MiB) | optplan (MiB) | lower bound (MiB) "
             "| saved | status | outputs |", "|---|---|---:|---:|---:|---:|---|---|"]
    for _, row in table.iterrows():
        lines.append(f"| {RUNTIME_NAMES[row['runtime']]} | {_label(row['network'])} | "
                     f"{_mib(row['runtime_planner_bytes'])} | {_mib(row['optplan_bytes'])} | "
                     f"{_mib(row['lower_bound'])} | {100 * row['saved']:.1f} % | "
                     f"{row['status']} | {_outputs(row)} |")
    failed = unsupported(results)
    if len(failed):
        lines += ["", "Not run: " + "; ".join(
            f"{_label(r['network'])} ({RUNTIME_NAMES[r['runtime']]}: op {r['op']})"
            for _, r in failed.iterrows()) + "."]
    return "\n".join(lines) + "\n"


def _tex(text: str) -> str:
    return str(text).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")


def render_latex(results: pd.DataFrame, *, caption: str | None = None,
                 label: str = "tab:runtimes") -> str:
    """The table as a booktabs ``table`` at 8 pt (acmart's ``\\small``): one block per
    runtime, sizes in MiB; the outputs column only when some outputs differ (else the caption
    says that all were identical)."""
    table = runtimes_table(results)
    differ = not table["outputs_equal"].astype(bool).all()
    caption = caption or ("Memory planned inside the runtimes: each runtime's own planner "
                          "against optplan's plan (search; proven optimal unless marked), both "
                          "measured in the runtime; sizes in MiB. "
                          + ("Outputs: with optplan's plan against the runtime's, over random "
                             "inputs." if differ else "With optplan's plan the outputs are "
                             "bit-identical to the runtime's on every network."))
    columns = 6 if differ else 5
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\setlength{\tabcolsep}{3pt}",
             rf"\caption{{{_tex(caption)}}}", rf"\label{{{label}}}",
             r"\begin{tabular}{lrrrr" + ("l" if differ else "") + "}", r"\toprule",
             r"network & runtime's & optplan & bound & saved" + (" & outputs" if differ else "")
             + r" \\"]
    for runtime, rows in table.groupby("runtime", sort=False):
        lines += [r"\midrule",
                  rf"\multicolumn{{{columns}}}{{l}}{{\emph{{{RUNTIME_NAMES[runtime]}}}}} \\"]
        for _, row in rows.iterrows():
            optplan = _mib(row["optplan_bytes"])
            if row["status"] != "OPTIMAL":
                optplan += r"$^\dagger$"
            lines.append(f"{_tex(_label(row['network']))} & {_mib(row['runtime_planner_bytes'])}"
                         f" & {optplan} & {_mib(row['lower_bound'])} & "
                         f"{100 * row['saved']:.1f}\\%"
                         + (f" & {_tex(_outputs(row))}" if differ else "") + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if (table["status"] != "OPTIMAL").any():
        lines.append(r"\par\smallskip $^\dagger$\,not proven optimal within the time limit.")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _macro(*words: str) -> str:
    return "Runtimes" + "".join(words)


def runtimes_macros(results: pd.DataFrame) -> dict[str, str]:
    """Every number the runtimes section states, as LaTeX macro name → text (``Runtimes...``).

    Per runtime (``Executorch``, ``Tflm``): networks run, networks where optplan's plan is
    smaller, networks at the lower bound, proven optima, whether all outputs were identical,
    the largest saving (share, MiB and network); the networks that could not run and their ops;
    the number of random inputs every comparison used (``RuntimesInputs``).
    """
    table = runtimes_table(results)
    failed = unsupported(results)
    macros: dict[str, str] = {}
    for runtime, title in RUNTIME_NAMES.items():
        rows = table[table["runtime"] == runtime]
        key = runtime.capitalize()
        macros[_macro(key, "Networks")] = str(len(rows))
        macros[_macro(key, "Reduced")] = str(int((rows["saved"] > 0).sum()))
        macros[_macro(key, "AtBound")] = str(int((rows["optplan_bytes"]
                                                   == rows["lower_bound"]).sum()))
        macros[_macro(key, "Proven")] = str(int((rows["status"] == "OPTIMAL").sum()))
        macros[_macro(key, "Identical")] = str(int(rows["outputs_equal"].sum()))
        macros[_macro(key, "Failed")] = str(int((failed["runtime"] == runtime).sum()))
        macros[_macro(key, "FailedOps")] = ", ".join(
            sorted(set(failed.loc[failed["runtime"] == runtime, "op"]))).replace(
                "_", r"\_").replace(":", r":\allowbreak{}") or "--"  # CUSTOM:Name may break
        if len(rows):
            best = rows.iloc[0]
            macros[_macro(key, "BestNetwork")] = _tex(_label(best["network"]))
            macros[_macro(key, "BestSaved")] = f"{100 * best['saved']:.1f}"
            macros[_macro(key, "BestFrom")] = _mib(best["runtime_planner_bytes"])
            macros[_macro(key, "BestTo")] = _mib(best["optplan_bytes"])
    ran = results[results["error"].isna()]
    macros[_macro("Inputs")] = str(int(ran["inputs"].min())) if "inputs" in ran and len(ran) \
        else "--"
    macros[_macro("Total", "Networks")] = str(len(table))
    macros[_macro("Total", "Larger")] = str(int((table["saved"] < 0).sum()))
    return macros


def write(results_dir: str | Path, out_dir: str | Path) -> dict[str, str]:
    """Write ``tables/runtimes.tex``, ``tables/runtimes.md`` and ``runtimes_macros.tex``
    (one ``\\newcommand`` per macro) under ``out_dir``; return the macros."""
    results = load_runtime_results(results_dir)
    out_dir = Path(out_dir)
    (out_dir / "tables").mkdir(parents=True, exist_ok=True)
    (out_dir / "tables" / "runtimes.tex").write_text(render_latex(results))
    (out_dir / "tables" / "runtimes.md").write_text(render_markdown(results))
    macros = runtimes_macros(results)
    text = "% Generated by optplan.analysis.runtimes from paper/results/runtimes — do not edit.\n"
    text += "".join(rf"\newcommand{{\{name}}}{{{value}}}" + "\n"
                    for name, value in sorted(macros.items()))
    (out_dir / "runtimes_macros.tex").write_text(text)
    return macros


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m optplan.analysis.runtimes",
                                     description="Render the runtimes table and macros.")
    parser.add_argument("results", type=Path, help="directory holding runtimes.jsonl")
    parser.add_argument("--out", type=Path, default=Path("paper/generated"))
    args = parser.parse_args(argv)
    write(args.results, args.out)
    print(render_markdown(load_runtime_results(args.results)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
