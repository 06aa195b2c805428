"""Kill a run with SIGKILL in the middle, resume it, and find every job exactly once.

``optplan run`` runs as a subprocess on a config of small jobs (a test plugin method that
sleeps briefly); once some rows are on disk it is SIGKILLed, a row cut short is appended the
way a kill mid-write would leave it, and the same command is run again to completion.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from optplan.experiments.config import load_config
from optplan.experiments.grid import expand
from optplan.experiments.store import read_rows

REPO = Path(__file__).resolve().parents[1]

PLUGIN = '''
import time
from optplan.heuristics.constructions import stacked_offsets
from optplan.registry import register


@register("resume_test_stack", "offsets", reference="test plugin: tensors stacked")
def stack(instance, *, delay=0.0):
    time.sleep(delay)
    return stacked_offsets(instance)
'''

CONFIG = '''
name = "resume-test"
problems = ["offsets"]
plugins = ["{plugin}"]
repetitions = 6
instances = ["data/examples/*.json"]

[[methods]]
name = "resume_test_stack"
params = {{ delay = 0.1 }}
'''


def optplan_run(config: Path, out: Path, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "optplan", "run", str(config), "--out",
                             str(out), "--jobs", "2", "--no-progress"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_mid_run_then_resume_runs_every_job_exactly_once(tmp_path):
    plugin = tmp_path / "resume_plugin.py"
    plugin.write_text(PLUGIN, encoding="utf-8")
    config = tmp_path / "resume.toml"
    config.write_text(CONFIG.format(plugin=plugin), encoding="utf-8")
    out = tmp_path / "run"
    results = out / "results.jsonl"
    job_ids = [job.job_id for job in expand(load_config(config)).jobs]
    assert len(job_ids) == 3 * 6

    process = optplan_run(config, out)
    deadline = time.monotonic() + 60
    while line_count(results) < 4 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    before, _ = read_rows(results)
    assert 4 <= len(before) < len(job_ids), "the kill must land in the middle of the run"

    # A line cut short by the kill: a job that has not finished, half written.
    cut_job = next(job_id for job_id in job_ids if job_id not in before)
    with open(results, "ab") as handle:
        handle.write(json.dumps({"job_id": cut_job, "status": "FEASIBLE"}).encode()[:25])

    resumed = optplan_run(config, out)
    stdout, stderr = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, stderr

    assert results.read_bytes().endswith(b"\n")
    lines = results.read_bytes().splitlines()
    ids = [json.loads(line)["job_id"] for line in lines]
    assert sorted(ids) == sorted(job_ids), "every job exactly once in results.jsonl"
    after, cut = read_rows(results)
    assert cut == 0 and after[cut_job]["status"] == "FEASIBLE"
    assert after[cut_job]["solution_file"] and after[cut_job]["valid"] is True
    for job_id, row in before.items():
        assert after[job_id] == row, "finished jobs are neither redone nor changed"

    table = pd.read_parquet(out / "results.parquet")
    assert sorted(table["job_id"]) == sorted(job_ids) and table["job_id"].is_unique
    assert list(table["job_id"]) == job_ids, "the table follows the grid's order"
    assert (table["status"] == "FEASIBLE").all()
    manifest = json.loads((out / "manifest.json").read_text())
    states = [session["state"] for session in manifest["sessions"]]
    assert states == ["running", "complete"]  # the killed session never got to close
    assert manifest["sessions"][1]["jobs_done_before"] == len(before)
    assert "18 finished, 0 pending of 18" in stdout


def test_killed_run_leaves_no_job_process_behind(tmp_path):
    """Job processes, the fork server and the resource tracker all end with the run."""
    if not sys.platform.startswith("linux"):
        return
    plugin = tmp_path / "resume_plugin.py"
    plugin.write_text(PLUGIN.replace("resume_test_stack", "resume_test_sleeper"),
                      encoding="utf-8")
    config = tmp_path / "sleep.toml"
    config.write_text(CONFIG.format(plugin=plugin)
                      .replace("resume_test_stack", "resume_test_sleeper")
                      .replace("delay = 0.1", "delay = 30.0")
                      .replace("repetitions = 6", "repetitions = 1"), encoding="utf-8")
    process = optplan_run(config, tmp_path / "run")
    deadline = time.monotonic() + 60
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < 4:  # tracker, server, 2 jobs
        children = _descendants(process.pid)
        time.sleep(0.1)
    assert children, "the run started no job process"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()
    process.stderr.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.1)
    assert not [pid for pid in children if _alive(pid)]


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found.extend(children)
        frontier.extend(children)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
