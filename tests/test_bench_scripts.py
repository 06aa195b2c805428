"""Every script in ``bench/`` runs on the current API: one smoke run each (or a few), as a
user starts it (a fresh process, the project's interpreter, from the repository root), with
the smallest honest arguments. Each run must exit 0 and print the table its docstring
documents, with numbers that parse and solver results that hold together (bound <= objective,
an optimum no worse than a feasible plan, every plan accepted by the validator); the rows
written to ``--jsonl``/``--out`` must parse and hold the documented keys, the time limit,
workers and seed of every solver result among them. The timings the scripts print are not
checked: speed is what the benches measure, never what a test asserts."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from optplan.analysis.peers import PEER_METHODS

REPO = Path(__file__).resolve().parents[1]
STATUSES = {"OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN"}
SUMMARY_KEYS = ("problem", "method", "status", "objective", "lower_bound", "best_bound", "gap",
                "wall_time_s", "valid")


def run_bench(command: list[str]) -> str:
    """Stdout of ``python bench/...`` from the repository root; MiniMalloc's binary is hidden
    (CI has none; with one, ``search.py`` would bisect through it for minutes)."""
    env = {key: value for key, value in os.environ.items() if key != "MINIMALLOC_BIN"}
    done = subprocess.run([sys.executable, *command], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n" \
                                 f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


# --- reading what the scripts print --------------------------------------------------------

def number(cell: str) -> float | None:
    """``1,048,576`` / ``15.23%`` / ``0.4s`` / ``12,191*`` as a number; ``-``/``None``: None."""
    text = cell.strip().replace(",", "").rstrip("%s*")
    return None if text in ("-", "None", "") else float(text)


def table(stdout: str, header: str, first=None) -> list[list[str]]:
    """The whitespace-split rows under every line whose words are ``header``'s, each table up
    to the next blank line; with ``first``, only the rows whose first word is in it."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.split() == header.split()]
    assert starts, f"no table headed {header!r} in:\n{stdout}"
    rows = []
    for start in starts:
        for line in lines[start + 1:]:
            if not line.strip():
                break
            if first is None or line.split()[0] in first:
                rows.append(line.split())
    assert rows, f"table {header!r} has no rows:\n{stdout}"
    return rows


def markdown_rows(stdout: str, first_column: str) -> list[list[str]]:
    """The cells of the rows of the markdown table whose first column is ``first_column``."""
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"| {first_column} |")),
                 None)
    assert start is not None, f"no markdown table of {first_column!r} in:\n{stdout}"
    rows = []
    for line in lines[start + 2:]:  # below the |---| rule
        if not line.startswith("| "):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows, f"markdown table of {first_column!r} without rows:\n{stdout}"
    return rows


def json_rows(path: Path, keys) -> list[dict]:
    """The JSON lines of ``path``, each holding ``keys``."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows, f"{path.name} is empty"
    for row in rows:
        assert set(keys) <= row.keys(), f"{path.name}: {set(keys) - row.keys()} missing: {row}"
    return rows


def option(command: list[str], flag: str, default=None):
    """The value given to ``flag`` in ``command`` (``default`` when it is not there)."""
    return command[command.index(flag) + 1] if flag in command else default


def assert_consistent(status: str, objective, bound) -> None:
    """A solver result that holds together: a known status, bound <= objective, and an
    OPTIMAL claim whose bound meets its objective."""
    assert status in STATUSES, status
    if objective is not None and bound is not None:
        assert bound <= objective, (status, objective, bound)
    if status == "OPTIMAL":
        assert objective is not None and objective == bound, (objective, bound)


# --- one check per script: (stdout, tmp_path, command) --------------------------------------

def check_cli(stdout, tmp_path, command):
    rows = {row[0]: row for row in table(stdout, "command median s min s cpu s imported",
                                         first=("--help", "methods"))}
    assert rows.keys() == {"--help", "methods"}, stdout
    for row in rows.values():
        median, fastest, cpu = map(number, row[1:4])
        assert 0 < fastest <= median and cpu >= 0, row


def check_exact(stdout, tmp_path, command):
    rows = table(stdout, "method status objective bound gap time_s")
    methods = command[command.index("--methods") + 1].split(",") if "--methods" in command \
        else ["cpsat", "milp_highs", "milp_cbc"]
    assert [row[0] for row in rows] == methods, stdout
    for row in rows:
        assert_consistent(row[1], number(row[2]), number(row[3]))
    written = json_rows(tmp_path / "exact.jsonl", SUMMARY_KEYS + (
        "instance", "time_limit", "workers", "seed", "solver_version"))
    assert [row["method"] for row in written] == methods
    for row in written:
        assert row["valid"] is not False
        assert_consistent(row["status"], row["objective"], row["best_bound"])
        assert row["seed"] == int(option(command, "--seed", 0)) and row["solver_version"]
        workers = option(command, "--workers")  # not given: the method's own default
        assert (row["workers"] == int(workers)) if workers else (row["workers"] >= 1), row
    optima = {row["objective"] for row in written if row["status"] == "OPTIMAL"}
    assert len(optima) <= 1, f"the exact methods disagree on the optimum: {written}"
    assert re.search(r"## proven optimal\n(\s*\w+\s+\d+/\d+\n?){%d}" % len(methods), stdout)


def check_heuristics_scaling(stdout, tmp_path, command):
    rows = table(stdout, "planner problem reference kind tensors seconds gap to LB valid")
    assert "INVALID plan" not in stdout, stdout
    for row in rows:
        assert len(row) == 8, f"crashed, timed out or skipped: {row}"
    assert {row[1] for row in rows} == {"shared-objects", "offsets"}
    assert {row[2] for row in rows} == {"quadratic", "sub-quadratic"}
    assert "coloring_largest_first" in {row[0] for row in rows}  # a graph-bounded one
    for row in rows:
        planner, problem, reference, kind, tensors, seconds, gap, valid = row
        assert valid == "yes", f"{planner} {problem}: the validator rejected the plan"
        assert reference in ("quadratic", "sub-quadratic") and kind == "random_dag"
        assert int(tensors) == 200
        assert number(seconds) >= 0, f"{planner} {problem}: {seconds} {gap}"  # '-': crash
        assert number(gap) >= 0, f"{planner} {problem} below the lower bound: {gap}"


def check_heuristics_gaps(stdout, tmp_path, command):
    count = int(re.search(r"^(\d+) instances from", stdout, re.M).group(1))
    assert count == len(list((REPO / "data" / "examples").glob("*.json")))
    rows = table(stdout, "planner problem mean gap max gap at LB")
    assert ["greedy_by_size", "offsets"] in [row[:2] for row in rows]
    for planner, problem, mean, largest, at_bound in rows:
        assert 0 <= number(mean) <= number(largest)
        hits, runs = map(int, at_bound.split("/"))
        assert hits <= runs == count


def check_peers(stdout, tmp_path, command):
    assert re.search(r"^MiniMalloc is not available \(.*MINIMALLOC_BIN", stdout, re.M), stdout
    methods = command[command.index("--methods") + 1].split(",")
    rows = json_rows(tmp_path / "peers.jsonl", SUMMARY_KEYS + (
        "instance", "suite", "num_tensors", "time_limit", "workers", "seed"))
    assert [row["method"] for row in rows] == methods
    for row in rows:
        assert row["status"] != "ERROR" and row["valid"] is True, row
        assert_consistent(row["status"], row["objective"], row["best_bound"])
        assert row["lower_bound"] <= row["objective"]
    [instance_row] = markdown_rows(stdout, "instance")
    assert instance_row[0] == rows[0]["instance"] and len(instance_row) == 4 + len(methods)
    summary = markdown_rows(stdout, "method")
    assert [row[0] for row in summary] == methods
    assert all(row[1:3] == ["1", "1"] for row in summary), summary  # one instance, valid


def check_preload(stdout, tmp_path, command):
    rows = table(stdout, "budget flexnn_us no_preload_us optimal_us status bound_us "
                         "flexnn_gap cpsat_s")
    budgets = [number(row[0]) for row in rows]
    assert budgets == sorted(budgets), stdout  # one budget when the minimum meets the bound
    for budget, flexnn, baseline, optimal, status, bound, gap, seconds in rows:
        assert_consistent(status, number(optimal), number(bound))
        # the sweep starts from the minimum's plan, CP-SAT from the better of it, FlexNN and
        # no-preload: a plan at every budget, never worse than either heuristic
        plans = [number(cell) for cell in (flexnn, baseline) if number(cell) is not None]
        assert number(optimal) is not None and number(optimal) <= min(plans, default=math.inf)
    written = json_rows(tmp_path / "preload.jsonl", SUMMARY_KEYS + (
        "instance", "budget", "time_limit", "workers", "seed", "solver_version"))
    assert [row["method"] for row in written] == ["flexnn", "no_preload", "cpsat"] * len(rows)
    solver = (float(option(command, "--time-limit")), int(option(command, "--workers")),
              int(option(command, "--seed", 0)))
    for row in written:
        assert row["valid"] is True
        assert_consistent(row["status"], row["objective"], row["best_bound"])
        if row["method"] == "cpsat":   # the heuristics take no solver settings
            assert (row["time_limit"], row["workers"], row["seed"]) == solver, row
            assert row["solver_version"], row


def check_replay(stdout, tmp_path, command):
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert [row["plan"] for row in rows] == ["plan", "corrupted"], stdout
    for row in rows:
        assert {"instance", "tensors", "naive_bytes", "offsets_lower_bound", "method", "status",
                "arena", "passed", "max_abs_diff", "written_in_place", "copied", "views",
                "failure"} <= row.keys()
        assert row["offsets_lower_bound"] <= row["arena"] <= row["naive_bytes"] + 64 * row[
            "tensors"]
    plan, corrupted = rows
    assert plan["passed"] is True and plan["failure"] is None
    assert corrupted["passed"] is False and "overwritten" in corrupted["failure"]


RUNTIME_KEYS = ("runtime", "network", "runtime_planner_bytes", "optplan_bytes", "lower_bound",
                "status", "outputs_equal", "max_abs_diff", "method", "time_limit", "workers",
                "seed")


def check_runtimes(stdout, tmp_path, command):
    header = "runtime network runtime B optplan B lower bd saved status equal max|d| wall s"
    [row] = table(stdout, header, first=("tflm", "executorch"))
    [written] = json_rows(tmp_path / "runtimes" / "runtimes.jsonl", RUNTIME_KEYS)
    assert "error" not in written, written
    assert row[:2] == [written["runtime"], written["network"]]
    assert written["lower_bound"] <= written["optplan_bytes"] <= written[
        "runtime_planner_bytes"]  # a plan not smaller than the runtime's gives way to it
    assert written["outputs_equal"] is True


def check_runtimes_rerun(stdout, tmp_path, command):
    """The row, then a rerun that skips it and adds a session to the manifest."""
    check_runtimes(stdout, tmp_path, command)
    assert run_bench(command).strip().splitlines() == [stdout.splitlines()[0]]
    assert len(json_rows(tmp_path / "runtimes" / "runtimes.jsonl", RUNTIME_KEYS)) == 1
    manifest = json.loads((tmp_path / "runtimes" / "manifest.json").read_text())
    assert [session["rows_run"] for session in manifest["sessions"]] == [1, 0]
    assert manifest["sessions"][0]["settings"]["method"] == "greedy_by_size"


def check_schedule(stdout, tmp_path, command):
    rows = markdown_rows(stdout, "network")
    assert {(row[2], row[6]) for row in rows} == {
        (problem, method) for problem in ("schedule", "schedule-offsets")
        for method in ("dynamic_program", "cpsat")}
    for (name, inplace, problem, ops, engine, heuristic, method, status, objective, bound,
         gap, saving, seconds) in rows:
        assert_consistent(status, number(objective), number(bound))
        if status == "OPTIMAL":  # the engine order and the heuristic are feasible orders
            assert number(objective) <= min(number(engine), number(heuristic))
    written = json_rows(tmp_path / "schedule.jsonl", (
        "network", "problem", "method", "status", "objective", "best_bound", "valid", "engine",
        "heuristic", "time_limit", "workers", "seed", "solver_version"))
    assert len(written) == len(rows)
    optima = {}
    for row in written:
        assert row["valid"] is (True if row["objective"] is not None else None), row
        assert row["workers"] == int(option(command, "--workers")) and row["solver_version"]
        if row["status"] == "OPTIMAL":
            optima.setdefault(row["problem"], set()).add(row["objective"])
    assert all(len(values) == 1 for values in optima.values()), written


def assert_valid_packing(suite: Path, name: str, path: Path, arena: int) -> None:
    """The packing at ``path`` (a CSV of id,offset) is valid for MiniMalloc's instance
    ``name`` in ``suite``, with arena ``arena``."""
    from optplan.formats.minimalloc_csv import read_minimalloc_csv
    from optplan.formats.solution_csv import read_solution_csv
    from optplan.validate import validate_offsets

    instance = read_minimalloc_csv(suite / f"{name}.1048576.csv")
    solution = read_solution_csv(instance, "offsets", path)
    assert validate_offsets(instance, solution) == []
    assert solution.arena_size == arena


def check_search(stdout, tmp_path, command):
    header = "instance n " + " | ".join(["status objective bound time s nodes"] * 2)
    [row] = table(stdout, header, first=("A",))
    before, after = " ".join(row[2:]).split(" | ")
    for cells in (before.split(), after.split()):
        assert_consistent(cells[0], number(cells[1]), number(cells[2]))
        assert int(cells[4]) > 0
    assert re.search(r"proven optimal: before \d of 1, after \d of 1", stdout)
    assert table(stdout, "instance nodes python/s nodes compiled/s speed-up", first=("A",))
    [written] = json_rows(tmp_path / "search.jsonl", ("instance", "tensors", "before", "after",
                                                     "rates", "rate_seconds"))
    for which in ("before", "after"):
        run = written[which]
        assert {"status", "objective", "best_bound", "nodes", "time_limit", "engine",
                "workers", "valid", "seed"} <= run.keys()
        assert run["valid"] is True and run["time_limit"] == 1 and run["seed"] == 4
        assert_consistent(run["status"], run["objective"], run["best_bound"])
        # the anytime curve: (seconds, incumbent, bound) samples ending at the run's answer
        # (None until the run has one)
        seconds, incumbents, bounds = zip(*run["trajectory"])
        incumbents = [value for value in incumbents if value is not None]
        bounds = [value for value in bounds if value is not None]
        assert list(seconds) == sorted(seconds)
        assert incumbents == sorted(incumbents, reverse=True) and bounds == sorted(bounds)
        assert (incumbents[-1], bounds[-1]) == (run["objective"], run["best_bound"])
        # --packings: the run's best packing, a valid one at the run's objective
        assert run["packing"] == f"A.{which}.{run['objective']}.offsets.csv"
        assert_valid_packing(Path(option(command, "--suite")), "A",
                             tmp_path / "kept" / run["packing"], run["objective"])
    assert written["rates"].keys() == {"python", "compiled"}
    rates = written["rates"]
    if rates["python"]["finished"] and rates["compiled"]["finished"]:  # the same tree
        assert rates["python"]["nodes"] == rates["compiled"]["nodes"]


def check_search_windows(stdout, tmp_path, command):
    rows = table(stdout, "width windows packed beam refuted open tensors seconds")
    assert [int(row[0]) for row in rows] == [4, 71]  # 400 sections clip to A's 71
    for width, windows, packed, by_beam, refuted, unfinished, tensors, _ in rows:
        assert int(packed) + int(refuted) + int(unfinished) == int(windows) > 0
        assert int(by_beam) == 0  # no --beam-seconds: no beams
    breadth = int(re.search(r"max breadth ([\d,]+) bytes", stdout).group(1).replace(",", ""))
    bound = int(re.search(r"^bound: ([\d,]+) bytes", stdout, re.M).group(1).replace(",", ""))
    [written] = json_rows(tmp_path / "windows.jsonl", ("instance", "tensors", "sections",
                                                      "max_breadth", "bound", "windows"))
    assert (written["max_breadth"], written["bound"]) == (breadth, bound) == (1048576, 1048576)
    assert sum(int(row[1]) for row in rows) == len(written["windows"])
    assert written["windows"][-1]["tensors"] == written["tensors"] == 154  # the whole of A
    assert all(window["result"] == "packed" for window in written["windows"]
               if window["width"] == 4)  # a few sections pack at max breadth at once
    # every section is in a window of each width: the last window ends at the last section
    fours = [window["start"] for window in written["windows"] if window["width"] == 4]
    assert fours == list(range(0, 67, 2)) + [67]
    assert {k for start in fours for k in range(start, start + 4)} == set(range(71))
    tight = table(stdout, "slack% sections tensors result beam seconds")
    assert [float(row[0]) for row in tight] == [0, 5, 100]
    assert [(int(row[1]), int(row[2])) for row in tight] == [
        (subset["sections"], subset["tensors"]) for subset in written["tight"]]
    sections = [subset["sections"] for subset in written["tight"]]
    tensors = [subset["tensors"] for subset in written["tight"]]
    assert 0 < sections[0] <= sections[1] <= sections[2] == written["sections"] == 71
    assert 0 < tensors[0] <= tensors[1] <= tensors[2] == 154  # slack 100 %: every buffer
    assert written["tight"][-1]["result"] == "packed"  # A's optimum is its max breadth


COMPLETE_HEADER = "window tensors fixed hinted margin seed status seconds"


def check_search_complete(stdout, tmp_path, command):
    """A window of A packed by a beam and grown by CP-SAT steps: each step's tries go through
    the margins in order, a refuted fixed part ends its seeds, a packing ends its step, and
    the JSON line and the last line say how far it got."""
    assert re.search(r"^window 30:71 \(108 tensors\) at 1,048,576 bytes: packed by 1 beam",
                     stdout, re.M)
    rows = table(stdout, COMPLETE_HEADER)
    [written] = json_rows(tmp_path / "complete.jsonl",
                          ("steps", "reached", "packed", "workers", "seeds"))
    assert [[f"{step['first']}:{step['end']}", *(str(step[key]) for key in (
        "tensors", "fixed", "hinted", "margin", "seed", "status"))] for step in written[
        "steps"]] == [row[:7] for row in rows]
    packed = [step for step in written["steps"] if step["status"] in ("OPTIMAL", "FEASIBLE")]
    for step in written["steps"]:
        assert step["fixed"] + step["hinted"] <= step["tensors"] and step["end"] == 71
    for before, after in zip(written["steps"], written["steps"][1:]):
        if before in packed:  # the next step grows the window
            assert after["first"] < before["first"] and after["margin"] == 8
        elif before["first"] == after["first"]:  # the same step, tried again
            assert (after["margin"], after["seed"]) == (
                (before["margin"], before["seed"] + 1)
                if before["status"] == "UNKNOWN" and before["seed"] + 1 < written["seeds"]
                else (min(2 * before["margin"], 71 - before["first"]), 0))
    last = packed[-1]
    assert last["first"] <= 28  # sections 29 and 28 pack at the first try (0.02 s)
    assert written["reached"] == [last["first"], 71] and written["packed"] == last["tensors"]
    assert written["workers"] == 2 and written["extend_to"] == 26
    assert f"packed sections {last['first']}:71, {last['tensors']} of 154 tensors" in stdout
    if last["first"] > 26:  # stopped: every try of the last window failed, the last with
        assert written["steps"][-1]["fixed"] == 0  # nothing fixed


def check_search_complete_rightward(stdout, tmp_path, command):
    """Grown rightward: a step of 8 sections packs at the first try and stops at the target."""
    rows = table(stdout, COMPLETE_HEADER)
    assert [row[0] for row in rows] == ["0:38"] and rows[0][6] in ("OPTIMAL", "FEASIBLE")
    assert "packed sections 0:38" in stdout


def check_search_windows_beams(stdout, tmp_path, command):
    """D whole (a window of every section, and every section within 100 % of the max
    breadth): the depth-first probe runs out of its millisecond, and the first beam of a
    ``search`` run (250 states wide, tie-order seed 0) packs D at its max breadth, its
    optimum, as it does in the committed run of ``search``."""
    [(width, windows, packed, by_beam, refuted, unfinished, tensors, _)] = table(
        stdout, "width windows packed beam refuted open tensors seconds")
    assert (width, windows, packed, by_beam, refuted, unfinished, tensors) == (
        "102", "1", "1", "1", "0", "0", "213")
    [(slack, sections, tensors, result, by, _)] = table(
        stdout, "slack% sections tensors result beam seconds")
    assert (slack, sections, tensors, result, by) == ("100", "102", "213", "packed", "250/0")
    [written] = json_rows(tmp_path / "windows.jsonl", ("instance", "windows", "tight",
                                                      "beam_seconds"))
    assert written["bound"] == written["max_breadth"] == 986112
    for subset in written["windows"] + written["tight"]:  # each validated by the script
        assert (subset["result"], subset["beam_width"], subset["beam_seed"]) == (
            "packed", 250, 0)
        assert subset["nodes"] > 0 and 0 < subset["beam_seconds"] <= 60
        assert subset["beams"] == 1


def check_search_windows_cut_beams(stdout, tmp_path, command):
    """The same subsets with 10 ms of beams: the first beam runs out of time, and the row says
    so (open, one beam, its seconds) without a width or seed of a packing."""
    [(_, _, packed, by_beam, refuted, unfinished, _, _)] = table(
        stdout, "width windows packed beam refuted open tensors seconds")
    assert (packed, by_beam, refuted, unfinished) == ("0", "0", "0", "1")
    [(_, _, _, result, by, _)] = table(stdout, "slack% sections tensors result beam seconds")
    assert (result, by) == ("open", "-")
    [written] = json_rows(tmp_path / "windows.jsonl", ("instance", "windows", "tight"))
    for subset in written["windows"] + written["tight"]:
        assert subset["result"] == "open" and subset["beams"] == 1
        assert 0.01 <= subset["beam_seconds"] < 5 and "beam_width" not in subset


def check_search_orders(stdout, tmp_path, command):
    rows = table(stdout, "above% capacity probes packed rate rate95 nodes/pack s/pack",
                 first={"0", "100"})
    [written] = json_rows(tmp_path / "orders.jsonl", ("instance", "tensors", "max_breadth",
                                                     "probe_seconds", "seed", "capacities"))
    breadth = int(re.search(r"max breadth ([\d,]+) bytes", stdout).group(1).replace(",", ""))
    assert written["max_breadth"] == breadth == 1048576 and written["seed"] == 2
    assert [float(row[0]) for row in rows] == [0, 100]  # sorted, each once
    for row, entry in zip(rows, written["capacities"], strict=True):
        above, capacity, probes, packed, rate, rate95, nodes, per_packing = row
        assert (number(capacity), int(probes), int(packed)) == (
            entry["capacity"], entry["probes"], entry["packed"])
        assert int(probes) == 3 and len(entry["packing_nodes"]) == int(packed) <= 3
        # which of the orders packed, counting from 1 (as optplan.exact.search.replay_order)
        assert len(entry["packing_draws"]) == int(packed)
        assert entry["packing_draws"] == sorted(set(entry["packing_draws"]))
        assert set(entry["packing_draws"]) <= {1, 2, 3}
        assert number(rate) == round(int(packed) / 3, 3) <= number(rate95) <= 1
        assert (nodes == "-") == (per_packing == "-") == (int(packed) == 0)
    # the first capacity is the max breadth; twice the max breadth packs in every order at
    # once: the first descent places each of A's 154 tensors (118 chains, with --chains)
    # without backtracking
    assert [entry["capacity"] for entry in written["capacities"]] == [breadth, 2 * breadth]
    chains = "--chains" in command
    windowed = "--window" in command
    # A's sections 0-29 hold 82 of its tensors (66 chains); the window keeps the whole
    # instance's capacities
    tensors = 82 if windowed else 154
    placed = (66 if windowed else 118) if chains else tensors
    assert written["tensors"] == tensors
    assert ("sections 0-29: 82 tensors" in stdout) is windowed
    assert written.get("window") == ([0, 30] if windowed else None)
    assert written["chains"] is chains and written["tensors_chained"] == placed
    assert written["capacities"][1]["packing_nodes"] == [placed] * 3
    assert written["capacities"][1]["packing_draws"] == [1, 2, 3]
    learning = "--learn" in command  # failure-directed orders, preorder WAT alone
    assert stdout.startswith("learned orders" if learning else "random orders")
    assert (written.get("learn"), written.get("preorder")) == (
        (True, "WAT") if learning else (None, None))
    completing = "--complete" in command
    assert ("complete_seconds" in written) is completing
    printed = re.findall(r"completed around them by CP-SAT \(at most 5 s each\): "
                         r"completed (\d+), refuted (\d+), open (\d+); ([\d.]+) s in all",
                         stdout)
    assert len(printed) == (2 if completing else 0)
    for (*counts, seconds), entry in zip(printed, written["capacities"]):
        assert sum(map(int, counts)) == entry["packed"] == len(entry["completion_seconds"])
        assert entry["completions"] == dict(zip(("completed", "refuted", "open"),
                                                map(int, counts)))
        assert 0 < sum(entry["completion_seconds"]) <= 3 * 5 + 1
        assert float(seconds) == pytest.approx(sum(entry["completion_seconds"]), abs=0.06)
    if completing:  # at twice the max breadth CP-SAT fits the rest of A around every packing
        assert written["complete_seconds"] == 5
        assert written["capacities"][1]["completions"] == {"completed": 3, "refuted": 0,
                                                           "open": 0}


def check_search_beam(stdout, tmp_path, command):
    rows = table(stdout, "above% capacity width seed result seconds states")
    written = json_rows(tmp_path / "beam.jsonl", ("instance", "capacity", "above_percent",
                                                 "width", "seed", "per_parent", "result",
                                                 "seconds", "states"))
    breadth = int(re.search(r"max breadth ([\d,]+) bytes", stdout).group(1).replace(",", ""))
    assert [(float(r[0]), int(r[2]), int(r[3])) for r in rows] == [
        (above, width, seed) for above in (0, 100) for width in (5, 50) for seed in (0, 1)]
    for row, entry in zip(rows, written, strict=True):
        assert (number(row[1]), row[4], number(row[6])) == (
            entry["capacity"], entry["result"], entry["states"])
        assert entry["instance"] == "A" and entry["per_parent"] == 2
    # twice the max breadth leaves room for every order: each beam packs it
    assert {entry["result"] for entry in written if entry["capacity"] == 2 * breadth} == {
        "packed"}


def check_slicing(stdout, tmp_path, command):
    brackets = re.findall(r"minimum budget (\w+)\s+([\d,]+) \.\.\s+([\d,]+)", stdout)
    assert [name for name, _, _ in brackets] == ["today", "kernels", "selection", "slicing"]
    assert all(number(low) <= number(high) for _, low, high in brackets), stdout
    assert re.search(r"minimum budget exact slicing\s+[\d,]+( \.\.\s+[\d,]+| \(proven\))",
                     stdout)
    assert re.search(r"minimum budget flexnn_sliced\s+[\d,]+", stdout)
    rows = table(stdout, "budget flexnn_today_us flexnn_kernels_us flexnn_sliced_us "
                         "sliced_layers sliced_s exact_sliced_us exact_bound_us exact_s")
    rows = [row for row in rows if not row[0].startswith("(")]  # the network's seconds
    for budget, today, kernels, sliced, layers, _, exact, bound, _ in rows:
        status = "OPTIMAL" if exact.endswith("*") else "FEASIBLE"
        assert_consistent(status, number(exact), number(bound))
        # warm-started from flexnn_sliced and flexnn: no worse than either
        plans = [number(cell) for cell in (kernels, sliced) if number(cell) is not None]
        if plans:
            assert number(exact) is not None and number(exact) <= min(plans), stdout


def check_time_limits(stdout, tmp_path, command):
    workers = int(option(command, "--workers"))
    assert re.search(rf"^# .*time limit \S+ s, {workers} workers$", stdout, re.M), stdout
    rows = table(stdout, "method problem status objective bound workers method_s total_s "
                         "overrun_s in_margin")
    solved = [row for row in rows if row[2] != "refused:"]
    assert {("cpsat", "offsets"), ("search", "offsets"), ("cpsat", "shared-objects")} <= {
        tuple(row[:2]) for row in solved}
    for (method, problem, status, objective, bound, used, own, total, overrun,
         margin) in solved:
        assert int(used) == workers, f"{method} {problem} ran with {used} workers"
        assert_consistent(status, number(objective), number(bound))
        assert number(own) <= number(total) and number(overrun) >= 0 and margin in ("yes", "NO")


# --- the runs ------------------------------------------------------------------------------

OMNIMALLOC = ",".join(name for name in PEER_METHODS if name.startswith("omnimalloc_"))
RUNTIME = ["--method", "greedy_by_size", "--time-limit", "2", "--workers", "1", "--inputs", "1",
           "--out", "{tmp}/runtimes"]

def check_search_bands(stdout, tmp_path, command):
    """A few seconds of band repacking from J's committed 998,400-byte packing: each row a
    lower arena (validated by the script), the packing written is the best and the
    independent validator accepts it, and the JSON line says how it was run."""
    row = check_repacked(stdout, tmp_path, command, ("step_seconds", "band"))
    assert (row["repack"], row["workers"], row["band"]) == ("bands", 2, 300 * 1024)


def check_search_skyline(stdout, tmp_path, command):
    """The same with skyline repacking: beams of the widths asked, one thread; a packing's
    record names the level below which its step kept the buffers, in bytes."""
    row = check_repacked(stdout, tmp_path, command, ("widths", "beam_seconds"))
    assert (row["repack"], row["workers"], row["widths"], row["beam_seconds"]) == (
        "skyline", 1, [100, 250], 4)
    assert all(p["level"] >= 0 and p["width"] in (100, 250)
               for p in row["packings"])


def check_search_layers(stdout, tmp_path, command):
    """The same with layer search, from J's committed 1,085,440-byte beam packing: beams of
    the module's width (250), one thread; a packing's record says how many buffers lay at
    offset 0."""
    row = check_repacked(stdout, tmp_path, command, ("widths", "beam_seconds"))
    assert (row["repack"], row["workers"], row["widths"], row["beam_seconds"]) == (
        "layers", 1, [250], 20)
    assert row["start_bytes"] == 1085440 and row["packings"]  # the first targets pack
    assert all(p["layer"] > 0 and p["width"] == 250 for p in row["packings"])


def check_repacked(stdout, tmp_path, command, keys) -> dict:
    """What every repacking prints and writes (see :func:`check_search_bands`); the JSON
    row."""
    lines = stdout.splitlines()
    below = lines[lines.index(next(line for line in lines if line.split() == [
        "bytes", "seconds", "step"])) + 1:]
    rows = [number(line.split()[0]) for line in below[:below.index("")]]  # may be none
    start = int(Path(option(command, "--start")).name.split(".")[1])  # J.<bytes>.offsets.csv
    assert rows == sorted(set(rows), reverse=True) and all(989184 <= r < start for r in rows)
    [row] = json_rows(tmp_path / "bands.jsonl", (
        "instance", "repack", "best_bytes", "max_breadth", "steps", "packings", "workers",
        "seed", "time_limit", *keys))
    assert [p["capacity"] for p in row["packings"]] == rows
    assert row["best_bytes"] == (rows[-1] if rows else start) and row["start_bytes"] == start
    assert (row["max_breadth"], row["seed"]) == (989184, 0)
    assert row["steps"] >= 1 and not row["interrupted"]
    assert row["time_limit"] == float(option(command, "--seconds"))
    assert f"J: {row['best_bytes']:,} bytes after {row['steps']} steps" in stdout
    assert_valid_packing(Path(option(command, "--suite")), "J", tmp_path / "J.csv",
                         row["best_bytes"])
    return row


RUNS = [
    pytest.param("cli.py", ["--runs", "1", "--command=--help", "--command=methods"], check_cli,
                 id="cli"),
    pytest.param("exact.py", ["--quick", "--no-minimalloc", "--only", "paper_example",
                              "--jsonl", "{tmp}/exact.jsonl"], check_exact, id="exact-quick"),
    pytest.param("exact.py", ["--minimalloc", "{minimalloc}", "--no-data", "--only", "A",
                              "--time-limit", "1", "--workers", "1", "--methods",
                              "cpsat,milp_highs", "--jsonl", "{tmp}/exact.jsonl"],
                 check_exact, id="exact-minimalloc-A", marks=pytest.mark.peer),
    pytest.param("heuristics.py", ["--sizes", "200", "--timeout", "60", "--methods",
                                   "greedy_by_size", "best_fit", "coloring_largest_first"],
                 check_heuristics_scaling, id="heuristics-scaling-200"),
    pytest.param("heuristics.py", ["--gaps", "data/examples", "--methods", "greedy_by_size"],
                 check_heuristics_gaps, id="heuristics-gaps"),
    pytest.param("peers.py", ["--groups", "networks", "--instances",
                              "iris_landmark_fused_tflite_64", "--methods", OMNIMALLOC,
                              "--time-limit", "1", "--workers", "1",
                              "--jsonl", "{tmp}/peers.jsonl"], check_peers, id="peers-omnimalloc"),
    pytest.param("preload.py", ["--networks", "mobilenet_v2_fused_tflite_224", "--steps", "2",
                                "--time-limit", "2", "--workers", "1",
                                "--jsonl", "{tmp}/preload.jsonl"], check_preload, id="preload"),
    pytest.param("replay.py", ["mobilenet_v2_raw_torch_224", "--methods", "greedy_by_size",
                               "--corrupt"], check_replay, id="replay", marks=pytest.mark.torch),
    pytest.param("runtimes.py", ["--runtime", "tflm", "--models", "iris_landmark", *RUNTIME],
                 check_runtimes_rerun, id="runtimes-tflm-and-rerun"),
    pytest.param("runtimes.py", ["--runtime", "executorch", "--models", "mobilenet_v1",
                                 *RUNTIME], check_runtimes, id="runtimes-executorch",
                 marks=pytest.mark.torch),
    pytest.param("schedule.py", ["--networks", "blazeface_fused_tflite_128", "--methods",
                                 "dynamic_program,cpsat", "--time-limit", "1",
                                 "--fixed-time-limit", "1", "--workers", "1",
                                 "--jsonl", "{tmp}/schedule.jsonl"], check_schedule,
                 id="schedule"),
    pytest.param("search.py", ["--suite", "{minimalloc}", "--instances", "A", "--time-limit", "1",
                               "--rate-seconds", "0.5", "--seed", "4",
                               "--jsonl", "{tmp}/search.jsonl", "--packings", "{tmp}/kept"],
                 check_search, id="search-A", marks=pytest.mark.peer),
    pytest.param("search_windows.py", ["--suite", "{minimalloc}", "--instances", "A", "--widths",
                                       "4,400", "--slacks", "5,0,100", "--probe-seconds", "0.5",
                                       "--jsonl", "{tmp}/windows.jsonl"],
                 check_search_windows, id="search-windows-A", marks=pytest.mark.peer),
    pytest.param("search_windows.py", ["--suite", "{minimalloc}", "--instances", "D", "--widths",
                                       "400", "--slacks", "100", "--probe-seconds", "0.001",
                                       "--beam-seconds", "60", "--jsonl", "{tmp}/windows.jsonl"],
                 check_search_windows_beams, id="search-windows-D-beams",
                 marks=pytest.mark.peer),
    pytest.param("search_windows.py", ["--suite", "{minimalloc}", "--instances", "D", "--widths",
                                       "400", "--slacks", "100", "--probe-seconds", "0.001",
                                       "--beam-seconds", "0.01", "--jsonl",
                                       "{tmp}/windows.jsonl"],
                 check_search_windows_cut_beams, id="search-windows-D-cut-beams",
                 marks=pytest.mark.peer),
    pytest.param("search_complete.py", ["--suite", "{minimalloc}", "--instances", "A", "--window",
                                        "30:71", "--extend-to", "26", "--step", "1", "--margin",
                                        "8", "--cpsat-seconds", "1", "--jsonl",
                                        "{tmp}/complete.jsonl"],
                 check_search_complete, id="search-complete-A", marks=pytest.mark.peer),
    pytest.param("search_complete.py", ["--suite", "{minimalloc}", "--instances", "A", "--window",
                                        "0:30", "--extend-to", "38", "--step", "8", "--margin",
                                        "8", "--cpsat-seconds", "5", "--seeds", "1"],
                 check_search_complete_rightward, id="search-complete-A-rightward",
                 marks=pytest.mark.peer),
    pytest.param("search_orders.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                      "100,0,0", "--probes", "3", "--probe-seconds", "0.5",
                                      "--seed", "2", "--jsonl", "{tmp}/orders.jsonl"],
                 check_search_orders, id="search-orders-A", marks=pytest.mark.peer),
    pytest.param("search_orders.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                      "100,0", "--probes", "3", "--probe-seconds", "0.5",
                                      "--seed", "2", "--chains", "--jsonl",
                                      "{tmp}/orders.jsonl"],
                 check_search_orders, id="search-orders-A-chains", marks=pytest.mark.peer),
    pytest.param("search_orders.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                      "100,0", "--probes", "3", "--probe-seconds", "0.5",
                                      "--seed", "2", "--chains", "--learn", "--jsonl",
                                      "{tmp}/orders.jsonl"],
                 check_search_orders, id="search-orders-A-learn", marks=pytest.mark.peer),
    pytest.param("search_orders.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                      "100,0", "--probes", "3", "--probe-seconds", "0.5",
                                      "--seed", "2", "--chains", "--window", "0:30",
                                      "--jsonl", "{tmp}/orders.jsonl"],
                 check_search_orders, id="search-orders-A-window", marks=pytest.mark.peer),
    pytest.param("search_orders.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                      "100,0", "--probes", "3", "--probe-seconds", "0.5",
                                      "--seed", "2", "--chains", "--window", "0:30",
                                      "--complete", "5", "--jsonl", "{tmp}/orders.jsonl"],
                 check_search_orders, id="search-orders-A-complete", marks=pytest.mark.peer),
    pytest.param("search_beam.py", ["--suite", "{minimalloc}", "--instances", "A", "--above",
                                    "100,0", "--widths", "5,50", "--seeds", "0-1",
                                    "--per-parent", "2", "--jsonl", "{tmp}/beam.jsonl"],
                 check_search_beam, id="search-beam-A", marks=pytest.mark.peer),
    pytest.param("search_bands.py", ["--suite", "{minimalloc}", "--start",
                                     "paper/results/search/J.998400.offsets.csv", "--seconds",
                                     "8", "--step-seconds", "4", "--jsonl",
                                     "{tmp}/bands.jsonl", "--write", "{tmp}/J.csv"],
                 check_search_bands, id="search-bands-J", marks=pytest.mark.peer),
    pytest.param("search_bands.py", ["--suite", "{minimalloc}", "--start",
                                     "paper/results/search/J.998400.offsets.csv", "--repack",
                                     "skyline", "--widths", "100,250", "--beam-seconds", "4",
                                     "--seconds", "8", "--jsonl", "{tmp}/bands.jsonl",
                                     "--write", "{tmp}/J.csv"],
                 check_search_skyline, id="search-skyline-J", marks=pytest.mark.peer),
    pytest.param("search_bands.py", ["--suite", "{minimalloc}", "--start",
                                     "paper/results/search/J.1085440.offsets.csv", "--repack",
                                     "layers", "--beam-seconds", "20", "--seconds", "30",
                                     "--jsonl", "{tmp}/bands.jsonl", "--write", "{tmp}/J.csv"],
                 check_search_layers, id="search-layers-J", marks=pytest.mark.peer),
    pytest.param("slicing.py", ["--networks", "mobilenet_v2_fused_tflite_224", "--steps", "2",
                                "--time-limit", "1"], check_slicing, id="slicing"),
    pytest.param("time_limits.py", ["--tensors", "200", "--time-limit", "1", "--workers", "1"],
                 check_time_limits, id="time-limits-200"),
]


def test_every_bench_script_has_a_smoke_run():
    assert {param.values[0] for param in RUNS} == {path.name for path in
                                                   (REPO / "bench").glob("*.py")}


@pytest.mark.parametrize(("script", "arguments", "check"), RUNS)
def test_bench_script(script, arguments, check, tmp_path, request):
    places = {"tmp": tmp_path}
    if any("{minimalloc}" in argument for argument in arguments):
        places["minimalloc"] = request.getfixturevalue("minimalloc_dir") / "challenging"
    command = [f"bench/{script}", *(argument.format(**places) for argument in arguments)]
    check(run_bench(command), tmp_path, command)


@pytest.mark.parametrize(("script", "arguments"), [
    ("search_windows.py", ["--widths", "8,x"]), ("search_windows.py", ["--widths", "0"]),
    ("search_windows.py", ["--slacks", "2,x"]), ("search_windows.py", ["--slacks", "-1"]),
    ("search_windows.py", ["--slacks", "101"]), ("search_windows.py", ["--probe-seconds", "-1"]),
    ("search_windows.py", ["--beam-seconds", "-1"]),
    ("search_orders.py", ["--above", "1,x"]), ("search_orders.py", ["--above", "-1"]),
    ("search_orders.py", ["--probes", "0"]), ("search_orders.py", ["--probe-seconds", "0"]),
    ("search_orders.py", ["--complete", "0", "--window", "0:30"]),
    ("search_orders.py", ["--complete", "5"]),
    ("search_beam.py", ["--widths", "0"]), ("search_beam.py", ["--seeds", "3-1"]),
    ("search_beam.py", ["--per-parent", "0"]),
    ("search_complete.py", ["--step", "0"]), ("search_complete.py", ["--margin", "0"]),
    ("search_complete.py", ["--seeds", "0"]), ("search_complete.py", ["--cpsat-seconds", "0"]),
    ("search_complete.py", ["--beam-seconds", "-1"])])
def test_subset_and_order_benches_refuse_bad_arguments(script, arguments, minimalloc_dir):
    done = subprocess.run([sys.executable, f"bench/{script}", "--suite",
                           str(minimalloc_dir / "challenging"), "--instances", "A", *arguments],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(arguments[0]) and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("arguments", [
    ["--window", "5:5"], ["--window", "0:72"], ["--window", "x"],
    ["--window", "30:71", "--extend-to", "40"], ["--window", "30:60", "--extend-to", "72"],
    ["--window", "30:71", "--capacity", "1048575"]])
def test_search_complete_refuses_a_window_or_target_outside_the_instance(arguments,
                                                                          minimalloc_dir):
    """A's 71 sections: the window, the target and the capacity are checked against them."""
    done = subprocess.run([sys.executable, "bench/search_complete.py", "--suite",
                           str(minimalloc_dir / "challenging"), "--instances", "A", *arguments],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("--window") and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("window", ["5:5", "0:72", "x"])
def test_search_orders_refuses_a_window_outside_the_instance(window, minimalloc_dir):
    """A has 71 sections: ``--window`` names sections FIRST..END-1 within them."""
    done = subprocess.run([sys.executable, "bench/search_orders.py", "--suite",
                           str(minimalloc_dir / "challenging"), "--instances", "A",
                           "--window", window],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"--window {window}: expected FIRST:END within 0:71\n"


def test_search_complete_docstring_examples_hold():
    import doctest
    import importlib

    sys.path.insert(0, str(REPO / "bench"))
    try:
        module = importlib.import_module("search_complete")
        result = doctest.testmod(module)
    finally:
        sys.path.remove(str(REPO / "bench"))
    assert result.attempted == 3 and result.failed == 0  # halvings, margins, window_option


def test_search_complete_keeps_what_it_packed_when_interrupted(minimalloc_dir, tmp_path):
    """SIGTERM once a step of A is refuted (after sections 29-27 packed): the run ends after
    the CP-SAT try in progress, exits 130 and writes the steps and the window it reached."""
    written = tmp_path / "complete.jsonl"
    process = subprocess.Popen(
        [sys.executable, "bench/search_complete.py", "--suite",
         str(minimalloc_dir / "challenging"), "--instances", "A", "--window", "30:71",
         "--extend-to", "0", "--step", "1", "--margin", "8", "--cpsat-seconds", "1",
         "--jsonl", str(written)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if "INFEASIBLE" in line:
            process.send_signal(signal.SIGTERM)
            break
    stdout = "".join(lines) + process.stdout.read()
    assert process.wait(timeout=60) == 130
    [row] = json_rows(written, ("interrupted", "reached", "packed", "steps"))
    packed = [step for step in row["steps"] if step["status"] in ("OPTIMAL", "FEASIBLE")]
    assert row["interrupted"] is True and packed
    assert row["reached"] == [packed[-1]["first"], 71] and row["packed"] == packed[-1]["tensors"]
    assert f"interrupted; packed sections {packed[-1]['first']}:71" in stdout


@pytest.mark.parametrize(("arguments", "first"), [
    (["--instances", "J", "--start", "no-such.csv"], "no-such.csv"),
    (["--instances", "A", "--start", "paper/results/search/J.998400.offsets.csv"],
     "paper/results/search/J.998400.offsets.csv"),
    (["--instances", "A,J", "--start", "paper/results/search/J.998400.offsets.csv"],
     "--instances"),
    (["--instances", "J", "--start", "paper/results/search/J.998400.offsets.csv",
      "--seconds", "0"], "--seconds"),
    (["--instances", "J", "--start", "paper/results/search/J.998400.offsets.csv",
      "--workers", "0"], "--workers"),
    (["--instances", "J", "--start", "paper/results/search/J.998400.offsets.csv",
      "--repack", "skyline", "--widths", "250,x"], "--widths"),
    (["--instances", "J", "--start", "paper/results/search/J.998400.offsets.csv",
      "--repack", "skyline", "--beam-seconds", "-1"], "--beam-seconds"),
    (["--instances", "J", "--start", "paper/results/search/J.998400.offsets.csv",
      "--repack", "layers", "--widths", "0"], "--widths")])
def test_search_bands_refuses_bad_input(arguments, first, minimalloc_dir):
    done = subprocess.run([sys.executable, "bench/search_bands.py", "--suite",
                           str(minimalloc_dir / "challenging"), *arguments],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(first) and len(done.stderr.splitlines()) == 1
