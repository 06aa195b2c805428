"""Exception types. Every message names the file, line and field it is about."""

from __future__ import annotations

import contextlib

__all__ = ["OptplanError", "InputError", "UnknownMethodError", "SolverRangeError",
           "about_file"]


def _one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped (``\\x1e``), so that
    a message quoting a file's bytes stays one line for every reader."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


class OptplanError(Exception):
    """Base class of every error optplan raises on purpose."""


class InputError(OptplanError, ValueError):
    """Bad input data: a malformed file, an out-of-range value, an inconsistent instance.

    ``str(error)`` is one line: ``file:line: field: message`` with the parts that are known.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.file is not None:
            where = str(self.file) + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        field = f"{self.field}: " if self.field else ""
        return _one_line(f"{where}{field}{self.message}")

    def located(self, file: str | None = None, line: int | None = None) -> "InputError":
        """The same error with a file (and line) filled in where they were unknown."""
        return InputError(self.message, file=self.file or file,
                          line=self.line if self.line is not None else line, field=self.field)


@contextlib.contextmanager
def about_file(path, *, unless_fields=()):
    """Give an :class:`InputError` raised inside, that names no file, the file ``path``: what
    a method finds wrong while it runs (``graph.ops``, sizes beyond a solver's range) is in
    the instance file. Errors about the fields in ``unless_fields`` (flags) stay as they are."""
    try:
        yield
    except InputError as error:
        if error.file is not None or error.field in unless_fields:
            raise
        raise error.located(str(path)) from None


class UnknownMethodError(OptplanError, KeyError):
    """A method name that the registry does not know, or that does not solve the problem."""

    def __str__(self) -> str:  # KeyError would quote the message
        return _one_line(self.args[0])


class SolverRangeError(InputError):
    """Values too large for a solver's integer range (after scaling by their gcd)."""
