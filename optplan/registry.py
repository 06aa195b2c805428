"""The method registry: names → functions and the problems they solve (networkx style).

Methods register themselves with :func:`register`; every module below ``optplan.heuristics``,
``optplan.exact`` and ``optplan.peers`` is imported on first use, so a new method needs no edit here.

A heuristic is ``func(instance, **params) -> Solution | None``; an exact method (or a bound)
returns a :class:`~optplan.result.SolverOutcome`. The solver flags ``time_limit``, ``workers``
and ``seed`` are passed only to functions that take them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
from dataclasses import dataclass, field
from typing import Callable

from optplan.errors import UnknownMethodError
from optplan.model import Problem

__all__ = ["MethodInfo", "register", "get_method", "methods", "KINDS", "INPUTS"]

KINDS = ("heuristic", "exact", "bound")
INPUTS = ("records", "graph")
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
        return sorted(self.implementations, key=lambda p: list(Problem).index(p))

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

    def accepts(self, problem: Problem) -> set[str] | None:
        """Keyword parameters of the implementation (``None``: it takes ``**kwargs``)."""
        parameters = inspect.signature(self.implementations[problem]).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in parameters):
            return None
        return {p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


_REGISTRY: dict[str, MethodInfo] = {}
_loaded = False
_load_lock = threading.RLock()  # a second thread must not see a half-filled registry


def register(name: str, problem: Problem | str, *, kind: str = "heuristic",
             input: str = "records", reference: str = "") -> Callable:
    """Decorator: make ``func`` the implementation of method ``name`` for ``problem``."""
    problem = Problem.parse(problem)
    if kind not in KINDS or input not in INPUTS:
        raise ValueError(f"bad kind {kind!r} or input {input!r}")

    def decorator(func: Callable) -> Callable:
        info = _REGISTRY.setdefault(name, MethodInfo(name, kind, input))
        if (info.kind, info.input) != (kind, input):
            raise ValueError(f"method {name!r} registered with two kinds or inputs")
        if problem in info.implementations:
            raise ValueError(f"method {name!r} registered twice for {problem.value}")
        info.implementations[problem] = func
        info.references[problem] = reference
        return func

    return decorator


def _load() -> None:
    global _loaded
    with _load_lock:
        if _loaded:
            return
        _loaded = True  # set first: the modules imported below call register()
        for module_name in _MODULES:
            importlib.import_module(module_name)
        for package_name in _PACKAGES:
            package = importlib.import_module(package_name)
            for module in pkgutil.walk_packages(package.__path__, package_name + "."):
                if not module.name.rsplit(".", 1)[-1].startswith("_"):
                    importlib.import_module(module.name)


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
