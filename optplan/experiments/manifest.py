"""Provenance: what a run needs to be trusted and re-created (PyJobShop's ``show_versions``,
benchopt's machine info on every result).

``manifest.json`` holds the config's name and SHA-256, the number of jobs, the solver settings
of the grid (time limits, seeds, workers, watchdog; each row also has its own), and one *session*
per invocation of ``optplan run`` on the directory (a resumed run adds a session), each with
its command line, backend, start and end time, job counts and :func:`provenance`: package
and solver versions, git commit and dirty state, Python, CPU, core count, memory and OS.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

__all__ = ["provenance", "package_versions", "solver_versions", "git_state", "machine",
           "Manifest"]

PACKAGES = ("optplan", "numpy", "pandas", "pyarrow", "networkx", "ortools", "pulp", "highspy",
            "matplotlib", "tqdm", "dask", "distributed")


_SOURCE_PATHS = ("optplan", "experiments", "data", "pyproject.toml")


def package_versions(names=PACKAGES) -> dict[str, str | None]:
    """Installed versions of ``names`` (default: optplan and what it depends on; ``None``: not
    installed)."""
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def solver_versions() -> dict[str, str | None]:
    """Versions the solvers report themselves: CP-SAT (OR-Tools), HiGHS, CBC (the binary
    ``milp_cbc`` runs), read where every result's ``solver_version`` is read."""
    from optplan.exact.cpsat_solve import cpsat_version
    from optplan.exact.highs import highs_version
    from optplan.exact.milp import cbc_version

    try:
        cpsat = cpsat_version()
    except ImportError:
        cpsat = None
    return {"cpsat": cpsat, "highs": highs_version(), "cbc": cbc_version()}


def git_state(folder: str | Path) -> dict[str, object]:
    """The commit checked out at ``folder`` and whether the tree has uncommitted changes."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                                  text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        # rstrip only: a porcelain line starts with a space (" M file") that strip() would eat
        return done.stdout.rstrip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    # Changed or new files in what a result depends on; run directories do not count.
    status = git("status", "--porcelain", "--", *_SOURCE_PATHS) if commit else None
    changed = [line[3:] for line in (status or "").splitlines() if line.strip()]
    return {"commit": commit, "dirty": None if status is None else bool(changed),
            "changed_files": changed[:50]}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def machine() -> dict[str, object]:
    """Host, CPU model, core count, memory, OS and Python."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"host": platform.node(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "usable_cores": usable, "memory_bytes": _memory_bytes(),
            "os": platform.platform(), "python": sys.version.split()[0],
            "python_implementation": platform.python_implementation(),
            "executable": _portable_executable()}


def _portable_executable() -> str:
    """The interpreter, relative to the repository when it lives inside it (``.venv/...``):
    results get committed, and absolute machine paths do not belong in them."""
    from optplan.experiments.grid import repo_root

    executable = Path(sys.executable)
    try:
        return str(executable.relative_to(repo_root()))
    except ValueError:
        return executable.name


def provenance() -> dict[str, object]:
    """Everything about the software and the machine that a result depends on."""
    from optplan.experiments.grid import repo_root
    return {"packages": package_versions(), "solvers": solver_versions(),
            "git": git_state(repo_root()), "machine": machine()}


class Manifest:
    """``manifest.json`` of one run directory; every write replaces the file atomically."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.data: dict = {}
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.data = {}  # a torn manifest is rebuilt; the results are elsewhere

    def start_session(self, *, config_name: str, config_path: str, config_text: str,
                      jobs_total: int, jobs_done: int, backend: str, parallel: int,
                      core_budget: int | None, started_at: str, warnings: list[str],
                      settings: dict | None = None) -> dict:
        self.data.setdefault("format", "optplan-run")
        self.data.setdefault("version", 1)
        self.data["config"] = {"name": config_name, "path": config_path,
                               "sha256": hashlib.sha256(config_text.encode()).hexdigest()}
        self.data["jobs_total"] = jobs_total
        self.data["settings"] = settings or {}
        self.data.setdefault("created_at", started_at)
        session = {"started_at": started_at, "ended_at": None, "state": "running",
                   "command": sys.argv, "backend": backend, "parallel": parallel,
                   "core_budget": core_budget,
                   "jobs_done_before": jobs_done, "jobs_run": 0, "warnings": warnings,
                   "provenance": provenance()}
        self.data.setdefault("sessions", []).append(session)
        self.write()
        return session

    def end_session(self, session: dict, *, ended_at: str, state: str, jobs_run: int,
                    status_counts: dict[str, int]) -> None:
        session.update(ended_at=ended_at, state=state, jobs_run=jobs_run,
                       status_counts=status_counts)
        self.data["ended_at"] = ended_at
        self.write()

    def write(self) -> None:
        temporary = self.path.with_name(self.path.name + f".tmp-{os.getpid()}")
        temporary.write_text(json.dumps(self.data, indent=1, default=str) + "\n",
                             encoding="utf-8")
        os.replace(temporary, self.path)
