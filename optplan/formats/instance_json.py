"""optplan's own JSON instance format (documented in docs/formats.md).

.. code-block:: json

    {"format": "optplan-instance", "version": 1, "name": "paper_example", "alignment": 1,
     "records": [{"id": "t0", "first_op": 0, "last_op": 1, "size": 32}, ...],
     "inplace": [["t0", "t1"]],
     "provenance": {"source": "...", "command": "..."},
     "graph": {...}}

``records`` is required; everything else is optional. Intervals are closed. ``graph`` (the
network the records came from) is kept verbatim for the tools that need it.
"""

from __future__ import annotations

import json
from pathlib import Path

from optplan.errors import InputError
from optplan.formats.json_file import read_json_file
from optplan.model import Instance, UsageRecord

__all__ = ["instance_from_dict", "instance_to_dict", "read_json_instance", "write_json_instance"]

FORMAT = "optplan-instance"
VERSION = 1
_RECORD_FIELDS = ("id", "first_op", "last_op", "size")


def instance_from_dict(data: dict, *, file: str | None = None) -> Instance:
    """Build an :class:`Instance` from parsed JSON; errors name the file and the field."""
    if not isinstance(data, dict):
        raise InputError("top level must be a JSON object", file=file)
    if data.get("format", FORMAT) != FORMAT:
        raise InputError(f"expected {FORMAT!r}, got {data.get('format')!r}", file=file,
                         field="format")
    raw_records = data.get("records")
    if not isinstance(raw_records, list):
        raise InputError("missing or not a list", file=file, field="records")
    records = []
    for position, raw in enumerate(raw_records):
        field = f"records[{position}]"
        if not isinstance(raw, dict):
            raise InputError("must be an object", file=file, field=field)
        missing = [name for name in _RECORD_FIELDS if name not in raw]
        if missing:
            raise InputError(f"missing {', '.join(missing)}", file=file, field=field)
        if not isinstance(raw["id"], str):
            raise InputError(f"must be a string, got {raw['id']!r}", file=file,
                             field=f"{field}.id")
        try:
            records.append(UsageRecord(raw["id"], raw["first_op"], raw["last_op"], raw["size"]))
        except InputError as error:
            raise InputError(error.message, file=file, field=f"{field}.{error.field}") from None
    if not records:
        raise InputError("no usage records (an instance file must hold at least one tensor)",
                         file=file, field="records")
    try:
        probe = Instance(tuple(records))  # duplicate ids are reported before pairs are read
        index_of = probe.index_of
        pairs = []
        raw_pairs = data.get("inplace") or []
        if not isinstance(raw_pairs, list):
            raise InputError("must be a list of pairs [a, b] of record ids", field="inplace")
        for position, pair in enumerate(raw_pairs):
            if not (isinstance(pair, list) and len(pair) == 2
                    and all(isinstance(x, str) for x in pair)):
                raise InputError(f"must be a pair [a, b] of record ids, got {pair!r}",
                                 field=f"inplace[{position}]")
            unknown = [x for x in pair if x not in index_of]
            if unknown:
                raise InputError(f"unknown record id {unknown[0]!r}", field=f"inplace[{position}]")
            pairs.append((index_of[pair[0]], index_of[pair[1]]))
        name = data.get("name") or (Path(file).stem if file else "instance")
        if not isinstance(name, str):
            raise InputError(f"must be a string, got {name!r}", field="name")
        return Instance(tuple(records), name=name, alignment=data.get("alignment", 1),
                        inplace_pairs=tuple(pairs), provenance=_extras(data))
    except InputError as error:
        raise error.located(file) from None


def _extras(data: dict) -> dict:
    for key in ("provenance", "graph"):
        if key in data and not isinstance(data[key], dict):
            raise InputError(f"must be an object, got {type(data[key]).__name__}", field=key)
    extras = dict(data.get("provenance") or {})
    if "graph" in data:
        extras["graph"] = data["graph"]
    return extras


def instance_to_dict(instance: Instance) -> dict:
    data = {"format": FORMAT, "version": VERSION, "name": instance.name,
            "alignment": instance.alignment,
            "records": [{"id": r.id, "first_op": r.first_op, "last_op": r.last_op, "size": r.size}
                        for r in instance.records]}
    if instance.inplace_pairs:
        data["inplace"] = [[instance.records[a].id, instance.records[b].id]
                           for a, b in instance.inplace_pairs]
    provenance = {k: v for k, v in instance.provenance.items() if k != "graph"}
    if provenance:
        data["provenance"] = provenance
    if "graph" in instance.provenance:
        data["graph"] = instance.provenance["graph"]
    return data


def read_json_instance(path: str | Path) -> Instance:
    return instance_from_dict(read_json_file(path), file=str(path))


def write_json_instance(instance: Instance, path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(instance_to_dict(instance), handle, indent=1)
        handle.write("\n")
