"""Peer allocators inside optplan (optplan.peers): OmniMalloc's 18 PyPI allocators and the
MiniMalloc wrapper.

OmniMalloc runs for real (the ``peers`` extra, installed by ``make test``). MiniMalloc is not on
PyPI and nothing built from it is committed, so its wrapper is tested against the stand-in of
``minimalloc_standin.py``, which follows MiniMalloc's command-line contract (and, as a module,
its Python bindings' API): an exact decider by first fit over every order, which is complete
(pack an optimal packing's buffers bottom-up with first fit: none rises).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from optplan import Instance, Problem, Status, methods, solve
from optplan.analysis.peers import (peer_summary, peer_table, render_peer_latex,
                                    render_peer_markdown)
from optplan.analysis.tables import render_latex
from optplan.cli import main
from optplan.errors import InputError
from optplan.peers import PeerUnavailableError, unit_instance
from optplan.registry import EXACT_CONTRACT

from factories import instances, named
from minimalloc_standin import STANDIN, write_standin_binary

omnimalloc = pytest.importorskip("omnimalloc")

from optplan.peers.omnimalloc import TOTAL_LIMITS, allocations, unit_offsets  # noqa: E402

PEERS = sorted(f"omnimalloc_{name}" for name in omnimalloc.available_allocators()
               if name != "minimalloc")
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def brute_force_optimum(instance: Instance) -> int:
    return solve(instance, "brute_force", Problem.OFFSETS).objective


# --- OmniMalloc: registration and the conversion ---------------------------------------------

def test_every_pypi_allocator_is_a_registered_offsets_method():
    assert len(PEERS) == 18
    registered = {name: info for name, info in methods().items() if name.startswith("omnimalloc_")}
    assert sorted(registered) == PEERS
    assert {"omnimalloc_supermalloc", "omnimalloc_telamalloc", "omnimalloc_simulated_annealing",
            "omnimalloc_greedy_by_size", "omnimalloc_omni"} <= set(registered)
    for name, info in registered.items():
        assert info.problems == [Problem.OFFSETS]
        assert info.kind == ("exact" if name == "omnimalloc_supermalloc" else "heuristic")
        assert not info.builtin  # never picked up by warm starts or kind selectors


def test_optplan_methods_lists_them(capsys):
    assert main(["methods", "--json"]) == 0
    names = {row["name"] for row in json.loads(capsys.readouterr().out)}
    assert set(PEERS) | {"minimalloc"} <= names


def test_closed_records_become_half_open_allocations():
    instance = Instance.from_tuples([(0, 1, 8), (1, 2, 8), (3, 3, 8)])
    placed = allocations(unit_instance(instance))
    assert [(a.start, a.end) for a in placed] == [(0, 2), (1, 3), (3, 4)]
    assert placed[0].conflicts_with(placed[1])  # they touch at op 1: a conflict in optplan
    assert not placed[1].conflicts_with(placed[2])


@settings(max_examples=60, **SETTINGS)
@given(instance=instances(max_tensors=6))
def test_allocations_conflict_exactly_when_records_do(instance):
    placed = allocations(unit_instance(instance))
    for i, j in itertools.combinations(range(len(instance)), 2):
        assert placed[i].conflicts_with(placed[j]) == \
            instance.records[i].conflicts_with(instance.records[j])


def test_alignment_is_handled_in_units_of_it():
    instance = Instance.from_tuples([(0, 2, 3), (1, 3, 5), (2, 4, 13), (0, 4, 1)], alignment=8)
    assert unit_instance(instance).sizes.tolist() == [1, 1, 2, 1]
    optimum = brute_force_optimum(instance)
    for name in PEERS:
        result = solve(instance, name, Problem.OFFSETS, time_limit=5)
        assert result.valid, (name, result.violations)
        assert all(offset % 8 == 0 for offset in result.solution.offsets), name
        assert result.objective % 8 == 0 and result.objective >= optimum, name


def test_offsets_are_read_back_by_id_not_position():
    instance = named("paper_example")
    units = unit_instance(instance)
    placed = omnimalloc.allocators.GreedyBySizeAllocator().allocate(allocations(units))
    assert [a.id for a in placed] != list(range(len(instance)))  # it reorders them
    by_id = {a.id: a.offset for a in placed}
    assert unit_offsets(units, placed) == [by_id[i] for i in range(len(instance))]
    result = solve(instance, "omnimalloc_greedy_by_size", Problem.OFFSETS)
    assert list(result.solution.offsets) == [by_id[i] for i in range(len(instance))]


def test_sizes_beyond_64_bits_never_reach_a_peer():
    # The instance check (aligned sizes sum to at most 2^62) keeps every peer inside int64.
    with pytest.raises(InputError, match="2\\^62"):
        Instance.from_tuples([(0, 1, 2**62), (0, 1, 2**62)])
    largest = Instance.from_tuples([(0, 1, 2**61), (0, 1, 2**61)])
    result = solve(largest, "omnimalloc_naive", Problem.OFFSETS)
    assert result.valid and result.objective == 2**62


@pytest.mark.parametrize("name", PEERS)
def test_each_allocator_takes_its_native_range_and_refuses_beyond_it(name):
    # OmniMalloc's kernels refuse totals beyond INT64_MAX // 2 units (TelaMalloc's beyond
    # INT64_MAX // 4), below the 2^62 optplan admits: refused up front, naming the size.
    limit = TOTAL_LIMITS.get(name.removeprefix("omnimalloc_"), (2**63 - 1) // 2) or 2**62
    half = limit // 2
    result = solve(Instance.from_tuples([(0, 1, limit - half), (0, 1, half)]), name,
                   Problem.OFFSETS, time_limit=2)
    assert result.valid and result.objective == limit
    if limit < 2**62:
        with pytest.raises(InputError) as error:
            solve(Instance.from_tuples([(0, 1, limit - half + 1), (0, 1, half)]), name,
                  Problem.OFFSETS, time_limit=2)
        assert error.value.field == "size" and "\n" not in str(error.value)


# --- OmniMalloc: every allocator through the validator ---------------------------------------

@pytest.mark.parametrize("name", PEERS)
@pytest.mark.parametrize("case", ["paper_example", "stairs", "tetris", "clique", "disjoint",
                                  "sparse"])
def test_every_peer_gives_valid_packings_no_better_than_the_optimum(name, case):
    instance = named(case)
    result = solve(instance, name, Problem.OFFSETS, time_limit=5, workers=2, seed=3)
    assert result.valid, result.violations
    assert result.objective >= brute_force_optimum(instance) >= result.lower_bound
    assert result.status in ((Status.OPTIMAL, Status.FEASIBLE) if name.endswith("supermalloc")
                             else (Status.FEASIBLE,))
    assert result.solver.startswith("omnimalloc:") and result.solver_version == "1.0.0"


@pytest.mark.parametrize("name", ["omnimalloc_naive", "omnimalloc_supermalloc"])
def test_an_empty_instance_gives_an_empty_packing(name):
    result = solve(Instance(()), name, Problem.OFFSETS)
    assert result.valid and result.objective == 0 and result.solution.offsets == ()


def test_flags_reach_the_allocators():
    instance = named("paper_example")
    annealing = solve(instance, "omnimalloc_simulated_annealing", Problem.OFFSETS,
                      time_limit=2, workers=2, seed=7)
    assert "seed=7" in annealing.info["allocator"]
    assert "timeout=2.0" in annealing.info["allocator"]
    assert annealing.info["threads"] == 2
    supermalloc = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, time_limit=2,
                        workers=2)
    assert "num_threads=2" in supermalloc.info["allocator"]
    assert supermalloc.info["time_limit"] == 2  # the whole run: SuperMalloc gets what is left
    assert 0 < supermalloc.info["timeout"] <= 2 and f"timeout={supermalloc.info['timeout']}" \
        in supermalloc.info["allocator"]
    default = solve(instance, "omnimalloc_random", Problem.OFFSETS)
    assert "seed=0" in default.info["allocator"] and default.info["threads"] == 1
    assert omnimalloc.max_threads() == 1  # the process-wide cap follows workers


def test_a_seed_is_reproducible_and_matters_only_where_taken():
    instance = named("paper_example")
    runs = [solve(instance, "omnimalloc_random", Problem.OFFSETS, seed=5).solution
            for _ in range(2)]
    assert runs[0] == runs[1]
    assert "seed" not in methods()["omnimalloc_greedy_by_size"].accepts(Problem.OFFSETS)


# --- SuperMalloc: OPTIMAL only with its proof flag and the validator -------------------------

@settings(max_examples=40, **SETTINGS)
@given(instance=instances(max_tensors=6, alignment=True))
def test_supermalloc_proofs_agree_with_brute_force(instance):
    result = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, time_limit=10,
                   workers=2)
    optimum = brute_force_optimum(instance)
    assert result.valid
    assert result.best_bound <= optimum <= result.objective
    if result.status is Status.OPTIMAL:
        assert result.objective == optimum == result.best_bound


class _Fake:
    """What ``SupermallocAllocator.solve`` returns, with chosen contents."""

    def __init__(self, allocations, peak, lower_bound, proved_optimal):
        self.allocations, self.peak = allocations, peak
        self.lower_bound, self.proved_optimal = lower_bound, proved_optimal


def _patch_supermalloc(monkeypatch, *, proved: bool, overlap: bool = False,
                       stacked: bool = False):
    """SuperMalloc's real answer with its proof flag set to ``proved``; its packing replaced by
    everything at offset 0 (``overlap``) or every allocation stacked (``stacked``)."""
    cls = omnimalloc.allocators.SupermallocAllocator
    real = cls.solve

    def fake_solve(self, allocs):
        result = real(self, allocs)
        placed, peak = result.allocations, result.peak
        if overlap:
            placed = [a.with_offset(0) for a in allocs]
        if stacked:
            tops = list(itertools.accumulate(a.size for a in allocs))
            placed = [a.with_offset(top - a.size) for a, top in zip(allocs, tops)]
            peak = tops[-1]
        return _Fake(tuple(placed), peak, result.lower_bound, proved)

    monkeypatch.setattr(cls, "solve", fake_solve)


def test_supermalloc_without_its_proof_flag_is_feasible_with_its_lower_bound(monkeypatch):
    _patch_supermalloc(monkeypatch, proved=False, overlap=False)
    instance = named("paper_example")
    result = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS)
    assert result.status is Status.FEASIBLE and result.valid
    assert result.best_bound == result.info["lower_bound"] == result.lower_bound


def test_supermalloc_proof_flag_without_a_valid_packing_is_not_optimal(monkeypatch):
    _patch_supermalloc(monkeypatch, proved=True, overlap=True)
    result = solve(named("clique"), "omnimalloc_supermalloc", Problem.OFFSETS)
    assert result.info["proved_optimal"]
    assert result.status is Status.FEASIBLE and result.valid is False and result.violations


def test_supermalloc_proves_nothing_about_the_in_place_problem():
    instance = Instance.from_tuples([(0, 1, 16), (1, 2, 16)], inplace_pairs=[(0, 1)])
    result = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, inplace=True)
    assert result.info["proved_optimal"] and result.objective == 32
    assert result.status is Status.FEASIBLE and result.valid
    assert result.best_bound == result.lower_bound == 16  # optplan's in-place bound


# --- SuperMalloc: the exact methods' keyword contract ----------------------------------------

@pytest.mark.parametrize("name", ["omnimalloc_supermalloc", "minimalloc"])
def test_the_exact_peers_take_the_keyword_contract_and_start_cold(name):
    parameters = methods()[name].parameters()
    assert [p["name"] for p in parameters[:5]] == list(EXACT_CONTRACT)
    assert parameters[-1] == {"name": "solver_params", "default": None, "problems": ["offsets"],
                              "kind": "var_keyword"}
    # measured as shipped: optplan's heuristics only when asked for
    assert {"name": "warm_start", "default": False, "problems": ["offsets"]} in parameters


def test_supermalloc_never_returns_worse_than_an_optimal_warm_start(monkeypatch):
    _patch_supermalloc(monkeypatch, proved=False, stacked=True)  # a poor answer, no proof
    instance = named("paper_example")
    optimum = solve(instance, "brute_force", Problem.OFFSETS)
    given = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS,
                  initial_solution=optimum.solution)
    assert given.valid and given.objective == optimum.objective < given.info["peak"]
    assert given.info["warm_start"] == "initial_solution"
    assert given.status is Status.FEASIBLE  # optimal, but SuperMalloc proved nothing
    warm = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, warm_start=True)
    assert warm.objective == warm.info["warm_start_objective"] == optimum.objective
    alone = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS)  # its own answer
    assert alone.info["warm_start"] is None
    assert alone.objective == alone.info["peak"] == int(instance.sizes.sum())


@settings(max_examples=20, **SETTINGS)
@given(instance=instances(max_tensors=6, alignment=True))
def test_supermalloc_keeps_the_better_of_its_answer_and_the_warm_start(instance):
    result = solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, warm_start=True,
                   time_limit=10)
    assert result.valid
    assert result.objective == min(result.info["warm_start_objective"], result.info["peak"])
    if result.status is Status.OPTIMAL:
        assert result.info["proved_optimal"] and result.objective == result.info["peak"]


def test_supermalloc_records_a_seed_it_does_not_take():
    instance = named("paper_example")
    runs = [solve(instance, "omnimalloc_supermalloc", Problem.OFFSETS, seed=seed)
            for seed in (0, 5)]
    assert [run.info["seed"] for run in runs] == [0, 5]
    assert runs[0].solution == runs[1].solution  # one thread, no time limit: deterministic


def test_supermalloc_solver_params_go_to_its_constructor():
    result = solve(named("paper_example"), "omnimalloc_supermalloc", Problem.OFFSETS,
                   heuristics=[["W", "A", "T"]])  # JSON lists, as from a config or --param
    assert "heuristics=(('W', 'A', 'T'),)" in result.info["allocator"]
    assert result.valid and result.status is Status.OPTIMAL


@pytest.mark.parametrize("params, needle", [
    ({"no_such": 1}, "takes no such parameter (it takes: heuristics)"),
    ({"timeout": 5}, "time_limit"),
    ({"num_threads": 2}, "workers"),
    ({"heuristics": [["W", "X"]]}, "unknown sort key 'X'"),
    ({"heuristics": []}, "at least one heuristic"),
])
def test_supermalloc_refuses_what_it_does_not_take_before_any_work(monkeypatch, params,
                                                                   needle):
    def must_not_run(self, allocs):
        raise AssertionError("SuperMalloc ran")

    monkeypatch.setattr(omnimalloc.allocators.SupermallocAllocator, "solve", must_not_run)
    _assert_refused_before_any_work("omnimalloc_supermalloc", params, needle)


def _assert_refused_before_any_work(method, params, needle):
    """A one-line InputError naming the parameter, before even the warm start ran."""
    started = []
    with pytest.raises(InputError) as error:
        solve(named("paper_example"), method, Problem.OFFSETS, warm_start=[started.append],
              **params)
    assert error.value.field == next(iter(params)) and needle in str(error.value)
    assert "\n" not in str(error.value) and started == []


# --- unavailable peers fail in one line ------------------------------------------------------

def test_a_missing_omnimalloc_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "omnimalloc", None)
    with pytest.raises(PeerUnavailableError, match=r"optplan\[peers\]"):
        solve(named("stairs"), "omnimalloc_greedy", Problem.OFFSETS)
    _assert_cli_fails_in_one_line(capsys, tmp_path, "omnimalloc_supermalloc", "omnimalloc")


def test_an_unknown_solver_param_is_one_line_on_the_command_line(capsys, tmp_path):
    _assert_cli_fails_in_one_line(capsys, tmp_path, "omnimalloc_supermalloc", "no_such",
                                  "--param", "no_such=1")


def _assert_cli_fails_in_one_line(capsys, tmp_path, method, needle, *flags):
    path = tmp_path / "stairs.csv"
    path.write_text("id,lower,upper,size\na,0,2,4\nb,1,3,4\n")
    code = main(["solve", str(path), "--problem", "offsets", "--method", method, *flags])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


# --- MiniMalloc through a stand-in of its binary and of its module ---------------------------

@pytest.fixture(scope="module")
def standin_binary(tmp_path_factory):
    """The stand-in as an executable file."""
    return write_standin_binary(tmp_path_factory.mktemp("standin"))


@pytest.fixture
def standin(standin_binary, tmp_path, monkeypatch):
    """``MINIMALLOC_BIN`` set to the stand-in binary; returns its log file."""
    log = tmp_path / "calls.log"
    monkeypatch.setenv("MINIMALLOC_BIN", str(standin_binary))
    monkeypatch.setenv("STANDIN_LOG", str(log))
    monkeypatch.delenv("STANDIN_MODE", raising=False)
    return log


def _calls(log):
    """``(flags, problem CSV)`` of every call of the stand-in binary."""
    import ast

    lines = log.read_text().splitlines() if log.exists() else []
    return [ast.literal_eval(line) for line in lines]


def test_minimalloc_proves_the_optimum_through_the_binary(standin):
    instance = named("paper_example")
    result = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30)
    assert result.status is Status.OPTIMAL and result.valid
    assert result.objective == result.best_bound == brute_force_optimum(instance)
    assert result.info["solver"].startswith("binary sha256:")
    assert result.info["probes"][0]["capacity"] == result.lower_bound  # the bound first
    args, text = _calls(standin)[0]
    assert set(args) == {"capacity", "input", "output", "timeout"}
    assert args["timeout"].endswith("s")
    lines = text.splitlines()
    assert lines[0] == "id,lower,upper,size"
    for line, record in zip(lines[1:], instance.records):  # upper = last_op + 1
        assert line.split(",")[1:] == [str(record.first_op), str(record.last_op + 1),
                                       str(record.size)]


@settings(max_examples=25, **SETTINGS)
@given(instance=instances(max_tensors=5, alignment=True))
def test_minimalloc_agrees_with_brute_force(standin_binary, instance):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINIMALLOC_BIN", str(standin_binary))
        patch.delenv("STANDIN_MODE", raising=False)
        patch.delenv("STANDIN_LOG", raising=False)
        result = solve(instance, "minimalloc", Problem.OFFSETS)
    assert result.valid and result.status is Status.OPTIMAL
    assert result.objective == brute_force_optimum(instance)
    assert all(offset % instance.alignment == 0 for offset in result.solution.offsets)


def test_touching_records_must_not_share_memory_in_minimalloc(standin):
    instance = Instance.from_tuples([(0, 1, 8), (1, 2, 8)])  # half-open [0,2) and [1,3)
    result = solve(instance, "minimalloc", Problem.OFFSETS)
    assert result.valid and result.objective == 16 and result.status is Status.OPTIMAL


def test_minimalloc_timeouts_prove_nothing(standin, monkeypatch):
    instance = named("paper_example")
    stacked = int(instance.sizes.sum())
    monkeypatch.setenv("STANDIN_MODE", f"timeout_below={stacked}")  # every probe times out
    result = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30)
    assert result.valid and result.status is Status.FEASIBLE
    assert result.objective == stacked and result.best_bound == result.lower_bound < stacked
    probes = result.info["probes"]
    assert {probe["result"] for probe in probes} == {"timeout"}
    granule = math.gcd(*instance.sizes.tolist())  # capacities are multiples of it
    assert [probe["capacity"] for probe in probes[:2]] == [result.lower_bound,
                                                            stacked - granule]


def test_minimalloc_invalid_answer_is_caught_by_the_validator(standin, monkeypatch):
    monkeypatch.setenv("STANDIN_MODE", "overlap")
    result = solve(named("paper_example"), "minimalloc", Problem.OFFSETS)
    assert result.status is Status.FEASIBLE and result.valid is False and result.violations
    assert result.info["probes"][-1]["result"] == "invalid"


def test_minimalloc_crash_is_reported_in_one_line(standin, monkeypatch):
    monkeypatch.setenv("STANDIN_MODE", "crash")
    with pytest.raises(RuntimeError, match=r"exit 139\): Segmentation fault"):
        solve(named("stairs"), "minimalloc", Problem.OFFSETS)


@pytest.fixture
def standin_module(tmp_path, monkeypatch):
    """The stand-in as the ``minimalloc`` module (and no ``MINIMALLOC_BIN``)."""
    (tmp_path / "minimalloc.py").write_text(STANDIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("MINIMALLOC_BIN", raising=False)
    monkeypatch.delenv("STANDIN_MODE", raising=False)
    monkeypatch.delitem(sys.modules, "minimalloc", raising=False)
    yield
    sys.modules.pop("minimalloc", None)  # later tests must not find the stand-in


def test_minimalloc_through_the_python_module(standin_module, monkeypatch):
    instance = named("tetris")
    result = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30)
    assert result.info["solver"] == "module stand-in"
    assert result.status is Status.OPTIMAL and result.valid
    assert result.objective == brute_force_optimum(instance)
    monkeypatch.setenv("STANDIN_MODE", f"timeout_below={instance.sizes.sum()}")
    timed_out = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=0.6)
    assert timed_out.status is Status.FEASIBLE and timed_out.valid
    assert timed_out.best_bound == timed_out.lower_bound < timed_out.objective
    assert {probe["result"] for probe in timed_out.info["probes"]} == {"timeout"}


def test_without_binary_or_module_minimalloc_fails_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("MINIMALLOC_BIN", raising=False)
    monkeypatch.setitem(sys.modules, "minimalloc", None)
    with pytest.raises(PeerUnavailableError, match="MINIMALLOC_BIN"):
        solve(named("stairs"), "minimalloc", Problem.OFFSETS)
    _assert_cli_fails_in_one_line(capsys, tmp_path, "minimalloc", "MINIMALLOC_BIN")


def test_a_minimalloc_bin_that_is_not_executable_is_named(monkeypatch, tmp_path):
    path = tmp_path / "not-a-binary"
    path.write_text("")
    monkeypatch.setenv("MINIMALLOC_BIN", str(path))
    with pytest.raises(PeerUnavailableError, match="not an executable file"):
        solve(named("stairs"), "minimalloc", Problem.OFFSETS)
    assert not os.access(path, os.X_OK)


# --- MiniMalloc: the exact methods' keyword contract -----------------------------------------

def test_minimalloc_never_returns_worse_than_its_warm_start(standin, monkeypatch):
    monkeypatch.setenv("STANDIN_MODE", "poor")  # it answers the stacked packing, whatever asked
    instance = named("paper_example")
    stacked = int(instance.sizes.sum())
    alone = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30)
    assert alone.valid and alone.objective == stacked and alone.status is Status.FEASIBLE
    assert alone.info["warm_start"] == "stacked_offsets"  # as shipped: no heuristics
    assert {probe["result"] for probe in alone.info["probes"]} == {"above capacity"}
    warm = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30,
                 warm_start=["first_fit"])
    start = warm.info["warm_start_objective"]
    assert warm.valid and warm.objective == start < stacked
    granule = math.gcd(*instance.sizes.tolist())  # the warm start is the first incumbent:
    assert [probe["capacity"] for probe in warm.info["probes"]] == [warm.lower_bound,
                                                                    start - granule]
    heuristics = solve(instance, "minimalloc", Problem.OFFSETS, warm_start=True)
    assert heuristics.status is Status.OPTIMAL and heuristics.info["probes"] == []  # the bound


def test_minimalloc_starts_from_an_initial_solution(standin):
    instance = named("paper_example")
    start = solve(instance, "first_fit", Problem.OFFSETS)
    result = solve(instance, "minimalloc", Problem.OFFSETS, time_limit=30,
                   initial_solution=start.solution, seed=3, workers=2)
    assert result.info["warm_start"] == "initial_solution"
    assert result.info["warm_start_objective"] == start.objective > result.objective
    assert result.status is Status.OPTIMAL and result.objective == brute_force_optimum(instance)
    assert (result.info["seed"], result.info["workers"]) == (3, 2)  # recorded, not used


def test_minimalloc_solver_params_reach_the_binary_as_flags(standin):
    result = solve(named("paper_example"), "minimalloc", Problem.OFFSETS, time_limit=30,
                   check_dominance=False, preordering_heuristics=["WAT", "TAW"])
    assert result.status is Status.OPTIMAL
    check, *probes = _calls(standin)
    assert check[0] == {"only_check_args": "true", "check_dominance": "false",
                        "preordering_heuristics": "WAT,TAW"}
    assert len(probes) == len(result.info["probes"]) >= 1
    for flags, _ in probes:
        assert flags["check_dominance"] == "false" and flags["preordering_heuristics"] == \
            "WAT,TAW"


@pytest.mark.parametrize("params, needle", [
    ({"no_such_flag": 1}, "Unknown command line flag 'no_such_flag'"),
    ({"check_dominance": "maybe"}, "Illegal value 'maybe' specified for flag"),
    ({"capacity": 5}, "bisection"),
    ({"timeout": 5}, "time_limit"),
    ({"minimize_capacity": True}, "bisects the capacity itself"),
])
def test_minimalloc_refuses_what_the_binary_does_not_take_before_any_work(standin, params,
                                                                          needle):
    _assert_refused_before_any_work("minimalloc", params, needle)
    assert all("capacity" not in flags for flags, _ in _calls(standin))  # no probe ran


def test_minimalloc_solver_param_errors_are_one_line_on_the_command_line(standin, capsys,
                                                                        tmp_path):
    _assert_cli_fails_in_one_line(capsys, tmp_path, "minimalloc", "no_such_flag",
                                  "--param", "no_such_flag=1")


def test_minimalloc_module_takes_solver_params_as_its_attributes(standin_module):
    result = solve(named("tetris"), "minimalloc", Problem.OFFSETS, check_dominance=False,
                   preordering_heuristics=["TWA"])
    assert result.status is Status.OPTIMAL
    solved_with = sys.modules["minimalloc"].SOLVED_WITH
    assert solved_with and all(params["check_dominance"] is False
                               and params["preordering_heuristics"] == ["TWA"]
                               for params in solved_with)
    for params, needle in (({"no_such": 1}, "no such attribute"), ({"timeout": 3}, "time_limit")):
        with pytest.raises(InputError, match=needle):
            solve(named("tetris"), "minimalloc", Problem.OFFSETS, **params)


# --- the peer columns (optplan.analysis.peers) -----------------------------------------------

def _row(instance, method, objective, status="FEASIBLE", *, suite="networks", valid=True,
         seconds=1.0, best_bound=100, kind="heuristic"):
    return {"instance": instance, "problem": "offsets", "method": method, "kind": kind,
            "status": status, "objective": objective, "lower_bound": 100,
            "best_bound": best_bound, "valid": valid, "num_tensors": 10, "inplace": False,
            "wall_time_s": seconds, "suite": suite}


def _peer_rows():
    """``net``: search proves 100, SuperMalloc proves it too, telamalloc 110; ``net_train_x``:
    SuperMalloc's proof flag is not set (105); ``D`` (the suite): nobody proves anything,
    the bound is 100."""
    return pd.DataFrame([
        _row("net", "search", 100, "OPTIMAL", kind="exact"),
        _row("net", "omnimalloc_supermalloc", 100, "OPTIMAL", kind="exact", seconds=0.5),
        _row("net", "omnimalloc_telamalloc", 110),
        _row("net_train_x", "search", 100, "OPTIMAL", kind="exact"),
        _row("net_train_x", "omnimalloc_supermalloc", 105, kind="exact"),
        _row("net_train_x", "omnimalloc_telamalloc", 120, valid=False),
        _row("D", "search", 104, suite="minimalloc", kind="exact"),
        _row("D", "omnimalloc_supermalloc", 110, suite="minimalloc", kind="exact",
             seconds=60.0),
        {**_row("D", "omnimalloc_telamalloc", None, "TIMEOUT", suite="minimalloc"),
         "valid": None},
    ])


def test_peer_table_marks_proofs_gaps_and_failures():

    table = peer_table(_peer_rows()).set_index("instance")
    assert table.attrs["methods"] == ["search", "omnimalloc_supermalloc",
                                      "omnimalloc_telamalloc"]
    assert table.loc["net", "proven:omnimalloc_supermalloc"]
    assert table.loc["net", "gap:omnimalloc_telamalloc"] == pytest.approx(0.1)
    assert not table.loc["net_train_x", "proven:omnimalloc_supermalloc"]
    assert table.loc["net_train_x", "gap:omnimalloc_supermalloc"] == pytest.approx(0.05)
    assert pd.isna(table.loc["net_train_x", "omnimalloc_telamalloc"])  # the validator said no
    assert table.loc["net_train_x", "group"] == "training" and table.loc["D", "group"] == \
        "minimalloc"
    assert not table.loc["D", "proven"] and table.loc["D", "status:omnimalloc_telamalloc"] == \
        "TIMEOUT"
    summary = peer_summary(peer_table(_peer_rows())).set_index("method")
    assert summary.loc["omnimalloc_supermalloc", "proven"] == 1
    assert summary.loc["omnimalloc_supermalloc", "at_optimum"] == 1
    assert summary.loc["omnimalloc_supermalloc", "with_optimum"] == 2
    assert summary.loc["omnimalloc_supermalloc", "max_gap"] == pytest.approx(0.05)
    assert summary.loc["omnimalloc_telamalloc", "valid"] == 1


def test_peer_tables_render_proofs_gaps_bounds_and_failures():
    table = peer_table(_peer_rows())
    methods_shown = table.attrs["methods"]
    markdown = render_peer_markdown(table, methods_shown, "Peers")
    lines = {line.split(" | ")[0].strip("| "): line for line in markdown.splitlines()}
    assert "✓ 0.5s" in lines["net"] and "+10.0% 1.0s" in lines["net"]
    assert "≥104†" not in lines["D"] and "≥100†" in lines["D"]  # the best proven bound
    assert "≥+10.0% 60.0s" in lines["D"] and "TIMEOUT 1.0s" in lines["D"]
    latex = render_peer_latex(table, methods_shown, "Peers.", "tab:peers")
    assert r"$\checkmark$ 0.5s" in latex and r"$\geq$+10.0\% 60.0s" in latex
    assert "no optimum proven" in latex
    # the frame has strategy_table's columns: its renderer takes the peer columns as they are
    assert "omnimalloc\\_telamalloc" in render_latex(table, methods_shown, "T.", "tab:t")


@pytest.mark.parametrize("flags", [{"workers": 0}, {"seed": -1}, {"time_limit": -1.0}])
def test_bad_flags_are_input_errors(flags):
    with pytest.raises(InputError):
        solve(named("stairs"), "omnimalloc_simulated_annealing", Problem.OFFSETS, **flags)
