# %% [markdown]
# # Where heuristics fail, and why
#
# Every committed heuristic plan above the proven optimum on the distinct real networks
# (plain problems, first repetition; `paper/prune.py` keeps exactly these solution files) is
# reloaded, re-validated and given a failure mode (`optplan.analysis.failures`):
#
# * offsets — *stacked objects* (a shared-objects plan stacked into one arena),
#   *fragmented peak* (the tensor that sets the arena is live at an operator of maximum
#   breadth), *off-peak fragmentation* (it is live only below the maximum breadth);
# * shared objects — *extra objects* (more objects than the largest profile has tensors),
#   *oversized objects* (some object larger than its positional maximum).
#
# Independently of the classifier, each offsets failure is checked to be fragmentation: the
# bytes live under the arena-setting tensor fit in the optimum, so the extra memory is unused
# address space. The counts must equal the paper's (`paper/build.py`).

# %%
import sys
from collections import Counter, defaultdict
from pathlib import Path

from _common import PAPER, proven_optima, raw_rows, run_dirs

from optplan.analysis.failures import classify_offsets, classify_shared_objects
from optplan.analysis.load import instance_for_key, load_results
from optplan.analysis.tables import duplicate_instances
from optplan.formats import read_solution_csv
from optplan.validate import validate

sys.path.insert(0, str(PAPER))
import build  # noqa: E402  (the paper's own failure table, to compare with)

rows = raw_rows()
optima = proven_optima(rows)
results = load_results(run_dirs())
networks = results[results["suite"] == "networks"]
duplicates = duplicate_instances(networks)
dropped = {name for rest in duplicates.values() for name in rest}
shared_objects_total = {(r["instance"], r["method"]): r["objective"] for r in rows
                        if r["problem"] == "shared_objects" and r["kind"] == "heuristic"
                        and not r.get("inplace") and r["valid"]}

# %%
modes = Counter()
by_method = defaultdict(Counter)
instances = {}
for row in rows:
    key = (row["instance"], row["problem"])
    path = Path(row["run_dir"]) / (row.get("solution_file") or "")
    if (row["kind"] != "heuristic" or not row["valid"] or row.get("inplace")
            or row.get("repetition") or row["instance"] in dropped
            or key not in optima or row["objective"] <= optima[key] or not path.is_file()
            or "/data/networks/" not in "/" + row["instance_key"]):
        continue
    if row["instance"] not in instances:
        instances[row["instance"]] = instance_for_key(row["instance_key"]).without_inplace()
    instance = instances[row["instance"]]
    solution = read_solution_csv(instance, row["problem"], path)
    assert validate(instance, row["problem"], solution) == [], (row["instance"], row["method"])
    if row["problem"] == "offsets":
        assert solution.arena_size == row["objective"]
        mode = classify_offsets(instance, solution,
                                shared_objects_total.get((row["instance"], row["method"])))
        if mode != "stacked objects":
            top = max(range(len(instance)), key=lambda i: solution.offsets[i]
                      + instance.records[i].size)
            record = instance.records[top]
            live = max(sum(r.size for r in instance.records if r.first_op <= op <= r.last_op)
                       for op in range(record.first_op, record.last_op + 1))
            assert live <= optima[key] < solution.arena_size, (row["instance"], row["method"])
    else:
        assert solution.total_size == row["objective"]
        mode = classify_shared_objects(instance, solution)
    modes[(row["problem"], mode)] += 1
    by_method[(row["problem"], row["method"])][mode] += 1

# %%
for problem in ("offsets", "shared_objects"):
    total = sum(n for (p, _), n in modes.items() if p == problem)
    print(f"\n{problem}: {total} failing plans")
    for (p, mode), count in sorted(modes.items()):
        if p == problem:
            print(f"  {mode:24} {count:5d} ({100 * count / total:.0f} %)")
    print(f"  {'method':36} modes")
    for (p, method), counter in sorted(by_method.items()):
        if p == problem:
            print(f"  {method:36} " + ", ".join(f"{m}: {n}" for m, n in sorted(counter.items())))

# %% [markdown]
# ## The paper counts the same

# %%
table = build.failure_table(build.drop_duplicates(networks, duplicates), run_dirs())
assert Counter(zip(table["problem"], table["mode"])) == modes, "the paper's counts differ"
print(f"{len(table)} failing plans, the same modes as the paper's table")
