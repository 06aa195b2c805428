"""``optplan report RUN_DIR... [--out DIR]``: tables and figures of finished runs."""

from __future__ import annotations

from pathlib import Path

from optplan.analysis.report import make_report
from optplan.formats.paths import check_output_folder


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write the tables (Markdown, LaTeX) and figures (PDF, PNG) of runs",
        description="Read run directories and write Table 1 (shared objects) and Table 2 "
                    "(offsets) with the proven optimum and every heuristic's gap, gap "
                    "distributions, solve time vs size, anytime curves, a memory layout of a "
                    "heuristic next to the optimum, and preload latency/budget curves.")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", metavar="DIR", help="output folder (default: RUN_DIR/report)")
    parser.add_argument("--layout-instance", metavar="NAME",
                        help="instance for the layout figure (default: the largest gap)")
    parser.add_argument("--layout-method", default="greedy_by_size", metavar="NAME",
                        help="heuristic drawn next to the optimum (default: greedy_by_size)")
    parser.set_defaults(run=run)


def run(args) -> int:
    out = Path(args.out) if args.out else Path(args.runs[0]) / "report"
    check_output_folder(out, "--out")
    written = make_report(args.runs, out, layout_instance=args.layout_instance,
                          layout_method=args.layout_method)
    for path in written:
        print(path)
    if not written:
        print(f"nothing to report in {', '.join(args.runs)}")
    return 0
