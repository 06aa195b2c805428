"""Files of the free-order problems: graph instances and plans.

Instances are optplan JSON instances with a ``graph`` object (``data/networks/*.json``) or bare
graph objects. The plan file of the free-order problems (``--output PLAN.json``)::

    {"order": ["conv1", "conv2", ...], "offsets": {"input": 0, "conv1_out": 602112, ...}}

``order`` names every op once, in execution order; ``offsets`` (``schedule-offsets`` only)
gives the byte offset of every tensor with memory.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import replace
from pathlib import Path

from optplan.errors import InputError
from optplan.graph.model import graph_from_dict
from optplan.schedule.model import ScheduleInstance, ScheduleSolution, schedule_instance

__all__ = ["load_instance", "solution_to_dict", "solution_from_dict", "read_solution",
           "write_solution"]


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise InputError(f"malformed JSON: {error.msg} (column {error.colno})", file=path,
                         line=error.lineno) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", file=path) from None


def load_instance(path: str | Path, *, alignment: int | None = None) -> ScheduleInstance:
    """Read a graph instance: an optplan JSON instance with a ``graph`` object (its
    ``alignment`` and ``provenance.views`` are used) or a bare graph JSON object.

    ``alignment``, when given, overrides the file's. In-place pairs are off; see
    :func:`prepare`. Errors name the file and the field.
    """
    path = str(path)
    data = _read_json(path)
    if not isinstance(data, dict):
        raise InputError("top level must be a JSON object", file=path)
    try:
        if "graph" in data:
            provenance = dict(data.get("provenance") or {})
            graph = graph_from_dict(data["graph"], provenance=provenance)
            instance = schedule_instance(
                graph, views=provenance.get("views", "copy"),
                alignment=data.get("alignment", 1),
                name=str(data.get("name") or Path(path).stem))
        elif "ops" in data:
            graph = graph_from_dict(data)
            instance = schedule_instance(graph, name=str(data.get("name") or Path(path).stem))
        else:
            raise InputError("no graph: expected an optplan instance with a 'graph' object or "
                             "a graph object with 'ops'", field="graph")
        if alignment is not None:
            instance = replace(instance, alignment=alignment)
    except InputError as error:
        raise error.located(path) from None
    return instance


def solution_to_dict(solution: ScheduleSolution) -> dict:
    data: dict = {"order": list(solution.order)}
    if solution.offsets is not None:
        data["offsets"] = dict(solution.offsets)
    return data


def solution_from_dict(data, *, file: str | None = None) -> ScheduleSolution:
    """Parse a plan object; errors name the file and the field."""
    if not isinstance(data, dict):
        raise InputError("top level must be a JSON object", file=file)
    order = data.get("order")
    if not isinstance(order, list):
        raise InputError("missing or not a list of op names", file=file, field="order")
    for step, name in enumerate(order):
        if not isinstance(name, str):
            raise InputError(f"must be an op name, got {name!r}", file=file,
                             field=f"order[{step}]")
    offsets = data.get("offsets")
    if offsets is not None:
        if not isinstance(offsets, dict):
            raise InputError("must be an object {tensor: offset}", file=file, field="offsets")
        for name, offset in offsets.items():
            if isinstance(offset, bool) or not isinstance(offset, numbers.Integral):
                raise InputError(f"must be an integer, got {offset!r}", file=file,
                                 field=f"offsets.{name}")
    return ScheduleSolution(tuple(order), offsets)


def read_solution(instance, path: str | Path) -> ScheduleSolution:
    """Read a plan file (``instance`` is not needed to parse it; the validator checks the
    plan against the instance)."""
    path = str(path)
    return solution_from_dict(_read_json(path), file=path)


def write_solution(instance, solution: ScheduleSolution, path: str | Path) -> None:
    """Write ``solution`` as a plan file (one JSON object)."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(solution_to_dict(solution), handle, indent=1)
        handle.write("\n")
