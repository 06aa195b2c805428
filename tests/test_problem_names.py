"""One spelling per problem (issue 22, item 4): the CLI's, in JSON, result rows and tables;
rows written with the older spelling still load, and job ids stay what they were."""

from __future__ import annotations

import json
from pathlib import Path

from optplan import Instance, Problem, problems, solve
from optplan.analysis.load import load_results
from optplan.cli import main
from optplan.experiments.config import load_config
from optplan.experiments.grid import expand

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "paper" / "results" / "default"


def test_results_and_json_spell_problems_as_the_command_line_does(capsys):
    result = solve(Instance.from_tuples([(0, 1, 4), (1, 2, 4)]), "greedy_by_size",
                   "shared_objects")
    assert result.problem == "shared-objects"
    assert result.summary()["problem"] == result.to_dict()["problem"] == "shared-objects"
    assert main(["methods", "--json"]) == 0
    spelled = {p for row in json.loads(capsys.readouterr().out) for p in row["problems"]}
    assert spelled == set(problems()) == {"shared-objects", "offsets", "preload", "schedule",
                                          "schedule-offsets"}


def test_the_older_spelling_is_still_read():
    assert Problem.parse("shared_objects") is Problem.SHARED_OBJECTS
    committed = [json.loads(line) for line in (COMMITTED / "results.jsonl").open()]
    assert {row["problem"] for row in committed} == {"shared_objects", "offsets"}
    assert set(load_results(COMMITTED)["problem"]) == {"shared-objects", "offsets"}


def test_job_ids_of_a_committed_run_are_unchanged():
    plan = expand(load_config(COMMITTED / "config.toml"))
    committed = {json.loads(line)["job_id"] for line in (COMMITTED / "results.jsonl").open()}
    assert {job.job_id for job in plan.jobs} == committed
