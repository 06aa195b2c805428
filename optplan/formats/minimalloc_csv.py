"""MiniMalloc's CSV format: ``id,lower,upper,size[,offset]`` with a header line.

A buffer is live on the half-open interval ``[lower, upper)``; optplan's records are closed,
so ``first_op = lower`` and ``last_op = upper - 1`` (and back: ``upper = last_op + 1``).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from optplan.errors import InputError
from optplan.model import Instance, OffsetsSolution, UsageRecord

__all__ = ["read_minimalloc_csv", "write_minimalloc_csv", "parse_int", "decimal_int"]

COLUMNS = ("id", "lower", "upper", "size")


_INTEGER = re.compile(r"[+-]?[0-9]+")


def decimal_int(text: str) -> int:
    """``text`` as an integer written in ASCII digits, else ``ValueError`` (``int()`` alone
    would also take ``１２`` or ``1_0``)."""
    stripped = text.strip() if isinstance(text, str) else ""
    if not _INTEGER.fullmatch(stripped):
        raise ValueError(f"not an integer: {text!r}")
    return int(stripped)


def parse_int(text: str, *, file: str, line: int, field: str) -> int:
    """:func:`decimal_int`, with an :class:`InputError` naming the file, line and field."""
    try:
        return decimal_int(text)
    except ValueError as error:
        raise InputError(str(error), file=file, line=line, field=field) from None


def read_csv_rows(path: str | Path, required: tuple[str, ...]) -> tuple[list[str], list[tuple[int, dict]]]:
    """Header and ``(line number, row)`` pairs of a CSV file, checked for required columns."""
    path = str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise InputError("empty file (expected a header line)", file=path, line=1)
            header = [name.strip() for name in header]
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated:
                raise InputError("column appears twice in the header", file=path, line=1,
                                 field=repeated[0])
            missing = [name for name in required if name not in header]
            if missing:
                raise InputError(f"header lacks column {missing[0]!r} (has {','.join(header)})",
                                 file=path, line=1, field=missing[0])
            rows = []
            for values in reader:
                line = reader.line_num
                if not values or all(not v.strip() for v in values):
                    continue
                if len(values) != len(header):
                    raise InputError(f"{len(values)} fields, header has {len(header)}",
                                     file=path, line=line)
                rows.append((line, dict(zip(header, values))))
            return header, rows
    except csv.Error as error:
        raise InputError(f"malformed CSV: {error}", file=path, line=reader.line_num) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", file=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not a UTF-8 text file (byte {error.start})", file=path) from None


def read_minimalloc_csv(path: str | Path, *, alignment: int = 1,
                        with_offsets: bool = False):
    """Read an instance (and, with ``with_offsets``, the ``offset`` column as a solution)."""
    path = str(path)
    _, rows = read_csv_rows(path, COLUMNS + (("offset",) if with_offsets else ()))
    if not rows:
        raise InputError("no usage records (an instance file must hold at least one tensor)",
                         file=path)
    records, offsets, seen = [], [], {}
    for line, row in rows:
        lower = parse_int(row["lower"], file=path, line=line, field="lower")
        upper = parse_int(row["upper"], file=path, line=line, field="upper")
        size = parse_int(row["size"], file=path, line=line, field="size")
        ident = row["id"].strip()
        if ident in seen:
            raise InputError(f"duplicate id {ident!r} (first on line {seen[ident]})", file=path,
                             line=line, field="id")
        seen[ident] = line
        if upper <= lower:
            raise InputError(f"upper {upper} <= lower {lower} (empty lifetime)", file=path,
                             line=line, field="upper")
        try:
            records.append(UsageRecord(ident, lower, upper - 1, size))
        except InputError as error:
            field = {"first_op": "lower", "last_op": "upper"}.get(error.field, error.field)
            raise InputError(error.message, file=path, line=line, field=field) from None
        if with_offsets:
            offsets.append(parse_int(row["offset"], file=path, line=line, field="offset"))
    try:
        instance = Instance(tuple(records), name=Path(path).stem.split(".")[0],
                            alignment=alignment,
                            provenance={"source": Path(path).name, "format": "minimalloc-csv"})
    except InputError as error:
        raise error.located(path) from None
    if with_offsets:
        return instance, OffsetsSolution.from_offsets(instance, offsets)
    return instance


def write_minimalloc_csv(instance: Instance, path: str | Path,
                         offsets: OffsetsSolution | None = None) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(COLUMNS + (("offset",) if offsets is not None else ()))
        for index, record in enumerate(instance.records):
            row = [record.id, record.first_op, record.last_op + 1, record.size]
            if offsets is not None:
                row.append(offsets.offsets[index])
            writer.writerow(row)
