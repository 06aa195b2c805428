"""The exact preload methods as registered: ``cpsat`` and ``milp_highs``, each with and
without layer slicing.

``slicing=False`` (the default) solves the instance as it is: :mod:`optplan.preload.exact_cpsat`,
:mod:`optplan.preload.exact_milp`. ``slicing=True`` (CLI ``--slicing``, TOML ``slicing = true``
in a method's params) chooses every layer's slicing (kernel, kind, count from
:data:`~optplan.preload.slicing.SLICE_MENU`) jointly with the preload decisions and offsets:
:mod:`optplan.preload.sliced_cpsat`, :mod:`optplan.preload.sliced_milp`. Both take the keyword
contract of every exact method.
"""

from __future__ import annotations

from optplan.preload.exact_cpsat import cpsat_preload
from optplan.preload.exact_milp import milp_preload
from optplan.preload.model import PreloadInstance, PreloadPlan
from optplan.preload.sliced_cpsat import cpsat_sliced
from optplan.preload.sliced_milp import milp_sliced
from optplan.preload.slicing import SLICE_MENU
from optplan.registry import register
from optplan.result import SolverOutcome

__all__ = ["cpsat", "milp_highs"]


@register("cpsat", "preload", kind="exact", input="records",
          reference="FlexNN (Li et al., MobiCom'24) preload-aware planning; NoOverlap2D with "
                    "variable-start weight intervals, OR-Tools CP-SAT; slicing=True: layer "
                    "slicing (§3.2) chosen jointly")
def cpsat(instance: PreloadInstance, *, time_limit: float | None = None,
          workers: int | None = None, seed: int | None = None, warm_start=True,
          initial_solution: PreloadPlan | None = None, slicing: bool = False,
          menu=SLICE_MENU, capacity_rows: bool = False, loader_rows: bool = False,
          relaxation: bool = True, **solver_params) -> SolverOutcome:
    """Exact minimum latency at the instance's budget (:func:`~optplan.preload.exact_cpsat.
    cpsat_preload`); with ``slicing``, over every layer slicing too
    (:func:`~optplan.preload.sliced_cpsat.cpsat_sliced`, slice counts from ``menu``;
    ``capacity_rows`` and ``loader_rows`` apply without slicing only)."""
    common = {"time_limit": time_limit, "workers": workers, "seed": seed,
              "warm_start": warm_start, "initial_solution": initial_solution,
              "relaxation": relaxation}
    if slicing:
        return cpsat_sliced(instance, **common, menu=menu, **solver_params)
    return cpsat_preload(instance, **common, capacity_rows=capacity_rows,
                         loader_rows=loader_rows, **solver_params)


@register("milp_highs", "preload", kind="exact", input="records",
          reference="FlexNN (Li et al., MobiCom'24) preload-aware planning; big-M "
                    "disjunctions, HiGHS via PuLP; slicing=True: layer slicing (§3.2) chosen "
                    "jointly")
def milp_highs(instance: PreloadInstance, *, time_limit: float | None = None,
               workers: int | None = None, seed: int | None = None, warm_start=True,
               initial_solution: PreloadPlan | None = None, slicing: bool = False,
               menu=SLICE_MENU, **solver_params) -> SolverOutcome:
    """Exact minimum latency at the instance's budget with HiGHS
    (:func:`~optplan.preload.exact_milp.milp_preload`); with ``slicing``, over every layer
    slicing too (:func:`~optplan.preload.sliced_milp.milp_sliced`, slice counts from
    ``menu``)."""
    common = {"time_limit": time_limit, "workers": workers, "seed": seed,
              "warm_start": warm_start, "initial_solution": initial_solution}
    if slicing:
        return milp_sliced(instance, **common, menu=menu, **solver_params)
    return milp_preload(instance, **common, **solver_params)
