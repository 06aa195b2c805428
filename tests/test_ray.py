"""The Ray backend on a local Ray cluster that the tests start (loopback interface only): the
smoke config gives the same objectives and statuses as the local process pool, a hung job is
killed by the watchdog inside its Ray task and recorded, and an interrupted run resumes
without losing or redoing a job."""

from __future__ import annotations

import io
import json
import logging
import os
from pathlib import Path

import pytest

# Ray reads this once, on import: "0" makes its node address the loopback one, so that every
# server of the test cluster listens on 127.0.0.1 only.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray", reason="needs the ray extra")

from backend_checks import outcome_by_job  # noqa: E402
from optplan.experiments.runner import run_experiment  # noqa: E402

pytestmark = pytest.mark.ray


PLUGIN = '''
import time
from optplan.heuristics.constructions import stacked_offsets
from optplan.registry import register


@register("ray_test_hang", "offsets")
def hang(instance):
    time.sleep(3600)


@register("ray_test_stack", "offsets")
def stack(instance, *, delay=0.0):
    time.sleep(delay)
    return stacked_offsets(instance)
'''


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    try:
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """One plugin file for the module: a file imported twice would register twice."""
    path = tmp_path_factory.mktemp("plugin") / "ray_plugin.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


def test_ray_gives_the_same_results_as_the_local_backend(tmp_path, cluster, patient_smoke):
    local = run_experiment(patient_smoke, out=tmp_path / "local", stream=io.StringIO(),
                           bar=False)
    on_ray = run_experiment(patient_smoke, out=tmp_path / "ray", backend="ray",
                            stream=io.StringIO(), bar=False)
    assert local.complete and on_ray.complete
    assert set(on_ray.table["backend"]) == {"ray"} and set(local.table["backend"]) == {"local"}
    assert outcome_by_job(on_ray.table) == outcome_by_job(local.table)
    assert list(on_ray.table["job_id"]) == list(local.table["job_id"])
    assert os.getpid() not in set(on_ray.table["pid"])  # each job ran in a process of its own
    assert ray.is_initialized()  # the backend leaves a cluster it did not start running


def test_watchdog_kills_a_hung_job_inside_a_ray_task(tmp_path, cluster, plugin):
    config = tmp_path / "hang.toml"
    config.write_text(f'''
problems = ["offsets"]
plugins = ["{plugin}"]
instances = ["data/examples/paper_example.json"]
methods = ["ray_test_hang", "greedy_by_size"]

[watchdog]
factor = 1.0
grace = 0.5
heuristic_limit = 20.0  # a fresh Ray worker first starts its fork server: seconds when the
                        # suite's other worker runs a two-thread search beside it
''', encoding="utf-8")
    outcome = run_experiment(config, out=tmp_path / "run", backend="ray", stream=io.StringIO(),
                             bar=False)
    rows = {row["method"]: row for row in outcome.table.to_dict("records")}
    assert rows["ray_test_hang"]["status"] == "TIMEOUT"
    assert "killed by the watchdog" in rows["ray_test_hang"]["reason"]
    assert rows["greedy_by_size"]["status"] == "FEASIBLE"
    assert {row["backend"] for row in rows.values()} == {"ray"}


class _InterruptAfter(io.StringIO):
    """A progress stream that presses Ctrl-C once ``lines`` jobs have been reported."""

    def __init__(self, lines: int):
        super().__init__()
        self.left = lines

    def write(self, text: str) -> int:
        if text.strip():
            self.left -= 1
            if self.left < 0:
                raise KeyboardInterrupt
        return super().write(text)


def test_an_interrupted_ray_run_resumes_without_losing_or_redoing_a_job(tmp_path, cluster,
                                                                         plugin):
    config = tmp_path / "resume.toml"
    config.write_text(f'''
problems = ["offsets"]
plugins = ["{plugin}"]
repetitions = 4
instances = ["data/examples/*.json"]

[[methods]]
name = "ray_test_stack"
params = {{ delay = 0.3 }}
''', encoding="utf-8")
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_experiment(config, out=out, backend="ray", stream=_InterruptAfter(3), bar=False)
    first = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert 3 <= len(first) < 12

    outcome = run_experiment(config, out=out, backend="ray", stream=io.StringIO(), bar=False)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert outcome.complete and outcome.jobs_total == 12
    assert outcome.jobs_skipped == len(first) and outcome.jobs_run == 12 - len(first)
    assert sorted(row["job_id"] for row in rows) == sorted(set(outcome.table["job_id"]))
    assert len(rows) == 12  # every job exactly once: none lost, none redone
    assert rows[:len(first)] == first
    assert {row["status"] for row in rows} == {"FEASIBLE"}
    assert {row["backend"] for row in rows} == {"ray"}
