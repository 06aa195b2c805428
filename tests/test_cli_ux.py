"""What a user meets first: a fast start, an honest ``compare``, quiet pipes, short reprs,
install hints that name real extras."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from optplan import Instance, OffsetsSolution, Problem
from optplan.cli import main
from optplan.commands.compare import reference_of
from optplan.formats import write_json_instance
from optplan.registry import MethodInfo, _REGISTRY, methods
from optplan.result import SolverOutcome, Status
from optplan.solve import solve

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "examples" / "paper_example.json"
HEAVY = ("matplotlib", "pandas", "pyarrow", "ortools", "pulp", "networkx")

# Shared objects: positional maximums 21, optimum 23 (brute force), greedy_by_size 24.
GAP_TRIPLES = [(0, 3, 3), (1, 5, 2), (2, 4, 3), (0, 0, 8), (0, 1, 5), (4, 4, 8), (4, 4, 8)]


@pytest.fixture
def gap_instance(tmp_path) -> Path:
    path = tmp_path / "gap.json"
    write_json_instance(Instance.from_tuples(GAP_TRIPLES, name="gap"), path)
    return path


def compare(capsys, *argv) -> tuple[int, str, str]:
    code = main(["compare", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def block(out: str, name: str) -> dict[str, list[str]]:
    """The rows of instance ``name``'s block, by method: [status, objective, bound, gap, time]."""
    lines = out.split(f"\n{name} (", 1)[1].split("\n\n", 1)[0].splitlines()
    assert lines[1].split() == ["method", "status", "objective", "bound", "gap", "time_s"]
    return {line.split()[0]: line.split()[1:] for line in lines[2:]
            if not line.startswith("  warning")}


# --- start-up -----------------------------------------------------------------------------


def test_the_parser_and_the_method_list_import_no_heavy_library():
    """`optplan --help` and `optplan methods` must not pay for plotting, tables or solvers:
    building every subcommand's parser and listing every method imports none of them."""
    probe = ("import json, sys, optplan.cli, optplan.registry\n"
             "optplan.cli.build_parser(); optplan.registry.methods()\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert set(json.loads(done.stdout)) & set(HEAVY) == set()


def test_lazy_package_attributes_still_resolve():
    import optplan.analysis
    import optplan.experiments

    assert callable(optplan.experiments.run_experiment)
    assert callable(optplan.analysis.optimum_table)
    with pytest.raises(AttributeError):
        optplan.experiments.no_such_name  # noqa: B018


# --- compare ------------------------------------------------------------------------------


def test_compare_measures_every_gap_against_the_proven_optimum(capsys, gap_instance):
    code, out, _ = compare(capsys, gap_instance, "--problem", "shared-objects", "--methods",
                           "greedy_by_size,greedy_in_order,brute_force,lower_bound")
    assert code == 0
    assert "gap (7 tensors): reference 23 (optimum proven by brute_force), combinatorial " \
           "lower bound 21" in out
    rows = block(out, "gap")
    assert rows["brute_force"][:4] == ["OPTIMAL", "23", "23", "0.0%"]
    assert rows["greedy_by_size"][:4] == ["FEASIBLE", "24", "-", "+4.3%"]  # 1/23, not 3/21
    assert rows["greedy_in_order"][:4] == ["FEASIBLE", "29", "-", "+26.1%"]
    assert rows["lower_bound"][:4] == ["UNKNOWN", "-", "21", "-"]
    assert "its status is UNKNOWN" in out  # the bound row's status explained
    assert all(float(row[4]) >= 0 for row in rows.values())


def test_compare_without_an_exact_method_falls_back_to_the_combinatorial_bound(capsys,
                                                                               gap_instance):
    code, out, _ = compare(capsys, gap_instance, "--problem", "shared-objects", "--methods",
                           "greedy_by_size")
    assert code == 0 and "reference 21 (the combinatorial lower bound)" in out
    assert block(out, "gap")["greedy_by_size"][3] == "+14.3%"


def test_reference_counts_an_unproven_bound_and_ignores_invalid_solutions(gap_instance):
    from optplan.formats import load_instance

    instance = load_instance(gap_instance)
    heuristic = solve(instance, "greedy_by_size", "shared_objects")
    bounded = solve(instance, "lower_bound", "shared_objects")
    assert reference_of([heuristic, bounded]) == (21, "the combinatorial lower bound")
    better = bounded.__class__(**{**bounded.__dict__, "method": "exact_x", "best_bound": 22})
    assert reference_of([heuristic, better]) == (22, "bound proven by exact_x")
    invalid = bounded.__class__(**{**better.__dict__, "best_bound": 30, "valid": False})
    assert reference_of([heuristic, invalid]) == (21, "the combinatorial lower bound")


def test_compare_checks_every_input_before_solving_anything(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size\n0,0,2,-5\n", encoding="utf-8")
    code, out, err = compare(capsys, EXAMPLE, bad, "--problem", "offsets")
    assert code == 2 and out == ""
    assert err.startswith("optplan: error:") and "bad.csv" in err and "size" in err
    code, out, err = compare(capsys, EXAMPLE, "--problem", "offsets", "--methods",
                             "greedy_by_size,nope")
    assert code == 2 and out == "" and "nope" in err


@pytest.fixture
def interrupting_method(monkeypatch):
    """A method that interrupts the run (like Ctrl-C) on any instance but the first."""
    methods()
    calls = []

    def interrupt(instance):
        calls.append(instance.name)
        if len(calls) > 1:
            raise KeyboardInterrupt
        offsets = [sum(r.size for r in instance.records[:i]) for i in range(len(instance))]
        return OffsetsSolution.from_offsets(instance, offsets)

    info = MethodInfo("test_interrupt", "heuristic", "records")
    info.implementations[Problem.OFFSETS] = interrupt
    monkeypatch.setitem(_REGISTRY, "test_interrupt", info)
    return calls


def test_compare_prints_each_instance_as_soon_as_it_is_done(capsys, interrupting_method):
    second = REPO / "data" / "examples" / "tflite_chain.json"
    code, out, err = compare(capsys, EXAMPLE, second, "--problem", "offsets", "--methods",
                             "test_interrupt,greedy_by_size")
    assert code == 130 and "interrupted" in err
    assert interrupting_method == ["paper_example", "tflite_chain"]
    rows = block(out + "\n", "paper_example")
    assert rows["greedy_by_size"][:2] == ["FEASIBLE", "124"]
    assert rows["test_interrupt"][0] == "FEASIBLE"
    assert "tflite_chain" not in out


def test_compare_reports_a_bound_above_a_valid_objective(capsys, monkeypatch):
    methods()

    def overclaiming(instance):
        return SolverOutcome(Status.UNKNOWN, None, best_bound=10**6)

    info = MethodInfo("test_overclaim", "exact", "records")
    info.implementations[Problem.OFFSETS] = overclaiming
    monkeypatch.setitem(_REGISTRY, "test_overclaim", info)
    code, out, _ = compare(capsys, EXAMPLE, "--problem", "offsets", "--methods",
                           "greedy_by_size,test_overclaim")
    assert code == 0
    assert "warning: test_overclaim proves a bound of 1,000,000 but greedy_by_size found 124" \
        in out


# --- pipes, reprs, hints, the default experiment ---------------------------------------------


@pytest.mark.parametrize("argv", [["--help"], ["methods"], ["compare", str(EXAMPLE),
                                                              "--problem", "offsets"]])
def test_a_closed_pipe_ends_quietly(argv):
    """`optplan ... | head`: the reader leaves early; no BrokenPipeError, exit 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run([sys.executable, "-m", "optplan", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=env, check=False)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr


def test_instance_repr_is_one_short_line():
    from optplan.formats import load_instance

    big = load_instance(REPO / "data" / "networks" / "resnet50_fused_tflite_224.json")
    assert len(big) > 50
    assert repr(big).startswith("Instance('resnet50_fused_tflite_224', ")
    assert len(repr(big)) < 100 and "\n" not in repr(big)
    assert repr(Instance.from_tuples([(0, 1, 4)], name="x", alignment=8)) == \
        "Instance('x', 1 records, 2 ops, alignment=8)"


def test_install_hints_name_extras_that_exist(monkeypatch):
    import importlib

    from optplan.importers import MissingExtraError, keras

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    real_import = importlib.import_module

    def no_tensorflow(name, *args):
        if name == "tensorflow":
            raise ImportError("No module named 'tensorflow'")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_tensorflow)
    with pytest.raises(MissingExtraError) as caught:
        keras._tensorflow()
    hint = str(caught.value).split("pip install ")[1]
    assert hint.startswith("'optplan[") and hint.split("[")[1].split("]")[0] in extras


def test_the_default_experiment_runs_mxnet_on_the_networks_only():
    from optplan.experiments.config import load_config
    from optplan.experiments.grid import expand

    plan = expand(load_config(REPO / "experiments" / "default.toml"))
    mxnet = {job.instance.key for job in plan.jobs if job.method == "mxnet"}
    assert mxnet and all(key.startswith("data/networks/") for key in mxnet)
    networks = {job.instance.key for job in plan.jobs if job.instance.has_graph}
    assert mxnet == networks


def test_human_output_gives_units_and_explains_a_bound_rows_status(capsys):
    preload = REPO / "data" / "preload" / "mobilenet_v2_fused_tflite_224_embedded.json"
    assert main(["solve", str(preload), "--problem", "preload", "--method", "flexnn"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["objective"].endswith(" µs") and lines["lower_bound"].endswith(" µs")
    assert main(["solve", str(EXAMPLE), "--problem", "offsets", "--method", "lower_bound"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["status"].startswith("UNKNOWN (a bound method")
    assert lines["lower_bound"] == "124 bytes" and lines["objective"] == "None"


def test_the_run_summary_explains_the_status_of_bound_rows(tmp_path):
    import io

    from optplan.experiments.runner import format_summary, run_experiment

    config = tmp_path / "bound.toml"
    config.write_text('problems = ["offsets"]\ninstances = ["data/examples/paper_example.json"]'
                      '\nmethods = ["lower_bound", "greedy_by_size"]\n', encoding="utf-8")
    run_experiment(config, out=tmp_path / "run", stream=io.StringIO(), bar=False)
    summary = format_summary(tmp_path / "run")
    bound_line = next(line for line in summary.splitlines() if "lower_bound" in line)
    assert "UNKNOWN 1 (a bound method" in bound_line
    assert "a bound method" not in next(line for line in summary.splitlines()
                                        if "greedy_by_size" in line)
