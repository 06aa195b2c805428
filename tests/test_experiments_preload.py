"""Preload budget sweeps in the experiment pipeline (``[preload]`` in a config).

The instance is the three-layer "stairs" of tests/test_preload.py: its minimum feasible
budget is 18 bytes (the must-live bound, met by not preloading) and its latency reaches the
unlimited-memory bound 25 µs from 26 bytes on (both weights pinned: 8 + 8 + the activations).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from optplan.analysis.load import load_results
from optplan.analysis.report import make_report
from optplan.analysis.tables import preload_table
from optplan.errors import InputError
from optplan.experiments.budgets import CACHE_FILE
from optplan.experiments.config import parse_config
from optplan.experiments.grid import expand
from optplan.experiments.runner import run_experiment
from optplan.preload import plan_from_dict, validate_plan, write_preload_instance
from optplan.preload.model import Layer, PreloadInstance, PreloadTensor

REPO = Path(__file__).resolve().parents[1]
MINIMUM, NO_PRESSURE = 18, 26


def stairs() -> PreloadInstance:
    """Layers of 10, 10 and 5 µs; activations x [0,1] and y [1,2] (4 B); weights w1 (8 B,
    12 µs, layer 1) and w2 (8 B, 30 µs, layer 2); a 2-byte scratch in layer 1."""
    return PreloadInstance(
        (Layer("a", 10), Layer("b", 10), Layer("c", 5)),
        (PreloadTensor("x", "activation", 4, 0, 1), PreloadTensor("y", "activation", 4, 1, 2),
         PreloadTensor("w1", "weight", 8, 1, 1, 12), PreloadTensor("w2", "weight", 8, 2, 2, 30),
         PreloadTensor("s", "scratch", 2, 1, 1)), "stairs")


@pytest.fixture()
def stairs_file(tmp_path) -> Path:
    path = tmp_path / "stairs.json"
    write_preload_instance(stairs(), path)
    return path


def config_text(instance: Path, preload: str, methods=("flexnn", "no_preload", "cpsat"),
                extra_instances: str = "") -> str:
    listed = "\n".join(f'[[methods]]\nname = "{m}"' for m in methods)
    return (f'problems = ["preload", "offsets"]\ntime_limits = [5.0]\nworkers = 1\n'
            f'{preload}\n[[instances]]\npath = "{instance}"\n{extra_instances}\n{listed}\n')


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "preload.toml"
    path.write_text(text)
    return path


# --- the config -----------------------------------------------------------------------------

@pytest.mark.parametrize("table, count, budgets", [
    ("[preload]\nbudgets = 8", 8, ()),
    ("[preload]\nbudgets = [30, 20, 20]\ntime_limit = 2", None, (20, 30)),
])
def test_preload_table_is_a_count_or_a_list_of_budgets(tmp_path, table, count, budgets):
    config = parse_config(config_text(tmp_path / "x.json", table), tmp_path / "c.toml")
    assert (config.preload.count, config.preload.budgets) == (count, budgets)


def test_no_preload_table_means_no_sweep(tmp_path):
    assert parse_config(config_text(tmp_path / "x.json", ""), tmp_path / "c.toml").preload is None


@pytest.mark.parametrize("table, key", [
    ("[preload]\nbudgets = 1", "preload.budgets"),          # a sweep needs two ends
    ("[preload]\nbudgets = []", "preload.budgets"),
    ("[preload]\nbudgets = [10, 0]", "preload.budgets"),
    ("[preload]\nbudgets = 2.5", "preload.budgets"),
    ("[preload]\ntime_limit = 3", "preload.budgets"),       # missing
    ("[preload]\nbudgets = 4\nsteps = 3", "preload.steps"),  # unknown key
    ("[preload]\nbudgets = 4\ntime_limit = 0", "preload.time_limit"),
])
def test_bad_preload_tables_name_the_key(tmp_path, table, key):
    with pytest.raises(InputError) as error:
        parse_config(config_text(tmp_path / "x.json", table), tmp_path / "c.toml")
    assert error.value.field == key and error.value.file == str(tmp_path / "c.toml")


# --- the grid -------------------------------------------------------------------------------

def test_explicit_budgets_give_one_job_per_budget_with_distinct_ids(tmp_path, stairs_file):
    example = REPO / "data" / "examples" / "tflite_chain.json"
    config = parse_config(
        config_text(stairs_file, "[preload]\nbudgets = [20, 22]",
                    methods=("flexnn", "greedy_by_size"),
                    extra_instances=f'[[instances]]\npath = "{example}"\n'),
        tmp_path / "c.toml")
    jobs = expand(config).jobs
    preload = [job for job in jobs if job.problem.value == "preload"]
    # The preload instance pairs with the preload problem only, the records with offsets only.
    assert {(job.instance.label, job.method) for job in jobs} == {
        ("stairs", "flexnn"), ("tflite_chain", "greedy_by_size")}
    assert sorted(job.budget for job in preload) == [20, 22]
    assert len({job.job_id for job in preload}) == 2
    assert all(job.identity()["budget"] == job.budget for job in preload)
    (offsets_job,) = [job for job in jobs if job.problem.value == "offsets"]
    assert offsets_job.budget is None and "budget" not in offsets_job.identity()


def test_counted_sweep_spans_minimum_to_no_pressure_budget(tmp_path, stairs_file):
    config = parse_config(config_text(stairs_file, "[preload]\nbudgets = 3\ntime_limit = 5",
                                      methods=("flexnn",)), tmp_path / "c.toml")
    plan = expand(config)
    assert [job.budget for job in plan.jobs] == [MINIMUM, 22, NO_PRESSURE]


def test_per_group_inplace_overrides_the_config(tmp_path):
    network = REPO / "data" / "networks" / "mobilenet_v1_fused_tflite_224.json"
    example = REPO / "data" / "examples" / "tflite_chain.json"
    text = (f'problems = ["offsets"]\nmethods = ["greedy_by_size"]\n'
            f'[[instances]]\npath = "{example}"\n'
            f'[[instances]]\npath = "{network}"\ninplace = [false, true]\n')
    jobs = expand(parse_config(text, tmp_path / "c.toml")).jobs
    assert sorted((job.instance.label, job.inplace) for job in jobs) == [
        ("mobilenet_v1_fused_tflite_224", False), ("mobilenet_v1_fused_tflite_224", True),
        ("tflite_chain", False)]


# --- a run, its resumption and its report ---------------------------------------------------

def test_run_records_budgets_resumes_and_reports(tmp_path, stairs_file):
    config = write_config(tmp_path, config_text(stairs_file,
                                                "[preload]\nbudgets = 2\ntime_limit = 5"))
    out = tmp_path / "run"
    first = run_experiment(config, out=out, stream=io.StringIO(), bar=False)
    assert first.complete and first.jobs_total == 6

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted({row["budget"] for row in rows}) == [MINIMUM, NO_PRESSURE]
    cached = json.loads((out / CACHE_FILE).read_text())
    (ends,) = cached.values()
    assert (ends["minimum"], ends["no_pressure"]) == (MINIMUM, NO_PRESSURE)
    by_key = {(row["method"], row["budget"]): row for row in rows}
    assert by_key[("cpsat", NO_PRESSURE)]["objective"] == 25          # the latency bound
    assert by_key[("no_preload", MINIMUM)]["objective"] == 67         # every load stalls
    for row in rows:  # every plan file is the plan the row reports, valid at its budget
        assert row["valid"] and row["solution_file"].endswith(".json")
        plan = plan_from_dict(json.loads((out / row["solution_file"]).read_text()))
        assert validate_plan(stairs().with_budget(row["budget"]), plan) == []
        assert plan.latency_us == row["objective"]
        assert row["objective"] >= by_key[("cpsat", row["budget"])]["objective"]

    # Resumption: the frozen endpoints give the same job ids, so nothing runs again, even
    # when solving the endpoints again could have found other budgets.
    again = run_experiment(config, out=out, stream=io.StringIO(), bar=False)
    assert again.jobs_run == 0 and again.jobs_skipped == 6

    results = load_results(out)
    table = preload_table(results)
    assert list(table["budget"]) == [MINIMUM, NO_PRESSURE] and table["proven"].all()
    assert list(table["optimum"]) == [57, 25]
    written = make_report([out], tmp_path / "report")
    assert str(tmp_path / "report" / "figures" / "preload.pdf") in written
    assert "| stairs | 18 B | 25 |" in (tmp_path / "report" / "tables" / "preload.md").read_text()


def test_a_tampered_cache_is_what_a_resumed_run_sweeps(tmp_path, stairs_file):
    """The cache decides the budgets: a run directory keeps its sweep whatever the solver
    would find now (here a cache written by hand with other endpoints)."""
    config = write_config(tmp_path, config_text(stairs_file,
                                                "[preload]\nbudgets = 2\ntime_limit = 5",
                                                methods=("flexnn",)))
    out = tmp_path / "run"
    run_experiment(config, out=out, stream=io.StringIO(), bar=False)
    cache = json.loads((out / CACHE_FILE).read_text())
    (identity,) = cache
    cache[identity]["no_pressure"] = 24
    (out / CACHE_FILE).write_text(json.dumps(cache))
    outcome = run_experiment(config, out=out, stream=io.StringIO(), bar=False)
    assert outcome.jobs_run == 1   # the job at 24 bytes is new; the one at 18 is not
    assert sorted(load_results(out)["budget"]) == [MINIMUM, 24, NO_PRESSURE]


def test_manifest_names_changed_files_whole(tmp_path):
    """The committed preload run's manifest listed ``xperiments/paper.toml``: ``git status
    --porcelain`` lines start with a space that must survive (``" M file"``)."""
    import subprocess

    from optplan.experiments.manifest import git_state

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "optplan").mkdir()
    (tmp_path / "optplan" / "x.py").write_text("a = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    (tmp_path / "optplan" / "x.py").write_text("a = 2\n")
    state = git_state(tmp_path)
    assert state["dirty"] and state["changed_files"] == ["optplan/x.py"]
