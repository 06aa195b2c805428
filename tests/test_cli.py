"""The command line: binding flags, JSON keys, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from optplan.cli import main
from optplan.formats import load_instance, read_solution_csv
from optplan.validate import validate

REPO_EXAMPLES = "data/examples"
JSON_KEYS = ["problem", "method", "status", "objective", "lower_bound", "best_bound", "gap",
             "wall_time_s", "valid"]


@pytest.fixture
def example(request):
    from pathlib import Path

    return str(Path(__file__).resolve().parents[1] / REPO_EXAMPLES / "paper_example.json")


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("problem", ["offsets", "shared-objects"])
def test_solve_json_prints_one_line_with_the_binding_keys(capsys, example, problem, tmp_path):
    output = tmp_path / "out.csv"
    code, out, err = run_cli(capsys, "solve", example, "--problem", problem, "--method",
                             "greedy_by_size", "--json", "--output", str(output),
                             "--time-limit", "3", "--workers", "2", "--seed", "7")
    assert code == 0 and err == ""
    assert out.count("\n") == 1
    data = json.loads(out)
    assert list(data) == JSON_KEYS
    assert data["status"] == "FEASIBLE" and data["valid"] is True
    instance = load_instance(example)
    solution = read_solution_csv(instance, problem, output)
    assert validate(instance, problem, solution) == []
    header = output.read_text().splitlines()[0]
    assert header == "id,first_op,last_op,size," + ("offset" if problem == "offsets" else "object")


def test_solve_alignment_rounds_the_objective_up(capsys, example):
    code, out, _ = run_cli(capsys, "solve", example, "--problem", "offsets", "--method",
                           "greedy_by_size", "--alignment", "64", "--json")
    data = json.loads(out)
    assert code == 0 and data["objective"] % 64 == 0 and data["lower_bound"] == 128


def test_solve_minimalloc_csv_and_validate_its_output(capsys, minimalloc_dir, tmp_path):
    path = str(minimalloc_dir / "challenging" / "A.1048576.csv")
    output = tmp_path / "A.csv"
    code, out, _ = run_cli(capsys, "solve", path, "--problem", "offsets", "--method",
                           "greedy_by_size", "--json", "--output", str(output))
    data = json.loads(out)
    assert code == 0 and data["valid"] and data["lower_bound"] == 1048576
    assert output.read_text().splitlines()[0] == "id,lower,upper,size,offset"
    code, out, _ = run_cli(capsys, "validate", path, str(output), "--problem", "offsets", "--json")
    report = json.loads(out)
    assert code == 0 and report["valid"] and report["objective"] == data["objective"]


def test_validate_reports_violations_with_exit_1(capsys, example, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,offset\n" + "".join(f"{i},0\n" for i in range(8)))
    code, out, _ = run_cli(capsys, "validate", example, str(bad), "--problem", "offsets")
    assert code == 1 and "INVALID" in out and "overlap" in out


def test_unknown_method_lists_the_valid_names(capsys, example):
    code, _, err = run_cli(capsys, "solve", example, "--problem", "offsets", "--method", "nope")
    assert code == 2
    assert err.count("\n") == 1 and "unknown method 'nope'" in err and "greedy_by_size" in err


@pytest.mark.parametrize("argv", [
    ["solve", "missing.csv", "--problem", "offsets", "--method", "naive"],
    ["solve", "{example}", "--problem", "nonsense", "--method", "naive"],
    ["solve", "{example}", "--problem", "offsets", "--method", "naive", "--time-limit", "-1"],
    ["solve", "{example}", "--problem", "offsets", "--method", "naive", "--workers", "0"],
    ["solve", "{example}", "--problem", "offsets", "--method", "naive", "--alignment", "x"],
    ["solve", "{example}", "--method", "naive"],
    ["validate", "{example}", "missing.csv", "--problem", "offsets"],
    ["compare", "{example}", "--problem", "offsets", "--methods", "naive,nope"],
    ["frobnicate"],
])
def test_bad_input_exits_2_with_one_line(capsys, example, argv):
    argv = [a.replace("{example}", example) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse rejects bad flags before any work starts
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2
    assert "error" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("optplan: error:")


def test_methods_json_lists_every_method_with_its_fields(capsys):
    code, out, _ = run_cli(capsys, "methods", "--json")
    rows = json.loads(out)
    assert code == 0
    by_name = {row["name"]: row for row in rows}
    for row in rows:
        assert set(row) == {"name", "problems", "kind", "input", "reference", "parameters"}
        assert row["kind"] in ("heuristic", "exact", "bound")
        assert row["input"] in ("records", "graph")
    for name in ("naive", "equality", "greedy_in_order", "greedy_by_breadth", "greedy_by_size",
                 "greedy_best", "min_cost_flow"):
        assert "shared-objects" in by_name[name]["problems"]
    for name in ("greedy_by_size", "greedy_by_breadth"):
        assert "offsets" in by_name[name]["problems"]


def test_methods_json_gives_every_exact_method_the_keyword_contract(capsys):
    code, out, _ = run_cli(capsys, "methods", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    for row in rows.values():
        if row["kind"] == "exact":
            names = [parameter["name"] for parameter in row["parameters"]]
            assert names[:5] == ["time_limit", "workers", "seed", "warm_start",
                                 "initial_solution"]
            assert row["parameters"][-1]["kind"] == "var_keyword"
    assert {"name": "time_limit", "default": None,
            "problems": ["shared-objects", "offsets", "preload", "schedule", "schedule-offsets"]
            } in rows["cpsat"]["parameters"]


def test_solve_takes_the_exact_contract_on_the_command_line(capsys, example, tmp_path):
    start = tmp_path / "start.csv"
    code, _, _ = run_cli(capsys, "solve", example, "--problem", "offsets", "--method",
                         "greedy_by_size", "--output", str(start))
    assert code == 0
    code, out, _ = run_cli(capsys, "solve", example, "--problem", "offsets", "--method",
                           "milp_highs", "--warm-start", "false", "--initial-solution",
                           str(start), "--param", "presolve=off", "--json")
    assert code == 0 and json.loads(out)["status"] == "OPTIMAL"
    code, _, err = run_cli(capsys, "solve", example, "--problem", "offsets", "--method",
                           "milp_highs", "--param", "no_such_option=1")
    assert code == 2 and "no_such_option" in err


def test_compare_prints_a_table(capsys, example):
    code, out, _ = run_cli(capsys, "compare", example, "--problem", "shared-objects",
                           "--methods", "greedy_by_size,naive")
    assert code == 0 and "paper_example" in out and "greedy_by_size" in out


def test_entry_point_runs_as_a_program(example):
    completed = subprocess.run([sys.executable, "-m", "optplan", "solve", example, "--problem",
                                "offsets", "--method", "greedy_by_size", "--json"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["objective"] == 124


def test_validate_checks_a_preload_plan_too(capsys, tmp_path):
    from pathlib import Path

    instance = Path(__file__).resolve().parents[1] / "data" / "preload" / \
        "mobilenet_v2_fused_tflite_224_phone.json"
    plan = tmp_path / "plan.json"
    code, _, _ = run_cli(capsys, "solve", str(instance), "--problem", "preload", "--method",
                         "flexnn", "--output", str(plan))
    assert code == 0
    code, out, _ = run_cli(capsys, "validate", str(instance), str(plan), "--problem",
                           "preload", "--json")
    assert code == 0 and json.loads(out)["valid"] is True
    assert json.loads(out)["problem"] == "preload"
