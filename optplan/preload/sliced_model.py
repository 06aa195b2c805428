r"""CP-SAT models of preload-aware planning with layer slicing: the joint model, its fluid
relaxation, and the packing of the minimum budget.

Semantics: ``docs/problems.md`` and :mod:`optplan.preload.slicing` (FlexNN, MobiCom'24, §3.2);
the grid, its candidates and why a model over it is exact: :mod:`optplan.preload.sliced_grid`.
The methods that use these models: :mod:`optplan.preload.sliced_cpsat`.

*Scaled time instead of preload steps.* A preload step ``p_w`` links a step index to a time
(``LS_w >= E_{p_w - 1}``): as an element or one literal per step it costs ``O(steps)`` per
weight, hundreds of thousands of literals on the grid of a real network. Instead every grid
step ``s`` gets the span ``[B_{s-1}, B_s)`` of a *scaled* time axis, ``B_s = F E_s + s + 1``
with ``F = S + 1`` (``S`` grid steps; ``B_{-1} = 0``): spans follow each other and are at least
one unit long, also where a step computes for 0 µs. A loaded weight occupies memory from
``X_w = F LS_w + r_w`` (``0 <= r_w <= S``) to the end of its own step; it is *resident at the
steps whose spans its interval meets*, from ``p_w``, the step whose span holds ``X_w``. Then
``LS_w >= E_{p_w - 1}`` holds by itself (``F LS_w + r_w >= F E_{p_w-1} + p_w`` with
``r_w < F``), and every plan is one of these (``r_w = p_w``; a load that starts in a later
step's span only shortens the residence). At the last unit of the span of step ``s`` the
intervals that hold it are exactly the tensors resident at ``s``, and inside the span a subset
of them: memory over scaled time is memory over steps.

The joint model (layer ``l`` with options ``o`` of ``k_o`` sub-layers computing ``c_{o,j}`` at
grid step ``s_l + j``; candidates ``i`` of option ``o(i)`` on grid steps ``[f_i, e_i]``;
weights ``w`` at grid step ``g_w`` with size ``z_w`` and load ``d_w``; activations ``a`` on
``[f_a, e_a]``; sizes in units of their gcd ``u``)::

    u_{l,o} ∈ {0,1}:   Σ_o u_{l,o} = 1                                       (one option)
    b_w, n_w ∈ {0,1}:  b_w + n_w = u_{o(w)}                     (pinned, or loaded, if present)
    C_s = Σ_{o: k_o > j} c_{o,j} u_{l,o}  at s = s_l + j;   E_s >= E_{s-1} + C_s   (E_{-1} = 0)
    B_s = F E_s + s + 1
    loader, in load order (g_w, id):  LS_w >= LE_v (v: the weight before w);
        LE_w >= LS_w + d_w n_w;   E_{g_w} - C_{g_w} >= LE_w;
        X_w = F LS_w + r_w,  0 <= r_w <= S;   X_w >= X_v
    n_w => X_w >= B_{q_w - 1}     (q_w: the first step from which w fits, sliced_grid)
    window (if any): n_w and π(g_w) - π(s) > window => X_w >= B_s       (π: linear in u)
    K = M - Σ_w z_w b_w       (pinned weights are stacked at the top of the budget)
    x-intervals: a on [B_{f_a - 1}, B_{e_a}); i (present iff u_{o(i)}) on [B_{f_i-1}, B_{e_i});
                 w (present iff n_w) on [X_w, B_{g_w})
    y-intervals [o_i, o_i + z_i) present with x,  o_i + z_i <= K;   absent: o_i = 0
    NoOverlap2D(x, y);   Cumulative(x, z, K)                                   (redundant)
    free_s = K - (activations at s) - Σ_{i at s} z_i [u_{o(i)} or n_i] >= 0    (redundant)
    fluid loader rows (F1)-(F3) of build_fluid_relaxation                     (redundant)
    (a) min E_{S-1}  with M = budget            (b) min M  with E_{S-1} <= target
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from optplan.exact.cpsat_solve import cp_model
from optplan.preload.sliced_grid import GridSolution, SlicingGrid

__all__ = ["SlicedCpsatModel", "build_sliced_cpsat", "build_fluid_relaxation",
           "build_sliced_packing", "sliced_horizon", "FLUID_MIN_LOAD_US"]

FLUID_MIN_LOAD_US = 10
"""Weights loading in less than this many µs are left out of the fluid loader's memory (their
bytes per µs suffer from the rounding of load times); their loads still count."""


def sliced_horizon(grid: SlicingGrid) -> int:
    """An upper bound on every time of every grid plan: its slowest compute and loads."""
    compute = sum(max(grid.compute(step).values(), default=0) for step in range(grid.steps))
    loads = sum(max((sum(t.load_us for t in piece.tensors if t.is_weight)
                     for piece in grid.pieces[layer]), default=0)
                for layer in range(grid.num_layers))
    return compute + loads


@dataclass
class SlicedCpsatModel:
    """A built model and its variables (those its kind has; see the builders)."""

    grid: SlicingGrid
    model: object
    unit: int                       # the gcd of the sizes
    scale: int                      # F
    use: list = field(default_factory=list)          # per layer, per option: BoolVar or 1
    pinned: dict = field(default_factory=dict)       # weight candidate -> BoolVar or 0
    loaded: dict = field(default_factory=dict)       # weight candidate -> BoolVar
    layer_end: list = field(default_factory=list)    # E_s
    compute: list = field(default_factory=list)      # C_s
    load_start: dict = field(default_factory=dict)   # LS_w
    load_end: dict = field(default_factory=dict)     # LE_w
    spare: dict = field(default_factory=dict)        # r_w
    memory_start: dict = field(default_factory=dict)  # X_w
    activation_offsets: list = field(default_factory=list)
    offsets: dict = field(default_factory=dict)      # candidate -> IntVar (units)
    work: list = field(default_factory=list)         # W_s (fluid loader)
    queued: list = field(default_factory=list)       # Q_s
    objective: object = None

    def boundary(self, step: int):
        """``B_step`` (``B_{-1} = 0``)."""
        return 0 if step < 0 else self.scale * self.layer_end[step] + step + 1

    def chosen(self, value) -> tuple[int, ...]:
        """The option of every layer in a solution (``value(var)`` reads it: a solver's or
        a solution callback's)."""
        return tuple(next(o for o, var in enumerate(row) if isinstance(var, int) or value(var))
                     for row in self.use)

    def solution(self, solver) -> GridSolution:
        """The grid solution of a joint or packing model's solve, the pinned weights stacked
        on top."""
        grid, chosen = self.grid, self.chosen(solver.value)
        preload = {}
        for index in grid.weights:
            candidate = grid.candidates[index]
            if chosen[candidate.layer] == candidate.option:
                preload[index] = (None if _value(solver, self.pinned[index])
                                  else self._preload_step(solver, index))
        activation_offsets = tuple(self.unit * solver.value(v) for v in self.activation_offsets)
        offsets = {i: self.unit * solver.value(self.offsets[i])
                   for i, c in enumerate(grid.candidates) if chosen[c.layer] == c.option}
        return _pinned_above(grid, GridSolution(chosen, preload, activation_offsets, offsets))

    def _preload_step(self, solver, index: int) -> int:
        """``p_w`` of a loaded weight: the step whose span holds ``X_w`` (its own step in a
        packing model, which has no times)."""
        if index not in self.memory_start:
            return self.grid.candidates[index].tensor.layer
        start = solver.value(self.memory_start[index])
        return next(step for step in range(self.grid.steps)
                    if start < solver.value(self.boundary(step)))


def _value(solver, var) -> int:
    return var if isinstance(var, int) else solver.value(var)


def _pinned_above(grid: SlicingGrid, solution: GridSolution) -> GridSolution:
    """The pinned weights stacked above every other tensor (the model keeps them on top)."""
    offsets = dict(solution.offsets)
    top = max([o + t.size for o, t in zip(solution.activation_offsets, grid.activations)]
              + [offsets[i] + grid.candidates[i].tensor.size for i in offsets
                 if solution.preload.get(i, 0) is not None], default=0)
    for index in sorted((i for i, step in solution.preload.items() if step is None),
                        key=lambda i: grid.candidates[i].tensor.id):
        offsets[index] = top
        top += grid.candidates[index].tensor.size
    return GridSolution(solution.chosen, solution.preload, solution.activation_offsets, offsets)


def _new(grid: SlicingGrid) -> SlicedCpsatModel:
    unit = math.gcd(*(t.size for t in grid.activations),
                    *(c.tensor.size for c in grid.candidates)) or 1
    return SlicedCpsatModel(grid, cp_model().CpModel(), unit, grid.steps + 1)


def _capacity(built: SlicedCpsatModel, budget, budget_range):
    """The budget in units: a constant (``budget``) or a variable over ``budget_range``."""
    if budget_range is None:
        return budget // built.unit, budget // built.unit
    upper = budget_range[1] // built.unit
    return built.model.new_int_var(-(-budget_range[0] // built.unit), upper, "budget"), upper


# --- the joint model ---------------------------------------------------------------------------

def build_sliced_cpsat(grid: SlicingGrid, *, budget: int | None = None,
                       budget_range: tuple[int, int] | None = None,
                       latency_target: int | None = None,
                       hint: GridSolution | None = None) -> SlicedCpsatModel:
    """The joint model of the module docstring: ``budget`` (bytes) for (a); ``budget_range``
    (lower, upper bytes) and ``latency_target`` for (b). ``hint`` becomes a complete solution
    hint."""
    built = _new(grid)
    model = built.model
    top = sliced_horizon(grid)
    capacity, cap_value = _capacity(built, budget, budget_range)
    _options(built)
    _decisions(built, pinning=True)
    _timing(built, top)
    _loader(built, top)
    pinned_units = _memory(built, capacity, cap_value)
    free = _free(built, capacity - pinned_units)
    _fluid_rows(built, free, top)
    latency = built.layer_end[-1]
    if budget_range is None:
        model.minimize(latency)
        built.objective = latency
    else:
        model.add(latency <= (top if latency_target is None else latency_target))
        model.minimize(capacity)
        built.objective = capacity
    if hint is not None:
        _add_hint(built, hint)
    return built


def _options(built: SlicedCpsatModel) -> None:
    """``u_{l,o}``, exactly one per layer (the constant 1 for a layer with one option)."""
    for layer, options in enumerate(built.grid.options):
        if len(options) == 1:
            built.use.append([1])
            continue
        row = [built.model.new_bool_var(f"u_{layer}_{o}") for o in range(len(options))]
        built.model.add_exactly_one(row)
        built.use.append(row)


def _decisions(built: SlicedCpsatModel, *, pinning: bool) -> None:
    """``b_w`` and ``n_w`` of every weight candidate (no ``b_w`` where it cannot fit)."""
    model, grid = built.model, built.grid
    for index in grid.weights:
        candidate = grid.candidates[index]
        present = built.use[candidate.layer][candidate.option]
        can_pin = pinning and grid.can_pin(index)
        built.pinned[index] = model.new_bool_var(f"b_{index}") if can_pin else 0
        built.loaded[index] = model.new_bool_var(f"n_{index}")
        model.add(built.pinned[index] + built.loaded[index] == present)


def _timing(built: SlicedCpsatModel, top: int) -> None:
    """``C_s`` and ``E_s >= E_{s-1} + C_s``."""
    model, grid = built.model, built.grid
    for step in range(grid.steps):
        layer, _ = grid.layer_of_step[step]
        built.compute.append(sum(value * built.use[layer][option]
                                 for option, value in grid.compute(step).items()))
        end = model.new_int_var(0, top, f"E_{step}")
        model.add(end >= (built.layer_end[-1] if built.layer_end else 0) + built.compute[-1])
        built.layer_end.append(end)


def _loader(built: SlicedCpsatModel, top: int) -> None:
    """The loader's recurrences, the memory starts ``X_w``, the window."""
    model, grid, scale = built.model, built.grid, built.scale
    previous = None
    for index in grid.weights:
        tensor = grid.candidates[index].tensor
        own, loaded = tensor.layer, built.loaded[index]
        load_start = model.new_int_var(0, top, f"LS_{index}")
        load_end = model.new_int_var(0, top, f"LE_{index}")
        start = model.new_int_var(0, scale * top + grid.steps, f"X_{index}")
        spare = model.new_int_var(0, grid.steps, f"r_{index}")
        if previous is not None:
            model.add(load_start >= built.load_end[previous])
            model.add(start >= built.memory_start[previous])
        model.add(load_end >= load_start + tensor.load_us * loaded)
        model.add(built.layer_end[own] - built.compute[own] >= load_end)
        model.add(start == scale * load_start + spare)
        earliest = grid.earliest_preload(index)
        if earliest > 0:
            model.add(start >= built.boundary(earliest - 1)).only_enforce_if(loaded)
        built.load_start[index], built.load_end[index] = load_start, load_end
        built.memory_start[index], built.spare[index] = start, spare
        previous = index
    if grid.instance.window is not None:
        for index in grid.weights:
            _window(built, index, grid.instance.window)


def _sliced_step(built: SlicedCpsatModel, step: int):
    """``π(step)`` as a linear expression of the options."""
    grid = built.grid
    layer, j = grid.layer_of_step[step]
    return sum((grid.slices(m, option) if m < layer else min(j, grid.slices(m, option))) * var
               for m in range(layer + 1) for option, var in enumerate(built.use[m]))


def _window(built: SlicedCpsatModel, index: int, window: int) -> None:
    """``n_w and π(g_w) - π(s) > window => X_w >= B_s`` for the grid steps before ``g_w``."""
    model = built.model
    own = built.grid.candidates[index].tensor.layer
    loaded, start = built.loaded[index], built.memory_start[index]
    target = _sliced_step(built, own)
    for step in range(own):
        far = model.new_bool_var(f"far_{index}_{step}")
        model.add(target - _sliced_step(built, step) <= window).only_enforce_if(~far)
        model.add(start >= built.boundary(step)).only_enforce_if([far, loaded])


def _rectangles(built: SlicedCpsatModel, cap_value: int, below):
    """``place(name, size, present, x_interval) -> offset``: a y-interval below ``below``
    beside ``x_interval`` (``present`` ``None``: always)."""
    model = built.model
    x_intervals, y_intervals = [], []

    def place(name, size, present, interval):
        x_intervals.append(interval)
        offset = model.new_int_var(0, max(0, cap_value - size), f"o_{name}")
        if present is None:
            model.add(offset + size <= below)
            y_intervals.append(model.new_fixed_size_interval_var(offset, size, f"y_{name}"))
        else:
            model.add(offset + size <= below).only_enforce_if(present)
            model.add(offset == 0).only_enforce_if(~present)
            y_intervals.append(model.new_optional_fixed_size_interval_var(
                offset, size, present, f"y_{name}"))
        return offset

    return place, x_intervals, y_intervals


def _memory(built: SlicedCpsatModel, capacity, cap_value: int):
    """Residence intervals in scaled time, offsets under NoOverlap2D with the pinned weights
    on top, the cumulative; returns the pinned units ``Σ z_w b_w / u``."""
    model, grid, unit = built.model, built.grid, built.unit
    pinned_units = sum((grid.candidates[i].tensor.size // unit) * var
                       for i, var in built.pinned.items())
    below = model.new_int_var(0, cap_value, "unpinned_capacity")
    model.add(below == capacity - pinned_units)
    place, x_intervals, y_intervals = _rectangles(built, cap_value, below)
    longest = built.scale * sliced_horizon(grid) + grid.steps

    def steps_interval(name, first, last, present):
        start, end = built.boundary(first - 1), built.boundary(last)
        size = end if first == 0 else model.new_int_var(last - first + 1, longest,
                                                          f"len_{name}")
        if present is None:
            return model.new_interval_var(start, size, end, name)
        return model.new_optional_interval_var(start, size, end, present, name)

    for position, tensor in enumerate(grid.activations):
        interval = steps_interval(f"xa_{position}", tensor.first_op, tensor.last_op, None)
        built.activation_offsets.append(place(f"a{position}", tensor.size // unit, None,
                                              interval))
    for index, candidate in enumerate(grid.candidates):
        tensor = candidate.tensor
        if tensor.is_weight:
            present = built.loaded[index]
            length = model.new_int_var(1, longest, f"len_{index}")
            interval = model.new_optional_interval_var(
                built.memory_start[index], length, built.boundary(tensor.layer), present,
                f"x_{index}")
        else:
            present = built.use[candidate.layer][candidate.option]
            present = None if isinstance(present, int) else present
            interval = steps_interval(f"x_{index}", tensor.first_op, tensor.last_op, present)
        built.offsets[index] = place(index, tensor.size // unit, present, interval)
    model.add_no_overlap_2d(x_intervals, y_intervals)
    model.add_cumulative(x_intervals, [t.size // unit for t in grid.activations]
                         + [c.tensor.size // unit for c in grid.candidates], below)
    return pinned_units


def _free(built: SlicedCpsatModel, unpinned) -> list:
    """``free_s >= 0`` per grid step: the unpinned capacity less what is surely resident at
    ``s`` (the activations, the step's own candidates; a weight counted when loaded)."""
    model, grid, unit = built.model, built.grid, built.unit
    fixed = [0] * grid.steps
    for tensor in grid.activations:
        for step in range(tensor.first_op, tensor.last_op + 1):
            fixed[step] += tensor.size // unit
    own = [[] for _ in range(grid.steps)]
    for index, candidate in enumerate(grid.candidates):
        tensor = candidate.tensor
        present = (built.loaded[index] if tensor.is_weight
                   else built.use[candidate.layer][candidate.option])
        for step in range(tensor.first_op, tensor.last_op + 1):
            own[step].append((tensor.size // unit) * present)
    free = []
    for step in range(grid.steps):
        free.append(unpinned - fixed[step] - sum(own[step]))
        model.add(free[-1] >= 0)
    return free


def _fluid_rows(built: SlicedCpsatModel, free: list, top: int) -> None:
    """The rows (F1)-(F3) of :func:`build_fluid_relaxation`."""
    model, grid = built.model, built.grid
    weights = [grid.candidates[i].tensor for i in grid.weights]
    ratios = [(t.size, t.load_us) for t in weights if t.load_us >= FLUID_MIN_LOAD_US]
    if not ratios:
        return
    size, load = min(ratios, key=lambda r: Fraction(*r))
    small = [0] * (grid.steps + 1)
    for step in range(grid.steps):
        layer, j = grid.layer_of_step[step]
        small[step] = max(sum(t.load_us for t in piece.tensors if t.is_weight
                              and t.first_op == j and t.load_us < FLUID_MIN_LOAD_US)
                          for piece in grid.pieces[layer])
    after = [0] * (grid.steps + 1)
    for step in range(grid.steps - 1, -1, -1):
        after[step] = after[step + 1] + small[step + 1]
    by_step = [[] for _ in range(grid.steps)]
    for index in grid.weights:
        tensor = grid.candidates[index].tensor
        by_step[tensor.layer].append(tensor.load_us * built.loaded[index])
    work_before = queued_before = end_before = 0
    for step in range(grid.steps):
        work = model.new_int_var(0, top, f"W_{step}")
        queued = model.new_int_var(0, top, f"Q_{step}")
        end, compute = built.layer_end[step], built.compute[step]
        model.add(queued == queued_before + sum(by_step[step]))
        model.add(work >= work_before)
        model.add(work - work_before <= end - end_before)
        model.add(work_before + end - compute - end_before >= queued)
        model.add(size * (work - queued - after[step]) <= load * built.unit * free[step])
        built.work.append(work)
        built.queued.append(queued)
        work_before, queued_before, end_before = work, queued, end


def _add_hint(built: SlicedCpsatModel, hint: GridSolution) -> None:
    """``hint`` (pinned weights on top) as a complete solution hint: the options, the
    weights' decisions, the simulator's times, memory starts ``F LS_w + p_w``, offsets."""
    model, grid = built.model, built.grid
    for layer, row in enumerate(built.use):
        for option, var in enumerate(row):
            if not isinstance(var, int):
                model.add_hint(var, hint.chosen[layer] == option)
    ends, loads = grid.timing(hint)
    for var, value in zip(built.layer_end, ends):
        model.add_hint(var, value)
    previous_end, spare = 0, 0
    for index in grid.weights:
        step = hint.preload.get(index, "absent")
        if not isinstance(built.pinned[index], int):
            model.add_hint(built.pinned[index], step is None)
        model.add_hint(built.loaded[index], step not in (None, "absent"))
        if index in built.load_start:
            load_start, load_end = loads.get(index, (previous_end, previous_end))
            spare = step if index in loads else spare
            model.add_hint(built.load_start[index], load_start)
            model.add_hint(built.load_end[index], load_end)
            model.add_hint(built.spare[index], spare)
            previous_end = load_end
    for var, offset in zip(built.activation_offsets, hint.activation_offsets):
        model.add_hint(var, offset // built.unit)
    for index, var in built.offsets.items():
        pinned = hint.preload.get(index, 0) is None
        model.add_hint(var, 0 if pinned else hint.offsets.get(index, 0) // built.unit)


# --- the fluid relaxation ----------------------------------------------------------------------

def build_fluid_relaxation(grid: SlicingGrid, *, budget: int,
                           hint: GridSolution | None = None) -> SlicedCpsatModel:
    r"""A relaxation of the joint model without preload steps or offsets: the options, the
    pinned weights, the times, and the loader as a fluid. ``W_s`` is the loader's work (µs)
    done by ``E_s``, ``Q_s`` the load work of the weights of grid steps ``<= s``::

        u, b, n, C_s, E_s, K as in the joint model;  free_s >= 0
        (F1)  0 <= W_s - W_{s-1} <= E_s - E_{s-1}
        (F2)  W_{s-1} + (E_s - C_s - E_{s-1}) >= Q_s
        (F3)  β (W_s - Q_s - σ_s) <= u free_s
        min E_{S-1}

    Every plan satisfies them: (F1) the loader works at most the elapsed time; (F2) the
    weights of step ``s`` are loaded before it starts; (F3) a weight the loader has worked on
    by ``E_s`` for a later step is resident at ``s`` with at least ``β`` bytes per µs of its
    load (``β``: the least bytes per µs of the weights loading in at least
    :data:`FLUID_MIN_LOAD_US`; ``σ_s``: the most load work of the others after ``s``;
    ``free_s``: the budget less what is surely resident at ``s``, in units ``u``). Its optimum
    is a lower bound of the joint model's, for the options it chooses and for all."""
    built = _new(grid)
    top = sliced_horizon(grid)
    capacity = budget // built.unit
    _options(built)
    _decisions(built, pinning=True)
    _timing(built, top)
    pinned_units = sum((grid.candidates[i].tensor.size // built.unit) * var
                       for i, var in built.pinned.items())
    _fluid_rows(built, _free(built, capacity - pinned_units), top)
    built.objective = built.layer_end[-1]
    built.model.minimize(built.objective)
    if hint is not None:
        _fluid_hint(built, hint)
    return built


def _fluid_hint(built: SlicedCpsatModel, hint: GridSolution) -> None:
    """``hint`` as a complete hint of the fluid relaxation: options, decisions, the
    simulator's times and the loader's work by the end of every step."""
    model, grid = built.model, built.grid
    for layer, row in enumerate(built.use):
        for option, var in enumerate(row):
            if not isinstance(var, int):
                model.add_hint(var, hint.chosen[layer] == option)
    for index in grid.weights:
        step = hint.preload.get(index, "absent")
        if not isinstance(built.pinned[index], int):
            model.add_hint(built.pinned[index], step is None)
        model.add_hint(built.loaded[index], step not in (None, "absent"))
    ends, loads = grid.timing(hint)
    queued = 0
    for step, end in enumerate(ends):
        model.add_hint(built.layer_end[step], end)
        queued += sum(grid.candidates[i].tensor.load_us for i in loads
                      if grid.candidates[i].tensor.layer == step)
        if built.work:
            model.add_hint(built.queued[step], queued)
            model.add_hint(built.work[step], sum(max(0, min(finish, end) - begin)
                                                 for begin, finish in loads.values()))


# --- the minimum budget: nothing preloaded ------------------------------------------------------

def build_sliced_packing(grid: SlicingGrid, *, budget_range: tuple[int, int],
                         hint: GridSolution | None = None) -> SlicedCpsatModel:
    r"""The least budget of any slicing when nothing is preloaded or pinned (every weight
    loaded at its own sub-layer: what every plan of that slicing keeps resident at least)::

        u_{l,o} ∈ {0,1}:  Σ_o u_{l,o} = 1
        x-intervals on grid steps: a on [f_a, e_a + 1); i (present iff u_{o(i)}) on
            [f_i, e_i + 1) (a weight on [g_w, g_w + 1))
        y-intervals [o_i, o_i + z_i),  o_i + z_i <= K;   absent: o_i = 0
        NoOverlap2D(x, y);   Cumulative(x, z, K)
        min K

    ``budget_range`` (lower, upper bytes) bounds ``K``."""
    built = _new(grid)
    model, unit = built.model, built.unit
    capacity, cap_value = _capacity(built, None, budget_range)
    _options(built)
    for index in grid.weights:
        candidate = grid.candidates[index]
        built.pinned[index] = 0
        built.loaded[index] = built.use[candidate.layer][candidate.option]
    place, x_intervals, y_intervals = _rectangles(built, cap_value, capacity)
    for position, tensor in enumerate(grid.activations):
        interval = model.new_fixed_size_interval_var(
            tensor.first_op, tensor.last_op - tensor.first_op + 1, f"xa_{position}")
        built.activation_offsets.append(place(f"a{position}", tensor.size // unit, None,
                                              interval))
    for index, candidate in enumerate(grid.candidates):
        tensor = candidate.tensor
        present = built.use[candidate.layer][candidate.option]
        length = tensor.last_op - tensor.first_op + 1
        if isinstance(present, int):
            present = None
            interval = model.new_fixed_size_interval_var(tensor.first_op, length, f"x_{index}")
        else:
            interval = model.new_optional_fixed_size_interval_var(
                tensor.first_op, length, present, f"x_{index}")
        built.offsets[index] = place(index, tensor.size // unit, present, interval)
    model.add_no_overlap_2d(x_intervals, y_intervals)
    model.add_cumulative(x_intervals, [t.size // unit for t in grid.activations]
                         + [c.tensor.size // unit for c in grid.candidates], capacity)
    built.objective = capacity
    model.minimize(capacity)
    if hint is not None:
        for layer, row in enumerate(built.use):
            for option, var in enumerate(row):
                if not isinstance(var, int):
                    model.add_hint(var, hint.chosen[layer] == option)
        for var, offset in zip(built.activation_offsets, hint.activation_offsets):
            model.add_hint(var, offset // unit)
        for index, var in built.offsets.items():
            model.add_hint(var, hint.offsets.get(index, 0) // unit)
    return built
