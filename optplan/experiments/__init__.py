"""Reproducible experiment pipelines: TOML config → grid of jobs → backend → run directory.

See :mod:`~optplan.experiments.config` for the config keys, :mod:`~optplan.experiments.store`
for the run directory, and :func:`~optplan.experiments.runner.run_experiment` for the loop.
"""

from optplan.experiments.config import ExperimentConfig, load_config
from optplan.experiments.grid import Job, Plan, expand
from optplan.experiments.runner import RunOutcome, format_summary, run_experiment
from optplan.experiments.store import merge_runs

__all__ = ["ExperimentConfig", "load_config", "Job", "Plan", "expand", "RunOutcome",
           "run_experiment", "format_summary", "merge_runs"]
