"""The Dask backend: the smoke config on a local Dask cluster gives the same objectives and
statuses as the local process pool, and the watchdog still applies inside Dask tasks."""

from __future__ import annotations

import io

import pytest

distributed = pytest.importorskip("distributed", reason="needs the dask extra")

from backend_checks import outcome_by_job  # noqa: E402
from optplan.experiments.runner import run_experiment  # noqa: E402

pytestmark = pytest.mark.dask


PLUGIN = '''
import time
from optplan.model import OffsetsSolution
from optplan.registry import register


@register("dask_test_hang", "offsets")
def hang(instance):
    time.sleep(3600)
'''


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


def test_dask_gives_the_same_results_as_the_local_backend(tmp_path, client, patient_smoke):
    local = run_experiment(patient_smoke, out=tmp_path / "local", stream=io.StringIO(),
                           bar=False)
    dask = run_experiment(patient_smoke, out=tmp_path / "dask", backend="dask", address=client,
                          stream=io.StringIO(), bar=False)
    assert local.complete and dask.complete
    assert set(dask.table["backend"]) == {"dask"} and set(local.table["backend"]) == {"local"}
    assert outcome_by_job(dask.table) == outcome_by_job(local.table)
    assert list(dask.table["job_id"]) == list(local.table["job_id"])


def test_watchdog_applies_inside_dask_tasks(tmp_path, client):
    plugin = tmp_path / "dask_plugin.py"
    plugin.write_text(PLUGIN, encoding="utf-8")
    config = tmp_path / "hang.toml"
    config.write_text(f'''
problems = ["offsets"]
plugins = ["{plugin}"]
instances = ["data/examples/paper_example.json"]
methods = ["dask_test_hang", "greedy_by_size"]

[watchdog]
factor = 1.0
grace = 0.5
heuristic_limit = 1.0
''', encoding="utf-8")
    outcome = run_experiment(config, out=tmp_path / "run", backend="dask", address=client,
                             stream=io.StringIO(), bar=False)
    statuses = dict(zip(outcome.table["method"], outcome.table["status"]))
    assert statuses == {"dask_test_hang": "TIMEOUT", "greedy_by_size": "FEASIBLE"}
