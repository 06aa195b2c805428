"""`optplan report RUN --html`: one self-contained page, loaded in headless Chromium (Debian's
`chromium`, which `make test` installs), whose layout explorer really renders: one SVG bar
per tensor in each panel, a method menu per instance, and a non-blank screenshot."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("plotly", reason="needs the html extra")

from optplan.analysis.html import write_html_report  # noqa: E402
from optplan.analysis.load import load_results  # noqa: E402
from optplan.cli import main  # noqa: E402
from optplan.experiments.runner import run_experiment  # noqa: E402

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, Path]:
    """The smoke run (examples, both problems, three heuristics and CP-SAT) and its page."""
    folder = tmp_path_factory.mktemp("html")
    run = run_experiment(REPO / "experiments" / "smoke.toml", out=folder / "run",
                         stream=io.StringIO(), bar=False)
    assert run.complete
    assert main(["report", str(folder / "run"), "--html", "--out", str(folder / "report")]) == 0
    return folder / "run", folder / "report" / "report.html"


def chromium(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    with tempfile.TemporaryDirectory(prefix="optplan-chromium-") as profile:
        return subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               "--virtual-time-budget=15000", *arguments],
                              capture_output=True, text=True, timeout=timeout, check=True)


def test_the_page_is_one_self_contained_file(page):
    _, path = page
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=", text) and "<link" not in text
    assert "<iframe" not in text
    assert text.count("Plotly.newPlot") == 6  # three instances × two problems
    assert path.stat().st_size > 1_000_000  # plotly.js is inlined
    for column in ("lower bound", "optimum", "proved by", "gap of every heuristic"):
        assert column in text
    assert "lifetime ops" in text and "offset %{customdata[4]" in text  # hover fields


def test_chromium_renders_every_layout_with_a_bar_per_tensor(page):
    run, path = page
    dom = chromium("--dump-dom", path.as_uri()).stdout
    results = load_results([run])
    tensors = results.drop_duplicates(["instance", "problem"])["num_tensors"].sum()
    # Each of the 6 figures: 3 SVG layers, a method menu, two visible bar traces (the chosen
    # method's layout and the optimum), one rendered bar per tensor in each.
    assert dom.count('class="main-svg"') == 3 * 6
    assert dom.count('class="updatemenu-header-group"') == 6
    assert dom.count('class="trace bars"') == 2 * 6
    assert dom.count('class="point"') == 2 * tensors
    assert "optimum (proven by cpsat)" in dom
    assert "greedy_by_size: 124 B (0.0%, FEASIBLE)" in dom  # paper_example, offsets


def test_the_screenshot_shows_coloured_rectangles(page, tmp_path):
    import matplotlib.image

    _, path = page
    shot = tmp_path / "page.png"
    chromium("--window-size=1280,2600", f"--screenshot={shot}", path.as_uri())
    pixels = matplotlib.image.imread(shot)[..., :3]
    saturated = (pixels.max(axis=2) - pixels.min(axis=2)) > 0.3  # colour, not grey or white
    assert saturated.mean() > 0.02


def test_a_run_without_solution_files_still_gets_its_tables(page, tmp_path):
    run, _ = page
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(run / "results.jsonl", bare / "results.jsonl")
    text = write_html_report([bare], tmp_path / "bare.html").read_text(encoding="utf-8")
    assert "Not drawn, no solution file at hand (6)" in text and "Plotly.newPlot" not in text
    assert "paper_example" in text and "proved by" in text
