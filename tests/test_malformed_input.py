"""Every malformed-input class through the command line: exit 2, one line on stderr naming the
file (and the field where there is one), no traceback, and nothing on stdout, so that
``--json`` never prints anything but one JSON object.

Named cases first (one per class of bad input, each a thing a reader can check by eye), then
hypothesis fuzzing of each file format (random bytes, and valid files with one value
replaced), then a few runs through a real subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_checks import assert_one_json_object, assert_one_line_error, cli

REPO = Path(__file__).resolve().parents[1]
PRELOAD = REPO / "data" / "preload" / "mobilenet_v2_fused_tflite_224_phone.json"
RECORDS = [{"id": "a", "first_op": 0, "last_op": 1, "size": 8},
           {"id": "b", "first_op": 1, "last_op": 2, "size": 4}]
GOOD_JSON = json.dumps({"records": RECORDS})
GOOD_CSV = "id,lower,upper,size\na,0,2,8\nb,1,3,4\n"
SOLVE = ["--problem", "offsets", "--method", "greedy_by_size"]


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def record_file(**changes) -> str:
    """A one-record JSON instance with ``changes`` applied to the record."""
    return json.dumps({"records": [dict(RECORDS[0], **changes)]})


def instance_file(**changes) -> str:
    return json.dumps(dict({"records": RECORDS}, **changes))


# --- named cases: instance files -------------------------------------------------------------

# (file name, content, field the error names; None when the file has no field at fault)
BAD_INSTANCES = [
    ("syntax.json", "{not json", None),
    ("latin1.json", b'{"records": [{"id": "\xe9", "first_op": 0, "last_op": 1, "size": 4}]}',
     None),
    ("deep.json", "[" * 100_000 + "]" * 100_000, None),
    ("empty_file.json", "", None),
    ("top_list.json", "[]", None),
    ("records_int.json", '{"records": 3}', "records"),
    ("record_str.json", '{"records": ["a"]}', "records[0]"),
    ("no_size.json", json.dumps({"records": [{"id": "a", "first_op": 0, "last_op": 1}]}),
     "records[0]"),
    ("id_null.json", record_file(id=None), "records[0].id"),
    ("id_int.json", record_file(id=7), "records[0].id"),
    ("id_empty.json", record_file(id=""), "records[0].id"),
    ("size_zero.json", record_file(size=0), "records[0].size"),
    ("size_negative.json", record_file(size=-3), "records[0].size"),
    ("size_float.json", record_file(size=2.5), "records[0].size"),
    ("size_text.json", record_file(size="12"), "records[0].size"),
    ("size_fullwidth.json", record_file(size="１２"), "records[0].size"),
    ("size_bool.json", record_file(size=True), "records[0].size"),
    ("size_nan.json", GOOD_JSON.replace('"size": 8', '"size": NaN'), "records[0].size"),
    ("size_infinite.json", GOOD_JSON.replace('"size": 8', '"size": 1e400'), "records[0].size"),
    ("size_2_70.json", record_file(size=2**70), "records[0].size"),
    ("reversed.json", record_file(first_op=3, last_op=1), "records[0].last_op"),
    ("first_negative.json", record_file(first_op=-1), "records[0].first_op"),
    ("op_2_80.json", record_file(last_op=2**80), "records[0].last_op"),
    ("duplicate_id.json", json.dumps({"records": [RECORDS[0], RECORDS[0]]}), "id"),
    ("inplace_int.json", instance_file(inplace=5), "inplace"),
    ("inplace_unknown.json", instance_file(inplace=[["a", "z"]]), "inplace[0]"),
    ("inplace_null.json", instance_file(inplace=[[None, "a"]]), "inplace[0]"),
    ("inplace_larger.json", json.dumps({"records": [dict(RECORDS[0], size=2),
                                                    dict(RECORDS[1], size=4)],
                                        "inplace": [["a", "b"]]}), "inplace"),
    ("alignment_zero.json", instance_file(alignment=0), "alignment"),
    ("alignment_text.json", instance_file(alignment="8"), "alignment"),
    ("alignment_2_63.json", instance_file(alignment=2**63), "alignment"),
    ("alignment_overflow.json", instance_file(alignment=2**61 + 1), "alignment"),
    ("provenance_text.json", instance_file(provenance="x"), "provenance"),
    ("provenance_list.json", instance_file(provenance=[1]), "provenance"),
    ("graph_text.json", instance_file(graph="x"), "graph"),
    ("name_int.json", instance_file(name=5), "name"),
    ("format.json", instance_file(format="other"), "format"),
    ("no_records.json", '{"records": []}', "records"),
    ("sizes_overflow.json", json.dumps({"records": [dict(RECORDS[0], size=2**62),
                                                    dict(RECORDS[1], size=2**62)]}), "size"),
    ("empty.csv", "", None),
    ("header_only.csv", "id,lower,upper,size\n", None),
    ("no_size_column.csv", "id,lower,upper\na,0,1\n", "size"),
    ("bad_int.csv", "id,lower,upper,size\na,0,1,x\n", "size"),
    ("fullwidth.csv", "id,lower,upper,size\na,0,1,１２\n", "size"),
    ("underscore.csv", "id,lower,upper,size\na,0,1,1_0\n", "size"),
    ("float.csv", "id,lower,upper,size\na,0,1,1.5\n", "size"),
    ("empty_lifetime.csv", "id,lower,upper,size\na,3,3,4\n", "upper"),
    ("negative_lower.csv", "id,lower,upper,size\na,-1,3,4\n", "lower"),
    ("size_zero.csv", "id,lower,upper,size\na,0,1,0\n", "size"),
    ("duplicate_id.csv", "id,lower,upper,size\na,0,1,4\na,1,2,4\n", "id"),
    ("short_row.csv", "id,lower,upper,size\na,0,1\n", None),
    ("latin1.csv", b"id,lower,upper,size\n\xe9,0,1,4\n", None),
    ("repeated_column.csv", "id,lower,upper,size,size\na,0,1,4,5\n", "size"),
    ("huge_field.csv", "id,lower,upper,size\n" + "a" * 200_000 + ",0,1,4\n", None),
    ("sizes_overflow.csv", f"id,lower,upper,size\na,0,2,{2**62}\nb,0,2,{2**62}\n", "size"),
    ("instance.txt", "id,lower,upper,size\n", None),
]


@pytest.mark.parametrize("name, content, field", BAD_INSTANCES,
                         ids=[case[0] for case in BAD_INSTANCES])
def test_bad_instance_file(capsys, tmp_path, name, content, field):
    path = write(tmp_path, name, content)
    for flags in ([], ["--json"]):
        code, out, err = cli(capsys, ["solve", path, *SOLVE, *flags])
        assert_one_line_error(code, out, err, path, *([field] if field else []))


@pytest.mark.parametrize("command", ["solve", "validate", "compare", "run"])
def test_an_empty_instance_is_refused_the_same_way_by_every_command(capsys, tmp_path, command):
    empty = write(tmp_path, "empty.json", '{"records": []}')
    solution = write(tmp_path, "solution.csv", "id,offset\n")
    config = write(tmp_path, "c.toml", f'problems = ["offsets"]\ninstances = ["{empty}"]\n'
                                       'methods = ["greedy_by_size"]\n')
    argv = {"solve": ["solve", empty, *SOLVE, "--json"],
            "validate": ["validate", empty, solution, "--problem", "offsets", "--json"],
            "compare": ["compare", empty, "--problem", "offsets", "--methods", "naive"],
            "run": ["run", config, "--out", tmp_path / "run"]}[command]
    assert_one_line_error(*cli(capsys, argv), empty, "records")
    assert not (tmp_path / "run").exists()


def test_missing_and_unreadable_instance_paths(capsys, tmp_path):
    missing = tmp_path / "missing.json"
    assert_one_line_error(*cli(capsys, ["solve", missing, *SOLVE]), missing)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    assert_one_line_error(*cli(capsys, ["solve", folder, *SOLVE]), folder)


def test_graph_errors_found_by_a_method_name_the_instance_file(capsys, tmp_path):
    network = json.loads((REPO / "data" / "networks" / "squeezenet_fused_onnx_224.json")
                         .read_text())
    path = write(tmp_path, "net.json", json.dumps(dict(network, graph=dict(network["graph"],
                                                                             ops=5))))
    code, out, err = cli(capsys, ["solve", path, "--problem", "offsets", "--method", "mxnet",
                                  "--json"])
    assert_one_line_error(code, out, err, path, "graph.ops")


# --- named cases: flags and output paths -----------------------------------------------------

@pytest.fixture
def good(tmp_path) -> Path:
    return write(tmp_path, "good.json", GOOD_JSON)


@pytest.mark.parametrize("flags, names", [
    (["--method", "no_such_method"], ["no_such_method"]),
    (["--problem", "shared-objects", "--method", "xla_best_fit"], ["xla_best_fit"]),
    (["--budget", "5"], ["--budget"]),
    (["--alignment", str(2**61 + 1)], ["{good}", "alignment"]),
    (["--output", "{tmp}/missing/out.csv"], ["missing/out.csv", "--output", "does not exist"]),
    (["--output", "{good}/out.csv"], ["--output", "is not a folder"]),
    (["--output", "{tmp}"], ["--output", "is a folder"]),
])
def test_bad_solve_flags_name_the_flag(capsys, tmp_path, good, flags, names):
    flags = [f.replace("{tmp}", str(tmp_path)).replace("{good}", str(good)) for f in flags]
    argv = ["solve", good, "--problem", "offsets", "--method", "greedy_by_size"] + flags
    names = [n.replace("{good}", str(good)) for n in names]
    assert_one_line_error(*cli(capsys, argv + ["--json"]), *names)


def test_an_unwritable_output_folder_is_refused_before_solving(capsys, tmp_path, good,
                                                               monkeypatch):
    import os

    folder = tmp_path / "read-only"
    folder.mkdir()
    real_access = os.access
    # Tests may run as root, for whom permission bits do not stop writes: report the folder
    # as not writable, as access(2) does for other users and on read-only file systems.
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if Path(path) == folder
                        else real_access(path, mode, **kw))
    code, out, err = cli(capsys, ["solve", good, *SOLVE, "--json", "--output",
                                  folder / "out.csv"])
    assert_one_line_error(code, out, err, folder / "out.csv", "--output", "not writable")
    code, out, err = cli(capsys, ["run", REPO / "experiments" / "smoke.toml", "--out",
                                  folder / "run"])
    assert_one_line_error(code, out, err, folder / "run", "--out")


@pytest.mark.parametrize("command", [
    ["run", "{smoke}", "--out", "{file}/run"],
    ["merge", "{file}/merged", "{tmp}"],
    ["report", "{tmp}", "--out", "{file}/report"],
])
def test_output_folders_inside_a_file_are_refused_before_any_work(capsys, tmp_path, good,
                                                                  command):
    argv = [a.replace("{smoke}", str(REPO / "experiments" / "smoke.toml"))
            .replace("{file}", str(good)).replace("{tmp}", str(tmp_path)) for a in command]
    assert_one_line_error(*cli(capsys, argv), good, "is not a folder")


@pytest.mark.parametrize("flags", [
    ["--alignment", "８"], ["--alignment", "1_0"], ["--time-limit", "inf"],
    ["--time-limit", "nan"], ["--time-limit", "１"], ["--seed", str(2**31)],
    ["--workers", str(2**40)], ["--alignment", "0"], ["--workers", "0"],
])
def test_flag_values_are_checked_by_argparse(capsys, good, flags):
    code, out, err = cli(capsys, ["solve", good, *SOLVE, "--json", *flags])
    # argparse's convention: the usage line, then one error line naming the flag.
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("optplan: error: argument " + flags[0])


def test_a_budget_no_plan_fits_is_refused(capsys, tmp_path):
    argv = ["solve", PRELOAD, "--problem", "preload", "--method", "flexnn", "--json"]
    assert_one_line_error(*cli(capsys, argv + ["--budget", "1"]), "--budget", "admit no plan")
    in_file = write(tmp_path, "p.json", json.dumps(dict(json.loads(PRELOAD.read_text()),
                                                        budget=1)))
    assert_one_line_error(*cli(capsys, ["solve", in_file] + argv[2:]), in_file, "budget")


# --- named cases: solution files for validate ------------------------------------------------

BAD_SOLUTIONS = [
    ("offset", "id,off\na,0\nb,8\n", "offset"),
    ("offset", "id,offset\na,0\nz,8\n", "id"),
    ("offset", "id,offset\na,0\na,8\n", "id"),
    ("offset", "id,offset\na,0\n", "id"),
    ("offset", "id,first_op,last_op,size,offset\na,0,1,9,0\nb,1,2,4,8\n", "size"),
    ("offset", "id,offset\na,x\nb,8\n", "offset"),
    ("offset", "id,offset\na,０\nb,8\n", "offset"),
    ("offset", f"id,offset\na,{2**70}\nb,8\n", "offset"),
    ("offset", b"id,offset\n\xe9,0\nb,8\n", None),
    ("offset", "", None),
    ("object", "id,object\na,-1\nb,0\n", "object"),
    ("object", f"id,object\na,{2**40}\nb,0\n", "object"),
]


@pytest.mark.parametrize("column, content, field", BAD_SOLUTIONS)
def test_bad_solution_file(capsys, tmp_path, good, column, content, field):
    solution = write(tmp_path, "solution.csv", content)
    problem = "offsets" if column == "offset" else "shared-objects"
    code, out, err = cli(capsys, ["validate", good, solution, "--problem", problem, "--json"])
    assert_one_line_error(code, out, err, solution, *([field] if field else []))


def test_validate_exit_codes_separate_bad_input_from_invalid_solutions(capsys, tmp_path, good):
    for content, expected in (("id,offset\na,0\nb,8\n", 0), ("id,offset\na,0\nb,4\n", 1),
                              ("id,offset\na,-8\nb,8\n", 1)):
        solution = write(tmp_path, "s.csv", content)
        code, out, err = cli(capsys, ["validate", good, solution, "--problem", "offsets",
                                      "--json"])
        assert code == expected and err == ""
        assert assert_one_json_object(out)["valid"] is (expected == 0)


# --- named cases: experiment configs, preload instances, run directories ---------------------

def config_text(**top) -> str:
    lines = ['problems = ["offsets"]', f'instances = ["{REPO / "data/examples/paper_example.json"}"]',
             'methods = ["greedy_by_size"]']
    lines += [f"{key} = {value}" for key, value in top.items()]
    return "\n".join(lines) + "\n"


BAD_CONFIGS = [
    (bytes(range(256)), None),
    ("problems = [\n", None),
    ('problems = ["off\x00sets"]\n', None),
    (config_text(frobnicate=1), "frobnicate"),
    (config_text(seeds=f"[{2**31}]"), "seeds"),
    (config_text(workers=2**40), "workers"),
    (config_text(time_limits="[inf]"), "time_limits"),
    (config_text(time_limits="[nan]"), "time_limits"),
    ('problems = ["offsets"]\ninstances = ["data/examples/paper_example.json"]\n[[methods]]\n'
     'name = "cpsat"\nparams = { warm_start = "yes" }\n', "methods[0].params.warm_start"),
    ('problems = ["offsets"]\ninstances = ["data/examples/paper_example.json"]\n[[methods]]\n'
     'name = "xla_best_fit"\ngrid = { order = ["best", 3] }\n', "methods[0].grid.order"),
    ('problems = ["offsets"]\ninstances = ["data/examples/paper_example.json"]\n[[methods]]\n'
     'name = "mxnet"\nparams = { match_range = 2.5 }\n', "methods[0].params.match_range"),
    ('problems = ["offsets"]\nmethods = ["greedy_by_size"]\n[[instances]]\n'
     f'generator = "random_dag"\ntensors = 10\nalignment = {2**62}\n', "instances[0].alignment"),
    (f'problems = ["preload"]\ninstances = ["{PRELOAD}"]\nmethods = ["flexnn"]\n'
     f'[preload]\nbudgets = [{2**70}]\n', "preload.budgets"),
]


@pytest.mark.parametrize("content, field", BAD_CONFIGS)
def test_bad_config(capsys, tmp_path, content, field):
    config = write(tmp_path, "c.toml", content)
    code, out, err = cli(capsys, ["run", config, "--out", tmp_path / "run", "--no-progress"])
    assert_one_line_error(code, out, err, config, *([field] if field else []))
    assert not (tmp_path / "run").exists()  # refused before the run directory is made


def test_an_instance_of_a_config_is_named_when_it_is_bad(capsys, tmp_path):
    bad = write(tmp_path, "bad.json", record_file(id=None))
    config = write(tmp_path, "c.toml", f'problems = ["offsets"]\ninstances = ["{bad}"]\n'
                                       'methods = ["greedy_by_size"]\n')
    assert_one_line_error(*cli(capsys, ["run", config, "--out", tmp_path / "run"]), bad,
                          "records[0].id")


def preload_file(**changes) -> str:
    data = json.loads(PRELOAD.read_text())
    if "compute_us" in changes:
        compute = changes.pop("compute_us")
        data["layers"] = [dict(layer, compute_us=compute) for layer in data["layers"]]
    if "tensor" in changes:
        data["tensors"] = [dict(data["tensors"][0], **changes.pop("tensor"))] + \
            data["tensors"][1:]
    return json.dumps(dict(data, **changes))


BAD_PRELOAD = [
    (b'{"layers": "\xe9"}', None),
    ("[" * 100_000, None),
    ("{", None),
    (preload_file(provenance="x"), "provenance"),
    (preload_file(tensor={"size": -1}), "tensors[0].size"),
    (preload_file(tensor={"size": 2**62}), "tensors.size"),
    (preload_file(compute_us=2**61), "compute_us"),
    (preload_file(layers=[], tensors=[]), "layers"),
    (preload_file(budget="1"), "budget"),
    (preload_file(window=-1), "window"),
]


@pytest.mark.parametrize("content, field", BAD_PRELOAD)
def test_bad_preload_instance(capsys, tmp_path, content, field):
    path = write(tmp_path, "p.json", content)
    code, out, err = cli(capsys, ["solve", path, "--problem", "preload", "--method", "flexnn",
                                  "--json"])
    assert_one_line_error(code, out, err, path, *([field] if field else []))


def test_corrupt_run_directories(capsys, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_bytes(b'\xff\xfe garbage\n{"job_id": 5}\n[1, 2]\n')
    (run / "manifest.json").write_bytes(b"\xff not json")
    (run / "config.toml").write_bytes(b"\xff\xfe")
    code, out, err = cli(capsys, ["runs", run])
    assert code == 0 and "3 incomplete line(s) ignored" in out
    assert_one_line_error(*cli(capsys, ["runs", run, "--manifest"]), run / "manifest.json")
    code, out, err = cli(capsys, ["report", run, "--out", tmp_path / "report"])
    assert code == 0 and "nothing to report" in out and err == ""
    code, out, err = cli(capsys, ["merge", tmp_path / "merged", run])
    assert code == 0 and "Traceback" not in err


# --- fuzzing: random bytes and one-value mutations of valid files ----------------------------

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
    | st.sampled_from(["１２", "٣", "1_0", " 7 ", "0x10", "", "a"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6)


def _paths(value, prefix=()):
    """Every path to a value inside nested dicts and lists."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _replaced(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


def assert_clean_outcome(code, out, err, path, *, json_flag=True):
    """Either a result (exit 0, one strict JSON object) or a one-line error naming ``path``."""
    if code == 0:
        if json_flag:
            assert_one_json_object(out)
        assert "Traceback" not in err
    else:
        assert_one_line_error(code, out, err, path)


@FUZZ
@given(data=st.data())
def test_fuzz_json_instance_with_one_value_replaced(capsys, tmp_path, data):
    base = {"name": "fuzz", "alignment": 4, "records": [dict(r) for r in RECORDS],
            "inplace": [], "provenance": {"source": "test"}}
    path_to = data.draw(st.sampled_from(list(_paths(base))))
    mutated = _replaced(base, path_to, data.draw(JSON_VALUES))
    path = write(tmp_path, "fuzz.json", json.dumps(mutated, allow_nan=True))
    assert_clean_outcome(*cli(capsys, ["solve", path, *SOLVE, "--json"]), path)


@FUZZ
@given(row=st.integers(0, 2), column=st.integers(0, 3),
       text=st.text(max_size=12) | st.sampled_from(["１２", "-1", str(2**63), "", "1e3", " 5"]))
def test_fuzz_csv_instance_with_one_cell_replaced(capsys, tmp_path, row, column, text):
    lines = [line.split(",") for line in GOOD_CSV.splitlines()]
    lines[row][column] = text
    path = write(tmp_path, "fuzz.csv", "\n".join(",".join(cells) for cells in lines) + "\n")
    assert_clean_outcome(*cli(capsys, ["solve", path, *SOLVE, "--json"]), path)


@FUZZ
@given(content=st.binary(max_size=200), suffix=st.sampled_from([".json", ".csv"]))
def test_fuzz_instance_of_random_bytes(capsys, tmp_path, content, suffix):
    path = write(tmp_path, "bytes" + suffix, content)
    assert_clean_outcome(*cli(capsys, ["solve", path, *SOLVE, "--json"]), path)


@FUZZ
@given(row=st.integers(1, 2), column=st.integers(0, 1),
       text=st.text(max_size=12) | st.sampled_from(["２", "-4", str(2**62 + 1), "", "8.0"]),
       problem=st.sampled_from(["offsets", "shared-objects"]))
def test_fuzz_solution_file_with_one_cell_replaced(capsys, tmp_path, good, row, column, text,
                                                   problem):
    column_name = "offset" if problem == "offsets" else "object"
    lines = [["id", column_name], ["a", "0"], ["b", "8" if problem == "offsets" else "1"]]
    lines[row][column] = text
    solution = write(tmp_path, "s.csv", "\n".join(",".join(cells) for cells in lines) + "\n")
    code, out, err = cli(capsys, ["validate", good, solution, "--problem", problem, "--json"])
    if code in (0, 1):
        assert err == "" and assert_one_json_object(out)["valid"] is (code == 0)
    else:
        assert_one_line_error(code, out, err, solution)


TOML_VALUES = (st.integers(-2**63, 2**63 - 1) | st.booleans() | st.text(max_size=8)
               | st.floats(allow_nan=True, allow_infinity=True)
               | st.lists(st.integers(-5, 5) | st.text(max_size=4), max_size=3))


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(str(value), repr(value))
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value) if isinstance(value, str) else str(value)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(["seeds", "workers", "repetitions", "time_limits", "inplace",
                            "problems", "name", "description"]),
       value=TOML_VALUES)
def test_fuzz_config_with_one_value_replaced(capsys, tmp_path, key, value):
    text = config_text(**{key: _toml_value(value)}).replace(
        'methods = ["greedy_by_size"]', 'methods = ["naive"]')
    if key == "problems":  # replace the existing key rather than repeat it
        text = "\n".join(line for line in text.splitlines()
                         if not line.startswith(f"{key} =")
                         or line == f"{key} = {_toml_value(value)}") + "\n"
    config = write(tmp_path, "c.toml", text)
    out_dir = tmp_path / f"run-{abs(hash((key, repr(value))))}"
    code, out, err = cli(capsys, ["run", config, "--out", out_dir, "--no-progress"])
    assert "Traceback" not in err
    if code == 2:
        assert_one_line_error(code, out, err, config)
    else:
        assert code == 0 and (out_dir / "results.jsonl").is_file()


# --- through a real subprocess ---------------------------------------------------------------

def run_process(args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          check=False, cwd=cwd)


def test_process_non_utf8_instance_with_json(tmp_path):
    path = write(tmp_path, "latin1.json", b'{"records": [{"id": "\xe9"}]}')
    done = run_process(["-m", "optplan", "solve", str(path), *SOLVE, "--json"])
    assert_one_line_error(done.returncode, done.stdout, done.stderr, path)


def test_process_binary_config(tmp_path):
    config = write(tmp_path, "c.toml", bytes(range(256)))
    done = run_process(["-m", "optplan", "run", str(config), "--out", str(tmp_path / "run")])
    assert_one_line_error(done.returncode, done.stdout, done.stderr, config)


def test_process_validate_refuses_offsets_beyond_range(tmp_path, good):
    solution = write(tmp_path, "s.csv", f"id,offset\na,{2**70}\nb,8\n")
    done = run_process(["-m", "optplan", "validate", str(good), str(solution), "--problem",
                        "offsets", "--json"])
    assert_one_line_error(done.returncode, done.stdout, done.stderr, solution, "offset")


NOISY_METHOD = '''
import ctypes, os, sys
from optplan.cli import main
from optplan.model import OffsetsSolution
from optplan.registry import register

@register("test_noisy", "offsets")
def noisy(instance):
    os.write(1, b"written to fd 1 by native code\\n")
    ctypes.CDLL(None).printf(b"buffered C printf, never flushed\\n")
    print("a Python print inside a method")
    tops = [sum(r.size for r in instance.records[:i]) for i in range(len(instance))]
    return OffsetsSolution.from_offsets(instance, tops)

@register("test_overlapping", "offsets")
def overlapping(instance):
    return OffsetsSolution.from_offsets(instance, [0] * len(instance))

sys.exit(main(sys.argv[1:]))
'''


def test_process_json_stdout_holds_only_the_result_when_a_library_prints(tmp_path, good):
    script = write(tmp_path, "noisy.py", NOISY_METHOD)
    done = run_process([str(script), "solve", str(good), "--problem", "offsets", "--method",
                        "test_noisy", "--json"])
    assert done.returncode == 0, done.stderr
    assert assert_one_json_object(done.stdout)["valid"] is True
    assert "written to fd 1 by native code" in done.stderr
    assert "buffered C printf, never flushed" in done.stderr


def test_process_an_invalid_solution_is_never_a_success(tmp_path, good):
    script = write(tmp_path, "methods.py", NOISY_METHOD)
    done = run_process([str(script), "solve", str(good), "--problem", "offsets", "--method",
                        "test_overlapping", "--json"])
    assert done.returncode == 1
    assert assert_one_json_object(done.stdout)["valid"] is False
    assert done.stderr.strip().splitlines()[-1].startswith(
        "optplan: error: test_overlapping returned a solution the validator rejects: overlap")


def test_process_run_from_a_folder_holding_an_optplan_directory(tmp_path):
    """A checkout's parent holds ``optplan/`` (the checkout): jobs must still import the
    installed package, not that directory."""
    script = Path(sys.executable).with_name("optplan")
    if not script.is_file():
        pytest.skip(f"no optplan console script beside {sys.executable}")
    (tmp_path / "optplan" / "optplan").mkdir(parents=True)
    config = write(tmp_path, "c.toml", config_text())
    done = subprocess.run([str(script), "run", "c.toml", "--out", "run", "--no-progress"],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert [row["status"] for row in rows] == ["FEASIBLE"], rows
    assert config.is_file()
