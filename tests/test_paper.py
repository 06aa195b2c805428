"""The paper's build, text, PDF and notebooks against the committed results (paper/results/).

``paper/build.py`` must regenerate tables, figures and macros into a fresh folder, every
macro the text uses must be generated, the prose must state no number of its own, every
citation must be in the bibliography, every gap-analysis notebook must run top to bottom with
plain ``python`` (each asserts its numbers against the tables or the instances), and — when
TeX Live is installed (``make paper-deps``) — the PDF must build without undefined
references, overfull boxes or Type 3 fonts.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from optplan.analysis.load import read_jsonl
from optplan.exact.search import SearchParams

PAPER = Path(__file__).resolve().parents[1] / "paper"
NOTEBOOKS = sorted(p for p in (PAPER / "notebooks").glob("*.py") if not p.name.startswith("_"))
SOURCES = [PAPER / "main.tex", *sorted((PAPER / "sections").glob("*.tex"))]
TEX_READY = all(shutil.which(tool) for tool in ("pdflatex", "bibtex", "pdffonts", "kpsewhich")) \
    and subprocess.run(["kpsewhich", "acmart.cls"], capture_output=True).returncode == 0 \
    if shutil.which("kpsewhich") else False

pytestmark = pytest.mark.skipif(not any((PAPER / "results").glob("*/results.jsonl")),
                                reason="no committed results under paper/results/")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("generated")
    completed = subprocess.run([sys.executable, str(PAPER / "build.py"), "--out", str(out)],
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return out


def _build_module():
    """paper/build.py as a module (by path: PyPI has a package named ``build``)."""
    spec = importlib.util.spec_from_file_location("paper_build", PAPER / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LATEX_COMMANDS = {"IfFileExists", "S", "Description", "FloatBarrier"}


def _defined_macros(path: Path) -> dict[str, str]:
    return dict(re.findall(r"\\newcommand\{\\([A-Za-z]+)\}(?:\[\d\])?\{(.*)\}",
                           path.read_text()))


def _generated_macros(generated: Path) -> dict[str, str]:
    """The macros of every generated file main.tex inputs before the document begins
    (``macros.tex`` from paper/build.py, ``runtimes_macros.tex`` from the runtimes' writer)."""
    preamble = (PAPER / "main.tex").read_text().split(r"\begin{document}")[0]
    files = re.findall(r"\\input\{generated/([^}]+)\}", preamble)
    assert "macros.tex" in files
    defined: dict[str, str] = {}
    for name in files:
        found = _defined_macros(generated / name)
        assert not set(found) & set(defined), (name, sorted(set(found) & set(defined)))
        defined |= found
    return defined


def _search_rows(name: str) -> list[dict]:
    """The committed rows of ``paper/results/search/<name>`` (JSON lines)."""
    return read_jsonl(PAPER / "results" / "search" / name)


def _text() -> str:
    return "\n".join(path.read_text() for path in SOURCES)


def test_build_writes_tables_figures_and_macros(generated):
    for name in ("six.tex", "summary.tex", "inplace.tex", "minimalloc.tex", "networks_so.tex",
                 "networks_oc.tex", "hashes.tex", "peers.tex", "runtimes.tex"):
        assert (generated / "tables" / name).stat().st_size > 0, name
    for stem in ("layout", "profile_shared_objects", "profile_offsets", "solve_time"):
        assert (generated / "figures" / f"{stem}.pdf").is_file()
    macros = _defined_macros(generated / "macros.tex")
    assert int(macros["NumProvenSO"]) <= int(macros["NumInstancesSO"])
    assert int(macros["NumConflicts"]) == 0


def test_the_papers_tables_print_at_least_eight_points(generated):
    """acmart's sigconf sets \\small at 8 pt; smaller sizes and shrinking boxes are out."""
    inputs = re.findall(r"\\input\{generated/tables/([^}]+)\}", _text())
    assert inputs
    for name in inputs:
        text = (generated / "tables" / name).read_text()
        assert not re.search(r"\\(footnotesize|scriptsize|tiny|resizebox|scalebox)\b|adjustbox",
                             text), name


def test_generated_latex_has_balanced_braces(generated):
    """An unbalanced brace in a generated table stops pdflatex (\\caption{...}} did)."""
    for path in [generated / "macros.tex", *sorted((generated / "tables").glob("*.tex"))]:
        depth = 0
        for char in re.sub(r"\\[{}]", "", path.read_text()):
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, f"{path.name}: a closing brace without an opening one"
        assert depth == 0, f"{path.name}: {depth} unclosed braces"


def test_every_macro_in_the_text_is_generated(generated):
    used = set(re.findall(r"\\([A-Z][A-Za-z]*)", _text())) - _LATEX_COMMANDS
    missing = sorted(used - set(_generated_macros(generated)))
    assert missing == []


def test_the_peers_stay_out_of_optplans_aggregates(generated):
    """The peers run has its own table and columns; the per-method summary, the heuristic
    counts and the job count are those of the evaluation's runs alone."""
    build = _build_module()
    rows = [json.loads(line) for run in build.EVALUATION_RUNS
            for line in (PAPER / "results" / run / "results.jsonl").read_text().splitlines()]
    heuristics = {r["method"] for r in rows if r["kind"] == "heuristic"
                  and r["problem"] == "offsets" and not r.get("inplace")
                  and "data/networks/" in r["instance_key"]}
    macros = _defined_macros(generated / "macros.tex")
    assert int(macros["NumHeuristicsOC"]) == len(heuristics)
    assert not any(m.startswith("omnimalloc_") or m == "minimalloc" for m in heuristics)
    summary = (generated / "tables" / "summary.tex").read_text()
    assert "OmniMalloc" not in summary and "MiniMalloc" not in summary
    peers = (generated / "tables" / "peers.tex").read_text()
    assert "SuperMalloc" in peers and "tabu search" in peers
    header = next(line for line in (generated / "tables" / "minimalloc.tex").read_text()
                  .splitlines() if line.startswith("instance &"))
    assert "& MiniMalloc &" in header and "& SuperMalloc &" in header  # the peer columns
    committed = (PAPER / "results" / build.PEERS_RUN / "results.jsonl").read_text().splitlines()
    assert macros["PeersNumJobs"] == str(len(committed))


def test_make_paper_runs_covers_the_papers_runs():
    """``make paper-runs`` re-makes every run directory paper/build.py reads."""
    build = _build_module()
    makefile = (PAPER.parent / "Makefile").read_text()
    configs = re.search(r"PAPER_CONFIGS \?= ((?:[^\n]*\\\n)*[^\n]*)", makefile).group(1)
    listed = re.sub(r"\$\(if \$\(MINIMALLOC_BIN\),(\w+),\)", r"\1", configs)
    assert listed.replace("\\\n", " ").split() == [*build.EVALUATION_RUNS, build.PEERS_RUN]


def test_every_citation_is_in_the_bibliography():
    cited = {key.strip() for group in re.findall(r"\\cite\{([^}]*)\}", _text())
             for key in group.split(",")}
    entries = set(re.findall(r"@\w+\{([^,]+),", (PAPER / "references.bib").read_text()))
    assert cited and cited <= entries, sorted(cited - entries)
    assert len(entries) >= 25


def test_prose_has_no_typed_numbers():
    """Outside math, commands, references and the appendix, no digit in the text."""
    body = _text().split(r"\begin{document}")[1].split(r"\appendix")[0]
    body += "\n".join(p.read_text() for p in SOURCES[1:] if p.stem != "artifact")
    prose = re.sub(r"%.*", "", body)
    prose = re.sub(r"\\begin\{(align|equation)\*?\}.*?\\end\{\1\*?\}", "", prose, flags=re.S)
    prose = re.sub(r"\$[^$]*\$", "", prose)  # inline math: formulas, not stated numbers
    prose = re.sub(r"\\(begin|end|label|ref|input|includegraphics|IfFileExists|cite|"
                   r"graphicspath|bibliography\w*|documentclass|usepackage)(\[[^]]*\])?"
                   r"\{[^}]*\}", "", prose)
    prose = re.sub(r"\[[^]]*\]", "", prose)  # options such as [t], [width=0.49\textwidth]
    prose = re.sub(r"\\[A-Za-z]+", "", prose)
    prose = re.sub(r"MobileNet\s+v1\s+and\s+v2|MobileNet\s+v\d|ResNet-\d+|VGG-\d+|DenseNet-\d+|"
                   r"GPT-\d|DeepLab\s+v3|Inception\s+v3|SHA-256|\w+2D", "", prose)
    assert re.findall(r"\d+", prose) == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(notebook):
    completed = subprocess.run([sys.executable, str(notebook)], capture_output=True, text=True,
                               timeout=300, cwd=notebook.parent)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]


@pytest.mark.skipif(not TEX_READY, reason="TeX Live with acmart and poppler-utils not "
                    "installed (make paper-deps)")
def test_pdf_builds_clean(generated, tmp_path):
    """pdflatex + bibtex on a copy of the paper with freshly generated inputs: no undefined
    reference or citation, no overfull box, no Type 3 (bitmap) font."""
    work = tmp_path / "paper"
    work.mkdir()
    for path in [PAPER / "main.tex", PAPER / "references.bib"]:
        shutil.copy(path, work)
    shutil.copytree(PAPER / "sections", work / "sections")
    shutil.copytree(generated, work / "generated")

    def run(*command):
        completed = subprocess.run(command, cwd=work, capture_output=True, text=True,
                                   timeout=300)
        assert completed.returncode == 0, completed.stdout[-3000:]

    latex = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"]
    run(*latex)
    run("bibtex", "main")
    run(*latex)
    run(*latex)
    log = (work / "main.log").read_text(errors="replace")
    assert not re.findall(r"(?:Reference|Citation) `[^']+' on page \d+ undefined", log)
    assert "Overfull" not in log, re.findall(r"Overfull.*", log)[:5]
    fonts = subprocess.run(["pdffonts", "main.pdf"], cwd=work, capture_output=True, text=True,
                           check=True).stdout
    assert "Type 3" not in fonts


def test_the_search_table_is_the_committed_before_and_after(generated):
    """tab:search holds one row per line of ``bench/search.py``'s committed rows (the 11
    instances of MiniMalloc's suite), each run's status, arena, best bound and nodes as the
    file has them and the speed-up of its rates, then the long runs (an instance run at
    several seeds named with its seed); the macros the text cites are the file's figures."""
    def lines(name):
        return sorted(_search_rows(name), key=lambda row: (row["instance"], row.get("seed", 0)))

    suite, long_runs = lines("minimalloc_before_after.jsonl"), lines("long_runs.jsonl")
    text = (generated / "tables" / "search.tex").read_text()
    rows = [[cell.strip() for cell in line.removesuffix(r" \\").split("&")]
            for line in text.split(r"\midrule", 1)[1].splitlines()
            if re.match(r"[A-K](?: \(seed \d+\))? &", line)]
    assert len(suite) == 11 and len(rows) == len(suite) + len(long_runs)

    def number(cell: str) -> int:
        return int(cell.replace(r"\,", ""))

    def same_run(cells, run):
        status, arena, bound, _, nodes = cells
        assert status == {"OPTIMAL": "opt.", "FEASIBLE": "feas."}[run["status"]]
        assert (number(arena), number(bound), number(nodes)) == (
            run["objective"], run["best_bound"], run["nodes"])

    speedups = []
    for line, cells in zip(suite, rows):
        assert cells[0] == line["instance"]
        same_run(cells[1:6], line["before"])
        same_run(cells[6:11], line["after"])
        rates = line["rates"]
        speedups.append(rates["compiled"]["nodes_per_second"] / rates["python"]["nodes_per_second"])
        assert cells[11].startswith(f"{speedups[-1]:.0f}" + r"$\times$")
    build = _build_module()
    names = build.long_run_names(long_runs)
    for name, line, cells in zip(names, long_runs, rows[len(suite):]):
        several = sum(run["instance"] == line["instance"] for run in long_runs) > 1
        assert name == line["instance"] + (f" (seed {line['seed']})" if several else "")
        assert cells[0] == name and cells[1:6] == [""] * 5
        same_run(cells[6:11], line)
    macros = _defined_macros(generated / "macros.tex")
    median = sorted(speedups)[len(speedups) // 2]
    assert macros["SearchSpeedupMedian"] == f"{median:.0f}"
    for run in ("before", "after"):
        assert macros[f"SearchProven{run.capitalize()}"] == str(
            sum(line[run]["status"] == "OPTIMAL" for line in suite))
    for name, line in zip(names, long_runs):
        key = build.macro_name(name)
        assert number(macros[f"SearchLongObjective{key}"]) == line["objective"]
        assert number(macros[f"SearchLongBound{key}"]) == line["best_bound"]


def test_the_completion_note_is_the_committed_runs(generated):
    """``SearchCompleteNote`` names the sections each committed run of
    ``bench/search_complete.py`` packed, from which window, in how many packed steps."""
    rows = _search_rows("complete.jsonl")
    note = _defined_macros(generated / "macros.tex")["SearchCompleteNote"]
    for row in rows:
        first, end = row["reached"]
        steps = sum(step["status"] in ("OPTIMAL", "FEASIBLE") for step in row["steps"])
        assert (f"{row['instance']}'s sections {first} to {end - 1} ({row['packed']} of its "
                f"{row['tensors']} tensors) from its sections {row['window'][0]} to "
                f"{row['window'][1] - 1} in {steps} step") in note
    build = _build_module()
    grown = {"instance": "Z", "tensors": 9, "window": [4, 8], "reached": [2, 8], "packed": 7,
             "steps": [{"status": "UNKNOWN"}, {"status": "OPTIMAL"}]}
    unpacked = {"instance": "Y", "tensors": 9, "window": [0, 3], "reached": None, "packed": 0,
                "steps": []}
    assert build.search_complete_macros([grown, unpacked]) == {"SearchCompleteNote": (
        "Z's sections 2 to 7 (7 of its 9 tensors) from its sections 4 to 7 in 1 step "
        "(no beam packed Y's sections 0 to 2)")}
    assert build.search_complete_macros([]) == {"SearchCompleteNote": "no window was grown"}


def test_the_bands_and_skyline_notes_are_the_committed_runs(generated):
    """``SearchBandsNote`` and ``SearchSkylineNote`` say what each committed run of
    ``bench/search_bands.py`` (band or skyline repacking) did to its packing: lowered it (to
    which arena; at the max breadth, optimal) or left it."""
    rows = _search_rows("bands.jsonl")
    macros = _defined_macros(generated / "macros.tex")
    assert {row["repack"] for row in rows} == {"bands", "skyline"}
    for row in rows:
        note = macros["SearchBandsNote" if row["repack"] == "bands" else "SearchSkylineNote"]
        start, best = (f"{row[key]:,}".replace(",", "\\,") for key in ("start_bytes",
                                                                        "best_bytes"))
        assert (f"lowers {row['instance']}'s packing from {start} to {best} bytes ("
                if row["best_bytes"] < row["start_bytes"]
                else f"leaves {row['instance']}'s packing at {start} bytes") in note
    assert "989\\,184 bytes (its max breadth, so optimal)" in macros["SearchSkylineNote"]
    assert "J's optimum is 989\\,184 bytes" in macros["SearchSkylineClosedNote"]
    build = _build_module()
    lowered = {"instance": "Z", "start_bytes": 1100, "best_bytes": 1010, "max_breadth": 1000,
               "seconds": 600.0, "workers": 2, "seed": 0,
               "packings": [{"capacity": 1050, "seconds": 3.0}, {"capacity": 1010,
                                                                "seconds": 42.4}]}
    left = lowered | {"start_bytes": 1010, "seconds": 300.0, "seed": 1, "packings": []}
    closed = lowered | {"repack": "skyline", "start_bytes": 1010, "best_bytes": 1000,
                        "seconds": 120.0, "widths": [500, 250], "workers": 1,
                        "packings": [{"capacity": 1000, "seconds": 61.0}]}
    layered = lowered | {"repack": "layers", "widths": [250], "workers": 1, "seed": 1,
                         "start": "Z.1100.offsets.csv"}
    assert build.search_bands_macros([layered])["SearchLayersNote"] == (
        "layer search lowers Z's packing from 1\\,100 to 1\\,010 bytes (1.00\\,\\% above "
        "its max breadth) 42\\,s into a run of 10 minutes (seed 1) (beams 250 states wide, "
        "one thread)")
    compared = closed | {"start_bytes": 1100, "best_bytes": 1050, "seconds": 900.0,
                         "start": "Z.1100.offsets.csv"}
    chained = closed | {"start": "Z.1010.offsets.csv"}  # from the layer search's packing
    stuck = chained | {"best_bytes": 1010, "seed": 1, "packings": []}
    again = chained | {"repack": "bands", "start": "Z.1005.offsets.csv", "start_bytes": 1005,
                       "seed": 2}
    further = chained | {"best_bytes": 1005, "packings": [{"capacity": 1005, "seconds": 9.0}]}
    relayered = layered | {"start": "Z.1000.offsets.csv", "best_bytes": 1000}  # not a start
    chain = build.search_layers_macros(
        [layered, compared, stuck, further, stuck | {"seed": 3}, again, relayered])
    assert chain["SearchLayersSkylineNote"].count("skyline repacking") == 1
    assert chain["SearchLayersPathNote"] == (  # layered, further, again: 42.4 + 9 + 61 s
        "a chain of 3 runs led from 1\\,100 to 1\\,000 bytes, with 2 minutes of running "
        "until the packings they passed on")
    assert chain["SearchLayersChainNote"] == (
        "skyline repacking leaves Z's packing at 1\\,010 bytes for 2 minutes (seeds 1 and 3); "
        "skyline repacking lowers Z's packing from 1\\,010 to 1\\,005 bytes (0.50\\,\\% "
        "above its max breadth) 9\\,s into a run of 2 minutes (seed 0); band repacking "
        "lowers Z's packing from 1\\,005 to 1\\,000 bytes (its max breadth, so optimal) 61\\,s "
        "into a run of 2 minutes (seed 2)")
    assert build.search_layers_macros([layered, compared, chained]) == {
        "SearchLayersSkylineNote": (
            "from the same packing, skyline repacking lowers Z's packing from 1\\,100 to "
            "1\\,050 bytes (5.00\\,\\% above its max breadth) 61\\,s into a run of 15 "
            "minutes (seed 0)"),
        "SearchLayersChainNote": (
            "skyline repacking lowers Z's packing from 1\\,010 to 1\\,000 bytes (its max "
            "breadth, so optimal) 61\\,s into a run of 2 minutes (seed 0)"),
        "SearchLayersPathNote": (
            "a chain of 2 runs led from 1\\,100 to 1\\,000 bytes, with 2 minutes of running "
            "until the packings they passed on")}
    assert build.search_layers_macros([layered]) == {
        "SearchLayersSkylineNote": "skyline repacking was not run from that packing",
        "SearchLayersChainNote": (
            "skyline repacking was not run from a packing that a run reached"),
        "SearchLayersPathNote": (
            "a chain of 1 run led from 1\\,100 to 1\\,010 bytes, with 1 minute of running "
            "until the packings they passed on")}
    assert build.search_layers_macros([stuck])["SearchLayersPathNote"] == (
        "no run lowered a packing")
    assert build.search_bands_macros([lowered, left, closed]) == {
        "SearchBandsNote": (
            "band repacking lowers Z's packing from 1\\,100 to 1\\,010 bytes (1.00\\,\\% "
            "above its max breadth) 42\\,s into a run of 10 minutes (seed 0), then leaves Z's "
            "packing at 1\\,010 bytes for 5 minutes (seed 1) (2 CP-SAT workers)"),
        "SearchSkylineNote": (
            "skyline repacking lowers Z's packing from 1\\,010 to 1\\,000 bytes (its max "
            "breadth, so optimal) 61\\,s into a run of 2 minutes (seed 0) (beams 250 and 500 "
            "states wide, one thread)"),
        "SearchLayersNote": "no packing was lowered by layer search",
        "SearchSkylineClosedNote": (
            "A packing at the max breadth is optimal: Z's optimum is 1\\,000 bytes, and its "
            "packing is committed (\\texttt{Z.1000.offsets.csv})")}
    assert build.search_bands_macros([]) == {
        "SearchBandsNote": "no packing was repacked by bands",
        "SearchSkylineNote": "no packing was repacked from a skyline",
        "SearchLayersNote": "no packing was lowered by layer search",
        "SearchSkylineClosedNote": "No repacking reached a max breadth"}


def test_the_window_note_is_the_committed_windows(generated):
    """``SearchWindowNote`` counts the committed windows of ``bench/search_windows.py`` and
    names, per instance, the most tensors a window packed at the max breadth; a refuted
    window turns it into a raised bound."""
    rows = _search_rows("windows.jsonl")
    windows = [window for row in rows for window in row["windows"]]
    macros = _defined_macros(generated / "macros.tex")
    note = macros["SearchWindowNote"]
    assert f" {len(windows)} windows" in note
    if not any(window["result"] == "refuted" for window in windows):
        for row in rows:
            packed = max(w["tensors"] for w in row["windows"] if w["result"] == "packed")
            assert f"{packed} of {row['instance']}'s {row['tensors']} tensors" in note
    by_beam = sum("beam_width" in window for window in windows)
    assert (f"({by_beam} of them only by a beam)" in note) == (by_beam > 0)
    build = _build_module()
    refuted = {"instance": "Z", "tensors": 3, "probe_seconds": 2, "windows": [
        {"tensors": 2, "result": "refuted"}, {"tensors": 3, "result": "open"}]}
    assert build.search_windows_macros([refuted]) == {
        "SearchWindowSeconds": "2", "SearchWindowBeams": "",
        "SearchWindowNote": "1 of the 2 windows refutes it, on Z, raising the bound by one "
                            "granule",
        "SearchTightNote": "no tight-section subsets were probed"}
    beamed = {"instance": "Z", "tensors": 3, "probe_seconds": 2, "beam_seconds": 30,
              "windows": [{"tensors": 2, "result": "packed"},
                          {"tensors": 3, "result": "packed", "beam_width": 250, "beam_seed": 0},
                          {"start": 4, "width": 8, "tensors": 3, "result": "open"}]}
    assert build.search_windows_macros([beamed]) == {
        "SearchWindowSeconds": "2",
        "SearchWindowBeams": ", then, while still open, beam-searched for at most 30\\,s",
        "SearchWindowNote": "none of the 3 windows refutes it: windows of up to 3 of Z's 3 "
                            "tensors pack at it (1 of them only by a beam), and the other "
                            "one, Z's window of sections 4 to 11 (3 tensors), stays open",
        "SearchTightNote": "no tight-section subsets were probed"}
    beamed["windows"].append({"start": 0, "width": 2, "tensors": 1, "result": "open"})
    assert build.search_windows_macros([beamed])["SearchWindowNote"].endswith(
        "and the other 2 stay open: Z's window of sections 4 to 11 (3 tensors) and Z's window "
        "of sections 0 to 1 (1 tensors)")
    # the committed open windows are named
    for row in rows:
        for window in row["windows"]:
            if window["result"] == "open":
                assert (f"{row['instance']}'s window of sections {window['start']} to "
                        f"{window['start'] + window['width'] - 1} ({window['tensors']} "
                        "tensors)") in note


def test_the_orders_note_is_the_committed_orders(generated):
    """``SearchOrdersNote`` gives, per committed row of ``bench/search_orders.py``, how many of
    its random orders packed at the least capacity where any did and the capacity below it
    where none did; synthetic rows pin the wording."""
    rows = _search_rows("orders.jsonl")
    assert rows and {row["instance"] for row in rows} == {"A", "D", "J"}
    note = _defined_macros(generated / "macros.tex")["SearchOrdersNote"]
    build = _build_module()
    for row in rows:
        first = next((entry for entry in sorted(row["capacities"],
                                                 key=lambda entry: entry["above_percent"])
                      if entry["packed"]), None)
        if first is not None:
            verb = "packs" if first["packed"] == 1 else "pack"
            among = f" of {first['probes']:,}".replace(",", "\\,")
            name = build.orders_name(row)
            within = (f"within {first['above_percent']:g}" if first["above_percent"] else
                      f"at {row['instance']}'s max breadth" if row.get("window") else
                      "at its max breadth")
            assert (f"{first['packed']} {verb} {name} {within}" in note
                    or f"{first['packed']}{among} {verb} {name} {within}" in note)
            completions = first.get("completions")
            if completions:  # --complete: what CP-SAT made of the window's packings
                assert sum(completions.values()) == first["packed"]
                clause = build.orders_completion(first, row)
                assert clause and f"{name} {within}{clause}" in note
        for entry in row["capacities"]:  # every probe was counted and no bound was refuted
            assert 0 <= entry["packed"] == len(entry["packing_nodes"]) <= entry["probes"]
            assert entry["capacity"] >= row["max_breadth"]
            assert ("completions" in entry) == ("complete_seconds" in row) <= bool(
                row.get("window"))

    def capacities(*packed):
        return [{"above_percent": percent, "packed": count, "probes": 10}
                for percent, count in packed]

    synthetic = [{"instance": "Y", "probe_seconds": 0.5, "capacities": capacities((0, 0), (1, 0))},
                 {"instance": "Z", "probe_seconds": 0.5, "capacities": capacities((2, 3), (0, 0),
                                                                                  (1, 0))},
                 {"instance": "Z", "probe_seconds": 2, "capacities": capacities((0, 1))},
                 {"instance": "Y", "probe_seconds": 0.5, "chains": True,
                  "capacities": capacities((1, 2))},
                 {"instance": "Y", "probe_seconds": 0.5, "chains": True, "window": [0, 8],
                  "capacities": capacities((0, 4))},
                 {"instance": "Y", "probe_seconds": 0.5, "window": [0, 9],
                  "capacities": capacities((0, 0))}]
    assert build.search_orders_macros(synthetic) == {"SearchOrdersNote": (
        "of 10 random orders searched for 0.5\\,s each, none packs Y within 1\\,\\%, "
        "2 pack Y with its chains merged within 1\\,\\%, 4 pack the buffers of Y's sections "
        "0--7 with their chains merged at Y's max breadth, none packs the buffers of Y's "
        "sections 0--8 at Y's max breadth and "
        "3 pack Z within 2\\,\\% (none within 1\\,\\%); of 10 random orders searched "
        "for 2\\,s each, 1 packs Z at its max breadth")}
    mixed = [{"instance": "Y", "probe_seconds": 1, "capacities": [
                  {"above_percent": 0, "packed": 0, "probes": 1500}]},
             {"instance": "Y", "probe_seconds": 1, "capacities": capacities((1, 0), (2, 3))}]
    assert build.search_orders_macros(mixed) == {"SearchOrdersNote": (
        "searching random orders for 1\\,s each, 3 of 10 pack Y within 2\\,\\% (none within "
        "1\\,\\%) and none of 1\\,500 packs Y at its max breadth")}
    assert build.search_orders_macros([]) == {"SearchOrdersNote": "no random orders were probed"}
    learned = [{"instance": "Y", "probe_seconds": 1, "chains": True,
                "capacities": capacities((0, 0))},
               {"instance": "Y", "probe_seconds": 1, "chains": True, "learn": True,
                "capacities": capacities((0, 2))},
               {"instance": "Y", "probe_seconds": 1, "chains": True, "learn": True,
                "prefixes": True, "capacities": capacities((0, 5))}]
    assert build.search_orders_macros(learned) == {"SearchOrdersNote": (
        "of 10 random orders searched for 1\\,s each, none packs Y with its chains merged at "
        "its max breadth, 2 pack Y with its chains merged in failure-directed orders at its "
        "max breadth and 5 pack Y with its chains merged in prefix-keeping failure-directed "
        "orders at its max breadth")}

    def completed(done, refuted, unknown):
        return [{"above_percent": 0, "packed": done + refuted + unknown, "probes": 10,
                 "completions": {"completed": done, "refuted": refuted, "open": unknown}}]

    windows = [{"instance": "Y", "probe_seconds": 1, "window": [first, first + 5],
                "complete_seconds": 5, "capacities": completed(*counts)}
               for first, counts in zip((0, 5, 10, 15),
                                        ((0, 3, 0), (1, 1, 0), (0, 2, 1), (0, 1, 0)))]
    assert build.search_orders_macros(windows) == {"SearchOrdersNote": (
        "of 10 random orders searched for 1\\,s each, 3 pack the buffers of Y's sections "
        "0--4 at Y's max breadth, around none of which CP-SAT places Y's other buffers (all 3 "
        "refuted within 5\\,s each), 2 pack the buffers of Y's sections 5--9 at Y's max "
        "breadth, and CP-SAT places Y's other buffers around 1 of them, 3 pack the buffers of "
        "Y's sections 10--14 at Y's max breadth, around none of which CP-SAT places Y's other "
        "buffers in 5\\,s each (2 refuted, 1 open) and 1 packs the buffers of Y's sections "
        "15--19 at Y's max breadth, around none of which CP-SAT places Y's other buffers "
        "(refuted within 5\\,s)")}


def test_the_orders_bound_note_names_the_orders_that_packed_a_max_breadth(generated):
    """``SearchOrdersBoundNote`` names every committed row of ``bench/search_orders.py`` (a
    whole instance) in which some order packed the max breadth, with the nodes it took;
    synthetic rows pin the wording."""
    rows = _search_rows("orders.jsonl")
    note = _defined_macros(generated / "macros.tex")["SearchOrdersBoundNote"]
    build = _build_module()
    at_breadth = [(row, entry) for row in rows if not row.get("window")
                  for entry in row["capacities"] if entry["above_percent"] == 0]
    assert {row["instance"] for row, entry in at_breadth if entry["packed"]} == {"D", "J"}
    for row, entry in at_breadth:
        probes = f"{entry['probes']:,}".replace(",", "\\,")
        said = (f"of {probes} {build.orders_kind(row)} orders of {build.orders_subject(row)}, "
                f"searched for {row['probe_seconds']:g}\\,s each,")
        assert (said in note) == bool(entry["packed"])
        for nodes in entry["packing_nodes"]:
            assert f"{nodes:,}".replace(",", "\\,") in note

    def row(instance, packed, nodes, **more):
        return {"instance": instance, "probe_seconds": 0.1, **more,
                "capacities": [{"above_percent": 0, "packed": packed, "probes": 20000,
                                "packing_nodes": nodes},
                               {"above_percent": 1, "packed": 5, "probes": 20000,
                                "packing_nodes": [1] * 5}]}

    assert build.search_orders_bound_macros([
        row("Z", 1, [6364], chains=True), row("Y", 0, []), row("Y", 1, [7], window=[0, 9]),
        row("Y", 2, [26475, 22697]), row("Z", 3, [9, 8, 7], chains=True, learn=True),
        row("Z", 2, [5, 4], chains=True, learn=True, prefixes=True)]) == {
            "SearchOrdersBoundNote": (
                "2 of 20\\,000 random orders of Y, searched for 0.1\\,s each, pack it at its "
                "max breadth, in 22\\,697 and 26\\,475 nodes; 1 of 20\\,000 random orders of Z "
                "with its chains merged, searched for 0.1\\,s each, packs it at its max "
                "breadth, in 6\\,364 nodes; 3 of 20\\,000 failure-directed orders of Z with "
                "its chains merged, searched for 0.1\\,s each, pack it at its max breadth, in "
                "7, 8 and 9 nodes; 2 of 20\\,000 prefix-keeping failure-directed orders of Z "
                "with its chains merged, searched for 0.1\\,s each, pack it at its max "
                "breadth, in 4 and 5 nodes")}
    assert build.search_orders_bound_macros([row("Y", 0, [])]) == {
        "SearchOrdersBoundNote": "no random order packs an instance at its max breadth"}


def test_the_beam_and_seed_notes_follow_the_runs(generated):
    """``SearchBeamNote`` names the instances whose compiled run a beam closed at the bound,
    from the committed rows and from synthetic ones; ``SearchSeedNote`` says when every seed
    proved an instance, and ranges the arenas of the others."""
    build = _build_module()
    macros = _defined_macros(generated / "macros.tex")
    closed = [row["instance"] for row in _search_rows("minimalloc_before_after.jsonl")
              if row["after"]["status"] == "OPTIMAL" and any(
                  probe["loop"] == "beam" and probe["result"] == "feasible"
                  for probe in row["after"]["probes"])]
    assert all(f"{name} after " in macros["SearchBeamNote"] for name in closed)

    def run(status, bound, seconds, *probes, objective=None):
        return {"status": status, "best_bound": bound, "wall_time_s": seconds,
                "objective": objective or bound, "probes": [
                    {"loop": loop, "result": result, "capacity": capacity}
                    for loop, result, capacity in probes]}

    rows = [{"instance": "D", "after": run("OPTIMAL", 10, 22.71, ("beam", "emptied", 10),
                                           ("beam", "feasible", 10))},
            {"instance": "A", "after": run("OPTIMAL", 5, 0.1, ("prove", "feasible", 5))},
            {"instance": "J", "after": run("FEASIBLE", 9, 60, ("beam", "feasible", 12),
                                           objective=12)}]
    assert build.search_beam_macros(rows) == {
        "SearchBeamNote": "a beam at the bound closed D after 22.7\\,s"}
    assert build.search_beam_macros(rows[1:]) == {"SearchBeamNote": "no beam closed an instance"}
    seeds = [{"instance": "D", "after": run("OPTIMAL", 10, 30.0) | {"seed": 1}},
             {"instance": "J", "after": run("FEASIBLE", 9, 60, objective=11) | {"seed": 1}}]
    assert build.search_seed_macros(rows, seeds) == {"SearchSeeds": "0--1", "SearchSeedNote": (
        "in the 2 runs, D is proven optimal in all of them (10 bytes, in 22.7--30.0\\,s) and "
        "the arenas range from 11 to 12 bytes on J (gaps 22.2--33.3\\,\\%)")}


def test_the_tight_note_is_the_committed_tight_sections(generated):
    """``SearchTightNote`` counts the committed tight-section subsets of
    ``bench/search_windows.py`` and names, per instance, the most tensors such a subset packed
    at the max breadth, with its slack; a refuted subset turns it into a raised bound."""
    rows = _search_rows("windows.jsonl")
    subsets = [subset for row in rows for subset in row["tight"]]
    note = _defined_macros(generated / "macros.tex")["SearchTightNote"]
    assert f" {len(subsets)} subsets" in note
    if not any(subset["result"] == "refuted" for subset in subsets):
        for row in rows:
            packed = [s for s in row["tight"] if s["result"] == "packed"]
            widest = max(packed, key=lambda subset: subset["tensors"])
            assert (f"{widest['tensors']} of {row['instance']}'s {row['tensors']} tensors "
                    f"(slack {widest['slack_percent']:g}\\,\\%)") in note
    build = _build_module()
    row = {"instance": "Z", "tensors": 5, "tight": [
        {"slack_percent": 0, "tensors": 2, "result": "packed"},
        {"slack_percent": 3, "tensors": 4, "result": "open"},
        {"slack_percent": 1.5, "tensors": 3, "result": "packed"}]}
    assert build.search_tight_note([row]) == (
        "none of the 3 subsets refutes it: subsets of up to 3 of Z's 5 tensors "
        "(slack 1.5\\,\\%) pack at it, and the other 1, from a slack of 3\\,\\% on, "
        "stay open")
    row["tight"][2] |= {"beam_width": 500, "beam_seed": 2}
    assert build.search_tight_note([row]) == (
        "none of the 3 subsets refutes it: subsets of up to 3 of Z's 5 tensors "
        "(slack 1.5\\,\\%) pack at it (1 of them only by a beam), and the other 1, from a "
        "slack of 3\\,\\% on, stay open")
    row["tight"][1]["result"] = "refuted"
    assert build.search_tight_note([row]) == (
        "1 of the 3 subsets refutes it, on Z, raising the bound by one granule")


def test_the_seed_note_spans_every_seed_of_the_reopened_instances(generated):
    """``SearchSeedNote`` gives, per instance that ``bench/search.py --seed`` re-ran, the
    least and the largest arena over its seeds (the committed before/after run included)."""
    build = _build_module()
    rows = {name: _search_rows(name) for name in ("minimalloc_before_after.jsonl", "seeds.jsonl")}
    macros = _defined_macros(generated / "macros.tex")
    for name in {row["instance"] for row in rows["seeds.jsonl"]}:
        arenas = [row["after"]["objective"] for rows_ in rows.values() for row in rows_
                  if row["instance"] == name]
        assert len(arenas) >= 2
        proven = all(row["after"]["status"] == "OPTIMAL" for rows_ in rows.values()
                     for row in rows_ if row["instance"] == name)
        assert (f"{name} is proven optimal in all of them ({build._thousands(min(arenas))} "
                f"bytes" if proven else f"from {build._thousands(min(arenas))} to "
                f"{build._thousands(max(arenas))} bytes on {name}") in macros["SearchSeedNote"]
    run = {"status": "FEASIBLE", "objective": 110, "best_bound": 100}
    made = build.search_seed_macros(
        [{"instance": "Z", "after": run}, {"instance": "Y", "after": run}],
        [{"instance": "Z", "after": run | {"objective": 100, "status": "OPTIMAL", "seed": 1}},
         {"instance": "Z", "after": run | {"objective": 105, "seed": 3}}])
    assert made == {"SearchSeeds": "0, 1, 3",
                    "SearchSeedNote": "in the 3 runs, the arenas range from 100 to 110 bytes "
                                      "on Z (gaps 0.0--10.0\\,\\%, 1 proven)"}
    assert build.search_seed_macros([{"instance": "Z", "after": run}], [])["SearchSeeds"] == "--"


def test_the_long_run_note_names_how_each_long_run_ended(generated, tmp_path):
    """``SearchLongNote`` says, per committed long run, how it ended: a proven instance with
    its time and, when a random-order probe found the packing at the bound, the probe's length
    and which draw from the seed its order was; an open one with its arena and gap (an
    instance run at several seeds named with its seed, in the order of the seeds).
    ``SearchLongClosedNote`` names the instances packed at their max breadth."""
    build = _build_module()
    rows = sorted(_search_rows("long_runs.jsonl"), key=lambda row: (row["instance"], row["seed"]))
    macros = _defined_macros(generated / "macros.tex")
    at = -1
    for name, row in zip(build.long_run_names(rows), rows):
        said = (f"{name} is proven optimal" if row["status"] == "OPTIMAL"
                else f"{name} ends at {build._thousands(row['objective'])} bytes")
        assert macros["SearchLongNote"].find(said) > at
        at = macros["SearchLongNote"].find(said)
        if row["status"] == "OPTIMAL":
            assert (f"{build._thousands(row['objective'])} bytes, after "
                    f"{row['wall_time_s']:.0f}" in macros["SearchLongNote"])
    assert macros["SearchLongSeed"] == build.search_long_macros(rows)["SearchLongSeed"]
    assert all(f"{row['seed']}" in macros["SearchLongSeed"] for row in rows)
    closed = [row["instance"] for row in rows if row["objective"] == row["lower_bound"]]
    assert all(name in macros["SearchLongClosedNote"] for name in closed)
    assert bool(closed) == bool(macros["SearchLongClosedNote"])

    probe = {"loop": "improve", "result": "feasible", "capacity": 10, "seconds": 0.25,
             "jittered": True}
    (tmp_path / "Z.10.seed2.offsets.csv").write_text("id,offset\n")
    made = build.search_long_macros([
        {"instance": "Y", "status": "FEASIBLE", "objective": 11, "lower_bound": 10,
         "best_bound": 10, "gap": 0.1, "nodes": 2_000_000, "probes": []},
        {"instance": "Z", "status": "OPTIMAL", "objective": 10, "lower_bound": 10,
         "best_bound": 10, "gap": 0.0, "nodes": 3_400_000, "wall_time_s": 12.4, "seed": 2,
         "probes": [probe | {"result": "timeout", "jittered": False}, probe | {"capacity": 12},
                    probe | {"result": "timeout"}, probe]}], tmp_path)
    assert made == {
        "SearchLongNote": "Y ends at 11 bytes, 10.0\\,\\% above its bound, after 2 million "
                          "nodes; Z is proven optimal at its max breadth, 10 bytes, after "
                          "12\\,s and 3 million nodes: a probe of 0.25\\,s in random order 3 "
                          "drawn from seed 2 packed it",
        "SearchLongClosedNote": "On Z it lay in the arena: a longer run packs it at the max "
                                "breadth (Section~\\ref{sec:minimalloc}). ",
        "SearchLongSeed": "seed~0 for Y and seed~2 for Z",
        "SearchLongTally": "no instance was run at more than one seed",
        "SearchLongCertificates": "{\\urlstyle{tt}\\nolinkurl{Z.10.seed2.offsets.csv}}",
        "SearchRepackAfter": "60", "SearchRepackStall": "300", "SearchRefuteShare": "10",
        "SearchRepackings": "layer search, skyline repacking and band repacking"}
    assert list(build.REPACKINGS) == list(build.REPACKS)  # every repacking named, in turn
    assert [build.round_order_kind(record) for record in (
        {"scores": [0.5], "prefix": []}, {"scores": [0.5]}, {})] == [
            "prefix-keeping failure-directed", "failure-directed", "random"]
    assert build.search_long_macros([])["SearchLongClosedNote"] == ""
    beam = {"loop": "beam", "result": "feasible", "capacity": 10, "seconds": 17.16,
            "width": 2000, "seed": 4, "jittered": False}
    closed_by_beam = build.search_long_macros([
        {"instance": "X", "status": "OPTIMAL", "objective": 10, "lower_bound": 10,
         "best_bound": 10, "gap": 0.0, "nodes": 18_100_000, "wall_time_s": 22.1, "seed": 0,
         "probes": [probe | {"capacity": 12}, beam | {"result": "emptied"}, beam]}])
    assert closed_by_beam["SearchLongNote"] == (
        "X is proven optimal at its max breadth, 10 bytes, after 22\\,s and 18 million "
        "nodes: a beam 2\\,000 states wide, of 17.2\\,s and tie-order seed 4, packed it")
    rounds = [{"loop": "repack", "result": "feasible", "capacity": 11, "seconds": 70.2,
               "nodes": 0, "method": "layers", "seed": 0, "steps": 12},
              {"loop": "repack", "result": "unchanged", "capacity": 12, "seconds": 300.5,
               "nodes": 0, "method": "bands", "seed": 2, "steps": 9},
              {"loop": "repack", "result": "feasible", "capacity": 10, "seconds": 4.1,
               "nodes": 0, "method": "skyline", "seed": 4, "steps": 3}]
    repacked = {"instance": "W", "status": "FEASIBLE", "objective": 11, "lower_bound": 9,
                "best_bound": 9, "gap": 2 / 11, "nodes": 5_000_000, "seed": 0,
                "probes": [probe | {"capacity": 13}, rounds[0]]}
    assert build.search_long_macros([repacked])["SearchLongNote"] == (
        "W ends at 11 bytes, 18.2\\,\\% above its bound, after 5 million nodes; its probes "
        "and beams got to 13 bytes, and its repacking rounds lowered that once (layer search)")
    closed_by_round = build.search_long_macros([repacked | {
        "status": "OPTIMAL", "objective": 10, "lower_bound": 10, "best_bound": 10, "gap": 0.0,
        "wall_time_s": 700.0, "probes": [probe | {"capacity": 13}, *rounds]}])
    assert closed_by_round["SearchLongNote"] == (
        "W is proven optimal at its max breadth, 10 bytes, after 700\\,s and 5 million "
        "nodes: a round of skyline repacking (seed 4), 3 steps in, packed it")
    assert build.search_long_macros([repacked | {"probes": [probe | {"capacity": 11},
                                                           rounds[0]]}])["SearchLongNote"] \
        == "W ends at 11 bytes, 18.2\\,\\% above its bound, after 5 million nodes"
    at_bound = {"loop": "bound", "result": "feasible", "capacity": 10, "seconds": 250.3,
                "nodes": 9_000_000, "seed": 2, "draws": 2417, "last_nodes": 6364,
                "jittered": True, "chains": True}
    closed_at_bound_row = repacked | {
        "status": "OPTIMAL", "objective": 10, "lower_bound": 10, "best_bound": 10, "gap": 0.0,
        "wall_time_s": 900.0, "probes": [probe | {"capacity": 13}, rounds[0],
                                         at_bound | {"result": "timeout", "seed": 0},
                                         at_bound]}
    closed_at_bound = build.search_long_macros([closed_at_bound_row])
    assert closed_at_bound["SearchLongNote"] == (
        "W is proven optimal at its max breadth, 10 bytes, after 900\\,s and 5 million "
        "nodes: a round at the bound packed it, in random order 2\\,417 drawn from the "
        "round's seed 2 (probes of 0.1\\,s)")
    learned_row = closed_at_bound_row | {"probes": [*closed_at_bound_row["probes"][:-1],
                                                    at_bound | {"scores": [0.0, 1.0]}]}
    assert build.search_long_macros([learned_row])["SearchLongNote"].endswith(
        "a round at the bound packed it, in failure-directed order 2\\,417 drawn from the "
        "round's seed 2 (probes of 0.1\\,s)")
    twice = build.search_long_macros([
        repacked | {"instance": "V", "seed": 3}, repacked | {"instance": "V", "seed": 1},
        repacked | {"instance": "U"}])
    assert twice["SearchLongNote"].startswith("U ends at 11 bytes")
    assert twice["SearchLongNote"].index("; V (seed 1) ends at 11 bytes") \
        < twice["SearchLongNote"].index("; V (seed 3) ends at 11 bytes")
    assert twice["SearchLongSeed"] == "seed~0 for U and seeds 1 and 3 for V"
    assert build.search_long_macros([repacked | {"seed": 2}, repacked | {"instance": "V", "seed": 2},
                                     ])["SearchLongSeed"] == "seed~2"
    assert twice["SearchLongTally"] == "V is proven at 0 of its 2 seeds"
    assert build.search_long_macros([closed_at_bound_row, repacked | {"seed": 1}, repacked | {
        "seed": 2}])["SearchLongTally"] == ("W is proven at 1 of its 3 seeds, its rounds at the "
                                            "bound drawing 4\\,834 orders in all, of which 1 "
                                            "packed it")
    assert build.search_long_macros([repacked])["SearchLongSeed"] == "seed~0"
    proven = [row for row in rows if row["status"] == "OPTIMAL"]
    certificates = [f"{row['instance']}.{row['objective']}.seed{row['seed']}.offsets.csv"
                    for row in proven]
    assert proven and all((PAPER / "results" / "search" / name).is_file()
                          for name in certificates)
    assert macros["SearchLongCertificates"] == build._words(
        build.file_name_tt(name) for name in certificates)


def test_the_minimalloc_table_names_what_a_long_run_closed(generated):
    """An instance left open within the suite run's limit that a committed long run proved is
    named, with its optimum and its fastest proof (and at how many of its seeds, when it ran
    at several), in tab:minimalloc's note and in ``LongClosedMiniMalloc``; an unproven long
    run and an instance the suite run proved are not."""
    build = _build_module()
    rows = _search_rows("long_runs.jsonl")
    macros = _defined_macros(generated / "macros.tex")
    table = (generated / "tables" / "minimalloc.tex").read_text()
    open_names = macros["OpenMiniMalloc"]
    closed = [min((row for row in rows if row["instance"] == name and row["status"] == "OPTIMAL"),
                  key=lambda row: row["wall_time_s"])
              for name in sorted({row["instance"] for row in rows if row["status"] == "OPTIMAL"
                                  and row["instance"] in open_names})]
    for row in closed:
        assert (f"{row['instance']} optimal at {row['objective']} after "
                f"{row['wall_time_s']:.0f}" in table)
        assert f"proves {row['instance']} optimal too" in macros["LongClosedMiniMalloc"]
    assert not any(f"{row['instance']} optimal at {row['objective']}" in table
                   for row in rows
                   if row["status"] != "OPTIMAL" or row["instance"] not in open_names)
    assert bool(closed) == bool(macros["LongClosedMiniMalloc"])

    results = build.load_results([PAPER / "results" / "minimalloc"])
    suite = build.suites(results)[3]
    # J open within the limit: the suite without the exact rows that proved it
    suite = suite[~((suite["instance"] == "J") & (suite["kind"] == "exact")
                    & (suite["status"] == "OPTIMAL"))]
    proven = next(name for name in "ABC" if name not in open_names)
    text, made = build.minimalloc_latex(suite, None, [
        {"instance": proven, "status": "OPTIMAL", "objective": 1, "wall_time_s": 1.0,
         "time_limit": 10.0},
        {"instance": "J", "status": "FEASIBLE", "objective": 2, "wall_time_s": 9.0,
         "time_limit": 10.0}])
    assert made["LongClosedMiniMalloc"] == "" and "Run longer" not in text
    assert "J" in made["OpenMiniMalloc"]  # open within the suite's limit: a long proof counts
    assert made["OpenMiniMallocNote"].startswith("Still open within the limit: ")
    assert "J" in made["OpenMiniMallocClause"] and "J" in made["OpenMiniMallocInsight"]
    assert build.open_sentences([]) == {
        "OpenMiniMallocNote": "No instance is left open within the limit.",
        "OpenMiniMallocInsight": "Even so, every optimum is proven within the limit "
                                 "(Table~\\ref{tab:minimalloc}).",
        "OpenMiniMallocClause": "every optimum is proven within the limit"}
    text, made = build.minimalloc_latex(suite, None, [
        {"instance": "J", "status": "OPTIMAL", "objective": 3, "wall_time_s": 99.0,
         "time_limit": 100.0}])
    assert made["LongClosedMiniMalloc"] == (" Run longer, the offsets search proves J optimal "
                                            "too (Table~\\ref{tab:search}).")
    assert ("A run of the offsets search of up to 100\\,s proves J optimal at 3 after 99\\,s"
            in text)
    assert "proves" not in text.split(r"\end{tabular}")[1]
    text, made = build.minimalloc_latex(suite, None, [
        {"instance": "J", "status": "FEASIBLE", "objective": 4, "wall_time_s": 100.0,
         "time_limit": 100.0, "seed": 0},
        {"instance": "J", "status": "OPTIMAL", "objective": 3, "wall_time_s": 99.0,
         "time_limit": 100.0, "seed": 1},
        {"instance": "J", "status": "OPTIMAL", "objective": 3, "wall_time_s": 42.0,
         "time_limit": 100.0, "seed": 2}])
    assert ("proves J optimal at 3 after 42\\,s at 2 of its 3 seeds (Table" in text)
    assert made["LongClosedMiniMalloc"] == (" Run longer, the offsets search proves J optimal "
                                            "too (J at 2 of its 3 seeds; "
                                            "Table~\\ref{tab:search}).")


def test_the_search_ablation_compares_rows_of_one_worker_count():
    """tab:ablation-search's all-on row is the ablation run's own (one worker, like its other
    rows) when the run has one; only without it does the suite run's (two workers) stand in.
    Every switch of SearchParams has a row, ``beams`` included."""
    build = _build_module()
    results = build.load_results([PAPER / "results" / "paper_search_ablation",
                                  PAPER / "results" / "minimalloc"])
    ablation = results[results["run"] == "paper_search_ablation"]
    suite = results[results["run"] == "minimalloc"]
    searches = ablation[ablation["method"] == "search"]
    own = searches[searches["params"].map(lambda p: not any(v is False for v in (p or {}).values()))]
    assert len(own) == 11 and set(own["workers"]) == {1}
    text, macros = build.ablation_search_latex(ablation, suite)
    assert macros["SearchProvenAllOn"] == str(int((own["status"] == "OPTIMAL").sum()))
    rows = [line.split(" & ")[0] for line in text.splitlines() if " & " in line]
    assert rows[1:] == ["none (all on)"] + [name.replace("_", " ")
                                           for name in SearchParams.switch_names()]
    without = ablation.drop(own.index)
    suite_runs = build.median_runs(build.plain(suite[suite["method"] == "search"]))
    _, macros = build.ablation_search_latex(without, suite)
    assert macros["SearchProvenAllOn"] == str(int((suite_runs["status"] == "OPTIMAL").sum()))
