"""Expand an experiment config into jobs, each with a deterministic ``job_id``.

The grid is instances × problems × methods × parameter sweeps × time limits × seeds ×
in-place settings × repetitions, in config order (benchopt's datasets × solvers ×
parameters); an instance file pairs with the problems whose loader (on the problem table)
reads it — a preload instance with the preload problem only (× the budgets of the
``[preload]`` sweep, :mod:`optplan.experiments.budgets`), usage records with the others. Everything that can be wrong with a config is found here, before any job starts:
unknown methods, parameters a method does not take, instances that do not exist.

A job's ``job_id`` is the first 16 hex digits of the SHA-256 of its parameters in canonical
JSON: the instance's identity (its repo-relative path and content digest, or its generator
spec), problem, method, parameters, time limit, seed, workers, in-place flag, repetition and,
for a preload job of a sweep, its budget.
The same config therefore gives the same ids on any machine, which is what resume and merge
rely on. Watchdog settings and plugins are not part of the identity.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import importlib.util
import itertools
import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from optplan.errors import InputError, UnknownMethodError
from optplan.experiments.budgets import BudgetCache, sweep_budgets
from optplan.experiments.config import ExperimentConfig, InstanceSpec, MethodSpec
from optplan.model import MAX_VALUE, Instance
from optplan.params import check_parameter
from optplan.problems import Problem, get_problem
from optplan.registry import MethodInfo, get_method, methods

__all__ = ["InstanceRef", "Job", "Plan", "expand", "repo_root", "shared_root", "resolve_plugins",
           "import_plugins",
           "canonical_json"]

SOLVER_FLAGS = ("time_limit", "workers", "seed")
SHARED_PLACEHOLDER = "${shared}"


def repo_root() -> Path:
    """The checkout optplan runs from (the parent of the ``optplan`` package)."""
    return Path(__file__).resolve().parents[2]


def shared_root() -> Path:
    """``$OPTPLAN_SHARED``, else ``<repo>/../shared`` (reference data, never copied in)."""
    return Path(os.environ.get("OPTPLAN_SHARED") or repo_root().parent / "shared")


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass(frozen=True)
class InstanceRef:
    """Where a job's instance comes from, and the identity that goes into its ``job_id``.

    ``key`` is a repo-relative path (``data/examples/x.json``), a path under the shared folder
    written with ``${shared}``, or ``generator:<kind>:<tensors>:<seed>``; ``digest`` is the
    file's SHA-256 prefix, so an edited file gives new job ids. ``problems`` names the
    problems whose loader reads it (a preload instance file: preload only).
    ``inplace`` is its ``[[instances]]`` entry's in-place setting (``None``: the config's); an
    instance listed twice keeps its first entry's.
    """

    key: str
    label: str
    num_tensors: int
    path: str | None = None
    generator: str | None = None
    seed: int | None = None
    alignment: int | None = None
    digest: str | None = None
    has_inplace_pairs: bool | None = None
    has_graph: bool = False
    problems: tuple[str, ...] = ()
    inplace: tuple[bool, ...] | None = field(default=None, compare=False)

    @property
    def identity(self) -> str:
        """``key@digest``: names the instance's content, wherever the file lives."""
        return f"{self.key}@{self.digest}"

    def takes(self, problem: Problem) -> bool:
        """Whether ``problem`` applies: its loader reads this instance."""
        return problem in self.problems

    def load(self, problem: Problem | str | None = None):
        """Read (or generate) the instance as ``problem``'s loader reads it (by default the
        first problem that takes it); the job process calls this."""
        if self.generator is not None:
            from optplan.generators import generate
            instance = generate(self.generator, self.num_tensors, seed=self.seed)
            if self.alignment is not None:
                instance = instance.with_alignment(self.alignment)
            return instance
        return _load_as(get_problem(problem or self.problems[0]), Path(self.path),
                        self.alignment)


@dataclass(frozen=True)
class Job:
    """One method run on one instance with fixed parameters; picklable for any backend."""

    instance: InstanceRef
    problem: Problem
    method: str
    kind: str
    params: dict = field(default_factory=dict)
    time_limit: float | None = None
    seed: int | None = None
    workers: int | None = None
    inplace: bool = False
    repetition: int = 0
    deadline_s: float = 600.0
    plugins: tuple[str, ...] = ()
    budget: int | None = None

    def identity(self) -> dict:
        """The parameters that define the job (and nothing about how it is run).

        ``budget`` enters only when set, and the problem by the spelling ids were first
        hashed with (``ProblemSpec.legacy_name``), so jobs keep the ids they always had.
        """
        identity = {"instance": self.instance.key, "digest": self.instance.digest,
                    "alignment": self.instance.alignment,
                    "problem": get_problem(self.problem).legacy_name,
                    "method": self.method, "params": self.params, "time_limit": self.time_limit,
                    "seed": self.seed, "workers": self.workers, "inplace": self.inplace,
                    "repetition": self.repetition}
        if self.budget is not None:
            identity["budget"] = self.budget
        return identity

    @cached_property
    def job_id(self) -> str:
        return hashlib.sha256(canonical_json(self.identity()).encode()).hexdigest()[:16]

    def describe(self) -> str:
        flags = [f"{k}={v}" for k, v in sorted(self.params.items())]
        if self.budget is not None:
            flags.append(f"budget={self.budget}")
        if self.time_limit is not None:
            flags.append(f"t={self.time_limit:g}s")
        if self.seed is not None:
            flags.append(f"seed={self.seed}")
        if self.inplace:
            flags.append("inplace")
        if self.repetition:
            flags.append(f"rep={self.repetition}")
        extra = f" [{' '.join(flags)}]" if flags else ""
        return f"{self.method} {self.problem.cli_name} {self.instance.label}{extra}"


@dataclass(frozen=True)
class Plan:
    """The expanded grid: jobs in config order, and warnings (e.g. skipped shared instances)."""

    config: ExperimentConfig
    jobs: tuple[Job, ...]
    instances: tuple[InstanceRef, ...]
    warnings: tuple[str, ...] = ()


def expand(config: ExperimentConfig, budget_cache: BudgetCache | None = None) -> Plan:
    """Validate ``config`` against the registry and the file system, and list its jobs.

    A counted preload sweep solves each preload instance's two endpoint budgets here (see
    :mod:`optplan.experiments.budgets`), unless ``budget_cache`` already holds them; computed
    endpoints are added to it. A method that runs on the network graph (``input = "graph"``,
    e.g. ``mxnet``) gets a job only on the instances that carry their graph.

    Raises
    ------
    InputError
        Naming the config file and key, for an unknown method, a parameter the method does
        not take, a method that solves none of the problems, an instance that does not exist
        (except under ``${shared}``, which is skipped with a warning when absent).
    """
    plugins = resolve_plugins(config)
    notes: list[str] = []
    instances = _unique_instances(ref for spec in config.instances
                                  for ref in _resolve_instances(config, spec, notes))
    resolved_methods = [(spec, info, problem) for spec in config.methods
                        for info, problem in _resolve_methods(config, spec)]
    budget_cache = BudgetCache() if budget_cache is None else budget_cache
    jobs: dict[str, Job] = {}
    for instance in instances:
        for problem in config.problems:
            if not instance.takes(problem):
                continue
            budgets = _budgets(config, instance, problem, budget_cache)
            for spec, info, method_problem in resolved_methods:
                if method_problem is not problem or (
                        spec.max_tensors is not None
                        and instance.num_tensors > spec.max_tensors) or (
                        info.input == "graph" and not instance.has_graph):
                    continue
                for budget in budgets:
                    for job in _method_jobs(config, spec, info, problem, instance, plugins,
                                            budget):
                        jobs.setdefault(job.job_id, job)
    if not jobs:
        raise config.error("the grid has no jobs (no instance, or no method for the problems)",
                           "instances" if not instances else "methods")
    return Plan(config, tuple(jobs.values()), tuple(instances), tuple(notes))


def _budgets(config: ExperimentConfig, instance: InstanceRef, problem: Problem,
             cache: BudgetCache) -> tuple[int | None, ...]:
    """The preload sweep's budgets for a preload job; ``(None,)`` (the file's budget) else."""
    if problem != "preload" or config.preload is None:
        return (None,)
    try:
        return sweep_budgets(config.preload, instance.identity,
                             lambda: instance.load(problem), cache,
                             workers=config.workers, seed=config.seeds[0])
    except InputError as error:
        raise config.error(error.message, "preload.budgets") from None


# --- plugins --------------------------------------------------------------------------------


def resolve_plugins(config: ExperimentConfig) -> tuple[str, ...]:
    """Import the config's plugins (module names or ``.py`` files, which register methods)
    and return them as job processes import them again: names, or absolute file paths."""
    resolved = []
    for index, entry in enumerate(config.plugins):
        where = f"plugins[{index}]"
        if entry.endswith(".py"):
            found = next((c for c in _candidates(config, entry) if c.is_file()), None)
            if found is None:
                raise config.error(f"no such file {entry!r}", where)
            entry = str(found.resolve())
        try:
            _import_plugin(entry)
        except Exception as error:  # a plugin's own failure is a config error here
            raise config.error(f"cannot import {entry!r}: {type(error).__name__}: {error}",
                               where) from None
        resolved.append(entry)
    return tuple(resolved)


def import_plugins(entries: tuple[str, ...]) -> None:
    """Import resolved plugin entries (each at most once per process)."""
    for entry in entries:
        _import_plugin(entry)


def _import_plugin(entry: str) -> None:
    if not entry.endswith(".py"):
        importlib.import_module(entry)
        return
    module_name = "optplan_plugin_" + hashlib.sha1(entry.encode()).hexdigest()[:12]
    if module_name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(module_name, entry)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise


# --- instances ------------------------------------------------------------------------------


def _candidates(config: ExperimentConfig, pattern: str) -> list[Path]:
    """Where a relative path may live: beside the config, then in the repo root."""
    path = Path(pattern)
    if path.is_absolute():
        return [path]
    return [config.path.parent / path, repo_root() / path]


def _resolve_instances(config: ExperimentConfig, spec: InstanceSpec,
                       notes: list[str]) -> list[InstanceRef]:
    if spec.generator is not None:
        return _generator_refs(config, spec)
    refs: list[InstanceRef] = []
    for index, pattern in enumerate(spec.paths):
        where = f"{spec.where}.path" + (f"[{index}]" if len(spec.paths) > 1 else "")
        files = _glob_instance(config, pattern)
        if not files:
            if pattern.startswith(SHARED_PLACEHOLDER):
                _skip(config, where, f"{pattern!r} matches no file under {shared_root()}",
                      notes)
            elif spec.optional:
                _skip(config, where, f"{pattern!r} matches no file (optional)", notes)
            else:
                raise config.error(f"{pattern!r} matches no instance file", where)
            continue
        refs.extend(_file_ref(path, spec, _problems(config)) for path in files)
    for index, name in enumerate(spec.names):
        where = f"{spec.where}.name" + (f"[{index}]" if len(spec.names) > 1 else "")
        path = _catalogue_path(name)
        if path is None:
            message = f"unknown instance {name!r} (not in the catalogue, nor data/**/{name}.json)"
            if not spec.optional:
                raise config.error(message, where)
            _skip(config, where, message + " (optional)", notes)
            continue
        refs.append(_file_ref(path, spec, _problems(config)))
    return refs


def _problems(config: ExperimentConfig) -> tuple[Problem, ...]:
    """Every problem the config names (at the top and in its method tables)."""
    named = list(config.problems) + [p for spec in config.methods for p in spec.problems or ()]
    return tuple(dict.fromkeys(named))


def _skip(config: ExperimentConfig, where: str, message: str, notes: list[str]) -> None:
    note = f"{config.path}: {where}: {message}; skipped"
    notes.append(note)
    warnings.warn(note, stacklevel=3)


def _glob_instance(config: ExperimentConfig, pattern: str) -> list[Path]:
    if pattern.startswith(SHARED_PLACEHOLDER):
        text = str(shared_root()) + pattern[len(SHARED_PLACEHOLDER):]
        return sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
    for base in _candidates(config, pattern):
        found = sorted(Path(p) for p in glob.glob(str(base), recursive=True)
                       if Path(p).is_file())
        if found:
            return found
    return []


def _catalogue_path(name: str) -> Path | None:
    """A catalogue name's file: ``optplan.instances`` (``data/networks``, or
    ``$OPTPLAN_DATA``) when present, else the first ``data/**/<name>.json`` in the repo."""
    try:
        from optplan import instances as catalogue
        if name in catalogue.names():
            return catalogue.data_dir() / f"{name}.json"
    except (ImportError, AttributeError):
        pass
    matches = sorted(glob.glob(str(repo_root() / "data" / "**" / f"{name}.json"),
                               recursive=True))
    return Path(matches[0]) if matches else None


def _instance_key(path: Path) -> str:
    """The path as written on any machine: repo-relative, ``${shared}``-relative, or absolute."""
    resolved = path.resolve()
    for root, prefix in ((repo_root(), ""), (shared_root().resolve(), SHARED_PLACEHOLDER + "/")):
        try:
            return prefix + resolved.relative_to(root).as_posix()
        except ValueError:
            continue
    return resolved.as_posix()


def _load_as(problem, path: Path, alignment: int | None):
    """``path`` read by the loader of ``problem``'s spec (with the alignment if it takes one)."""
    options = {"alignment": alignment} if "alignment" in problem.options else {}
    return problem.load_instance(path, **options)


def _file_ref(path: Path, spec: InstanceSpec, problems: tuple[Problem, ...]) -> InstanceRef:
    """The file as an instance of every problem whose loader reads it; when none does, the
    first problem's loader error."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    readers: dict = {}   # loader -> the instance, or its InputError
    accepted = []
    for problem in problems:
        problem_spec = get_problem(problem)
        reader = (problem_spec.load_instance, "alignment" in problem_spec.options)
        if reader not in readers:
            try:
                readers[reader] = _load_as(problem_spec, path, spec.alignment)
            except InputError as error:
                readers[reader] = error
        if not isinstance(readers[reader], InputError):
            accepted.append((problem, readers[reader]))
    if not accepted:
        raise next(iter(readers.values()))
    instance = accepted[0][1]
    return InstanceRef(key=_instance_key(path), label=instance.name or path.stem,
                       num_tensors=len(instance), path=str(path.resolve()),
                       alignment=spec.alignment, digest=digest,
                       has_inplace_pairs=bool(getattr(instance, "inplace_pairs", ())),
                       has_graph="graph" in getattr(instance, "provenance", {}),
                       problems=tuple(problem for problem, _ in accepted),
                       inplace=spec.inplace)


def _generator_refs(config: ExperimentConfig, spec: InstanceSpec) -> list[InstanceRef]:
    try:
        from optplan.generators import GENERATORS
    except ImportError:
        raise config.error("instance generators are not available (optplan.generators)",
                           f"{spec.where}.generator") from None
    if spec.generator not in GENERATORS:
        raise config.error(f"unknown generator {spec.generator!r}; valid: "
                           f"{', '.join(GENERATORS)}", f"{spec.where}.generator")
    if spec.alignment is not None and spec.alignment * max(spec.tensors) > MAX_VALUE:
        # Every tensor takes at least one alignment step (the instance's limit, model.py).
        raise config.error(f"{max(spec.tensors)} tensors aligned to {spec.alignment} take more "
                           "than 2^62 bytes", f"{spec.where}.alignment")
    takes = tuple(p for p in _problems(config) if get_problem(p).instance_type is Instance)
    return [InstanceRef(key=f"generator:{spec.generator}:{tensors}:{seed}",
                        label=f"{spec.generator}-{tensors}-s{seed}", num_tensors=tensors,
                        generator=spec.generator, seed=seed, alignment=spec.alignment,
                        problems=takes, inplace=spec.inplace)
            for tensors in spec.tensors for seed in spec.seeds]


def _unique_instances(refs) -> list[InstanceRef]:
    unique: dict[str, InstanceRef] = {}
    for ref in refs:
        unique.setdefault(ref.key, ref)
    return list(unique.values())


# --- methods --------------------------------------------------------------------------------


def _resolve_methods(config: ExperimentConfig,
                     spec: MethodSpec) -> list[tuple[MethodInfo, Problem]]:
    wanted = spec.problems or config.problems
    if spec.name is not None:
        try:
            info = get_method(spec.name)
        except UnknownMethodError as error:
            raise config.error(str(error), f"{spec.where}.name") from None
        if spec.problems is not None:
            missing = [p for p in spec.problems if p not in info.implementations]
            if missing:
                raise config.error(f"method {spec.name!r} does not solve "
                                   f"{missing[0].cli_name}", f"{spec.where}.problems")
        chosen = [(info, p) for p in wanted if p in info.implementations]
        if not chosen:
            raise config.error(f"method {spec.name!r} solves none of "
                               f"{', '.join(p.cli_name for p in wanted)} (it solves "
                               f"{', '.join(p.cli_name for p in info.problems)})",
                               f"{spec.where}.name")
    else:
        registry = methods()
        for index, name in enumerate(spec.exclude):
            if name not in registry:
                raise config.error(f"unknown method {name!r}", f"{spec.where}.exclude[{index}]")
        # A kind selector takes optplan's own methods; plugin methods are named explicitly.
        chosen = [(info, p) for info in methods(builtin_only=True).values() for p in wanted
                  if info.kind == spec.kind and p in info.implementations
                  and (spec.input == "any" or info.input == spec.input)
                  and info.name not in spec.exclude]
        if not chosen:
            raise config.error(f"no registered {spec.kind} method for "
                               f"{', '.join(p.cli_name for p in wanted)}", f"{spec.where}.kind")
    for info, problem in chosen:
        _check_parameters(config, spec, info, problem)
    return chosen


def _check_parameters(config: ExperimentConfig, spec: MethodSpec, info: MethodInfo,
                      problem: Problem) -> None:
    accepted = info.accepts(problem)
    func = info.implementations[problem]
    for section, values in (("params", {k: [v] for k, v in spec.params.items()}),
                            ("grid", spec.grid)):
        for key, choices in values.items():
            if accepted is not None and key not in accepted:
                takes = sorted(accepted - {"instance", *SOLVER_FLAGS})
                raise config.error(f"method {info.name!r} ({problem.cli_name}) takes no "
                                   f"parameter {key!r} (it takes: {', '.join(takes) or 'none'})",
                                   f"{spec.where}.{section}.{key}")
            for value in choices:
                try:
                    check_parameter(func, key, value)
                except InputError as error:
                    raise config.error(error.message, f"{spec.where}.{section}.{key}") from None


def _applies(flag: str, info: MethodInfo, problem: Problem) -> bool:
    """Exact methods take every solver flag; others only the flags their function names."""
    if info.kind == "exact":
        return True
    accepted = info.accepts(problem)
    return accepted is not None and flag in accepted


def _method_jobs(config: ExperimentConfig, spec: MethodSpec, info: MethodInfo,
                 problem: Problem, instance: InstanceRef, plugins: tuple[str, ...],
                 budget: int | None = None):
    time_limits = (spec.time_limits or config.time_limits
                   if _applies("time_limit", info, problem) else (None,))
    seeds = spec.seeds or config.seeds if _applies("seed", info, problem) else (None,)
    workers = (spec.workers or config.workers) if _applies("workers", info, problem) else None
    inplace_values = [v for v in instance.inplace or config.inplace
                      if not (v and instance.has_inplace_pairs is False)] or [False]
    sweep_keys = sorted(spec.grid)
    for values in itertools.product(*(spec.grid[k] for k in sweep_keys)):
        params = dict(spec.params) | dict(zip(sweep_keys, values))
        for time_limit, seed, inplace, repetition in itertools.product(
                time_limits, seeds, inplace_values, range(config.repetitions)):
            yield Job(instance=instance, problem=problem, method=info.name, kind=info.kind,
                      params=params, time_limit=time_limit, seed=seed, workers=workers,
                      inplace=inplace, repetition=repetition,
                      deadline_s=config.watchdog.deadline(time_limit), plugins=plugins,
                      budget=budget)
