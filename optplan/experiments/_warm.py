"""Imported once by the local backend's fork server, so that every job process it forks
starts with the solver libraries imported and every built-in method registered."""

import os

import optplan.experiments.job  # noqa: F401  (solve, formats, the grid)
from optplan.experiments.backends import SAFE_PATH_MARK
from optplan.registry import methods

if os.environ.get("PYTHONSAFEPATH") == SAFE_PATH_MARK:  # set only to start this process
    del os.environ["PYTHONSAFEPATH"]
methods()

try:  # the peers' package imports matplotlib (1-2 s): once here, not in every peer job's time
    import omnimalloc  # noqa: F401
except ImportError:
    pass
