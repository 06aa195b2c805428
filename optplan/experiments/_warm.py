"""Imported once by the local backend's fork server, so that every job process it forks
starts with the solver libraries imported and every built-in method registered."""

import optplan.experiments.job  # noqa: F401  (solve, formats, the grid)
from optplan.registry import methods

methods()

try:  # the peers' package imports matplotlib (1-2 s): once here, not in every peer job's time
    import omnimalloc  # noqa: F401
except ImportError:
    pass
