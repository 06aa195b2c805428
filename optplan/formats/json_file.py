"""Reading any JSON file optplan takes as input, with one-line errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path

from optplan.errors import InputError

__all__ = ["read_json_file"]


def read_json_file(path: str | Path, *, field: str | None = None) -> object:
    """The parsed content of the JSON file at ``path`` (a UTF-8 byte-order mark is allowed).

    Raises
    ------
    InputError
        Naming ``path`` (and ``field``, and the line of a syntax error): unreadable, not
        UTF-8, malformed, or nested too deeply for the parser.
    """
    path = str(path)
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise InputError(f"malformed JSON: {error.msg} (column {error.colno})", file=path,
                         line=error.lineno, field=field) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not a UTF-8 text file (byte {error.start})", file=path,
                         field=field) from None
    except RecursionError:
        raise InputError("malformed JSON: nested too deeply", file=path, field=field) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", file=path,
                         field=field) from None
