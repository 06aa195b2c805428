"""Output paths, checked before any work: a bad ``--output`` or ``--out`` costs no solve."""

from __future__ import annotations

import os
from pathlib import Path

from optplan.errors import InputError

__all__ = ["check_output_file", "check_output_folder"]


def check_output_file(path: str | os.PathLike, field: str, *, create_folders: bool = False
                      ) -> None:
    """Raise :class:`InputError` (naming ``path`` and ``field``) unless a file can be written
    at ``path``; with ``create_folders``, its folder may be missing but must be creatable."""
    target = Path(path)
    if target.is_dir():
        raise InputError("is a folder, not a file", file=str(path), field=field)
    if create_folders:
        check_output_folder(target.parent, field, shown=str(path))
        if not target.parent.is_dir():
            return
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"folder {str(folder)!r} {what}", file=str(path), field=field)
    writable = (os.access(target, os.W_OK) if target.exists()
                else os.access(folder, os.W_OK | os.X_OK))
    if not writable:
        raise InputError("not writable", file=str(path), field=field)


def check_output_folder(path: str | os.PathLike, field: str, *, shown: str | None = None
                        ) -> None:
    """Raise :class:`InputError` unless ``path`` is a writable folder or can be created as
    one (its nearest existing ancestor is a writable folder)."""
    folder = Path(path)
    shown = shown or str(path)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{str(existing)!r} is not a folder", file=shown, field=field)
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "not writable" if existing == folder else f"cannot be created in {str(existing)!r}"
        raise InputError(what, file=shown, field=field)
