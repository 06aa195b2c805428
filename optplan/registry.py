"""The method registry: names → functions and the problems they solve (networkx style).

Methods are plain module-level functions that register themselves with :func:`register`.
Every module below ``optplan.heuristics``, ``optplan.exact`` and ``optplan.peers`` (wrappers
of optional third-party planners, not built-in), :mod:`optplan.bounds`, and
every module of the packages a problem spec lists (``ProblemSpec.packages``) is imported on
first use, so a new method (or a new problem's methods) needs no edit here.

A heuristic is ``func(instance, **params) -> Solution | None``; an exact method (or a bound)
returns a :class:`~optplan.result.SolverOutcome`. Every exact method of every problem takes
the keyword contract :data:`EXACT_CONTRACT` (``time_limit, workers, seed, warm_start,
initial_solution, **solver_params``); the solver flags ``time_limit``, ``workers`` and
``seed`` are passed to other methods only when they take them.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import threading
from dataclasses import dataclass, field
from typing import Callable

from optplan.errors import UnknownMethodError
from optplan.problems import Problem, problems

__all__ = ["MethodInfo", "register", "get_method", "methods", "KINDS", "INPUTS",
           "EXACT_CONTRACT"]

KINDS = ("heuristic", "exact", "bound")
INPUTS = ("records", "graph")
EXACT_CONTRACT = ("time_limit", "workers", "seed", "warm_start", "initial_solution")
"""The keyword parameters of every exact method, followed by ``**solver_params`` (passed
straight to the solver)."""
_PACKAGES = ("optplan.heuristics", "optplan.exact", "optplan.peers")
_PEERS = "optplan.peers."  # wrappers of optional third-party planners: not built-in
_MODULES = ("optplan.bounds",)


@dataclass
class MethodInfo:
    name: str
    kind: str
    input: str
    implementations: dict[Problem, Callable] = field(default_factory=dict)
    references: dict[Problem, str] = field(default_factory=dict)

    @property
    def problems(self) -> list[Problem]:
        order = list(problems())
        return sorted(self.implementations, key=order.index)

    @property
    def builtin(self) -> bool:
        """Registered by optplan itself (not by a plugin, a test or a peer wrapper). Warm
        starts and portfolio runs use built-in methods only, so their results do not depend
        on loaded plugins or installed peers."""
        return all(func.__module__.startswith("optplan.")
                   and not func.__module__.startswith(_PEERS)
                   for func in self.implementations.values())

    @property
    def reference(self) -> str:
        return "; ".join(dict.fromkeys(r for r in self.references.values() if r))

    def accepts(self, problem: Problem | str) -> set[str] | None:
        """Keyword parameters of the implementation (``None``: it takes ``**kwargs``)."""
        parameters = self._signature(problem).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in parameters):
            return None
        return {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}

    def parameters(self) -> list[dict]:
        """The keyword parameters of every implementation, in signature order:
        ``{"name", "default", "problems"}`` each (``default`` as JSON data; ``None`` when there
        is none), and ``{"name": "solver_params", "kind": "var_keyword", ...}`` for
        ``**solver_params``."""
        merged: dict[str, dict] = {}
        for problem in self.problems:
            for position, parameter in enumerate(self._signature(problem).parameters.values()):
                if position == 0 or parameter.kind in (parameter.VAR_POSITIONAL,
                                                       parameter.POSITIONAL_ONLY):
                    continue   # the instance
                entry = merged.setdefault(parameter.name, {
                    "name": parameter.name, "default": _json_default(parameter.default),
                    "problems": []})
                if parameter.kind is parameter.VAR_KEYWORD:
                    entry["kind"] = "var_keyword"
                entry["problems"].append(problem.cli_name)
        entries = list(merged.values())
        return ([e for e in entries if "kind" not in e] + [e for e in entries if "kind" in e])

    def _signature(self, problem: Problem | str) -> inspect.Signature:
        return inspect.signature(self.implementations[Problem.parse(problem)])


def _json_default(default):
    if default is inspect.Parameter.empty:
        return None
    try:
        json.dumps(default)
    except (TypeError, ValueError):
        return repr(default)
    return default


_REGISTRY: dict[str, MethodInfo] = {}
_PENDING: list[tuple] = []   # registrations whose problem is resolved once the table is full
_loaded = False
_load_lock = threading.RLock()  # a second thread must not see a half-filled registry


def register(name: str, problem: Problem | str, *, kind: str = "heuristic",
             input: str = "records", reference: str = "") -> Callable:
    """Decorator: make ``func`` the implementation of method ``name`` for ``problem`` (a name
    on the problem table)."""
    if kind not in KINDS or input not in INPUTS:
        raise ValueError(f"bad kind {kind!r} or input {input!r}")

    def decorator(func: Callable) -> Callable:
        with _load_lock:
            _PENDING.append((name, problem, kind, input, reference, func))
            if _loaded:
                _resolve()
        return func

    return decorator


def _resolve() -> None:
    """File the pending registrations under their problems' canonical names."""
    while _PENDING:
        name, problem, kind, input, reference, func = _PENDING.pop(0)
        problem = Problem.parse(problem)
        info = _REGISTRY.setdefault(name, MethodInfo(name, kind, input))
        if (info.kind, info.input) != (kind, input):
            raise ValueError(f"method {name!r} registered with two kinds or inputs")
        if problem in info.implementations:
            raise ValueError(f"method {name!r} registered twice for {problem}")
        info.implementations[problem] = func
        info.references[problem] = reference


def _walk(package_name: str) -> None:
    package = importlib.import_module(package_name)
    for module in pkgutil.walk_packages(package.__path__, package_name + "."):
        if not module.name.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(module.name)


def _load() -> None:
    global _loaded
    with _load_lock:
        if _loaded:
            return
        for module_name in _MODULES:
            importlib.import_module(module_name)
        packages = list(_PACKAGES) + [p for spec in problems().values() for p in spec.packages]
        for package_name in dict.fromkeys(packages):
            _walk(package_name)
        _loaded = True
        _resolve()


def methods(*, builtin_only: bool = False) -> dict[str, MethodInfo]:
    """Every registered method by name, in name order (``builtin_only``: optplan's own)."""
    _load()
    return {name: info for name, info in sorted(_REGISTRY.items())
            if info.builtin or not builtin_only}


def get_method(name: str | Callable, problem: Problem | str | None = None) -> MethodInfo:
    """Look up a method by name; the error lists the valid names (for ``problem``)."""
    registry = methods()
    problem = None if problem is None else Problem.parse(problem)
    info = registry.get(name) if isinstance(name, str) else None
    if info is None or (problem is not None and problem not in info.implementations):
        valid = [n for n, i in registry.items() if problem is None or problem in i.implementations]
        scope = f" for {problem.cli_name}" if problem is not None else ""
        known = " (it does not solve this problem)" if info is not None else ""
        raise UnknownMethodError(f"unknown method {name!r}{scope}{known}; valid: "
                                 + ", ".join(valid))
    return info
