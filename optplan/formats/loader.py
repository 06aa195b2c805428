"""One entry point that reads an instance file of any supported format."""

from __future__ import annotations

from pathlib import Path

from optplan.errors import InputError
from optplan.formats.instance_json import read_json_instance
from optplan.formats.minimalloc_csv import read_minimalloc_csv
from optplan.model import Instance

__all__ = ["load_instance"]


def load_instance(path: str | Path, *, alignment: int | None = None) -> Instance:
    """Read a MiniMalloc CSV (``.csv``) or an optplan JSON instance (``.json``).

    ``alignment``, when given, overrides the file's alignment.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        instance = read_minimalloc_csv(path)
    elif suffix == ".json":
        instance = read_json_instance(path)
    else:
        raise InputError(f"unknown instance format {suffix or '(no suffix)'!r}; expected .csv "
                         "(MiniMalloc) or .json (optplan)", file=str(path))
    if alignment is not None:
        try:
            instance = instance.with_alignment(alignment)
        except InputError as error:
            raise InputError(error.message, file=str(path), field="alignment") from None
    return instance
