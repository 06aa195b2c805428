"""Analysis of run directories: result tables (Markdown, LaTeX) and paper figures."""

from optplan.analysis.load import load_results, optimum_table
from optplan.analysis.tables import strategy_table

__all__ = ["load_results", "optimum_table", "strategy_table"]
