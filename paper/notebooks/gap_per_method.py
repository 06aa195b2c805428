# %% [markdown]
# # Gap per method
#
# Each heuristic's gap to the **proven** optimum, per problem (plain: without in-place pairs),
# over every committed instance.
# The gaps are recomputed here from the raw `results.jsonl` rows with plain Python and must
# equal the ones the paper's tables print (`optplan.analysis.tables.strategy_table`).

# %%
import statistics
from collections import defaultdict

from _common import proven_optima, raw_rows, run_dirs

from optplan.analysis import load_results, strategy_table

rows = raw_rows()
optima = proven_optima(rows)
print(f"{len(rows)} rows, {len(optima)} proven optima")

# %% [markdown]
# ## Gaps from the raw rows (median objective over repetitions, as the tables do)

# %%
objectives = defaultdict(list)
for row in rows:
    if (row["kind"] == "heuristic" and row["valid"] and row["objective"] is not None
            and row["problem"] in ("shared-objects", "offsets") and not row.get("inplace")):
        objectives[(row["instance"], row["problem"], row["method"])].append(row["objective"])

gaps = {}
for (instance, problem, method), values in objectives.items():
    optimum = optima.get((instance, problem))
    if optimum:
        gaps[(instance, problem, method)] = (int(statistics.median(values)) - optimum) / optimum

# No heuristic beats a proven optimum: that would be a wrong proof or an invalid solution.
assert all(gap >= 0 for gap in gaps.values()), min(gaps.items(), key=lambda kv: kv[1])

# %%
summary = defaultdict(list)
for (instance, problem, method), gap in gaps.items():
    summary[(problem, method)].append(gap)
print(f"{'problem':15} {'method':36} {'n':>3} {'optimal':>7} {'mean %':>8} {'max %':>8}")
for (problem, method), values in sorted(summary.items(),
                                        key=lambda kv: (kv[0][0], statistics.mean(kv[1]))):
    print(f"{problem:15} {method:36} {len(values):3d} {sum(v == 0 for v in values):7d} "
          f"{100 * statistics.mean(values):8.1f} {100 * max(values):8.1f}")

# %% [markdown]
# ## The tables print the same gaps

# %%
results = load_results(run_dirs())
checked = 0
for problem in ("shared-objects", "offsets"):
    table = strategy_table(results, problem).set_index("instance")
    for (instance, row_problem, method), gap in gaps.items():
        if row_problem != problem:
            continue
        assert table.loc[instance, "proven"], (instance, problem)
        assert abs(table.loc[instance, f"gap:{method}"] - gap) < 1e-12, (instance, method)
        checked += 1
assert checked == len(gaps) and checked > 0
print(f"{checked} gaps equal the tables'")
