"""The run directory: everything a run leaves behind, written so that a kill loses nothing.

::

    RUN/config.toml          the config, frozen (byte copy of the file that was run)
    RUN/manifest.json        provenance (see optplan.experiments.manifest)
    RUN/results.jsonl        one JSON line per finished job, appended, flushed and fsynced
    RUN/solutions/<job_id>.csv   each job's solution (optplan.formats.write_solution_csv)
    RUN/logs/<job_id>.log    stdout/stderr of failed jobs
    RUN/results.parquet      the compacted table (one row per job), and
    RUN/results.csv          the same as CSV

A line cut short by a kill does not parse and is ignored (its job is redone); the cut tail is
removed before the next append so every later line starts on a line of its own. A job that
crashed is run again on resume and its new row appended: the last row of a job stands. A solution
file is written (to a temporary name, then renamed) before its row is appended, so a row
always has its file. One run at a time holds ``RUN/.lock``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tomllib
from pathlib import Path

import pandas as pd

from optplan.errors import InputError
from optplan.experiments.manifest import Manifest
from optplan.formats.paths import check_output_folder

__all__ = ["RunStore", "read_rows", "rows_table", "write_table", "NESTED_COLUMNS"]

CONFIG, MANIFEST, RESULTS = "config.toml", "manifest.json", "results.jsonl"
PARQUET, CSV, SOLUTIONS, LOGS = "results.parquet", "results.csv", "solutions", "logs"
NESTED_COLUMNS = ("violations", "params", "trajectory", "info")
"""Columns holding lists or dicts: JSON text in the parquet and CSV tables."""


def _json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def dumps_row(row: dict) -> str:
    return json.dumps(row, default=_json_default, allow_nan=True, separators=(",", ":"))


def read_rows(path: str | Path) -> tuple[dict[str, dict], int]:
    """The rows of a ``results.jsonl`` by ``job_id`` (the last complete line of each: a job
    retried after a crash has its crashed row earlier in the file), and how many lines were
    skipped because they do not parse (a cut line)."""
    rows: dict[str, dict] = {}
    skipped = 0
    path = Path(path)
    if not path.exists():
        return rows, 0
    with open(path, "rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                skipped += 1  # a cut tail: never trusted, even when it happens to parse
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                skipped += 1
                continue
            if isinstance(row, dict) and isinstance(row.get("job_id"), str):
                rows[row["job_id"]] = row
            else:
                skipped += 1
    return rows, skipped


class RunStore:
    """Reads and appends one run directory (see the module docstring for the layout)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_handle = None

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def log_dir(self) -> Path:
        return self.path / LOGS

    def prepare(self, config_text: str, config_path: str | Path) -> bool:
        """Create the directory with the frozen config, or check that an existing one holds
        the same config (so resuming cannot mix two grids). Returns whether it existed."""
        frozen = self.path / CONFIG
        if frozen.exists():
            if _config_of(self.path)[1] != tomllib.loads(config_text):
                raise InputError(f"run directory {self.path} holds a different config; use "
                                 "another --out to run this one", file=str(config_path))
            return True
        (self.path / SOLUTIONS).mkdir(parents=True, exist_ok=True)
        self._write_atomic(frozen, config_text.encode("utf-8"))
        return False

    def lock(self) -> None:
        """Hold an exclusive lock on the run directory until :meth:`unlock`."""
        self.path.mkdir(parents=True, exist_ok=True)
        handle = open(self.path / ".lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise InputError(f"run directory {self.path} is in use by another optplan run",
                             file=str(self.path)) from None
        self._lock_handle = handle

    def unlock(self) -> None:
        if self._lock_handle is not None:
            self._lock_handle.close()
            self._lock_handle = None

    def finished_rows(self) -> tuple[dict[str, dict], int]:
        """Rows of finished jobs by ``job_id``, after dropping a cut last line."""
        self._drop_cut_tail()
        return read_rows(self.results_path)

    def append(self, row: dict) -> None:
        """Append one row as a line, flushed and fsynced before returning."""
        line = (dumps_row(row) + "\n").encode("utf-8")
        with open(self.results_path, "ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_solution(self, job_id: str, text: str, suffix: str = ".csv") -> str:
        """Write a job's solution file; returns its path relative to the run directory."""
        relative = f"{SOLUTIONS}/{job_id}{suffix}"
        (self.path / SOLUTIONS).mkdir(parents=True, exist_ok=True)
        self._write_atomic(self.path / relative, text.encode("utf-8"))
        return relative

    def compact(self, order: list[str] | None = None) -> pd.DataFrame:
        """Write ``results.parquet`` and ``results.csv``: one row per job of ``order`` (the
        grid), in that order; without ``order``, every row."""
        rows, _ = read_rows(self.results_path)
        if order is not None:
            wanted = set(order)
            rows = {job_id: row for job_id, row in rows.items() if job_id in wanted}
        table = rows_table(rows, order)
        write_table(table, self.path)
        return table

    def _drop_cut_tail(self) -> None:
        path = self.results_path
        if not path.exists() or path.stat().st_size == 0:
            return
        with open(path, "rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return
            handle.seek(0)
            complete = handle.read().rfind(b"\n") + 1
            handle.truncate(complete)
            handle.flush()
            os.fsync(handle.fileno())

    @staticmethod
    def _write_atomic(path: Path, data: bytes) -> None:
        temporary = path.with_name(path.name + f".tmp-{os.getpid()}")
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)


def rows_table(rows: dict[str, dict], order: list[str] | None = None) -> pd.DataFrame:
    """Rows as a DataFrame; nested columns become JSON text, ``order`` first then the rest."""
    order = [job_id for job_id in order or [] if job_id in rows]
    ids = order + sorted(set(rows) - set(order))
    records = []
    for job_id in ids:
        record = dict(rows[job_id])
        for column in NESTED_COLUMNS:
            if column in record:
                record[column] = json.dumps(record[column], default=_json_default)
        records.append(record)
    table = pd.DataFrame.from_records(records)
    for column in ("objective", "lower_bound", "best_bound", "num_tensors", "seed", "workers",
                   "repetition", "pid"):
        if column in table:
            table[column] = table[column].astype("Int64")
    for column in ("gap", "wall_time_s", "elapsed_s", "time_limit"):
        if column in table:
            table[column] = table[column].astype("Float64")
    if "valid" in table:
        table["valid"] = table["valid"].astype("boolean")
    return table


def write_table(table: pd.DataFrame, folder: str | Path) -> None:
    """``results.parquet`` (pyarrow) and ``results.csv`` in ``folder``, each written atomically."""
    folder = Path(folder)
    for name, write in ((PARQUET, lambda p: table.to_parquet(p, engine="pyarrow", index=False)),
                        (CSV, lambda p: table.to_csv(p, index=False))):
        temporary = folder / f".{name}.tmp-{os.getpid()}"
        write(temporary)
        os.replace(temporary, folder / name)


def _config_of(run_dir: Path) -> tuple[str | None, dict | None]:
    """A run directory's frozen config: its text and parsed table (``None`` when absent or
    unreadable)."""
    try:
        text = (run_dir / CONFIG).read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None, None


def merge_runs(out: str | Path, sources: list[str | Path]) -> pd.DataFrame:
    """Combine run directories into a new one at ``out``.

    Rows are taken by ``job_id``, first source first (a job present in several sources is
    kept once); solution files come along. When every source ran the same config it becomes
    ``out/config.toml``; each source's config and manifest are kept under
    ``out/sources/<n>/``, and ``out/manifest.json`` lists the sources.
    """
    out = Path(out)
    check_output_folder(out, "OUT")
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out} exists and is not empty; merge into a new directory",
                         file=str(out))
    merged: dict[str, dict] = {}
    origins: list[tuple[Path, dict[str, dict]]] = []
    for source in map(Path, sources):
        if not (source / RESULTS).is_file():
            raise InputError(f"not a run directory (no {RESULTS})", file=str(source))
        rows, _ = read_rows(source / RESULTS)
        origins.append((source, rows))
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out)
    configs, manifest_sources, duplicates = [], [], 0
    for index, (source, rows) in enumerate(origins):
        kept = 0
        for job_id, row in rows.items():
            if job_id in merged:
                duplicates += 1
                continue
            row = dict(row)
            solution = source / str(row.get("solution_file") or "")
            if row.get("solution_file") and solution.is_file():
                row["solution_file"] = store.write_solution(
                    job_id, solution.read_bytes().decode("utf-8", "replace"), solution.suffix)
            merged[job_id] = row
            kept += 1
        copy_dir = out / "sources" / str(index)
        copy_dir.mkdir(parents=True, exist_ok=True)
        for name in (CONFIG, MANIFEST):
            if (source / name).is_file():
                shutil.copyfile(source / name, copy_dir / name)
        configs.append(_config_of(source))
        manifest_sources.append({"path": str(source.resolve()), "rows": len(rows),
                                 "rows_kept": kept, "copy": f"sources/{index}"})
    parsed = [data for _, data in configs]
    same_config = all(p is not None and p == parsed[0] for p in parsed)
    if same_config:
        (out / CONFIG).write_text(configs[0][0], encoding="utf-8")
    for row in merged.values():
        store.append(row)
    manifest = {"format": "optplan-run", "version": 1, "merged_from": manifest_sources,
                "duplicate_rows_dropped": duplicates, "same_config": same_config}
    if same_config:
        first = Manifest(out / "sources" / "0" / MANIFEST).data
        manifest["config"] = first.get("config")
        manifest["jobs_total"] = first.get("jobs_total")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    table = rows_table(merged, list(merged))
    write_table(table, out)
    return table
