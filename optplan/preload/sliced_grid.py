r"""The sub-step grid of the exact models with layer slicing (``slicing=True``): every layer
option on one time axis, the candidate tensors of every option, and the way between a plan and
the grid.

The options of layer ``l`` are those of :func:`~optplan.preload.slicing.slicing_options` (its
kernels × unsliced and the weight and input slice counts of the menu it admits); option ``o``
runs as ``k_o`` sub-layers (:func:`~optplan.preload.slicing.sliced_layer`). The grid gives
layer ``l`` the ``G_l = max_o k_o`` sub-steps ``s_l .. s_l + G_l - 1``: under option ``o``
sub-layer ``j`` runs at ``s_l + j``, and the sub-steps ``j >= k_o`` compute for 0 µs and hold
none of the layer's own tensors. An activation of the instance lives on the grid from
``s_first`` to ``s_last + G_last - 1``; a *candidate* is one of an option's own tensors
(weights, scratch, the scratch kept over a weight-sliced layer's sub-layers) on its grid
steps, present exactly when its option is chosen.

*Grid and sliced instance.* Under the chosen options (``k_l`` sub-layers each), grid step
``s_l + j`` is step ``π(s_l + j) = Σ_{m<l} k_m + min(j, k_l)`` of the sliced instance
(:func:`~optplan.preload.slicing.apply_slicing`): the used sub-steps one to one, an unused one
onto the next layer's first step. A plan on the grid (preload steps ``p``, offsets) is the
plan with preload steps ``π(p)`` and the same offsets on the sliced instance: at every step of
the sliced instance the same tensors are resident as at the grid step that runs it, the
loader's order ``(step, id)`` is the same and so are the times (an unused sub-step adds
nothing). Conversely a plan of a sliced instance is a grid plan (a preload step ``c`` at the
grid step that runs ``c``) whose unused sub-steps hold a subset of what the layer's last
sub-layer holds. So a model over the grid optimises over every slicing of the menu and every
plan, exactly. The preload ``window`` counts steps of the sliced instance: ``π`` is linear in
the option choices (``k_m = Σ_o k_o u_{m,o}``, ``min(j, k_l) = Σ_o min(j, k_o) u_{l,o}``).

With a budget ``M`` an option whose :func:`~optplan.preload.slicing.layer_peak` exceeds ``M``
is left out (what must live at one of its sub-layers does not fit), and a weight cannot be
resident at a grid step of another layer where it does not fit beside what must live there
under every option of that layer (:attr:`SlicingGrid.must_live`): the preload steps that
remain start after the last such step, and a weight is pinned only when it fits at every step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from optplan.errors import InputError
from optplan.exact.budget import Budget
from optplan.exact.run import ExactRun
from optplan.preload.bounds import latency_lower_bound
from optplan.preload.exact_cpsat import BudgetOutcome
from optplan.preload.flexnn import pin_all, plan_from_decisions
from optplan.preload.flexnn_sliced import flexnn_sliced
from optplan.preload.formulation import pinned_on_top, trivial_outcome
from optplan.preload.model import LayerSlicing, PreloadInstance, PreloadPlan, PreloadTensor
from optplan.preload.simulate import plan_decisions, plan_peak, schedule
from optplan.preload.sliced_search import minimum_budget_sliced
from optplan.preload.slicing import (SLICE_MENU, SlicedLayer, apply_slicing, is_identity,
                                     layer_peak, resident_activations, sliced_layer,
                                     sliced_budget_lower_bound, slicing_options)
from optplan.result import SolverOutcome, Status

__all__ = ["Candidate", "SlicingGrid", "slicing_grid", "GridSolution", "WARM_START",
           "warm_start_of", "check_menu", "start_sliced", "BudgetStart", "start_sliced_budget"]

WARM_START = ("flexnn_sliced", "flexnn", "no_preload")
"""The heuristics an exact method with ``slicing=True`` starts from by default: FlexNN with
its slicing first (from the method's menu), then the problem's own warm start (plans without
slicing are plans too)."""


def start_sliced(run: ExactRun, menu, warm_start, initial_solution,
                 check_range) -> SolverOutcome | None:
    """The start every exact method with slicing shares: the menu checked, the outcomes that
    need no search (:func:`~optplan.preload.formulation.trivial_outcome` with the sliced
    must-live bound), ``check_range(instance, budget)``, the latency bound, the warm start
    (:func:`warm_start_of`). Returns the outcome when the warm start meets the bound."""
    check_menu(menu)
    run.info |= {"objective": "latency", "slicing": True}
    done = trivial_outcome(run, menu=menu)
    if done is not None:
        return done
    check_range(run.instance, run.instance.budget)
    run.raise_bound(latency_lower_bound(run.instance))
    run.start(warm_start_of(warm_start, menu), initial_solution)
    if run.meets_bound():
        return run.finished("a plan meets the latency lower bound")
    return None


@dataclass(frozen=True)
class BudgetStart:
    """The start of a minimum budget with slicing: the instance without a budget, the
    outcome's ``info``, the bracket ``[lower, upper]``, the plan at ``upper`` and the call's
    budget (its clock started before the bracket was computed)."""

    instance: PreloadInstance
    info: dict
    lower: int
    upper: int
    plan: PreloadPlan
    budget: Budget


def start_sliced_budget(instance: PreloadInstance, menu, latency_target: int | None, *,
                        time_limit, workers, seed, default_workers: int,
                        check_range) -> BudgetStart | BudgetOutcome:
    """The start every minimum budget with slicing shares: the menu checked, a target below
    the latency bound (``INFEASIBLE``), the bracket: below
    :func:`~optplan.preload.slicing.sliced_budget_lower_bound`, above the packing of
    :func:`~optplan.preload.sliced_search.minimum_budget_sliced` (no target) or every weight
    pinned, unsliced (any reachable target); ``check_range(instance, upper)``."""
    budget = Budget(time_limit)
    check_menu(menu)
    workers = default_workers if workers is None else workers
    info = {"time_limit": time_limit, "workers": workers, "seed": 0 if seed is None else seed,
            "objective": "budget", "latency_target": latency_target, "slicing": True}
    instance = instance.with_budget(None)
    if latency_target is not None and latency_target < latency_lower_bound(instance):
        info["proof"] = "target below the latency lower bound"
        return BudgetOutcome(Status.INFEASIBLE, None, None, None, info)
    plan = pin_all(instance) if latency_target is not None else \
        minimum_budget_sliced(instance, menu).plan
    upper = plan_peak(instance, plan)
    check_range(instance, upper)
    return BudgetStart(instance, info, sliced_budget_lower_bound(instance, menu), upper, plan,
                       budget)


def warm_start_of(warm_start, menu=SLICE_MENU):
    """The ``warm_start`` argument with ``True`` meaning :data:`WARM_START`, ``flexnn_sliced``
    choosing from ``menu``."""
    if warm_start is not True:
        return warm_start
    if tuple(menu) == SLICE_MENU:
        return list(WARM_START)

    def flexnn_sliced_menu(instance):
        return flexnn_sliced(instance, menu=menu)

    flexnn_sliced_menu.__name__ = "flexnn_sliced"
    return [flexnn_sliced_menu] + list(WARM_START[1:])


@dataclass(frozen=True)
class Candidate:
    """A tensor of option ``option`` of layer ``layer`` (indices into
    :attr:`SlicingGrid.options`), its steps on the grid (a weight: ``first_op = last_op`` =
    the grid step of its sub-layer)."""

    layer: int
    option: int
    tensor: PreloadTensor


@dataclass(frozen=True)
class GridSolution:
    """A model's answer on the grid: the option per layer, every present candidate weight's
    grid preload step (``None``: pinned), offsets of the activations (in
    :attr:`SlicingGrid.activations` order) and of the present candidates."""

    chosen: tuple[int, ...]
    preload: dict[int, int | None]
    activation_offsets: tuple[int, ...]
    offsets: dict[int, int]


@dataclass(frozen=True)
class SlicingGrid:
    """The grid of ``instance`` (see the module docstring) over the slice counts of ``menu``;
    ``budget`` the budget it was made for (``None``: every option kept)."""

    instance: PreloadInstance
    budget: int | None
    menu: tuple[int, ...]
    options: tuple[tuple[LayerSlicing, ...], ...]
    pieces: tuple[tuple[SlicedLayer, ...], ...]
    first_step: tuple[int, ...]
    activations: tuple[PreloadTensor, ...]
    candidates: tuple[Candidate, ...]

    @property
    def num_layers(self) -> int:
        return self.instance.num_layers

    @cached_property
    def steps(self) -> int:
        """The number of grid steps."""
        return self.first_step[-1] + self.width(self.num_layers - 1)

    def width(self, layer: int) -> int:
        """``G_l``: the most sub-layers an option of ``layer`` has."""
        return max(len(piece.layers) for piece in self.pieces[layer])

    def slices(self, layer: int, option: int) -> int:
        """``k_o``: the sub-layers of ``option`` of ``layer``."""
        return len(self.pieces[layer][option].layers)

    @cached_property
    def layer_of_step(self) -> tuple[tuple[int, int], ...]:
        """``(layer, j)`` of every grid step."""
        return tuple((layer, j) for layer in range(self.num_layers)
                     for j in range(self.width(layer)))

    def compute(self, step: int) -> dict[int, int]:
        """Option -> compute time (µs) at grid ``step``, for the options that run a sub-layer
        there (the others compute 0 µs)."""
        layer, j = self.layer_of_step[step]
        return {option: piece.layers[j].compute_us
                for option, piece in enumerate(self.pieces[layer]) if j < len(piece.layers)}

    @cached_property
    def weights(self) -> tuple[int, ...]:
        """Candidate weights in the loader's order ``(grid step, id)``."""
        found = [i for i, c in enumerate(self.candidates) if c.tensor.is_weight]
        return tuple(sorted(found, key=lambda i: (self.candidates[i].tensor.layer,
                                                  self.candidates[i].tensor.id)))

    @cached_property
    def must_live(self) -> tuple[int, ...]:
        """Per grid step, bytes resident there under every option of its layer: the
        activations plus the least of the options' own tensors at that sub-step."""
        breadth = [0] * self.steps
        for tensor in self.activations:
            for step in range(tensor.first_op, tensor.last_op + 1):
                breadth[step] += tensor.size
        own = [dict() for _ in range(self.steps)]
        for candidate in self.candidates:
            tensor = candidate.tensor
            for step in range(tensor.first_op, tensor.last_op + 1):
                key = candidate.option
                own[step][key] = own[step].get(key, 0) + tensor.size
        for step in range(self.steps):
            layer, j = self.layer_of_step[step]
            options = range(len(self.options[layer]))
            breadth[step] += min(own[step].get(option, 0) for option in options)
        return tuple(breadth)

    def earliest_preload(self, index: int) -> int:
        """The first grid step weight candidate ``index`` can be resident from (it fits at
        every later step of the other layers), before any window."""
        candidate = self.candidates[index]
        own_first = self.first_step[candidate.layer]
        earliest = 0
        if self.budget is not None:
            size = candidate.tensor.size
            for step in range(own_first):
                if self.must_live[step] + size > self.budget:
                    earliest = step + 1
        return earliest

    def can_pin(self, index: int) -> bool:
        """Whether weight candidate ``index`` fits beside what must live at every grid step
        outside its own layer."""
        if self.budget is None:
            return True
        candidate = self.candidates[index]
        size = candidate.tensor.size
        own = range(self.first_step[candidate.layer],
                    self.first_step[candidate.layer] + self.width(candidate.layer))
        return all(self.must_live[step] + size <= self.budget
                   for step in range(self.steps) if step not in own)

    # --- between the grid and sliced instances -------------------------------------------

    def slicing_of(self, chosen) -> tuple[LayerSlicing, ...]:
        """The decisions that change their layer, for option ``chosen[l]`` of every layer."""
        return tuple(self.options[layer][option] for layer, option in enumerate(chosen)
                     if not is_identity(self.instance, self.options[layer][option]))

    def sliced_step(self, chosen, step: int) -> int:
        """``π(step)``: the step of the sliced instance that grid ``step`` maps to."""
        layer, j = self.layer_of_step[step]
        before = sum(self.slices(m, chosen[m]) for m in range(layer))
        return before + min(j, self.slices(layer, chosen[layer]))

    def sliced(self, solution: GridSolution) -> tuple[PreloadInstance, dict[int, int | None]]:
        """The sliced instance of ``solution``'s options and its weights' decisions there
        (index -> preload step ``π(p)``, ``None``: pinned)."""
        chosen = solution.chosen
        sliced = apply_slicing(self.instance, self.slicing_of(chosen))
        decisions = {}
        for position, step in solution.preload.items():
            index = sliced.index_of[self.candidates[position].tensor.id]
            decisions[index] = None if step is None else self.sliced_step(chosen, step)
        return sliced, decisions

    def plan(self, solution: GridSolution) -> PreloadPlan:
        """The plan of ``solution`` on the sliced instance, with its slicing."""
        sliced, decisions = self.sliced(solution)
        index_of = sliced.index_of
        offsets = {index_of[t.id]: offset
                   for t, offset in zip(self.activations, solution.activation_offsets)}
        for position, offset in solution.offsets.items():
            offsets[index_of[self.candidates[position].tensor.id]] = offset
        return replace(plan_from_decisions(sliced, offsets, decisions),
                       slicing=self.slicing_of(solution.chosen))

    def solution_of(self, plan: PreloadPlan) -> GridSolution | None:
        """``plan`` (of :attr:`instance`, with its slicing) on the grid, its pinned weights
        stacked on top; ``None`` when it uses an option the grid left out."""
        chosen = [0] * self.num_layers
        given = {choice.layer: choice for choice in plan.slicing}
        for layer in range(self.num_layers):
            choice = given.get(layer, LayerSlicing(layer))
            matches = [o for o, option in enumerate(self.options[layer])
                       if _same(self.instance, option, choice)]
            if not matches:
                return None
            chosen[layer] = matches[0]
        sliced = apply_slicing(self.instance, plan.slicing)
        plan = pinned_on_top(sliced, replace(plan, slicing=()))
        decisions = plan_decisions(sliced, plan)
        grid_step = self._grid_steps(chosen)
        preload, offsets = {}, {}
        for position, candidate in enumerate(self.candidates):
            if chosen[candidate.layer] != candidate.option:
                continue
            index = sliced.index_of[candidate.tensor.id]
            offsets[position] = plan.by_id[candidate.tensor.id].offset
            if candidate.tensor.is_weight:
                step = decisions[index]
                preload[position] = None if step is None else grid_step[step]
        activation_offsets = tuple(plan.by_id[t.id].offset for t in self.activations)
        return GridSolution(tuple(chosen), self.chained(preload), activation_offsets, offsets)

    def chained(self, preload: dict[int, int | None]) -> dict[int, int | None]:
        """The preload steps raised to be non-decreasing along the load order: a weight
        preloaded before its predecessor's step waits for the loader anyway (its load
        cannot start before the predecessor's), so the raise keeps every time and shortens
        residences."""
        chained, running = dict(preload), 0
        for index in self.weights:
            step = chained.get(index)
            if step is not None:
                running = max(running, step)
                chained[index] = running
        return chained

    def timing(self, solution: GridSolution) -> tuple[list[int], dict[int, tuple[int, int]]]:
        """The simulator's times of ``solution`` on the grid: ``E_s`` of every grid step (an
        unused sub-step ends with the step before it) and ``(LS, LE)`` of every loaded weight
        candidate."""
        chosen = solution.chosen
        sliced, decisions = self.sliced(solution)
        times = schedule(sliced, decisions)
        ends, sliced_step = [], 0
        for layer in range(self.num_layers):
            for j in range(self.width(layer)):
                if j < self.slices(layer, chosen[layer]):
                    ends.append(times.layer_end[sliced_step])
                    sliced_step += 1
                else:
                    ends.append(ends[-1])
        loads = {position: times.loads[sliced.index_of[self.candidates[position].tensor.id]]
                 for position, step in solution.preload.items() if step is not None}
        return ends, loads

    def _grid_steps(self, chosen) -> list[int]:
        """The grid step that runs each step of the sliced instance."""
        return [self.first_step[layer] + j for layer in range(self.num_layers)
                for j in range(self.slices(layer, chosen[layer]))]


def _same(instance: PreloadInstance, option: LayerSlicing, choice: LayerSlicing) -> bool:
    if is_identity(instance, option) and is_identity(instance, choice):
        return True
    op = instance.layers[option.layer].op
    own = op.kernel if op is not None else None
    return ((option.kind, option.slices, option.kernel or own)
            == (choice.kind, choice.slices, choice.kernel or own))


def check_menu(menu) -> None:
    """An InputError naming ``menu`` unless it is a non-empty list of positive integers."""
    if isinstance(menu, (str, bytes)) or not hasattr(menu, "__iter__") or not list(menu) or \
            any(isinstance(count, bool) or not isinstance(count, int) or count < 1
                for count in menu):
        raise InputError(f"a slice menu is a list of positive integers, got {menu!r}",
                         field="menu")


def slicing_grid(instance: PreloadInstance, menu=SLICE_MENU,
                 budget: int | None = None) -> SlicingGrid:
    """The grid of ``instance`` over the options of ``menu``; with a ``budget``, without the
    options that cannot fit it (the caller checks
    :func:`~optplan.preload.slicing.sliced_budget_lower_bound` first: then every layer keeps
    one)."""
    check_menu(menu)
    activations_breadth = resident_activations(instance)
    options, pieces = [], []
    for layer in range(instance.num_layers):
        kept = [o for o in slicing_options(instance, layer, menu)
                if budget is None or layer_peak(instance, o, activations_breadth) <= budget]
        if not kept:
            raise ValueError(f"layer {layer} has no option within budget {budget}")
        options.append(tuple(kept))
        pieces.append(tuple(sliced_layer(instance, o) for o in kept))
    first_step, step = [], 0
    for layer in range(instance.num_layers):
        first_step.append(step)
        step += max(len(piece.layers) for piece in pieces[layer])
    last_step = [first_step[l] + max(len(p.layers) for p in pieces[l]) - 1
                 for l in range(instance.num_layers)]
    activations = tuple(replace(t, first_op=first_step[t.first_op],
                                last_op=last_step[t.last_op])
                        for t in instance.tensors if t.kind == "activation")
    candidates = tuple(
        Candidate(layer, option, replace(t, first_op=first_step[layer] + t.first_op,
                                         last_op=first_step[layer] + t.last_op))
        for layer in range(instance.num_layers)
        for option, piece in enumerate(pieces[layer]) for t in piece.tensors)
    return SlicingGrid(instance, budget, tuple(menu), tuple(options), tuple(pieces), tuple(first_step),
                       activations, candidates)
