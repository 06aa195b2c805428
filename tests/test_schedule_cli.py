"""The free-order problems on the command line: ``optplan solve GRAPH --problem schedule |
schedule-offsets``, the plan file, ``optplan validate`` with a reason per violation, and
one-line errors with exit 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optplan.cli import main
from optplan.graph.model import graph_to_dict
from optplan.schedule import load_instance, peak_of
from schedule_graphs import inplace_chain, two_branches

ROOT = Path(__file__).resolve().parents[1]
POSENET = str(ROOT / "data" / "networks" / "posenet_fused_tflite_257.json")


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def graph(tmp_path) -> Path:
    """The two-branch graph as a bare graph file: engine peak 21, best order 12."""
    return write_json(tmp_path / "graph.json", graph_to_dict(two_branches().graph))


@pytest.mark.parametrize("problem", ["schedule", "schedule-offsets"])
@pytest.mark.parametrize("method", ["original_order", "best_list_scheduling", "cpsat",
                                    "milp_highs", "dynamic_program", "brute_force"])
def test_solve_writes_a_plan_that_validate_accepts(capsys, graph, tmp_path, problem, method):
    plan = tmp_path / "plan.json"
    code, out, err = run_cli(capsys, "solve", graph, "--problem", problem, "--method", method,
                             "--output", plan, "--json", "--time-limit", "20", "--workers", "1",
                             "--seed", "0")
    assert code == 0 and err == "" and out.count("\n") == 1
    result = json.loads(out)
    assert result["problem"] == problem and result["valid"] is True
    data = json.loads(plan.read_text())
    assert sorted(data["order"]) == ["a1", "a2", "b1", "b2", "join"]
    assert ("offsets" in data) == (problem == "schedule-offsets")
    expected = 21 if method == "original_order" else 12
    assert result["objective"] == expected
    if result["status"] == "OPTIMAL":
        assert result["best_bound"] == 12
    code, out, _ = run_cli(capsys, "validate", graph, plan, "--problem", problem, "--json")
    report = json.loads(out)
    assert code == 0 and report["valid"] and report["objective"] == expected
    assert report["lower_bound"] == 11


def test_the_reported_peak_is_the_validators_on_a_real_network(capsys, tmp_path):
    plan = tmp_path / "plan.json"
    code, out, _ = run_cli(capsys, "solve", POSENET, "--problem", "schedule", "--method",
                           "cpsat", "--output", plan, "--json", "--time-limit", "30")
    result = json.loads(out)
    order = json.loads(plan.read_text())["order"]
    assert code == 0 and result["status"] == "OPTIMAL"
    assert result["objective"] == peak_of(load_instance(POSENET), order)


def test_inplace_is_honoured_only_when_asked(capsys, tmp_path):
    graph = write_json(tmp_path / "chain.json", graph_to_dict(inplace_chain().graph))
    peaks = {}
    for flags in ((), ("--inplace",)):
        code, out, _ = run_cli(capsys, "solve", graph, "--problem", "schedule", "--method",
                               "cpsat", "--json", "--time-limit", "10", *flags)
        assert code == 0
        peaks[flags] = json.loads(out)["objective"]
    # relu reads x (8) and writes r (8): 16 bytes without the pair, 8 with it (then conv's
    # step, the input and x, is the peak: 12)
    assert peaks[()] == 16 and peaks[("--inplace",)] == 12


@pytest.mark.parametrize("plan, problem, reasons", [
    ({"order": ["a1", "b1", "zz", "b2", "join"]}, "schedule",
     ["unknown_op: step 2: 'zz' is not an op of the graph", "missing_op: op a2 is not in"]),
    ({"order": ["a2", "a1", "b1", "b2", "join"]}, "schedule",
     ["not_topological: op a2 at step 0 reads X1, which op a1 produces later, at step 1"]),
    ({"order": ["a1", "a1", "b1", "b2", "join"]}, "schedule",
     ["duplicate_op: step 1: op a1 is already at an earlier step", "missing_op: op a2"]),
    ({"order": ["a1", "a2", "b1", "b2", "join"]}, "schedule-offsets",
     ["missing_offset: the plan has no offsets"]),
    ({"order": ["a1", "a2", "b1", "b2", "join"],
      "offsets": {"X1": 0, "Y1": 0, "X2": 0, "Y2": 10, "out": 11}}, "schedule-offsets",
     ["overlap: tensors X1 [0, 1] at [0, 10) and Y1 [1, 4] at [0, 1) overlap",
      "overlap: tensors Y1 [1, 4] at [0, 1) and X2 [2, 3] at [0, 10) overlap"]),
    ({"order": ["a1", "a2", "b1", "b2", "join"],
      "offsets": {"X1": 0, "Y1": 10, "X2": 0, "Y2": 11, "out": 0, "ghost": 3}},
     "schedule-offsets", ["unknown_tensor: 'ghost' is not a tensor with memory"]),
])
def test_validate_prints_every_violation_with_its_reason(capsys, graph, tmp_path, plan,
                                                         problem, reasons):
    path = write_json(tmp_path / "plan.json", plan)
    code, out, err = run_cli(capsys, "validate", graph, path, "--problem", problem)
    assert code == 1 and err == ""
    assert out.startswith("INVALID")
    lines = out.splitlines()[1:]
    assert len(lines) == len(reasons)
    for reason in reasons:
        assert any(reason in line for line in lines), (reason, lines)


def test_a_valid_plan_with_offsets_validates(capsys, graph, tmp_path):
    path = write_json(tmp_path / "plan.json", {"order": ["a1", "a2", "b1", "b2", "join"],
                                               "offsets": {"X1": 0, "Y1": 10, "X2": 0,
                                                           "Y2": 11, "out": 0}})
    code, out, _ = run_cli(capsys, "validate", graph, path, "--problem", "schedule-offsets",
                           "--json")
    assert code == 0 and json.loads(out) == {"problem": "schedule-offsets", "valid": True,
                                             "objective": 12, "lower_bound": 11,
                                             "violations": []}


def test_bad_input_is_one_line_naming_the_file_and_field(capsys, graph, tmp_path):
    data = graph_to_dict(two_branches().graph)
    data["ops"][0]["inputs"] = ["out"]          # a1 reads what join writes: a cycle
    cycle = write_json(tmp_path / "cycle.json", data)
    no_graph = write_json(tmp_path / "records.json", {"name": "x", "records": []})
    malformed = tmp_path / "plan.json"
    malformed.write_text('{"order": ["a1"', encoding="utf-8")
    not_a_list = write_json(tmp_path / "plan2.json", {"order": "a1"})
    bad_offset = write_json(tmp_path / "plan3.json", {"order": [], "offsets": {"X1": "0"}})
    cases = [
        (("solve", cycle, "--problem", "schedule", "--method", "cpsat"),
         [str(cycle), "ops[0] (a1).inputs"]),
        (("solve", tmp_path / "missing.json", "--problem", "schedule", "--method", "cpsat"),
         ["missing.json", "cannot read"]),
        (("solve", no_graph, "--problem", "schedule-offsets", "--method", "cpsat"),
         [str(no_graph), "graph"]),
        (("validate", graph, malformed, "--problem", "schedule"), [str(malformed), "JSON"]),
        (("validate", graph, not_a_list, "--problem", "schedule"), [str(not_a_list), "order"]),
        (("validate", graph, bad_offset, "--problem", "schedule-offsets"),
         [str(bad_offset), "offsets.X1"]),
        (("solve", graph, "--problem", "schedule", "--method", "greedy_by_size"),
         ["greedy_by_size", "schedule"]),
    ]
    for argv, words in cases:
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and out == "", argv
        assert err.count("\n") == 1 and "Traceback" not in err, err
        for word in words:
            assert word in err, (word, err)


def test_methods_and_help_name_the_free_order_problems(capsys):
    code, out, _ = run_cli(capsys, "methods", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    for name in ("original_order", "list_scheduling", "best_list_scheduling", "lower_bound",
                 "dynamic_program", "cpsat", "milp_highs", "milp_cbc", "brute_force"):
        assert {"schedule", "schedule-offsets"} <= set(rows[name]["problems"]), name
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    out, _ = capsys.readouterr()
    assert "schedule-offsets" in out and '"order"' in out
