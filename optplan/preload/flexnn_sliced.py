"""FlexNN with bottleneck-aware layer slicing (method ``flexnn_sliced``): slice, then plan.

FlexNN (Li et al., MobiCom'24, §3.2 "bottleneck-aware layer slicing" and §3.3) at the budget
``M``, on an instance whose layers carry their operator facts (layers without them are never
sliced; see :mod:`optplan.preload.slicing` for what slicing does to a layer):

1. Every layer's options: its kernels × unsliced and the weight and input slice counts of the
   menu it admits. When some layer needs more than ``M`` at one of its sub-layers under every
   option (:func:`~optplan.preload.slicing.layer_peak`: the activations live at the layer
   plus its sub-layer's weights and scratch), no slicing fits: ``INFEASIBLE``, with that layer
   as the reason.
2. Kernel selection: the latency-saving (fastest) kernel first; its footprint after slicing
   (step 3) decides, and when it cannot fit FlexNN switches to the next kernel by speed (the
   memory-efficient one).
3. Slicing, per layer and kernel: a layer whose footprint fits what the budget leaves (``M``
   minus the activations live at the layer) stays whole. Otherwise its bottleneck decides:
   weights at least as large as its intermediates (the kernel's scratch) → weight slicing with
   the *fewest* slices that fit (each costs a dispatch); else input slicing with the *most*
   slices the layer admits (within the platform threshold).
   *Open in the seed, our choice:* when the bottleneck's slicing cannot fit (or the kernel does
   not admit it, e.g. a Winograd layer is never input-sliced), the other kind is tried the
   same way before the kernel is switched.
4. FlexNN's preload-aware planner (:func:`~optplan.preload.flexnn.flexnn`, pinning included)
   on the sliced instance.
5. *Open in the seed* ("re-slice and re-plan" after an allocation failure), *our choice:* when
   the planner finds no placement, the layer with the largest single weight or scratch buffer
   among those that can be sliced finer is refined one step (a weight-sliced layer to its next
   admissible count; a whole one to its bottleneck's slicing as in step 3; input slicing is
   already maximal) and the planner runs again (without pinning until one places everything).
   ``INFEASIBLE`` when nothing can be refined, or at once when the planner cannot place the
   instance's activations alone (slicing splits weights and scratch, not activations).

The plan carries the slicing decisions of the layers that changed, so it is a plan for the
instance itself (its entries name the sliced instance's tensors) and the validator checks it
there. Deterministic.
"""

from __future__ import annotations

from dataclasses import replace

from optplan.preload.flexnn import FLEXNN_REFERENCE, flexnn
from optplan.preload.model import LayerSlicing, PreloadInstance, PreloadPlan
from optplan.preload.slicing import (SLICE_MENU, apply_slicing, is_identity, layer_peak,
                                     resident_activations, sliced_layer, slicing_options)
from optplan.registry import register
from optplan.result import SolverOutcome, Status

__all__ = ["flexnn_sliced", "flexnn_slicing", "bottleneck"]


def bottleneck(instance: PreloadInstance, choice: LayerSlicing) -> str:
    """``"weight"`` when the layer's weights under ``choice``'s kernel are at least as large as
    its intermediates (scratch), else ``"input"`` (FlexNN's bottleneck classification)."""
    unsliced = sliced_layer(instance, LayerSlicing(choice.layer, kernel=choice.kernel))
    weights = sum(t.size for t in unsliced.tensors if t.is_weight)
    scratch = sum(t.size for t in unsliced.tensors if t.kind == "scratch")
    return "weight" if weights >= scratch else "input"


def _kernel(instance: PreloadInstance, choice: LayerSlicing) -> str | None:
    op = instance.layers[choice.layer].op
    return choice.kernel or (op.kernel if op is not None else None)


def _slicing_for_kernel(instance, options, budget, peak) -> LayerSlicing | None:
    """Step 3 for the options of one kernel (the first is the unsliced one)."""
    whole = options[0]
    if peak(whole) <= budget:
        return whole
    primary = bottleneck(instance, whole)
    for kind in (primary, "input" if primary == "weight" else "weight"):
        sliced = [o for o in options if o.kind == kind]
        if not sliced:
            continue
        if kind == "weight":
            fitting = [o for o in sliced if peak(o) <= budget]
            if fitting:
                return fitting[0]             # options ascend in slices: the fewest
        elif peak(sliced[-1]) <= budget:
            return sliced[-1]                 # the most
    return None


def flexnn_slicing(instance: PreloadInstance, budget: int,
                   menu=SLICE_MENU) -> dict[int, LayerSlicing] | str:
    """Steps 1-3 of the module docstring: one option per layer (identities included), or the
    reason why no slicing fits ``budget``."""
    activations = resident_activations(instance)
    choices: dict[int, LayerSlicing] = {}
    for layer in range(instance.num_layers):
        options = slicing_options(instance, layer, menu)
        peaks = {option: layer_peak(instance, option, activations) for option in options}
        smallest = min(peaks.values())
        if smallest > budget:
            return (f"budget {budget} is below what any slicing allows: layer {layer} "
                    f"({instance.layers[layer].name}) needs at least {smallest} bytes")
        by_kernel: dict[str | None, list[LayerSlicing]] = {}
        for option in options:                # kernels in order of speed, each whole first
            by_kernel.setdefault(_kernel(instance, option), []).append(option)
        for kernel_options in by_kernel.values():
            choice = _slicing_for_kernel(instance, kernel_options, budget, peaks.__getitem__)
            if choice is not None:
                choices[layer] = choice
                break
    return choices


def _finer(instance, choice: LayerSlicing, menu) -> LayerSlicing | None:
    """Step 5: the next finer slicing of ``choice``'s layer with the same kernel."""
    if choice.kind == "input":
        return None
    kernel = _kernel(instance, choice)
    options = [o for o in slicing_options(instance, choice.layer, menu)
               if _kernel(instance, o) == kernel and o.slices > choice.slices]
    if choice.kind == "weight":
        return next((o for o in options if o.kind == "weight"), None)
    primary = bottleneck(instance, choice)
    for kind in (primary, "input" if primary == "weight" else "weight"):
        sliced = [o for o in options if o.kind == kind]
        if sliced:
            return sliced[0] if kind == "weight" else sliced[-1]
    return None


def _largest_buffer(instance, choice: LayerSlicing) -> int:
    return max((t.size for t in sliced_layer(instance, choice).tensors), default=0)


def _infeasible(reason: str) -> SolverOutcome:
    return SolverOutcome(Status.INFEASIBLE, None, None, "flexnn_sliced", info={"reason": reason})


@register("flexnn_sliced", "preload", kind="heuristic", input="records",
          reference=f"{FLEXNN_REFERENCE}, with bottleneck-aware layer slicing (§3.2)")
def flexnn_sliced(instance: PreloadInstance, *, pinning: bool = True,
                  menu=SLICE_MENU) -> PreloadPlan | SolverOutcome:
    """FlexNN's slice-then-plan at ``instance.budget`` (see the module docstring).

    Parameters
    ----------
    instance : PreloadInstance
        With ``budget`` (``None``: unlimited memory, nothing is sliced) and, for the layers to
        slice, operator facts (``kernels=True`` in the cost model).
    pinning : bool
        FlexNN's pinning of weights whose loading dominates (default); ``False`` never pins.
    menu : tuple of int
        The slice counts to choose from (default :data:`~optplan.preload.slicing.SLICE_MENU`).

    Returns
    -------
    PreloadPlan or SolverOutcome
        A plan with its ``slicing``, or an ``INFEASIBLE`` outcome whose ``info["reason"]`` says
        why.
    """
    if instance.budget is None:
        return flexnn(instance, pinning=pinning)
    budget = instance.budget
    choices = flexnn_slicing(instance, budget, menu)
    if isinstance(choices, str):
        return _infeasible(choices)
    activations_only = replace(instance, tensors=tuple(t for t in instance.tensors
                                                       if t.kind == "activation"))
    if flexnn(activations_only, pinning=False) is None:
        return _infeasible(f"FlexNN's planner cannot place the activations within budget "
                           f"{budget}; slicing does not change them")
    while True:
        sliced = apply_slicing(instance, choices.values())
        plan = flexnn(sliced, pinning=False)
        if plan is not None:
            if pinning:
                plan = flexnn(sliced)
            decisions = tuple(c for c in choices.values() if not is_identity(instance, c))
            return replace(plan, slicing=decisions)
        refinements = {}
        for layer, choice in choices.items():
            finer = _finer(instance, choice, menu)
            if finer is not None:
                refinements[layer] = finer
        if not refinements:
            return _infeasible(f"FlexNN's planner finds no placement within budget {budget}, "
                               "with every layer sliced as finely as its bottleneck allows")
        layer = max(refinements, key=lambda l: (_largest_buffer(instance, choices[l]), -l))
        choices[layer] = refinements[layer]
