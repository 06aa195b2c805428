# %% [markdown]
# # Where heuristics fail, and why
#
# Every heuristic plan above the proven optimum on the real networks (plain problems, first
# repetition) has a failure mode, written to its run directory's `failures.csv` by
# `paper/prune.py` while the solution files were there (`optplan.analysis.failures`):
#
# * offsets — *stacked objects* (a shared-objects plan stacked into one arena),
#   *fragmented peak* (the tensor that sets the arena is live at an operator of maximum
#   breadth), *off-peak fragmentation* (it is live only below the maximum breadth);
# * shared objects — *extra objects* (more objects than the largest profile has tensors),
#   *oversized objects* (some object larger than its positional maximum).
#
# This notebook sweeps every such (heuristic, instance) pair of the committed rows: it checks
# that `failures.csv` covers exactly them, re-runs each heuristic that took under a second
# (all are deterministic or seeded) through the validator, checks that it reproduces the
# committed objective and mode, and that every offsets failure is fragmentation: the bytes
# live under the arena-setting tensor fit in the optimum.

# %%
import time
from collections import Counter

from _common import proven_optima, raw_rows, run_dirs

from optplan import solve
from optplan.analysis.failures import classify_offsets, classify_shared_objects, read_failures
from optplan.analysis.load import instance_for_key

RERUN_BELOW_S = 1.0
rows = raw_rows()
optima = proven_optima(rows)
failures = read_failures(run_dirs())
assert len(failures), "no failures.csv in the committed runs"
recorded = {(f.instance, f.problem, f.method): f.mode for f in failures.itertuples()}

# %% [markdown]
# ## The failing pairs of the rows are exactly the classified ones

# %%
failing = {}
for row in rows:
    key = (row["instance"], row["problem"])
    if (row["kind"] == "heuristic" and row["valid"] and not row.get("inplace")
            and not row.get("repetition") and key in optima and row["objective"] > optima[key]
            and "/data/networks/" in "/" + row["instance_key"]):
        failing[(row["instance"], row["problem"], row["method"])] = row
assert set(failing) == set(recorded), set(failing) ^ set(recorded)
print(f"{len(failing)} failing (heuristic, network, problem) triples, all classified")

# %% [markdown]
# ## Re-run the quick ones: same objective, same mode, fragmentation

# %%
totals = {(r["instance"], r["method"]): r["objective"] for r in rows
          if r["problem"] == "shared-objects" and r["kind"] == "heuristic"
          and not r.get("inplace") and r["valid"]}
instances, rerun, started = {}, 0, time.perf_counter()
for (name, problem, method), row in sorted(failing.items()):
    if row["wall_time_s"] >= RERUN_BELOW_S:
        continue
    if name not in instances:
        instances[name] = instance_for_key(row["instance_key"])
    instance = instances[name]
    flags = {"seed": row["seed"]} if row.get("seed") is not None else {}
    result = solve(instance, method, problem, **(row.get("params") or {}), **flags)
    assert result.valid and result.objective == row["objective"], (name, problem, method)
    plain = instance.without_inplace()
    if problem == "offsets":
        mode = classify_offsets(plain, result.solution, totals.get((name, method)))
        if mode != "stacked objects":
            top = max(range(len(plain)), key=lambda i: result.solution.offsets[i]
                      + plain.records[i].size)
            record = plain.records[top]
            live = max(sum(r.size for r in plain.records if r.first_op <= op <= r.last_op)
                       for op in range(record.first_op, record.last_op + 1))
            assert live <= optima[(name, problem)] < result.objective, (name, method)
    else:
        mode = classify_shared_objects(plain, result.solution)
    assert mode == recorded[(name, problem, method)], (name, problem, method, mode)
    rerun += 1
print(f"re-ran {rerun} of {len(failing)} in {time.perf_counter() - started:.0f} s: "
      "same objectives and modes")

# %% [markdown]
# ## Failure modes per problem and method

# %%
for problem in ("offsets", "shared-objects"):
    part = failures[failures["problem"] == problem]
    print(f"\n{problem}: {len(part)} failing plans")
    for mode, count in Counter(part["mode"]).most_common():
        print(f"  {mode:24} {count:5d} ({100 * count / len(part):.0f} %)")
    table = part.groupby(["method", "mode"]).size().unstack(fill_value=0)
    print(table.to_string())
