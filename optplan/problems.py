"""The problem table: every planning problem declares one :class:`ProblemSpec`.

A spec names the problem (its CLI spelling), its instance and solution types with their file
readers and writers, its independent validator, its lower bound and its objective. Everything
that works on "any problem" — :func:`optplan.solve`, :func:`optplan.validate`,
:func:`optplan.lower_bound`, the method registry, the CLI's ``--problem`` choices and the
experiment runner — reads this table, so a new problem is one package with one
:func:`register_problem` call and no change here or in the dispatchers.

Where specs come from: :mod:`optplan.records` declares the two problems over usage records
(``shared-objects``, ``offsets``); every package ``optplan/<name>/`` with a module
``problem.py`` declares its own (e.g. ``optplan.preload.problem``). The table is filled on
first use; this module imports none of them by name.

>>> from optplan import problems
>>> [spec.name for spec in problems().values()][:2]
['shared-objects', 'offsets']
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar

from optplan.errors import InputError

__all__ = ["Problem", "ProblemSpec", "register_problem", "problems", "get_problem",
           "canonical_name", "LOAD_OPTIONS", "SOLVE_OPTIONS"]

LOAD_OPTIONS = ("alignment",)
"""Instance options a loader takes (``--alignment A``)."""
SOLVE_OPTIONS = ("inplace", "budget")
"""Instance options that shape the instance a run solves (``--inplace``, ``--budget BYTES``);
:func:`optplan.solve` takes them as keywords. A spec lists the options that apply to it."""


class Problem(str):
    """A problem's name on the table, in its CLI spelling (``Problem("offsets")``).

    It is a plain string (``Problem.OFFSETS == "offsets"``), one object per name (so ``is``
    compares too); :meth:`parse` also accepts the older spellings a spec lists as ``aliases``
    and fails with the valid names.
    """

    __slots__ = ()
    _names: ClassVar[dict[str, "Problem"]] = {}
    SHARED_OBJECTS: ClassVar["Problem"]
    OFFSETS: ClassVar["Problem"]

    def __new__(cls, name: str) -> "Problem":
        name = str(name)
        known = cls._names.get(name)
        if known is None:
            known = cls._names[name] = super().__new__(cls, name)
        return known

    @classmethod
    def parse(cls, text: "str | Problem") -> "Problem":
        """The canonical name of ``text`` (an InputError naming the valid problems)."""
        return get_problem(text).problem

    @property
    def cli_name(self) -> str:
        return str(self)

    @property
    def value(self) -> str:
        """The name (as an enum member's ``value``): the spelling of every output."""
        return str(self)

    @property
    def spec(self) -> "ProblemSpec":
        return get_problem(self)


Problem.SHARED_OBJECTS = Problem("shared-objects")
Problem.OFFSETS = Problem("offsets")


@dataclass(frozen=True)
class ProblemSpec:
    """Everything the core needs to know about one problem.

    Parameters
    ----------
    name
        The CLI spelling (``shared-objects``); also the name in result rows and JSON output.
    title, objective_name, unit
        For help texts and tables: ``"shared objects"``, ``"sum of object sizes"``, ``"bytes"``.
    instance_type, solution_type
        The plain data classes.
    load_instance
        ``load_instance(path, **load_options) -> instance`` (``alignment`` when the spec takes
        it); raises InputError naming the file, line and field.
    read_solution, write_solution
        ``read_solution(instance, path)`` and ``write_solution(instance, solution, path)``.
    validate
        ``validate(instance, solution) -> list[Violation]``, the independent validator.
    lower_bound
        ``lower_bound(instance) -> int``, the combinatorial lower bound of the objective.
    objective
        ``objective(instance, solution) -> int``, recomputed from the solution (never trusted).
    options
        The :data:`LOAD_OPTIONS` and :data:`SOLVE_OPTIONS` that apply to this problem.
    prepare
        ``prepare(instance, **options) -> instance``: the instance a run solves, given the
        solve options that apply (only those given are passed); ``None``: as loaded.
    solution_suffix
        The suffix of solution files (``.csv``, ``.json``).
    warm_start
        Heuristics (registered names) an exact method starts from, fast and strong ones
        first; the best valid answer wins, the earlier one on a tie.
    inplace_warm_start
        Heuristics tried after ``warm_start`` when the instance has in-place pairs: the ones
        that use them (``mxnet`` for shared objects and offsets; the others ignore the pairs).
    packages
        Packages whose modules register this problem's methods (walked by the registry).
    aliases
        Older spellings :meth:`Problem.parse` still accepts (``shared_objects``).
    """

    name: str
    title: str
    instance_type: type
    solution_type: type
    load_instance: Callable[..., Any]
    read_solution: Callable[[Any, Path], Any]
    write_solution: Callable[[Any, Any, Path], None]
    validate: Callable[[Any, Any], list]
    lower_bound: Callable[[Any], int]
    objective: Callable[[Any, Any], int]
    objective_name: str
    unit: str
    options: tuple[str, ...] = ()
    prepare: Callable[..., Any] | None = None
    solution_suffix: str = ".csv"
    warm_start: tuple[str, ...] = ()
    inplace_warm_start: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default=())

    def __post_init__(self):
        unknown = set(self.options) - set(LOAD_OPTIONS) - set(SOLVE_OPTIONS)
        if unknown:
            raise ValueError(f"problem {self.name!r}: unknown options {sorted(unknown)}")

    def __repr__(self) -> str:
        return (f"ProblemSpec({self.name!r}: {self.title}, minimise the {self.objective_name} "
                f"in {self.unit})")

    @property
    def problem(self) -> Problem:
        return Problem(self.name)

    @property
    def legacy_name(self) -> str:
        """The spelling of result rows written before the table (the first alias, else the
        name); job ids are hashed with it, so that they stay what they always were."""
        return self.aliases[0] if self.aliases else self.name

    @property
    def solve_options(self) -> tuple[str, ...]:
        return tuple(name for name in self.options if name in SOLVE_OPTIONS)

    def prepared(self, instance, **options):
        """``instance`` with the given solve options that apply to this problem."""
        given = {k: v for k, v in options.items() if k in self.solve_options}
        return instance if self.prepare is None else self.prepare(instance, **given)


_TABLE: dict[str, ProblemSpec] = {}
_loaded = False
_lock = threading.RLock()   # a second thread must not see a half-filled table


def register_problem(spec: ProblemSpec) -> ProblemSpec:
    """Put ``spec`` on the table (once per name)."""
    with _lock:
        if spec.name in _TABLE:
            raise ValueError(f"problem {spec.name!r} registered twice")
        _TABLE[spec.name] = spec
    return spec


def _problem_modules() -> list[str]:
    """:mod:`optplan.records`, then ``optplan.<package>.problem`` for every package that has
    one, in name order."""
    root = Path(__file__).resolve().parent
    found = ["optplan.records"]
    for package in sorted(pkgutil.iter_modules([str(root)]), key=lambda m: m.name):
        if package.ispkg and (root / package.name / "problem.py").is_file():
            found.append(f"optplan.{package.name}.problem")
    return found


def _load() -> None:
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True   # set first: the modules imported below call register_problem()
        for name in _problem_modules():
            importlib.import_module(name)


def problems() -> dict[str, ProblemSpec]:
    """The table: every problem's spec by name, records problems first."""
    _load()
    return dict(_TABLE)


def get_problem(name: "str | Problem | ProblemSpec") -> ProblemSpec:
    """The spec of ``name`` (its CLI spelling or an alias); the error lists the valid names."""
    if isinstance(name, ProblemSpec):
        return name
    _load()
    key = str(name).strip().lower()
    spec = _TABLE.get(key)
    if spec is None:
        spec = next((s for s in _TABLE.values() if key in s.aliases), None)
    if spec is None:
        raise InputError(f"unknown problem {name!r}; valid: {', '.join(_TABLE)}",
                         field="problem")
    return spec


def canonical_name(name: str) -> str:
    """The table's spelling of ``name`` (``shared_objects`` -> ``shared-objects``); a name
    the table does not know is returned as it is (e.g. in rows of a plugin's problem)."""
    try:
        return get_problem(name).name
    except InputError:
        return name
