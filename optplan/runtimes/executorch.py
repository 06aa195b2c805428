"""optplan as an ExecuTorch memory planner (the ``executorch`` extra: ``executorch==1.5.1``
beside ``torch==2.13.0``).

ExecuTorch plans a program's activations in ``MemoryPlanningPass`` (``exir/memory_planning.py``):
after ``update_all_tensors_lifetime`` every ``TensorSpec`` carries ``lifetime = [first, last]``
(closed node-index interval) and, after ``spec.realign(alignment)``, ``allocated_memory`` (its
bytes rounded up to the alignment, 16 by default); a planning algorithm is a callable
``algo(alignment, specs, graph_module, graph_signature, extra_padding) -> MemoryAlgoResult``
that gives each spec ``(mem_id, mem_obj_id, mem_offset)`` and returns the buffer sizes
``[0, arena, ...]``. Its default, ``greedy``, sorts specs by size and stacks shared objects
(buckets sized by their first tensor), which can leave much room above the optimum.

:func:`planner` returns such an ``algo`` built on optplan:

* one optplan instance per ``mem_id`` (``None`` is ExecuTorch's default pool 1), one record per
  spec that owns its storage (``storage_base is None``): ``(lifetime[0], lifetime[1],
  allocated_memory)`` at the given alignment. Specs backed by another spec's storage (in-place
  results, ``storage_base``/``storage_base_offset``) stay inside their base, as in ExecuTorch's
  greedy (``_resolve_storage_base_specs``): the base's lifetime already covers them
  (``_extend_storage_base_lifetimes``);
* the instance is solved with any registered offsets method and validated
  (:func:`optplan.runtimes.plan.plan_offsets`): an overlapping plan is refused, and a plan not
  smaller than the fallback's (ExecuTorch's ``greedy`` by default, run on the same specs) gives
  way to it, with a log line;
* offsets start after the pool's ``input_mem_buffer_sizes`` (control-flow submodules) and the
  pool ends with ``extra_padding``, as in ExecuTorch's greedy; ``mem_obj_id`` numbers the groups
  of specs whose address ranges overlap, so ExecuTorch's own ``Verifier`` accepts the plan.

:func:`compare` exports one of optplan's torch networks twice (ExecuTorch's planner, optplan's),
runs both programs in ``executorch.runtime`` on the same random inputs and compares the outputs:
the runtime allocates exactly ``non_const_buffer_sizes`` and bounds-checks offsets, but does not
check overlaps.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from optplan.errors import InputError
from optplan.importers import require
from optplan.model import Instance, UsageRecord
from optplan.runtimes.plan import PlannedOffsets, RuntimeComparison, plan_offsets

__all__ = ["planner", "FALLBACKS", "specs_instances", "lower", "planned_bytes",
           "run_program", "compare", "MemoryPool"]

log = logging.getLogger("optplan.runtimes")

FALLBACKS = ("greedy", "naive")
"""ExecuTorch's own algorithms (``executorch.exir.memory_planning``) a planner falls back to."""

DEFAULT_POOL = 1


def _memory_planning():
    require("torch", "executorch")
    return require("executorch.exir.memory_planning", "executorch")


@dataclass(frozen=True)
class MemoryPool:
    """The specs of one ``mem_id`` as an optplan instance: ``roots[i]`` is record ``i``;
    ``base`` is where the pool's planned memory starts (``input_mem_buffer_sizes``); ``empty``
    holds the pool's zero-byte specs (no record; placed at ``base``)."""

    mem_id: int
    instance: Instance
    roots: tuple
    base: int
    empty: tuple = ()


def _storage_root(spec):
    while spec.storage_base is not None:
        spec = spec.storage_base
    return spec


def specs_instances(specs, alignment: int, graph_module=None, *, name: str = "program"
                    ) -> list[MemoryPool]:
    """One :class:`MemoryPool` per ``mem_id`` of ``specs`` (the specs must have lifetimes;
    they are realigned to ``alignment`` here, as ExecuTorch's algorithms do). Specs of zero
    bytes take no memory and no record: they go to the pool's start."""
    pools: dict[int, list] = {}
    empty: dict[int, list] = {}
    for spec in specs:
        spec.realign(alignment)
        if spec.storage_base is None:
            mem_id = spec.mem_id or DEFAULT_POOL
            (pools if spec.allocated_memory > 0 else empty).setdefault(mem_id, []).append(spec)
    bases = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
    result = []
    for mem_id in sorted(set(pools) | set(empty)):
        roots = pools.get(mem_id, [])
        records = tuple(UsageRecord(f"spec{i}", int(s.lifetime[0]), int(s.lifetime[1]),
                                    int(s.allocated_memory))
                        for i, s in enumerate(roots))
        instance = Instance(records, f"{name}.mem{mem_id}", alignment)
        result.append(MemoryPool(mem_id, instance, tuple(roots),
                                 int(bases[mem_id]) if mem_id < len(bases) else 0,
                                 tuple(empty.get(mem_id, ()))))
    return result


def _overlap_groups(offsets, sizes) -> list[int]:
    """Group number of each interval ``[offset, offset + size)``: intervals that overlap (in
    address, at any time) share a group, as ExecuTorch's ``mem_obj_id`` requires."""
    order = sorted(range(len(offsets)), key=lambda i: offsets[i])
    groups = [0] * len(offsets)
    group, end = -1, None
    for i in order:
        if end is None or offsets[i] >= end:
            group, end = group + 1, offsets[i] + sizes[i]
        else:
            end = max(end, offsets[i] + sizes[i])
        groups[i] = group
    return groups


def _placements(pool: MemoryPool, offsets, specs) -> dict:
    """Spec → (mem_offset, mem_obj_id) of every spec of ``pool`` under ``offsets`` (one per
    record): records at their offsets, zero-byte specs at the pool's start, storage-backed
    specs at their root's offset plus the ``storage_base_offset`` of each link."""
    groups = _overlap_groups(offsets, pool.instance.sizes.tolist())
    placed = {spec: (pool.base + offset, group)
              for spec, offset, group in zip(pool.roots, offsets, groups)}
    for spec in pool.empty:
        placed[spec] = (pool.base, max(groups, default=-1) + 1)
    for spec in specs:
        root = _storage_root(spec)
        if spec is root or root not in placed:
            continue
        offset, link = 0, spec
        while link is not root:
            offset, link = offset + link.storage_base_offset, link.storage_base
        placed[spec] = (placed[root][0] + offset, placed[root][1])
    return placed


def planner(method: str = "search", *, time_limit: float | None = None,
            fallback: str = "greedy", **params) -> Callable:
    """An ExecuTorch memory-planning algorithm that plans with optplan's ``method``.

    Parameters
    ----------
    method : str
        Any registered offsets method (``search``, ``cpsat``, ``greedy_by_size``...).
    time_limit : float, optional
        Seconds per memory pool for exact methods.
    fallback : {"greedy", "naive"}
        ExecuTorch's algorithm that is run on the same specs; its plan is kept where optplan's
        is not smaller (or where the method found none).
    **params
        Passed to :func:`optplan.solve` (``workers``, ``seed``, solver parameters).

    Returns
    -------
    callable
        ``algo(alignment, specs, graph_module, graph_signature, extra_padding)`` returning a
        ``MemoryAlgoResult``, for ``MemoryPlanningAlgorithmSuite(algo_list=[algo])``. Its
        ``plans`` attribute lists ``(MemoryPool, PlannedOffsets)`` of every call.

    Examples
    --------
    >>> from executorch.exir import ExecutorchBackendConfig          # doctest: +SKIP
    >>> from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    >>> from executorch.exir.passes import MemoryPlanningPass
    >>> suite = MemoryPlanningAlgorithmSuite(algo_list=[planner("search", time_limit=60)])
    >>> config = ExecutorchBackendConfig(
    ...     memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    """
    if fallback not in FALLBACKS:
        raise InputError(f"unknown fallback {fallback!r}; valid: {', '.join(FALLBACKS)}",
                         field="fallback")
    plans: list[tuple[MemoryPool, PlannedOffsets]] = []

    def algo(alignment, specs, graph_module, graph_signature, extra_padding=0):
        memory_planning = _memory_planning()
        specs = list(specs)
        runtime = getattr(memory_planning, fallback)(alignment, specs, graph_module,
                                                     graph_signature, extra_padding)
        name = getattr(graph_module, "_get_name", lambda: "program")()
        spec_dict = dict(runtime.spec_dict)
        bufsizes = list(runtime.bufsizes)
        for pool in specs_instances(specs, alignment, graph_module, name=name):
            if not pool.roots:      # zero-byte specs only: the fallback's layout stands
                continue
            runtime_offsets = [runtime.spec_dict[s].mem_offset - pool.base for s in pool.roots]
            planned = plan_offsets(pool.instance, runtime_offsets, method=method,
                                   runtime=f"executorch.{fallback}", time_limit=time_limit,
                                   **params)
            plans.append((pool, planned))
            if planned.source != "optplan":
                continue
            for spec, (offset, group) in _placements(pool, planned.solution.offsets,
                                                     specs).items():
                spec_dict[spec] = memory_planning.SpecAllocResult(pool.mem_id, group, offset)
            while len(bufsizes) <= pool.mem_id:
                bufsizes.append(0)
            bufsizes[pool.mem_id] = pool.base + planned.arena_size + extra_padding
        return memory_planning.MemoryAlgoResult(spec_dict, bufsizes)

    algo.__name__ = f"optplan_{method}"
    algo.plans = plans
    return algo


def lower(module, args: tuple, algo: Callable | None = None):
    """``module(*args)`` exported (``torch.export``, ``to_edge``, ``to_executorch``) with
    ExecuTorch's default memory planning, or with ``algo`` as the only algorithm."""
    torch = require("torch", "executorch")
    exir = require("executorch.exir", "executorch")
    passes = require("executorch.exir.passes", "executorch")
    memory_planning = _memory_planning()
    with torch.no_grad():
        exported = torch.export.export(module.eval(), tuple(args), strict=False)
    edge = exir.to_edge(exported)
    if algo is None:
        return edge.to_executorch()
    suite = memory_planning.MemoryPlanningAlgorithmSuite(algo_list=[algo])
    config = exir.ExecutorchBackendConfig(
        memory_planning_pass=passes.MemoryPlanningPass(memory_planning_algo=suite))
    return edge.to_executorch(config)


def planned_bytes(program) -> int:
    """Bytes of planned (non-constant) memory the runtime allocates for ``forward``."""
    return int(sum(program.executorch_program.execution_plan[0].non_const_buffer_sizes))


def run_program(buffer: bytes, inputs: list[tuple], *, name: str = "program") -> list[list]:
    """Outputs of the program in ``buffer`` (a ``.pte``) for each input tuple, run by
    ``executorch.runtime``. A kernel the runtime lacks is an :class:`InputError` naming it."""
    runtime_module = require("executorch.runtime", "executorch")
    runtime = runtime_module.Runtime.get()
    try:
        method = runtime.load_program(buffer).load_method("forward")
    except RuntimeError as error:
        raise InputError(f"ExecuTorch cannot load the program: {error}", field=name) from None
    return [list(method.execute(list(args))) for args in inputs]


def _random_inputs(example: tuple, count: int, seed: int) -> list[tuple]:
    """``count`` random input tuples shaped like ``example``: normal floats, integers below
    the example's maximum + 1 (token ids stay inside the vocabulary)."""
    torch = require("torch", "executorch")
    generator = torch.Generator().manual_seed(seed)
    inputs = []
    for _ in range(count):
        drawn = []
        for value in example:
            if value.is_floating_point():
                drawn.append(torch.randn(value.shape, generator=generator, dtype=value.dtype))
            else:
                high = int(value.max()) + 1 if value.numel() else 1
                drawn.append(torch.randint(0, high, value.shape, generator=generator,
                                           dtype=value.dtype))
        inputs.append(tuple(drawn))
    return inputs


def _compare_outputs(ours: list[list], theirs: list[list]) -> tuple[bool, float]:
    torch = require("torch", "executorch")
    equal, worst = True, 0.0
    for run_a, run_b in zip(ours, theirs, strict=True):
        for a, b in zip(run_a, run_b, strict=True):
            equal = equal and a.shape == b.shape and bool(torch.equal(a, b))
            if a.shape == b.shape and a.numel():
                diff = (a.double() - b.double()).abs().max()
                worst = max(worst, float(diff) if torch.isfinite(diff) else float("inf"))
    return equal, worst


def compare(network: str, *, method: str = "search", time_limit: float | None = None,
            out: str | Path | None = None, inputs: int = 3, input_seed: int = 0,
            fallback: str = "greedy", **params) -> RuntimeComparison:
    """ExecuTorch's planner against optplan's on one of optplan's torch networks, measured in
    the runtime.

    The network (:func:`optplan.torch.models.build`, random weights from ``input_seed``, which
    also draws the inputs) is lowered
    twice, with ExecuTorch's default planning and with :func:`planner`; each program's planned
    bytes are its ``non_const_buffer_sizes``; both run on the same ``inputs`` random input
    tuples and their outputs are compared bit for bit (the kernels are the same). ``out``
    receives optplan's ``.pte``. ``lower_bound`` and ``status`` are summed / combined over the
    memory pools.
    """
    from optplan.torch.models import build

    module, example = build(network, seed=input_seed)
    start = time.perf_counter()
    theirs = lower(module, example)
    algo = planner(method, time_limit=time_limit, fallback=fallback, **params)
    ours = lower(module, example, algo)
    wall = time.perf_counter() - start
    if out is not None:
        Path(out).write_bytes(ours.buffer)
    drawn = _random_inputs(example, inputs, input_seed)
    equal, worst = _compare_outputs(run_program(ours.buffer, drawn, name=network),
                                    run_program(theirs.buffer, drawn, name=network))
    statuses = {planned.result.status.value for _, planned in algo.plans}
    sources = {planned.source for _, planned in algo.plans}
    return RuntimeComparison(
        network=network, runtime="executorch", runtime_planner_bytes=planned_bytes(theirs),
        optplan_bytes=planned_bytes(ours),
        lower_bound=sum(planned.result.lower_bound for _, planned in algo.plans),
        status=statuses.pop() if len(statuses) == 1 else "FEASIBLE",
        outputs_equal=equal, max_abs_diff=worst,
        source="optplan" if sources == {"optplan"} else f"executorch.{fallback}",
        method=method, time_limit=time_limit, wall_time_s=wall, inputs=inputs)
