"""The free-order problems' data: a graph instance and a schedule (plain frozen data).

An instance is a network graph (:class:`optplan.graph.Graph`: ops with input and output
tensors, as in the ``graph`` object of ``data/networks/*.json``) together with the settings
that turn an execution order into usage records: how views are counted (``views``, see
:func:`optplan.graph.lifetimes`), whether the ops' declared in-place pairs are honoured
(``inplace``) and the offsets' ``alignment``. The graph's own op order is the *engine order*.

A solution is an order of the op names and, for ``schedule-offsets``, an offset per tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from optplan.errors import InputError
from optplan.graph.lifetimes import VIEW_SETTINGS
from optplan.graph.model import Graph
from optplan.model import require_int

__all__ = ["ScheduleInstance", "ScheduleSolution", "schedule_instance", "prepare"]


@dataclass(frozen=True)
class ScheduleInstance:
    """A graph whose op order is free (any topological order), with its lifetime settings.

    ``graph.ops`` is the engine order. ``views`` is ``"copy"`` or ``"alias"``
    (:func:`optplan.graph.lifetimes`); ``inplace`` says whether declared in-place pairs may
    share memory; ``alignment`` applies to offsets.
    """

    graph: Graph
    name: str = "graph"
    views: str = "copy"
    inplace: bool = False
    alignment: int = 1
    provenance: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if self.views not in VIEW_SETTINGS:
            raise InputError(f"unknown view setting {self.views!r}; valid: "
                             f"{', '.join(VIEW_SETTINGS)}", field="views")
        object.__setattr__(self, "alignment", require_int(self.alignment, "alignment",
                                                          minimum=1))
        object.__setattr__(self, "inplace", bool(self.inplace))

    @property
    def op_names(self) -> tuple[str, ...]:
        """The op names in engine order."""
        return tuple(op.name for op in self.graph.ops)

    @property
    def num_ops(self) -> int:
        return self.graph.num_ops

    def __len__(self) -> int:
        """The number of tensors (as an :class:`optplan.Instance`'s is its records)."""
        return len(self.graph.tensors)


@dataclass(frozen=True)
class ScheduleSolution:
    """An execution order (op names) and, for ``schedule-offsets``, tensor offsets.

    ``offsets`` maps tensor names to byte offsets; ``None`` for ``schedule``.
    """

    order: tuple[str, ...]
    offsets: "dict[str, int] | None" = field(default=None, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "order", tuple(str(name) for name in self.order))
        if self.offsets is not None:
            object.__setattr__(self, "offsets", {str(name): int(offset)
                                                 for name, offset in dict(self.offsets).items()})

    def without_offsets(self) -> "ScheduleSolution":
        return ScheduleSolution(self.order)


def schedule_instance(graph: Graph, *, views: str = "copy", inplace: bool = False,
                      alignment: int = 1, name: str | None = None,
                      provenance: dict | None = None) -> ScheduleInstance:
    """A :class:`ScheduleInstance` of ``graph`` (zero-byte tensors and unused ones are kept in
    the graph; they get no memory, as in :func:`optplan.graph.lifetimes`)."""
    return ScheduleInstance(graph, name or graph.name, views, inplace, alignment,
                            dict(provenance if provenance is not None else graph.provenance))


def prepare(instance: ScheduleInstance, *, inplace: bool = False) -> ScheduleInstance:
    """The instance a run solves: in-place pairs honoured only with ``inplace=True``."""
    if instance.inplace == bool(inplace):
        return instance
    return replace(instance, inplace=bool(inplace))
