"""Graphs for the schedule tests: named tiny cases a reader can draw, and a hypothesis
strategy of random small DAGs (views, in-place pairs, unread and zero-byte tensors)."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from optplan.graph import Graph, Op, Tensor
from optplan.schedule import ScheduleInstance, schedule_instance
from optplan.schedule.dag import dag_of


def build(name: str, ops, sizes: dict, *, inputs=(), outputs=(), **settings) -> ScheduleInstance:
    """``ops``: ``(name, inputs, outputs)`` or ``(name, inputs, outputs, type, inplace)``."""
    tensors = {t: Tensor(t, (size,), "uint8", size) for t, size in sizes.items()}
    graph_ops = []
    for entry in ops:
        op_name, op_inputs, op_outputs, *rest = entry
        op_type = rest[0] if rest else "ADD"
        inplace = rest[1] if len(rest) > 1 else ()
        graph_ops.append(Op(op_name, op_type, tuple(op_inputs), tuple(op_outputs),
                            inplace=inplace))
    return schedule_instance(Graph(name, tuple(graph_ops), tensors, tuple(inputs),
                                   tuple(outputs)), **settings)


def two_branches(**settings) -> ScheduleInstance:
    """Two independent branches (big X, then small Y) joined at the end, listed interleaved:
    the engine order keeps both big tensors at once (peak 21), branch by branch needs 12."""
    return build("two_branches",
                 [("a1", [], ["X1"]), ("b1", [], ["X2"]), ("a2", ["X1"], ["Y1"]),
                  ("b2", ["X2"], ["Y2"]), ("join", ["Y1", "Y2"], ["out"])],
                 {"X1": 10, "X2": 10, "Y1": 1, "Y2": 1, "out": 1}, outputs=["out"], **settings)


def inplace_chain(**settings) -> ScheduleInstance:
    """``conv`` -> ``x`` -> ``relu`` -> ``r`` -> ``head``; ``relu`` may write ``r`` over ``x``."""
    return build("inplace_chain",
                 [("conv", ["in"], ["x"]), ("relu", ["x"], ["r"], "RELU", [("x", "r")]),
                  ("head", ["r"], ["out"])],
                 {"in": 4, "x": 8, "r": 8, "out": 2}, inputs=["in"], outputs=["out"],
                 **settings)


@st.composite
def schedule_instances(draw, max_ops: int = 6, max_size: int = 12,
                       max_buffers: int | None = None, inplace: bool | None = None,
                       views: bool = True, alignment: bool = False):
    """Random small graphs as schedule instances.

    Ops read up to two earlier tensors (or none: roots), write one tensor (two now and
    then); sizes include zeros; some ops are views (``RESHAPE``) and some declare an
    in-place pair; some tensors are graph outputs, some are never read.
    """
    count = draw(st.integers(1, max_ops))
    inputs = ["in0"] if draw(st.booleans()) else []
    sizes = {name: draw(st.integers(1, max_size)) for name in inputs}
    available = list(inputs)
    ops = []
    for index in range(count):
        reads = draw(st.lists(st.sampled_from(available), max_size=2, unique=True)
                     ) if available else []
        writes = [f"t{index}"] + ([f"u{index}"] if draw(st.integers(0, 4)) == 0 else [])
        for name in writes:
            sizes[name] = draw(st.sampled_from([0] + list(range(1, max_size + 1))))
        op_type = "RESHAPE" if views and len(reads) == 1 and draw(st.booleans()) else "ADD"
        pairs = [(reads[0], writes[0])] if reads and draw(st.booleans()) else []
        ops.append((f"op{index}", reads, writes, op_type, pairs))
        available += writes
    produced = [name for *_, writes, _, _ in ops for name in writes]
    outputs = draw(st.lists(st.sampled_from(produced + inputs), max_size=3, unique=True))
    instance = build("random", ops, sizes, inputs=inputs, outputs=outputs,
                     views=draw(st.sampled_from(["copy", "alias"])) if views else "copy",
                     inplace=draw(st.booleans()) if inplace is None else inplace,
                     alignment=draw(st.sampled_from([1, 1, 2, 4])) if alignment else 1)
    if max_buffers is not None:
        assume(dag_of(instance).num_buffers <= max_buffers)
    return instance
