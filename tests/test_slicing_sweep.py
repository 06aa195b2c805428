"""The budget sweep with layer slicing (issue 21 item 4): ``[preload] slicing = true`` and
``spacing`` in a config, a run with the four series, its preload figure and table
(:mod:`optplan.analysis.figures`, :mod:`optplan.analysis.tables`) and its slicing table
(:mod:`optplan.analysis.slicing`)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from optplan.analysis.load import load_results
from optplan.analysis.figures import preload_figure, preload_title
from optplan.analysis.slicing import render_slicing_markdown, slicing_table, sweep_minimums
from optplan.analysis.style import save_figure
from optplan.errors import InputError
from optplan.experiments.config import parse_config
from optplan.experiments.grid import expand
from optplan.analysis.tables import preload_table, render_preload_markdown
from optplan.experiments.runner import run_experiment
from optplan.preload import write_preload_instance
from slicing_factories import tiny_fc

METHODS = '''
[[methods]]
name = "flexnn"
[[methods]]
name = "flexnn_sliced"
[[methods]]
name = "cpsat"
[[methods]]
name = "cpsat"
params = { slicing = true }
'''


@pytest.fixture()
def tiny_fc_file(tmp_path) -> Path:
    # FC weights of 8 bytes: 12 bytes must live whole, 8 in two weight slices; pinned, the
    # latency bound 13 µs is met at 12 bytes.
    path = tmp_path / "tiny_fc.json"
    write_preload_instance(tiny_fc(), path)
    return path


def config_text(instance: Path, preload: str) -> str:
    return (f'problems = ["preload"]\ntime_limits = [10.0]\nworkers = 1\n{preload}\n'
            f'[[instances]]\npath = "{instance}"\n{METHODS}')


def test_a_sliced_sweep_starts_at_the_minimum_with_slicing(tmp_path, tiny_fc_file):
    table = '[preload]\nbudgets = 3\nspacing = "geometric"\nslicing = true\ntime_limit = 5'
    config = parse_config(config_text(tiny_fc_file, table), tmp_path / "c.toml")
    assert (config.preload.spacing, config.preload.slicing) == ("geometric", True)
    jobs = expand(config).jobs
    assert sorted({job.budget for job in jobs}) == [8, 10, 12]
    sliced = [job for job in jobs if job.params.get("slicing")]
    assert {job.method for job in sliced} == {"cpsat"} and len(sliced) == 3
    plain = expand(parse_config(config_text(tiny_fc_file, table.replace("true", "false")),
                                tmp_path / "c.toml")).jobs
    assert sorted({job.budget for job in plain}) == [12]   # no pressure at the minimum


@pytest.mark.parametrize("table, key", [
    ('[preload]\nbudgets = 3\nspacing = "cubic"', "preload.spacing"),
    ('[preload]\nbudgets = 3\nslicing = "yes"', "preload.slicing"),
    ('[preload]\nbudgets = [8, 12]\nslicing = true', "preload.slicing"),
])
def test_bad_sliced_sweeps_name_the_key(tmp_path, table, key):
    with pytest.raises(InputError) as error:
        parse_config(config_text(tmp_path / "x.json", table), tmp_path / "c.toml")
    assert error.value.field == key


def test_a_sliced_run_draws_and_tabulates(tmp_path, tiny_fc_file):
    table = '[preload]\nbudgets = 3\nspacing = "geometric"\nslicing = true\ntime_limit = 5'
    config = tmp_path / "slicing.toml"
    config.write_text(config_text(tiny_fc_file, table))
    run = tmp_path / "run"
    run_experiment(config, out=run, jobs=1, stream=io.StringIO(), bar=False)
    results = load_results(run)
    table = preload_table(results).set_index("budget")
    assert table["proven_sliced"].all() and table.loc[8, "optimum_sliced"] == 27
    assert table.loc[8, "exact_status"] == "INFEASIBLE" and not table.loc[8, "proven"]
    assert pd.isna(table.loc[8, "flexnn"]) and table.loc[8, "flexnn_sliced"] >= 27
    assert table.loc[8, "gap:flexnn_sliced"] == table.loc[8, "flexnn_sliced"] / 27 - 1
    assert table.loc[12, "proven"] and table.loc[12, "gap:flexnn"] >= 0
    assert "optimum with slicing" in render_preload_markdown(table.reset_index(), "t")
    minimums = sweep_minimums(run)
    assert minimums["tiny_fc"]["minimum"] == 8 and minimums["tiny_fc"]["unsliced_minimum"] == 12
    summary = slicing_table(results, minimums).iloc[0]
    assert (summary["minimum_budget"], summary["minimum_budget_sliced"]) == (12, 8)
    assert summary["proven_sliced"] == summary["budgets"] == 3
    assert summary["proven_unsliced"] == 1   # below 12 bytes nothing fits unsliced
    assert 0 <= summary["gap_median"] <= summary["gap_max"]
    assert summary["gap_found_max"] == summary["gap_bound_max"] == summary["gap_max"]
    assert "| tiny_fc |" in render_slicing_markdown(slicing_table(results, minimums))
    paths = save_figure(preload_figure(results), tmp_path / "figures", "preload")
    assert [Path(p).suffix for p in paths] == [".pdf", ".png"]
    assert all(Path(p).stat().st_size > 1000 for p in paths)


def test_preload_titles_drop_the_cost_model():
    assert preload_title("vgg19_fused_onnx_224_phone_kernels") == "VGG-19 (ONNX), kernels"
    assert preload_title("resnet50_fused_onnx_224_phone") == "ResNet-50 (ONNX)"
