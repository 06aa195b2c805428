"""Registers the exact preload-aware methods (``cpsat``, ``milp_highs``, ``brute_force``) and
the preload ``lower_bound`` of :mod:`optplan.preload`; modules here are auto-imported."""

import optplan.preload.brute_force  # noqa: F401
import optplan.preload.exact_cpsat  # noqa: F401
import optplan.preload.exact_milp  # noqa: F401
