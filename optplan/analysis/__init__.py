"""Analysis of run directories: result tables (Markdown, LaTeX), paper figures and the
interactive HTML report. The names below are imported on first use (pandas, matplotlib)."""

from optplan._lazy import lazy_exports

_EXPORTS = {"load_results": "load", "optimum_table": "load", "strategy_table": "tables"}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
