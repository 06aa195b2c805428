"""Exception types. Every message names the file, line and field it is about."""

from __future__ import annotations

__all__ = ["OptplanError", "InputError", "UnknownMethodError", "SolverRangeError"]


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
        return f"{where}{field}{self.message}".replace("\n", " ")

    def located(self, file: str | None = None, line: int | None = None) -> "InputError":
        """The same error with a file (and line) filled in where they were unknown."""
        return InputError(self.message, file=self.file or file,
                          line=self.line if self.line is not None else line, field=self.field)


class UnknownMethodError(OptplanError, KeyError):
    """A method name that the registry does not know, or that does not solve the problem."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class SolverRangeError(InputError):
    """Values too large for a solver's integer range (after scaling by their gcd)."""
