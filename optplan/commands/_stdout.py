"""Standard output belongs to the command: native libraries write to stderr while it runs.

A solver library linked into this process (HiGHS through highspy, OR-Tools) or a solver
subprocess may print to file descriptor 1 on its own. ``--json`` promises exactly one JSON
object on stdout, so while a command runs, descriptor 1 points at stderr, and ``sys.stdout``
(what the command prints its result to) writes to the original standard output.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

__all__ = ["command_stdout"]


def _flush_c_streams() -> None:
    """Flush C stdio buffers, so that a library's buffered output leaves while fd 1 still
    points at stderr."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError, TypeError):
        pass


def _fd_of(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


@contextlib.contextmanager
def command_stdout():
    """While active: fd 1 is a copy of fd 2; ``sys.stdout`` still reaches the original
    standard output (when it wrote to fd 1; a replaced ``sys.stdout``, as under pytest's
    capture, is left as it is)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
    except (OSError, ValueError):  # no usable fd 1 or 2: nothing to protect
        yield
        return
    original = sys.stdout
    if _fd_of(original) == 1:
        sys.stdout = io.TextIOWrapper(io.FileIO(saved, "w", closefd=False),
                                      encoding=original.encoding, errors=original.errors,
                                      write_through=True)
    try:
        yield
    finally:
        _flush_c_streams()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        sys.stdout = original
        os.dup2(saved, 1)
        os.close(saved)
