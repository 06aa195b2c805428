"""``optplan report RUN_DIR... [--out DIR] [--html]``: tables and figures of finished runs, or
one interactive page."""

from __future__ import annotations

from pathlib import Path

from optplan.formats.paths import check_output_folder


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write the tables (Markdown, LaTeX) and figures (PDF, PNG) of runs, "
                       "or (--html) one interactive page",
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
    parser.add_argument("--html", action="store_true",
                        help="write one self-contained interactive page instead, OUT/report.html: "
                             "the tables and a layout explorer (any method next to the proven "
                             "optimum, hover for tensor, size, lifetime, offset); no server "
                             "or network needed (plotly, the html extra)")
    parser.set_defaults(run=run)


def run(args) -> int:
    out = Path(args.out) if args.out else Path(args.runs[0]) / "report"
    check_output_folder(out, "--out")
    if args.html:
        from optplan.analysis.html import write_html_report

        print(write_html_report(args.runs, out / "report.html"))
        return 0
    from optplan.analysis.report import make_report

    written = make_report(args.runs, out, layout_instance=args.layout_instance,
                          layout_method=args.layout_method)
    for path in written:
        print(path)
    if not written:
        print(f"nothing to report in {', '.join(args.runs)}")
    return 0
