"""Solution files: the instance's columns plus ``offset`` (offsets) or ``object`` (shared objects).

Rows follow the instance's record order. A MiniMalloc instance keeps its columns
(``id,lower,upper,size``); a JSON instance is written as ``id,first_op,last_op,size``.
Reading matches rows to records by ``id``; the other columns, when present, must agree.
"""

from __future__ import annotations

import csv
from pathlib import Path

from optplan.errors import InputError
from optplan.formats.minimalloc_csv import parse_int, read_csv_rows
from optplan.model import MAX_VALUE, Instance, OffsetsSolution, SharedObjectsSolution, Solution
from optplan.problems import Problem

__all__ = ["write_solution_csv", "read_solution_csv", "solution_column"]


def solution_column(problem: Problem) -> str:
    return "object" if problem is Problem.SHARED_OBJECTS else "offset"


def write_solution_csv(instance: Instance, problem: Problem | str, solution: Solution,
                       path: str | Path, *, half_open: bool | None = None) -> None:
    """Write ``solution``; ``half_open`` picks MiniMalloc columns (default: by instance source)."""
    problem = Problem.parse(problem)
    if half_open is None:
        half_open = instance.provenance.get("format") == "minimalloc-csv"
    values = (solution.object_ids if problem is Problem.SHARED_OBJECTS else solution.offsets)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        columns = ("lower", "upper") if half_open else ("first_op", "last_op")
        writer.writerow(("id",) + columns + ("size", solution_column(problem)))
        for record, value in zip(instance.records, values):
            end = record.last_op + 1 if half_open else record.last_op
            writer.writerow((record.id, record.first_op, end, record.size, value))


def read_solution_csv(instance: Instance, problem: Problem | str, path: str | Path) -> Solution:
    """Read a solution for ``instance``; object sizes are the largest member of each object."""
    problem = Problem.parse(problem)
    path = str(path)
    column = solution_column(problem)
    header, rows = read_csv_rows(path, ("id", column))
    values: dict[str, int] = {}
    for line, row in rows:
        ident = row["id"].strip()
        if ident not in instance.index_of:
            raise InputError(f"unknown tensor id {ident!r}", file=path, line=line, field="id")
        if ident in values:
            raise InputError(f"duplicate id {ident!r}", file=path, line=line, field="id")
        record = instance.records[instance.index_of[ident]]
        expected = {"size": record.size, "first_op": record.first_op, "last_op": record.last_op,
                    "lower": record.first_op, "upper": record.last_op + 1}
        for name, want in expected.items():
            if name in row and parse_int(row[name], file=path, line=line, field=name) != want:
                raise InputError(f"{row[name].strip()} disagrees with the instance ({want}) for "
                                 f"tensor {ident!r}", file=path, line=line, field=name)
        value = parse_int(row[column], file=path, line=line, field=column)
        if column == "object" and not 0 <= value < len(instance):
            raise InputError(f"object id {value} outside 0..{len(instance) - 1} (one object per "
                             "tensor at most)", file=path, line=line, field=column)
        if abs(value) > MAX_VALUE:
            raise InputError(f"offset {value} beyond +-2^62", file=path, line=line, field=column)
        values[ident] = value
    missing = [r.id for r in instance.records if r.id not in values]
    if missing:
        raise InputError(f"no row for tensor {missing[0]!r} ({len(missing)} missing)", file=path,
                         field="id")
    ordered = [values[r.id] for r in instance.records]
    if problem is Problem.SHARED_OBJECTS:
        return SharedObjectsSolution.from_object_ids(instance, ordered)
    return OffsetsSolution.from_offsets(instance, ordered)
