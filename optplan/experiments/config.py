"""Experiment configs: one TOML file, read and type-checked before anything runs.

A config names instances, problems, methods (with parameters), time limits, seeds, solver
workers per job and repetitions; :mod:`optplan.experiments.grid` expands it into jobs. The
schema follows benchopt's idea of one file per benchmark grid, written in TOML::

    name = "smoke"                        # default: the file's stem
    problems = ["shared-objects", "offsets"]
    time_limits = [2.0]                   # seconds, for exact methods (a number or a list)
    seeds = [0]                           # 0 .. 2^31-1 (the solvers' 32-bit seeds)
    workers = 1                           # solver threads per job (1 .. 2^31-1)
    repetitions = 1
    inplace = false                       # or [false, true]
    plugins = []                          # .py files or modules that register extra methods

    [watchdog]                            # kill a job at factor * time_limit + grace seconds
    factor = 1.5
    grace = 10.0
    heuristic_limit = 600.0               # stands in for the limit of a method that has none

    [preload]                             # budget sweep of the preload problem (optional)
    budgets = 8                           # 8 budgets evenly spaced from each instance's
                                          # minimum feasible budget to its no-pressure budget,
                                          # or an explicit list in bytes: [6000000, 8000000]
    time_limit = 60.0                     # seconds for each of those two CP-SAT solves
    spacing = "linear"                    # or "geometric" (a counted sweep's spacing)
    slicing = false                       # true: from the minimum budget with layer slicing,
                                          # plus the minimum without (a counted sweep)

    [[instances]]
    path = "data/examples/*.json"         # globs, relative to the config file or the repo root;
                                          # "${shared}/..." is $OPTPLAN_SHARED or <repo>/../shared
    [[instances]]
    name = "mobilenet_v2"                 # catalogue names
    optional = true                       # missing: a warning, not an error
    [[instances]]
    generator = "minimalloc"              # optplan.generators kinds
    tensors = [100, 1000]
    seed = [0, 1]
    alignment = 64                        # any entry: override the instances' alignment
    inplace = [false, true]               # any entry: override the top-level inplace

    [[methods]]
    name = "cpsat"
    params = { hint = true }              # fixed keyword parameters
    grid = { some_flag = [true, false] }  # swept parameters (one job per combination)
    time_limits = [1.0]                   # overrides; so may seeds, workers and problems
    max_tensors = 1000                    # skip larger instances
    [[methods]]
    kind = "heuristic"                    # every built-in method of a kind ...
    input = "records"                     # ... that needs only usage records (the default)
    exclude = ["naive"]

Preload instances (``optplan.preload`` JSON: ``layers`` and ``tensors``) go with the
``preload`` problem only, usage-record instances with the others. Without a ``[preload]``
table a preload job runs at the budget its instance file states; with one, every preload job
carries one budget of the sweep (part of its ``job_id``, recorded in the row's ``budget``).
The two endpoints of a counted sweep come from :func:`optplan.preload.pareto.minimum_budget`
(with ``slicing = true``, over every layer slicing) and
:func:`~optplan.preload.pareto.no_pressure_budget` (CP-SAT, ``time_limit`` each, the config's
``workers`` and first seed); a run directory freezes them in ``preload_budgets.json`` so that
a resumed run sweeps the same budgets.

Strings stand for short entries: ``instances = ["data/x.json", "mobilenet_v2"]`` (a path when
it has a ``/``, a glob character or a file suffix, else a catalogue name) and
``methods = ["greedy_by_size", "cpsat"]``.

Every error is an :class:`~optplan.errors.InputError` naming the file and the key
(``methods[2].params``); unknown keys are errors too, so typos do not pass silently, and so
are parameter values of another type than the method's signature gives
(:mod:`optplan.params`: ``warm_start = "yes"``).
"""

from __future__ import annotations

import math
import numbers
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from optplan.errors import InputError
from optplan.model import MAX_VALUE
from optplan.params import MAX_FLAG
from optplan.problems import Problem

__all__ = ["ExperimentConfig", "InstanceSpec", "MethodSpec", "PreloadSweep", "WatchdogSettings",
           "load_config", "parse_config"]

_GLOB_CHARACTERS = set("*?[")
_METHOD_KINDS = ("heuristic", "exact", "bound")
_METHOD_INPUTS = ("records", "graph", "any")
SPACINGS = ("linear", "geometric")


@dataclass(frozen=True)
class WatchdogSettings:
    """When the runner kills a job: ``factor * limit + grace`` seconds after it started.

    ``limit`` is the job's time limit, or ``heuristic_limit`` for a method without one.
    """

    factor: float = 1.5
    grace: float = 10.0
    heuristic_limit: float = 600.0

    def deadline(self, time_limit: float | None) -> float:
        limit = self.heuristic_limit if time_limit is None else time_limit
        return self.factor * limit + self.grace


@dataclass(frozen=True)
class PreloadSweep:
    """The ``[preload]`` table: the budgets every preload job of the grid runs at.

    Exactly one of ``count`` (that many budgets from the instance's minimum feasible budget
    to its no-pressure budget, both included, ``spacing`` ``"linear"`` or ``"geometric"``)
    and ``budgets`` (explicit budgets in bytes, the same for every instance) is set.
    ``time_limit`` bounds each endpoint solve of a counted sweep. With ``slicing`` a counted
    sweep starts at the minimum feasible budget with layer slicing allowed and also holds the
    minimum without it (where the curves without slicing begin).
    """

    count: int | None = None
    budgets: tuple[int, ...] = ()
    time_limit: float = 60.0
    spacing: str = "linear"
    slicing: bool = False


@dataclass(frozen=True)
class InstanceSpec:
    """One ``[[instances]]`` entry as written (resolved to files by the grid)."""

    where: str
    paths: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    generator: str | None = None
    tensors: tuple[int, ...] = ()
    seeds: tuple[int, ...] = (0,)
    alignment: int | None = None
    optional: bool = False
    inplace: tuple[bool, ...] | None = None


@dataclass(frozen=True)
class MethodSpec:
    """One ``[[methods]]`` entry: a method ``name`` or a ``kind`` selector, with overrides."""

    where: str
    name: str | None = None
    kind: str | None = None
    input: str = "records"
    exclude: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    problems: tuple[Problem, ...] | None = None
    time_limits: tuple[float, ...] | None = None
    seeds: tuple[int, ...] | None = None
    workers: int | None = None
    max_tensors: int | None = None


@dataclass(frozen=True)
class ExperimentConfig:
    """A parsed, type-checked experiment config (see the module docstring for the keys)."""

    path: Path
    text: str
    data: dict
    name: str
    description: str
    problems: tuple[Problem, ...]
    instances: tuple[InstanceSpec, ...]
    methods: tuple[MethodSpec, ...]
    time_limits: tuple[float, ...]
    seeds: tuple[int, ...]
    workers: int
    repetitions: int
    inplace: tuple[bool, ...]
    plugins: tuple[str, ...]
    watchdog: WatchdogSettings
    preload: PreloadSweep | None = None

    def error(self, message: str, key: str) -> InputError:
        return InputError(message, file=str(self.path), field=key)


class _Table:
    """Typed access to one TOML table; remembers which keys were read to flag the rest."""

    def __init__(self, data: dict, file: str, where: str = ""):
        self.data, self.file, self.where, self.used = data, file, where, set()

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def error(self, name: str, message: str) -> InputError:
        return InputError(message, file=self.file, field=self.key(name))

    def has(self, name: str) -> bool:
        return name in self.data

    def get(self, name: str, default=None):
        self.used.add(name)
        return self.data.get(name, default)

    def string(self, name: str, default: str | None = None, *, choices=None) -> str | None:
        value = self.get(name, default)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.error(name, f"must be a non-empty string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.error(name, f"unknown value {value!r}; valid: {', '.join(choices)}")
        return value

    def integer(self, name: str, default: int | None = None, *, minimum: int = 0,
                maximum: int = MAX_VALUE) -> int | None:
        value = self.get(name, default)
        if value is None:
            return None
        return self._check_int(name, value, minimum, maximum)

    def number(self, name: str, default: float | None = None, *,
               allow_zero: bool = False) -> float | None:
        value = self.get(name, default)
        if value is None:
            return None
        return self._check_number(name, value, allow_zero)

    def integers(self, name: str, default=None, *, minimum: int = 0,
                 maximum: int = MAX_VALUE) -> tuple[int, ...] | None:
        values = self._as_list(name, self.get(name, default))
        return None if values is None else tuple(self._check_int(name, v, minimum, maximum)
                                                 for v in values)

    def numbers(self, name: str, default=None) -> tuple[float, ...] | None:
        values = self._as_list(name, self.get(name, default))
        return None if values is None else tuple(self._check_number(name, v, False)
                                                 for v in values)

    def strings(self, name: str, default=None, *,
                allow_empty: bool = False) -> tuple[str, ...] | None:
        value = self.get(name, default)
        if allow_empty and value == []:
            return ()
        values = self._as_list(name, value)
        if values is None:
            return None
        for value in values:
            if not isinstance(value, str) or not value:
                raise self.error(name, f"must be a non-empty string or a list of them, "
                                       f"got {value!r}")
        return tuple(values)

    def booleans(self, name: str, default=None) -> tuple[bool, ...] | None:
        values = self._as_list(name, self.get(name, default))
        if values is None:
            return None
        for value in values:
            if not isinstance(value, bool):
                raise self.error(name, f"must be true/false or a list of them, got {value!r}")
        return tuple(dict.fromkeys(values))

    def problems(self, name: str, default=None) -> tuple[Problem, ...] | None:
        values = self.strings(name, default)
        if values is None:
            return None
        try:
            return tuple(dict.fromkeys(Problem.parse(v) for v in values))
        except InputError as error:
            raise self.error(name, error.message) from None

    def table(self, name: str) -> "_Table":
        value = self.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, f"must be a table, got {type(value).__name__}")
        return _Table(value, self.file, self.key(name))

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise self.error(unknown[0], "unknown key")

    def _as_list(self, name: str, value) -> list | None:
        if value is None:
            return None
        values = value if isinstance(value, list) else [value]
        if not values:
            raise self.error(name, "must not be empty")
        return values

    def _check_int(self, name: str, value, minimum: int, maximum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise self.error(name, f"must be an integer, got {value!r}")
        if value < minimum:
            raise self.error(name, f"must be >= {minimum}, got {value}")
        if value > maximum:
            raise self.error(name, f"must be <= {maximum}, got {value}")
        return int(value)

    def _check_number(self, name: str, value, allow_zero: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self.error(name, f"must be a number, got {value!r}")
        if not (value > 0 or (allow_zero and value == 0)):
            raise self.error(name, f"must be > 0, got {value}")
        if not math.isfinite(value):
            raise self.error(name, f"must be finite, got {value}")
        return float(value)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and type-check the experiment config at ``path``.

    Raises
    ------
    InputError
        For an unreadable file, malformed TOML, an unknown key or a value of the wrong type;
        the message names the file and the key.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read the config: {error.strerror or error}",
                         file=str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not a UTF-8 text file (byte {error.start})", file=str(path)) from None
    return parse_config(text, path)


def parse_config(text: str, path: str | Path) -> ExperimentConfig:
    """Parse config ``text`` that came from ``path`` (used in error messages)."""
    path = Path(path)
    file = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"\(at line (\d+), column \d+\)", str(error))
        line = int(where.group(1)) if where else None
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "",
                         str(error))
        raise InputError(f"malformed TOML: {message}", file=file, line=line) from None
    top = _Table(data, file)
    name = top.string("name", path.stem)
    description = top.string("description", "") if top.has("description") else ""
    problems = top.problems("problems")
    if problems is None:
        raise top.error("problems", "missing (e.g. problems = [\"offsets\"])")
    time_limits = top.numbers("time_limits", [10.0])
    seeds = top.integers("seeds", [0], maximum=MAX_FLAG)
    workers = top.integer("workers", 1, minimum=1, maximum=MAX_FLAG)
    repetitions = top.integer("repetitions", 1, minimum=1)
    inplace = top.booleans("inplace", [False])
    plugins = top.strings("plugins", allow_empty=True) or ()
    watchdog = _watchdog(top.table("watchdog"))
    preload = _preload(top.table("preload")) if top.has("preload") else None
    instances = _entries(top, "instances", _instance_spec)
    methods = _entries(top, "methods", _method_spec)
    top.finish()
    return ExperimentConfig(path=path, text=text, data=data, name=name, description=description,
                            problems=problems, instances=instances, methods=methods,
                            time_limits=time_limits, seeds=seeds, workers=workers,
                            repetitions=repetitions, inplace=inplace, plugins=plugins,
                            watchdog=watchdog, preload=preload)


def _preload(table: _Table) -> PreloadSweep:
    value = table.get("budgets")
    if value is None:
        raise table.error("budgets", "missing (a count such as 8, or a list of budgets in bytes)")
    time_limit = table.number("time_limit", PreloadSweep.time_limit)
    spacing = table.string("spacing", PreloadSweep.spacing, choices=SPACINGS)
    slicing = table.get("slicing", False)
    if not isinstance(slicing, bool):
        raise table.error("slicing", f"must be true or false, got {slicing!r}")
    if isinstance(value, list):
        budgets = tuple(sorted(set(table.integers("budgets", minimum=1))))
        for key in ("spacing", "slicing"):
            if table.has(key):
                raise table.error(key, "applies to a counted sweep (budgets = N) only")
        sweep = PreloadSweep(budgets=budgets, time_limit=time_limit)
    else:
        sweep = PreloadSweep(count=table.integer("budgets", minimum=2), time_limit=time_limit,
                             spacing=spacing, slicing=slicing)
    table.finish()
    return sweep


def _watchdog(table: _Table) -> WatchdogSettings:
    defaults = WatchdogSettings()
    settings = WatchdogSettings(
        factor=table.number("factor", defaults.factor),
        grace=table.number("grace", defaults.grace, allow_zero=True),
        heuristic_limit=table.number("heuristic_limit", defaults.heuristic_limit))
    if settings.factor < 1:
        raise table.error("factor", f"must be >= 1, got {settings.factor}")
    table.finish()
    return settings


def _entries(top: _Table, name: str, parse) -> tuple:
    value = top.get(name)
    if value is None:
        raise top.error(name, "missing")
    if not isinstance(value, list) or not value:
        raise top.error(name, "must be a non-empty array of tables or strings")
    entries = []
    for index, item in enumerate(value):
        where = f"{name}[{index}]"
        if isinstance(item, str):
            item = _shorthand(name, item)
        if not isinstance(item, dict):
            raise InputError(f"must be a table or a string, got {item!r}", file=top.file,
                             field=where)
        entries.append(parse(_Table(item, top.file, where)))
    return tuple(entries)


def _shorthand(section: str, text: str) -> dict:
    if section == "methods":
        return {"name": text}
    looks_like_path = ("/" in text or _GLOB_CHARACTERS & set(text)
                       or Path(text).suffix.lower() in (".json", ".csv"))
    return {"path": text} if looks_like_path else {"name": text}


def _instance_spec(table: _Table) -> InstanceSpec:
    paths = table.strings("path") or ()
    names = table.strings("name") or ()
    generator = table.string("generator")
    given = [key for key, present in (("path", paths), ("name", names),
                                      ("generator", generator)) if present]
    if len(given) != 1:
        raise table.error("path", "give exactly one of path, name or generator"
                          + (f" (got {', '.join(given)})" if given else ""))
    tensors, seeds = (), (0,)
    if generator is not None:
        tensors = table.integers("tensors", minimum=1)
        if tensors is None:
            raise table.error("tensors", "missing (the number of tensors to generate)")
        seeds = table.integers("seed", [0], maximum=MAX_FLAG)
    alignment = table.integer("alignment", minimum=1)
    inplace = table.booleans("inplace")
    optional = table.get("optional", False)
    if not isinstance(optional, bool):
        raise table.error("optional", f"must be true or false, got {optional!r}")
    table.finish()
    return InstanceSpec(where=table.where, paths=tuple(paths), names=tuple(names),
                        generator=generator, tensors=tensors, seeds=seeds, alignment=alignment,
                        optional=optional, inplace=inplace)


def _method_spec(table: _Table) -> MethodSpec:
    name = table.string("name")
    kind = table.string("kind", choices=_METHOD_KINDS)
    if (name is None) == (kind is None):
        raise table.error("name", "give exactly one of name (a method) or kind (a selector)")
    method_input = table.string("input", "records", choices=_METHOD_INPUTS)
    exclude = table.strings("exclude", allow_empty=True) or ()
    if name is not None and (exclude or table.has("input")):
        raise table.error("exclude" if exclude else "input", "only a kind selector takes this")
    params = table.get("params", {})
    if not isinstance(params, dict):
        raise table.error("params", f"must be a table, got {type(params).__name__}")
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise table.error("grid", f"must be a table, got {type(grid).__name__}")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise table.error(f"grid.{key}", "must be a non-empty list of values to sweep")
        if key in params:
            raise table.error(f"grid.{key}", "also given in params")
    flag_keys = {"time_limit": "time_limits", "seed": "seeds", "workers": "workers"}
    for section, keys in (("params", params), ("grid", grid)):
        for key in keys:
            if key in flag_keys:
                raise table.error(f"{section}.{key}", f"a solver flag: use the method's "
                                                      f"{flag_keys[key]} key")
    spec = MethodSpec(where=table.where, name=name, kind=kind, input=method_input,
                      exclude=tuple(exclude), params=dict(params), grid=dict(grid),
                      problems=table.problems("problems"),
                      time_limits=table.numbers("time_limits"),
                      seeds=table.integers("seeds", maximum=MAX_FLAG),
                      workers=table.integer("workers", minimum=1, maximum=MAX_FLAG),
                      max_tensors=table.integer("max_tensors", minimum=1))
    table.finish()
    return spec
