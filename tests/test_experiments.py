"""Experiment pipelines: config validation, grid expansion, the run loop, the watchdog, the
run directory, progress, ``optplan runs`` and ``optplan merge``.

Jobs that must hang, crash or raise come from a plugin file (``PLUGIN`` below) that the
config names; job processes import it again, so it must be a file, not this module.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optplan.cli import main
from optplan.errors import InputError
from optplan.experiments.config import load_config, parse_config
from optplan.experiments.grid import expand
from optplan.experiments.runner import Progress, run_experiment
from optplan.experiments.store import RunStore, read_rows
from optplan.formats import load_instance, read_solution_csv
from optplan.problems import Problem
from optplan.registry import get_method, methods
from optplan.validate import validate

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "experiments" / "smoke.toml"
EXAMPLE = "data/examples/paper_example.json"

PLUGIN = '''
"""Test-only methods: a slow valid one, and ones that hang, crash, exit and raise."""
import os
import signal
import sys
import time

from optplan.heuristics.constructions import stacked_offsets
from optplan.registry import register


@register("test_stack", "offsets", reference="test plugin: tensors stacked end to end")
def stack(instance, *, delay=0.0):
    time.sleep(delay)
    return stacked_offsets(instance)


@register("test_hang", "offsets")
def hang(instance):
    time.sleep(3600)


@register("test_segfault", "offsets")
def segfault(instance):
    print("about to segfault", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)


@register("test_exit", "offsets")
def exit_early(instance):
    os._exit(3)


@register("test_raise", "offsets")
def raise_error(instance):
    raise ValueError("boom on purpose")


@register("test_crash_once", "offsets")
def crash_once(instance, *, marker=""):
    """Dies (as a killed worker would) the first time, then succeeds."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return stack(instance)
'''


@pytest.fixture(scope="session")
def plugin_path(tmp_path_factory) -> Path:
    """One plugin file per session (a method name can be registered once per process)."""
    path = tmp_path_factory.mktemp("plugin") / "pipeline_test_methods.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


def write_config(folder: Path, body: str, name: str = "exp.toml") -> Path:
    path = folder / name
    path.write_text(body, encoding="utf-8")
    return path


def plugin_config(folder: Path, plugin: Path, methods_toml: str, extra: str = "") -> Path:
    return write_config(folder, f'''
name = "plugin-test"
problems = ["offsets"]
plugins = ["{plugin}"]
instances = ["{EXAMPLE}"]
{extra}
{methods_toml}

[watchdog]
factor = 1.0
grace = 0.5
heuristic_limit = 1.0
''')


# --- config errors: named file and key, before anything runs --------------------------------

BAD_CONFIGS = {
    "unknown method": ('problems = ["offsets"]\ninstances = ["' + EXAMPLE + '"]\n'
                       'methods = ["no_such_method"]\n', "methods[0].name",
                       "unknown method 'no_such_method'"),
    "unknown key": ('problems = ["offsets"]\ninstances = ["' + EXAMPLE + '"]\n'
                    'methods = ["greedy_by_size"]\ntime_limit = 3\n', "time_limit",
                    "unknown key"),
    "bad type": ('problems = ["offsets"]\ntime_limits = "fast"\ninstances = ["' + EXAMPLE
                 + '"]\nmethods = ["greedy_by_size"]\n', "time_limits", "must be a number"),
    "bad seed": ('problems = ["offsets"]\nseeds = [-1]\ninstances = ["' + EXAMPLE
                 + '"]\nmethods = ["greedy_by_size"]\n', "seeds", "must be >= 0"),
    "unknown problem": ('problems = ["packing"]\ninstances = ["' + EXAMPLE + '"]\n'
                        'methods = ["greedy_by_size"]\n', "problems", "unknown problem"),
    "missing file": ('problems = ["offsets"]\ninstances = ["data/none/*.json"]\n'
                     'methods = ["greedy_by_size"]\n', "instances[0].path", "matches no"),
    "unknown name": ('problems = ["offsets"]\ninstances = ["no_such_network"]\n'
                     'methods = ["greedy_by_size"]\n', "instances[0].name",
                     "unknown instance 'no_such_network'"),
    "unknown parameter": ('problems = ["offsets"]\ninstances = ["' + EXAMPLE + '"]\n'
                          '[[methods]]\nname = "greedy_by_size"\nparams = { colour = 1 }\n',
                          "methods[0].params.colour", "takes no parameter 'colour'"),
    "wrong problem": ('problems = ["shared-objects"]\ninstances = ["' + EXAMPLE + '"]\n'
                      'methods = ["xla_best_fit"]\n', "methods[0].name", "solves none of"),
    "name and kind": ('problems = ["offsets"]\ninstances = ["' + EXAMPLE + '"]\n'
                      '[[methods]]\nname = "cpsat"\nkind = "exact"\n', "methods[0].name",
                      "exactly one of"),
    "empty sweep": ('problems = ["offsets"]\ninstances = ["' + EXAMPLE + '"]\n'
                    '[[methods]]\nname = "cpsat"\ngrid = { x = [] }\n', "methods[0].grid.x",
                    "non-empty list"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_config_errors_name_file_and_key_and_exit_2(tmp_path, capsys, case):
    body, key, message = BAD_CONFIGS[case]
    if case == "wrong problem" and "xla_best_fit" not in methods():
        pytest.skip("xla_best_fit is not registered")
    config = write_config(tmp_path, body)
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert str(config) in error and f"{key}: " in error and message in error, error
    assert not out.exists(), "a config error must stop the run before anything is written"


def test_malformed_toml_names_the_line(tmp_path):
    config = write_config(tmp_path, 'problems = ["offsets"]\n\nmethods = = [\n')
    with pytest.raises(InputError) as caught:
        load_config(config)
    assert caught.value.file == str(config) and caught.value.line == 3
    assert str(caught.value).startswith(f"{config}:3: malformed TOML")


def test_missing_shared_folder_skips_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTPLAN_SHARED", str(tmp_path / "absent"))
    config = parse_config('problems = ["offsets"]\nmethods = ["greedy_by_size"]\ninstances = '
                          '["${shared}/peer/minimalloc/challenging/*.csv", "' + EXAMPLE + '"]\n',
                          tmp_path / "exp.toml")
    with pytest.warns(UserWarning, match="matches no file"):
        plan = expand(config)
    assert [ref.key for ref in plan.instances] == [EXAMPLE]
    assert len(plan.warnings) == 1 and "instances[0].path" in plan.warnings[0]


def test_shared_instances_use_a_machine_independent_key(minimalloc_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPTPLAN_SHARED", str(minimalloc_dir.parents[1]))
    config = parse_config('problems = ["offsets"]\nmethods = ["greedy_by_size"]\ninstances = '
                          '["${shared}/peer/minimalloc/challenging/A.*.csv"]\n',
                          tmp_path / "exp.toml")
    (job,) = expand(config).jobs
    assert job.instance.key == "${shared}/peer/minimalloc/challenging/A.1048576.csv"


# --- the grid -------------------------------------------------------------------------------


def test_grid_is_deterministic_and_independent_of_the_config_location(tmp_path):
    here = expand(load_config(SMOKE))
    copy = tmp_path / "elsewhere" / "smoke.toml"
    copy.parent.mkdir()
    copy.write_text(SMOKE.read_text())
    there = expand(load_config(copy))
    ids = [job.job_id for job in here.jobs]
    assert ids == [job.job_id for job in there.jobs]
    assert len(set(ids)) == len(ids)
    instances = {ref.key for ref in here.instances}
    assert len(here.jobs) == sum(
        1 for _ in instances for spec in load_config(SMOKE).methods
        for problem in load_config(SMOKE).problems
        if problem in get_method(spec.name).implementations)


def test_grid_sweeps_parameters_and_applies_solver_flags_to_exact_methods_only(tmp_path):
    config = parse_config(f'''
problems = ["offsets", "shared-objects"]
time_limits = [1.0, 2.0]
seeds = [0, 1, 2]
workers = 2
repetitions = 2
instances = ["{EXAMPLE}"]
[[methods]]
name = "greedy_by_size"
[[methods]]
name = "cpsat"
problems = ["offsets"]
seeds = [7]
''', tmp_path / "exp.toml")
    jobs = expand(config).jobs
    heuristic = [j for j in jobs if j.method == "greedy_by_size"]
    exact = [j for j in jobs if j.method == "cpsat"]
    assert len(heuristic) == 2 * 2  # problems × repetitions: no time limits, seeds, workers
    assert all(j.time_limit is None and j.seed is None and j.workers is None for j in heuristic)
    assert len(exact) == 2 * 1 * 2  # time limits × the method's own seeds × repetitions
    assert {(j.time_limit, j.seed, j.workers) for j in exact} == {(1.0, 7, 2), (2.0, 7, 2)}
    assert all(j.problem is Problem.OFFSETS for j in exact)
    assert {j.deadline_s for j in exact} == {1.5 * 1.0 + 10.0, 1.5 * 2.0 + 10.0}


def test_kind_selector_takes_every_registered_method_of_that_kind(tmp_path):
    config = parse_config(f'''
problems = ["offsets"]
instances = ["{EXAMPLE}"]
[[methods]]
kind = "heuristic"
exclude = ["greedy_by_size"]
''', tmp_path / "exp.toml")
    expected = {name for name, info in methods(builtin_only=True).items()
                if info.kind == "heuristic"
                and info.input == "records" and Problem.OFFSETS in info.implementations}
    assert {job.method for job in expand(config).jobs} == expected - {"greedy_by_size"}


def test_generated_instances_expand_over_sizes_and_seeds(tmp_path):
    pytest.importorskip("optplan.generators")
    config = parse_config('problems = ["offsets"]\nmethods = ["greedy_by_size"]\n'
                          '[[instances]]\ngenerator = "chain_skip"\ntensors = [10, 20]\n'
                          'seed = [0, 1]\n', tmp_path / "exp.toml")
    jobs = expand(config).jobs
    assert sorted((j.instance.num_tensors, j.instance.seed) for j in jobs) == [
        (10, 0), (10, 1), (20, 0), (20, 1)]
    assert len(jobs[0].instance.load()) == 10


@settings(max_examples=40, deadline=None)
@given(time_limit=st.sampled_from([None, 1.0, 2.5]), seed=st.sampled_from([None, 0, 3]),
       repetition=st.integers(0, 3), value=st.integers(0, 5))
def test_job_id_is_a_function_of_the_job_parameters(time_limit, seed, repetition, value):
    from dataclasses import replace
    base = expand(parse_config(f'problems = ["offsets"]\nmethods = ["cpsat"]\ninstances = '
                               f'["{EXAMPLE}"]\n', REPO / "experiments" / "x.toml")).jobs[0]
    job = replace(base, time_limit=time_limit, seed=seed, repetition=repetition,
                  params={"hint": value})
    twin = replace(job, params={"hint": value}, deadline_s=job.deadline_s + 5, plugins=("x",))
    assert job.job_id == twin.job_id  # how a job is run is not part of its identity
    other = replace(job, repetition=repetition + 1)
    assert other.job_id != job.job_id
    assert replace(job, params={"hint": value + 1}).job_id != job.job_id


# --- running --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke") / "run"
    stream = io.StringIO()
    outcome = run_experiment(SMOKE, out=out, stream=stream, bar=False)
    return outcome, stream.getvalue()


def test_smoke_config_runs_every_job_to_a_good_status(smoke_run):
    outcome, progress = smoke_run
    assert outcome.complete and outcome.jobs_run == outcome.jobs_total
    table = outcome.table
    assert len(table) == outcome.jobs_total == table["job_id"].nunique()
    assert set(table["status"]) <= {"OPTIMAL", "FEASIBLE", "UNKNOWN"}, \
        table[["method", "status", "reason"]].to_string()
    solved = table[table["objective"].notna()]
    assert solved["valid"].all()
    assert (solved["objective"] >= solved["lower_bound"]).all()
    # One line per finished job when the stream is not a terminal.
    assert len([line for line in progress.splitlines() if line.startswith("[")]) == \
        outcome.jobs_total


def test_exact_optimum_is_at_most_every_heuristic(smoke_run):
    table = smoke_run[0].table
    optimal = table[table["status"] == "OPTIMAL"].set_index(["instance_key", "problem"])
    heuristics = table[(table["kind"] == "heuristic") & table["objective"].notna()]
    assert len(optimal) and len(heuristics)
    for row in heuristics.itertuples():
        key = (row.instance_key, row.problem)
        if key in optimal.index:
            assert optimal.loc[key, "objective"] <= row.objective


def test_run_directory_layout_and_solution_files_read_back(smoke_run):
    outcome = smoke_run[0]
    folder = outcome.run_dir
    for name in ("config.toml", "manifest.json", "results.jsonl", "results.parquet",
                 "results.csv"):
        assert (folder / name).is_file(), name
    assert (folder / "config.toml").read_text() == SMOKE.read_text()
    rows, cut = read_rows(folder / "results.jsonl")
    assert cut == 0 and len(rows) == outcome.jobs_total
    with_solution = [row for row in rows.values() if row["objective"] is not None]
    assert with_solution and all(row["solution_file"] for row in with_solution)
    for row in with_solution:
        instance = load_instance(REPO / row["instance_key"])
        solution = read_solution_csv(instance, row["problem"], folder / row["solution_file"])
        assert validate(instance, row["problem"], solution) == []
    parquet = pd.read_parquet(folder / "results.parquet")
    csv = pd.read_csv(folder / "results.csv")
    assert list(parquet["job_id"]) == list(csv["job_id"]) == list(outcome.table["job_id"])
    assert json.loads(parquet["params"].iloc[0]) == rows[parquet["job_id"].iloc[0]]["params"]


def test_manifest_records_provenance(smoke_run):
    manifest = json.loads((smoke_run[0].run_dir / "manifest.json").read_text())
    assert manifest["jobs_total"] == smoke_run[0].jobs_total
    session = manifest["sessions"][-1]
    assert session["state"] == "complete" and session["ended_at"] >= session["started_at"]
    provenance = session["provenance"]
    assert provenance["packages"]["ortools"] and provenance["solvers"]["cpsat"]
    assert provenance["machine"]["cores"] >= 1 and provenance["machine"]["memory_bytes"] > 0
    assert provenance["machine"]["python"].startswith("3.")
    assert set(provenance["git"]) >= {"commit", "dirty"}


def test_rerun_of_a_finished_run_does_nothing(smoke_run, tmp_path):
    outcome = smoke_run[0]
    before = (outcome.run_dir / "results.jsonl").read_bytes()
    again = run_experiment(SMOKE, out=outcome.run_dir, stream=io.StringIO(), bar=False)
    assert again.jobs_run == 0 and again.jobs_skipped == outcome.jobs_total and again.complete
    assert (outcome.run_dir / "results.jsonl").read_bytes() == before


def test_a_run_directory_refuses_a_different_config(smoke_run, tmp_path):
    other = write_config(tmp_path, SMOKE.read_text().replace("[2.0]", "[3.0]"), "smoke.toml")
    with pytest.raises(InputError, match="different config"):
        run_experiment(other, out=smoke_run[0].run_dir, stream=io.StringIO(), bar=False)


def test_watchdog_and_failures_are_rows_and_crashes_exit_1(tmp_path, plugin_path, capsys):
    config = plugin_config(tmp_path, plugin_path, '''
methods = ["test_stack", "test_hang", "test_segfault", "test_exit", "test_raise"]
''')
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out), "--no-progress", "--jobs", "2"]) == 1
    rows = {row["method"]: row for row in read_rows(out / "results.jsonl")[0].values()}
    assert rows["test_stack"]["status"] == "FEASIBLE" and rows["test_stack"]["valid"] is True
    assert rows["test_hang"]["status"] == "TIMEOUT"
    assert "watchdog" in rows["test_hang"]["reason"]
    assert 1.4 < rows["test_hang"]["elapsed_s"] < 10
    assert rows["test_segfault"]["status"] == "CRASHED"
    assert "SIGSEGV" in rows["test_segfault"]["reason"]
    assert "about to segfault" in rows["test_segfault"]["reason"]
    assert rows["test_exit"]["status"] == "CRASHED" and "code 3" in rows["test_exit"]["reason"]
    assert rows["test_raise"]["status"] == "ERROR"
    assert rows["test_raise"]["reason"] == "ValueError: boom on purpose"
    printed = capsys.readouterr().out
    assert "TIMEOUT 1" in printed and "CRASHED 2" in printed and "ERROR 1" in printed
    # Logs of failed jobs are kept; those of good jobs are not.
    logs = {path.stem for path in (out / "logs").iterdir()}
    assert rows["test_segfault"]["job_id"] in logs and rows["test_stack"]["job_id"] not in logs

    assert main(["runs", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "failures (4):" in summary and "boom on purpose" in summary
    assert "killed by signal SIGSEGV" in summary


def test_crashed_jobs_run_again_on_resume_unless_told_not_to(tmp_path, plugin_path, capsys):
    marker = tmp_path / "crashed-once"
    config = plugin_config(tmp_path, plugin_path, f'''
[[methods]]
name = "test_crash_once"
params = {{ marker = "{marker}" }}
[[methods]]
name = "test_stack"
''')
    out = tmp_path / "run"
    argv = ["run", str(config), "--out", str(out), "--no-progress"]
    assert main(argv) == 1  # its worker was killed: CRASHED, and the run says so
    assert "1 job(s) crashed" in capsys.readouterr().err
    rows = {row["method"]: row for row in read_rows(out / "results.jsonl")[0].values()}
    assert rows["test_crash_once"]["status"] == "CRASHED"
    assert "SIGKILL" in rows["test_crash_once"]["reason"]
    assert rows["test_crash_once"]["attempt"] == 1

    before = (out / "results.jsonl").read_bytes()
    assert main(argv + ["--no-retry-crashed"]) == 1  # kept as it is
    assert (out / "results.jsonl").read_bytes() == before

    assert main(argv) == 0  # run again: it succeeds now; the good job is not redone
    assert "running 1 crashed job(s) again" in capsys.readouterr().err
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3  # the crashed row stays as history
    rows = {row["method"]: row for row in read_rows(out / "results.jsonl")[0].values()}
    assert rows["test_crash_once"]["status"] == "FEASIBLE"
    assert rows["test_crash_once"]["attempt"] == 2 and rows["test_stack"]["attempt"] == 1
    table = pd.read_parquet(out / "results.parquet")
    assert sorted(table["status"]) == ["FEASIBLE", "FEASIBLE"]


def test_progress_bar_shows_done_total_and_running():
    stream = io.StringIO()
    from dataclasses import replace
    job = expand(parse_config(f'problems = ["offsets"]\nmethods = ["greedy_by_size"]\n'
                              f'instances = ["{EXAMPLE}"]\n', REPO / "x.toml")).jobs[0]
    with Progress(3, 1, 2, stream=stream, bar=True) as progress:
        progress.started(job)
        progress.started(replace(job, repetition=1))
        progress.finished(job, {"status": "FEASIBLE"})
    text = stream.getvalue()
    assert "2/3" in text and "running=" in text


def test_cut_last_line_is_ignored_and_removed_before_the_next_append(tmp_path):
    store = RunStore(tmp_path)
    store.append({"job_id": "a", "status": "FEASIBLE"})
    with open(store.results_path, "ab") as handle:
        handle.write(b'{"job_id": "b", "status": "OPTIM')
    rows, cut = store.finished_rows()
    assert list(rows) == ["a"] and cut == 0  # the tail was dropped on reading
    store.append({"job_id": "b", "status": "OPTIMAL"})
    rows, cut = read_rows(store.results_path)
    assert list(rows) == ["a", "b"] and cut == 0
    # A whole line that does not parse (torn in the middle) is skipped, not fatal.
    with open(store.results_path, "ab") as handle:
        handle.write(b'{"job_id": "c", "sta\n')
    assert read_rows(store.results_path) == (rows, 1)


def test_merge_combines_runs_once_per_job(tmp_path, plugin_path, capsys):
    first = plugin_config(tmp_path, plugin_path, 'methods = ["test_stack"]',
                          extra="repetitions = 2")
    run_experiment(first, out=tmp_path / "a", stream=io.StringIO(), bar=False)
    second = write_config(tmp_path, first.read_text().replace("repetitions = 2",
                                                              "repetitions = 3"), "b.toml")
    run_experiment(second, out=tmp_path / "b", stream=io.StringIO(), bar=False)
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    merged = pd.read_parquet(tmp_path / "m" / "results.parquet")
    assert sorted(merged["repetition"]) == [0, 1, 2]  # repetitions 0, 1 were in both
    assert merged["job_id"].is_unique
    assert all((tmp_path / "m" / path).is_file() for path in merged["solution_file"])
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["duplicate_rows_dropped"] == 2 and not manifest["same_config"]
    assert main(["merge", str(tmp_path / "m"), str(tmp_path / "a")]) == 2  # not empty


def test_optional_instances_and_max_tensors(tmp_path):
    config = parse_config(f'''
problems = ["offsets"]
[[instances]]
path = "{EXAMPLE}"
[[instances]]
name = ["not_imported_yet"]
optional = true
[[methods]]
name = "greedy_by_size"
[[methods]]
name = "cpsat"
max_tensors = 5
''', tmp_path / "exp.toml")
    with pytest.warns(UserWarning, match="not_imported_yet"):
        plan = expand(config)
    assert [job.method for job in plan.jobs] == ["greedy_by_size"]  # the example has 8 tensors


def test_local_backend_keeps_solver_threads_within_the_core_budget(plugin_path, tmp_path):
    from dataclasses import replace

    from optplan.experiments.backends import JobFinished, JobStarted, LocalBackend
    config = plugin_config(tmp_path, plugin_path, '''
[[methods]]
name = "test_stack"
params = { delay = 0.2 }
''', extra="repetitions = 4")
    jobs = [replace(job, workers=2) for job in expand(load_config(config)).jobs]
    running = widest = 0
    finished = []
    for event in LocalBackend(4, core_budget=2).execute(jobs):
        if isinstance(event, JobStarted):
            running += 1
            widest = max(widest, running)
        else:
            assert isinstance(event, JobFinished)
            running -= 1
            finished.append(event.output.row["status"])
    assert widest == 1 and finished == ["FEASIBLE"] * 4
    running = widest = 0
    for event in LocalBackend(4, core_budget=4).execute(jobs):
        running += 1 if isinstance(event, JobStarted) else -1
        widest = max(widest, running)
    assert widest == 2


def test_unavailable_backend_is_a_usage_error(tmp_path, capsys, monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real_find_spec(name, *a))
    out = tmp_path / "run"
    assert main(["run", str(SMOKE), "--out", str(out), "--backend", "ray"]) == 2
    assert "pip install 'optplan[ray]'" in capsys.readouterr().err
    assert not out.exists()
