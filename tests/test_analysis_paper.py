"""The paper's analysis pieces on hand-built rows: unproven optima in the tables, table blocks
and labels, in-place rows kept apart, hard-instance selection, suites and names."""

from __future__ import annotations

import pandas as pd
import pytest

from optplan.analysis.load import optimum_table, suite_of
from optplan.analysis.names import (instance_title, is_paper_network, method_label,
                                    network_label, problem_label)
from optplan.analysis.report import hard_instances
from optplan.analysis.tables import (bold_best, drop_duplicates, duplicate_instances, median_runs,
                                     inplace_table, latex_table, order_table, percent_cell,
                                     render_latex, render_markdown, search_runs_table,
                                     search_table, seconds_cell, strategy_table,
                                     summary_table)


def row(instance, method, objective, *, kind="heuristic", status="FEASIBLE", best_bound=None,
        lower_bound=100, inplace=False, problem="offsets", wall_time_s=0.1, gap=None,
        trajectory=(), suite="networks"):
    return {"instance": instance, "problem": problem, "method": method, "kind": kind,
            "status": status, "objective": objective, "lower_bound": lower_bound,
            "best_bound": lower_bound if best_bound is None else best_bound, "valid": True,
            "num_tensors": 10, "inplace": inplace, "wall_time_s": wall_time_s, "gap": gap,
            "trajectory": list(trajectory), "suite": suite}


def results() -> pd.DataFrame:
    """``closed``: CP-SAT proves 100; ``open``: CP-SAT stops at 130 with a bound of 110;
    ``closed`` in place: the optimum drops to 90."""
    return pd.DataFrame([
        row("closed", "greedy_by_size", 120), row("closed", "cpsat", 100, kind="exact",
                                                  status="OPTIMAL", best_bound=100),
        row("open", "greedy_by_size", 132), row("open", "cpsat", 130, kind="exact",
                                                best_bound=110),
        row("closed", "greedy_by_size", 95, inplace=True, lower_bound=90),
        row("closed", "cpsat", 90, kind="exact", status="OPTIMAL", best_bound=90,
            inplace=True, lower_bound=90),
    ])


def test_unproven_rows_show_the_bound_with_a_dagger_never_an_optimum():
    table = strategy_table(results(), "offsets").set_index("instance")
    assert table.loc["closed", "optimum"] == 100 and table.loc["closed", "proven"]
    assert pd.isna(table.loc["open", "optimum"]) and not table.loc["open", "proven"]
    assert table.loc["open", "gap:greedy_by_size"] == pytest.approx(0.2)   # to the bound 110
    latex = render_latex(table.reset_index(), ["greedy_by_size"], "T.", "tab:t")
    open_line = next(line for line in latex.splitlines() if line.startswith("open"))
    assert open_line.rstrip(r" \\").endswith(r"$\geq$110$^\dagger$")
    assert r"($\geq$+20.0\%)" in open_line and "130" not in open_line
    assert "no optimum proven within the time limit" in latex
    markdown = render_markdown(table.reset_index(), ["greedy_by_size"], "T")
    assert "| ≥110† |" in markdown and "† no optimum proven" in markdown


def test_a_table_of_proven_rows_has_no_footnote():
    table = strategy_table(results(), "offsets", instances=["closed"])
    assert list(table["instance"]) == ["closed"]
    assert "dagger" not in render_latex(table, ["greedy_by_size"], "T.", "tab:t")


def test_in_place_rows_are_their_own_table():
    plain = strategy_table(results(), "offsets").set_index("instance")
    inplace = strategy_table(results(), "offsets", inplace=True).set_index("instance")
    assert list(inplace.index) == ["closed"]
    assert (plain.loc["closed", "optimum"], inplace.loc["closed", "optimum"]) == (100, 90)
    optima = optimum_table(results())
    assert sorted(zip(optima["instance"], optima["inplace"])) == [
        ("closed", False), ("closed", True), ("open", False)]
    assert not optima["conflict"].any()   # 100 and 90 are two problems, not a disagreement


def test_blocks_and_labels_in_the_latex_table():
    table = strategy_table(results(), "offsets")
    latex = render_latex(table, ["greedy_by_size"], "T.", "tab:t",
                         groups=[("First", ["open"]), ("Second", ["closed"]), ("Empty", [])],
                         labels={"open": "Open net"},
                         header_labels={"greedy_by_size": "greedy\nby size"})
    lines = latex.splitlines()
    first = next(i for i, line in enumerate(lines) if r"\emph{First}" in line)
    second = next(i for i, line in enumerate(lines) if r"\emph{Second}" in line)
    assert lines[first + 1].startswith("Open net &") and lines[second + 1].startswith("closed &")
    assert "Empty" not in latex
    assert r"\begin{tabular}[b]{@{}c@{}}greedy\\by size\end{tabular}" in latex


def test_hard_instances_put_open_ones_first_and_alternate_suites():
    samples = [[0.1, 130, 100], [5.0, 120, 100]]
    rows = pd.DataFrame([
        row("quick", "cpsat", 100, kind="exact", status="OPTIMAL", wall_time_s=0.2,
            trajectory=samples),
        row("slow", "cpsat", 100, kind="exact", status="OPTIMAL", wall_time_s=40,
            trajectory=samples),
        row("slower", "cpsat", 100, kind="exact", status="OPTIMAL", wall_time_s=50,
            trajectory=samples),
        row("D", "search", 104, kind="exact", wall_time_s=60, gap=0.04, trajectory=samples,
            suite="minimalloc"),
        row("J", "search", 109, kind="exact", wall_time_s=60, gap=0.09, trajectory=samples,
            suite="minimalloc"),
        row("A", "search", 100, kind="exact", status="OPTIMAL", wall_time_s=7,
            trajectory=samples, suite="minimalloc"),
        row("A", "cpsat", 120, kind="exact", wall_time_s=60, gap=0.2, trajectory=samples,
            suite="minimalloc"),   # A is closed (by search), however long CP-SAT took
    ])
    assert hard_instances(rows, count=4) == ["J", "slower", "D", "slow"]
    assert hard_instances(rows, count=6) == ["J", "slower", "D", "slow", "A"]  # not "quick"


@pytest.mark.parametrize("key, suite", [
    ("data/networks/mobilenet_v2_fused_tflite_224.json", "networks"),
    ("data/examples/paper_example.json", "examples"),
    ("${shared}/peer/minimalloc/challenging/A.1048576.csv", "minimalloc"),
    ("generator:random_dag:100:0", "synthetic"),
    ("data/preload/resnet50_fused_onnx_224_phone.json", "preload"),
    ("/elsewhere/x.json", "other"),
])
def test_suite_of_instance_keys(key, suite):
    assert suite_of(key) == suite


def test_network_names():
    assert network_label("mobilenet_v2_fused_tflite_224") == "MobileNet v2 (TFLite)"
    assert network_label("resnet50_raw_onnx_224") == "ResNet-50 (raw, ONNX)"
    assert network_label("gpt2_train_torch_seq128") == "GPT-2 training (PyTorch)"
    assert network_label("resnet50_raw_onnx_224", source=False) == "ResNet-50 (raw)"
    assert network_label("hand_landmark_full_fused_tflite_224") == "Hand landmarks (TFLite)"
    assert network_label("paper_example") == "paper example"
    assert is_paper_network("deeplab_v3_fused_torch_257")
    assert not is_paper_network("mobilenet_v2_train_torch_224")
    assert not is_paper_network("resnet50_fused_tflite_224")
    assert instance_title("D", "minimalloc") == "MiniMalloc D"
    assert instance_title("D.1048576", "minimalloc") == "MiniMalloc D"
    assert instance_title("vgg19_fused_tflite_224", "networks") == "VGG-19 (TFLite)"
    assert instance_title("random_dag_200_seed1", "synthetic", width=100) == (
        "random dag, 200 tensors, seed 1")
    assert instance_title("chain_skip-50-s2", "synthetic", width=100) == (
        "chain skip, 50 tensors, seed 2")
    assert method_label("xla_best_fit") == "XLA best fit" and method_label("new_one") == "new one"
    assert problem_label("shared-objects") == problem_label("shared_objects") == (
        "shared objects")
    assert method_label("omnimalloc_tabu_search") == "OmniMalloc tabu search"


# --- The paper's evaluation tables and figures -------------------------------------------

def summary_rows() -> pd.DataFrame:
    """Two networks, optimum 100 each; ``a`` is optimal on both (1 ms and 3 ms), ``b`` is 10 %
    and 30 % above (2 s); ``open`` has no optimum and stays out of the summary."""
    return pd.DataFrame([
        row("n1", "cpsat", 100, kind="exact", status="OPTIMAL", best_bound=100),
        row("n2", "cpsat", 100, kind="exact", status="OPTIMAL", best_bound=100),
        row("n1", "a", 100, wall_time_s=0.001), row("n2", "a", 100, wall_time_s=0.003),
        row("n1", "b", 110, wall_time_s=2.0), row("n2", "b", 130, wall_time_s=2.0),
        row("open", "b", 150), row("open", "cpsat", 140, kind="exact", best_bound=120),
    ])


def test_summary_table_counts_only_proven_instances():
    table = summary_table(summary_rows(), "offsets").set_index("method")
    assert table.attrs == {"proven": 2, "instances": 3}
    assert (table.loc["a", "instances"], table.loc["a", "optimal"]) == (2, 2)
    assert table.loc["a", "mean_gap"] == 0 and table.loc["a", "median_time_s"] == 0.002
    assert table.loc["b", "mean_gap"] == pytest.approx(0.2)
    assert table.loc["b", "max_gap"] == pytest.approx(0.3)
    assert list(table.index) == ["a", "b"]   # sorted by mean gap


def test_inplace_table_compares_with_the_plain_optimum():
    table = inplace_table(results(), "offsets").set_index("instance")
    assert list(table.index) == ["closed"]
    entry = table.loc["closed"]
    assert (entry["plain_optimum"], entry["optimum"]) == (100, 90)
    assert entry["saving"] == pytest.approx(0.1)


def test_latex_table_bolds_spans_and_groups():
    text = latex_table(["method", "x", "y"], [["a", "1", "--"], ["b", "2", "3"]],
                       caption="C.", label="tab:c", align="lrr", bold={(0, 1), (0, 2)},
                       groups={0: "First", 1: "Second"}, spans=[("both", 2, 3)])
    assert r"\textbf{1}" in text and r"\textbf{--}" not in text   # no bold placeholder
    assert r"\multicolumn{2}{c}{both}" in text and r"\cmidrule(lr){2-3}" in text
    assert text.index(r"\emph{First}") < text.index("a & ") < text.index(r"\emph{Second}")
    assert r"\small" in text and "table*" not in text
    assert bold_best([3, None, 1, 1]) == {2, 3} and bold_best([1, 2], larger=True) == {1}
    assert percent_cell(0.0) == "0" and percent_cell(0.0004) == r"$<$0.1"
    assert seconds_cell(0.0123) == r"12.3\,ms" and seconds_cell(61.0) == r"61.0\,s"


def test_networks_with_identical_planning_problems_are_reported_once(tmp_path):
    from optplan.instances import write_instance
    from optplan.model import Instance

    records = [(0, 1, 32), (1, 2, 8), (2, 3, 32)]
    paths = {}
    for name, recs in (("net_fused_torch_1", records), ("net_fused_tflite_1", records),
                       ("other_fused_tflite_1", [(0, 1, 16)])):
        paths[name] = tmp_path / f"{name}.json"
        write_instance(Instance.from_tuples(recs, name=name), paths[name])
    rows = pd.DataFrame([{"instance": name, "instance_key": str(path)}
                         for name, path in paths.items()])
    duplicates = duplicate_instances(rows)
    assert duplicates == {"net_fused_tflite_1": ["net_fused_torch_1"]}   # TFLite kept
    assert list(drop_duplicates(rows, duplicates)["instance"]) == ["net_fused_tflite_1",
                                                                   "other_fused_tflite_1"]


def test_layout_colours_differ_between_touching_rectangles():
    from optplan.analysis.figures import layout_colours
    from optplan.model import Instance

    instance = Instance.from_tuples([(0, 3, 4), (0, 1, 2), (2, 3, 2), (1, 2, 2)])
    offsets = [0, 4, 4, 6]
    colours = layout_colours(instance, offsets, 8)
    for i in range(len(instance)):
        for j in range(i + 1, len(instance)):
            a, b = instance.records[i], instance.records[j]
            in_time = a.first_op <= b.last_op and b.first_op <= a.last_op
            touching = (offsets[i] <= offsets[j] + b.size and offsets[j] <= offsets[i] + a.size)
            if in_time and touching:
                assert colours[i] != colours[j], (i, j)


def test_performance_profile_ratios_are_objective_over_optimum():
    from optplan.analysis.figures import performance_profile_figure, profile_ratios

    ratios = profile_ratios(summary_rows(), "offsets")
    assert list(ratios["a"]) == [1.0, 1.0] and list(ratios["b"]) == [1.1, 1.3]
    figure = performance_profile_figure(summary_rows(), "offsets")
    assert [t.get_text() for t in figure.axes[0].get_legend().get_texts()] == ["a", "b"]


def test_failure_modes_of_tiny_plans():
    from optplan.analysis.failures import classify_offsets, classify_shared_objects
    from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution

    # Breadth 40 at ops 1 and 2 (the peak); the small tensor 3 lives at op 4 only.
    instance = Instance.from_tuples([(0, 2, 32), (1, 2, 8), (3, 4, 16), (4, 4, 8)])
    at_peak = OffsetsSolution.from_offsets(instance, [8, 0, 0, 16])       # 0 on top at the peak
    off_peak = OffsetsSolution.from_offsets(instance, [0, 32, 8, 40])     # 3 on top at op 4
    assert classify_offsets(instance, at_peak) == "fragmented peak"
    assert classify_offsets(instance, off_peak) == "off-peak fragmentation"
    assert classify_offsets(instance, off_peak, shared_objects_total=48) == (
        "stacked objects")
    # Positional maximums: [32, 8]; three objects is one too many, two can be oversized.
    extra = SharedObjectsSolution.from_object_ids(instance, [0, 1, 2, 2])
    oversized = SharedObjectsSolution(object_ids=(0, 1, 1, 0), object_sizes=(32, 16))
    assert classify_shared_objects(instance, extra) == "extra objects"
    assert classify_shared_objects(instance, oversized) == "oversized objects"


def test_failure_files_read_in_the_problem_tables_spelling(tmp_path):
    """A failures.csv written before the problem table says ``shared_objects``; it is read as
    ``shared-objects``, the spelling of the result rows it is matched with."""
    from optplan.analysis.failures import FAILURES_FILE, read_failures

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / FAILURES_FILE).write_text(
        "instance,problem,method,job_id,mode\n"
        "net,shared_objects,naive,a,extra objects\nnet,offsets,naive,b,fragmented peak\n")
    table = read_failures([tmp_path / "run", tmp_path / "no-failures"])
    assert list(table["problem"]) == ["shared-objects", "offsets"]
    assert list(read_failures([tmp_path / "no-failures"])["problem"]) == []


def test_order_table_compares_the_free_order_with_the_fixed_order_optimum():
    """``train``: fixed-order heuristic 130, optimum 120; the free order proves 90 (engine peak
    100, least peak 80 at the bound); ``open``: the free order finds 95 over a bound of 76,
    unproven, no better than the fixed optimum."""
    rows = pd.DataFrame([
        row("train", "greedy_by_size", 130), row("train", "cpsat", 120, kind="exact",
                                                 status="OPTIMAL"),
        row("train", "original_order", 100, problem="schedule"),
        row("train", "best_list_scheduling", 85, problem="schedule"),
        row("train", "lower_bound", None, kind="bound", status="UNKNOWN", problem="schedule",
            best_bound=80),
        row("train", "cpsat", 80, kind="exact", status="OPTIMAL", problem="schedule",
            best_bound=80),
        row("train", "original_order", 125, problem="schedule-offsets"),
        row("train", "cpsat", 90, kind="exact", status="OPTIMAL", best_bound=90,
            problem="schedule-offsets", wall_time_s=2.0),
        row("train", "milp_highs", 95, kind="exact", best_bound=85,
            problem="schedule-offsets", wall_time_s=300.0),
        row("open", "greedy_by_size", 100), row("open", "cpsat", 95, kind="exact",
                                                status="OPTIMAL"),
        row("open", "cpsat", 95, kind="exact", problem="schedule-offsets", best_bound=76,
            wall_time_s=300.0),
        row("open", "cpsat", 95, kind="exact", problem="schedule-offsets", best_bound=76,
            inplace=True),
    ])
    table = order_table(rows).set_index("instance")
    assert list(table.index) == ["open", "train"]
    train = table.loc["train"]
    assert (train["fixed_heuristic"], train["fixed"], train["free"]) == (130, 120, 90)
    assert train["free_proven"] and train["fixed_proven"] and train["seconds"] == 2.0
    assert (train["engine_peak"], train["least_peak"], train["peak_bound"]) == (100, 80, 80)
    assert train["peak_proven"]
    assert train["saving"] == pytest.approx(0.25) and train["peak_saving"] == pytest.approx(0.2)
    unproven = table.loc["open"]
    assert not unproven["free_proven"] and unproven["free_bound"] == 76
    assert unproven["gap"] == pytest.approx(95 / 76 - 1) and unproven["saving"] == 0
    assert unproven["seconds"] == 300.0   # no proof: the longest exact run


def search_row(status, objective, bound, *, engine, workers, prove_result, nodes=100):
    return {"status": status, "objective": objective, "lower_bound": 90, "best_bound": bound,
            "gap": objective / bound - 1, "wall_time_s": 1.5, "nodes": nodes, "valid": True,
            "engine": engine, "workers": workers,
            "probes": [{"capacity": 90, "result": prove_result, "loop": "prove"},
                       {"capacity": 99, "result": "feasible", "loop": "improve"}]}


def test_search_table_reads_both_runs_and_the_speed_up():
    """``bench/search.py``'s rows: ``Z`` proven before and after (its probes finished),
    ``Y`` open after a prove probe that ran out of time (its rate probe too); sorted."""
    rows = [
        {"instance": "Z", "tensors": 3,
         "before": search_row("OPTIMAL", 90, 90, engine="python", workers=1,
                              prove_result="feasible"),
         "after": search_row("OPTIMAL", 90, 90, engine="compiled", workers=2,
                             prove_result="feasible", nodes=300),
         "rates": {"python": {"nodes_per_second": 10.0, "seconds": 2.0, "finished": True},
                   "compiled": {"nodes_per_second": 500.0, "seconds": 0.04, "finished": True}}},
        {"instance": "Y", "tensors": 4,
         "before": search_row("FEASIBLE", 120, 90, engine="python", workers=1,
                              prove_result="timeout"),
         "after": search_row("FEASIBLE", 110, 90, engine="compiled", workers=2,
                             prove_result="timeout"),
         "rates": {"python": {"nodes_per_second": 4.0, "seconds": 10.0, "finished": False},
                   "compiled": {"nodes_per_second": 300.0, "seconds": 10.0,
                                "finished": False}}}]
    table = search_table(rows).set_index("instance")
    assert list(table.index) == ["Y", "Z"]
    proven, unproven = table.loc["Z"], table.loc["Y"]
    assert (proven["before_status"], proven["after_nodes"], proven["after_workers"]) == (
        "OPTIMAL", 300, 2)
    assert proven["speedup"] == pytest.approx(50) and proven["rate_finished"]
    assert (unproven["after_objective"], unproven["after_best_bound"]) == (110, 90)
    assert unproven["after_gap"] == pytest.approx(110 / 90 - 1)
    assert (unproven["after_prove_capacity"], unproven["after_prove_result"]) == (90, "timeout")
    assert unproven["speedup"] == pytest.approx(75) and not unproven["rate_finished"]
    long_runs = search_runs_table([{"instance": "Y"} | search_row(
        "FEASIBLE", 105, 90, engine="compiled", workers=2, prove_result="timeout")])
    assert long_runs.loc[0, "objective"] == 105 and long_runs.loc[0, "prove_result"] == "timeout"


def test_median_runs_keeps_the_run_of_median_time_per_job():
    rows = pd.DataFrame([
        {"run": "r", "instance": "A", "problem": "offsets", "method": "search", "params": {},
         "repetition": rep, "wall_time_s": t, "status": s, "objective": o}
        for rep, t, s, o in ((0, 9.0, "FEASIBLE", 12), (1, 1.0, "OPTIMAL", 10),
                             (2, 2.0, "OPTIMAL", 10))] + [
        {"run": "r", "instance": "A", "problem": "offsets", "method": "search",
         "params": {"dominance": False}, "repetition": rep, "wall_time_s": t,
         "status": "OPTIMAL", "objective": 10} for rep, t in ((0, 4.0), (1, 3.0))])
    picked = median_runs(rows)
    assert len(picked) == 2
    plain = picked[picked["params"].map(lambda p: not p)].iloc[0]
    assert (plain["repetition"], plain["wall_time_s"], plain["status"]) == (2, 2.0, "OPTIMAL")
    off = picked[picked["params"].map(bool)].iloc[0]
    assert (off["repetition"], off["wall_time_s"]) == (1, 3.0)  # the lower middle of two
    once = rows.drop(columns="repetition")
    assert median_runs(once) is once
