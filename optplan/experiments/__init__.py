"""Reproducible experiment pipelines: TOML config → grid of jobs → backend → run directory.

See :mod:`~optplan.experiments.config` for the config keys, :mod:`~optplan.experiments.store`
for the run directory, and :func:`~optplan.experiments.runner.run_experiment` for the loop.
The names below are imported on first use: the runner and the store need pandas, which a
command that only parses its arguments should not pay for.
"""

from optplan._lazy import lazy_exports

_EXPORTS = {"ExperimentConfig": "config", "load_config": "config", "Job": "grid",
            "Plan": "grid", "expand": "grid", "RunOutcome": "runner",
            "run_experiment": "runner", "format_summary": "runner", "merge_runs": "store"}

__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
