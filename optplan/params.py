"""Type checks of method parameters against the method's own signature.

A method states what a parameter is by its default (``stop_at_bound: bool = True``) or its
annotation (``match_range: int | None = None``); a value of another type is refused with an
error naming the parameter, so that ``hint = "yes"`` in a config is an error instead of a
truthy string. Parameters whose type the signature does not tell (``export_path=None``,
``**solver_params``) are left to the method, and so are the keyword contract's ``warm_start`` and
``initial_solution`` (:data:`optplan.registry.EXACT_CONTRACT`).
"""

from __future__ import annotations

import inspect
import numbers
import types
import typing
from typing import Callable

from optplan.errors import InputError

__all__ = ["check_parameter", "expected_type", "MAX_FLAG"]

_CHECKED = (bool, int, float, str)

MAX_FLAG = 2**31 - 1
"""The largest seed or worker count: the solvers take them as 32-bit integers."""


def expected_type(func: Callable, name: str) -> type | None:
    """``bool``, ``int``, ``float`` or ``str`` when ``func``'s signature tells the type of
    keyword parameter ``name`` (``None`` when it does not, or has no such parameter). The
    exact methods' ``warm_start`` and ``initial_solution`` take what the keyword contract says
    (``True``/``False``, heuristic names or callables; a solution), whatever their default."""
    if name in ("warm_start", "initial_solution"):
        return None     # checked by check_parameter against the contract
    try:
        signature = inspect.signature(func, eval_str=True)
    except (NameError, TypeError, ValueError):
        signature = inspect.signature(func)
    parameter = signature.parameters.get(name)
    if parameter is None or parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
        return None
    annotation = parameter.annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = options[0] if len(options) == 1 else None
    if annotation in _CHECKED:
        return annotation
    default = parameter.default
    if default is not parameter.empty and type(default) in _CHECKED:
        return type(default)
    return None


def _matches(value, wanted: type) -> bool:
    if wanted is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if wanted is int:
        return isinstance(value, numbers.Integral)
    if wanted is float:
        return isinstance(value, numbers.Real)
    return isinstance(value, wanted)


def check_parameter(func: Callable, name: str, value, *, field: str | None = None) -> None:
    """Raise :class:`InputError` (naming ``field``, default ``name``) when ``value`` is not of
    the type ``func``'s signature gives parameter ``name``; ``None`` passes where the default
    is ``None``."""
    if name == "warm_start":
        _check_warm_start(value, field or name)
        return
    wanted = expected_type(func, name)
    if wanted is None:
        return
    default = inspect.signature(func).parameters[name].default
    if value is None and default is None:
        return
    if not _matches(value, wanted):
        words = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
        raise InputError(f"must be {words[wanted]}, got {value!r}", field=field or name)


def _check_warm_start(value, field: str) -> None:
    """``warm_start`` is true, false, or a list of heuristic names or callables (``None``: the
    method's default)."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(item, str) or callable(item) for item in value):
        return
    raise InputError(f"must be true, false or a list of heuristic names, got {value!r}",
                     field=field)
