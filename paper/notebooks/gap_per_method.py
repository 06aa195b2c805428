# %% [markdown]
# # Gap per method, on the same instances
#
# Each heuristic's gap to the **proven** optimum, per problem (plain: without in-place pairs),
# on the distinct real networks. Methods are compared on the *same* instance set only: the
# networks with a proven optimum on which every compared method ran. The gaps are recomputed
# from the raw `results.jsonl` rows with plain Python and must equal the paper's per-method
# summary (`optplan.analysis.tables.summary_table`); a pairwise table counts on how many
# common networks one method beats another.

# %%
import statistics
from collections import defaultdict

from _common import proven_optima, raw_rows, run_dirs

from optplan.analysis import load_results
from optplan.analysis.tables import drop_duplicates, duplicate_instances, summary_table

rows = raw_rows()
optima = proven_optima(rows)
results = load_results(run_dirs())
networks = results[results["suite"] == "networks"]
duplicates = duplicate_instances(networks)
dropped = {name for rest in duplicates.values() for name in rest}
print(f"{len(rows)} rows, {len(optima)} proven optima; duplicates reported once: {duplicates}")

# %% [markdown]
# ## Gaps from the raw rows (median objective over repetitions, as the tables take)

# %%
objectives = defaultdict(list)
for row in rows:
    if (row["kind"] == "heuristic" and row["valid"] and row["objective"] is not None
            and row["problem"] in ("shared-objects", "offsets") and not row.get("inplace")
            and "/data/networks/" in "/" + row["instance_key"]
            and row["instance"] not in dropped):
        objectives[(row["instance"], row["problem"], row["method"])].append(row["objective"])

gaps = defaultdict(dict)  # (problem, method) -> {instance: gap}
for (instance, problem, method), values in objectives.items():
    optimum = optima.get((instance, problem))
    if optimum:
        gaps[(problem, method)][instance] = (statistics.median(values) - optimum) / optimum

# No heuristic beats a proven optimum: that would be a wrong proof or an invalid solution.
assert all(g >= 0 for by_instance in gaps.values() for g in by_instance.values())

# %% [markdown]
# ## The common instance set, and the summary on it

# %%
for problem in ("shared-objects", "offsets"):
    methods = sorted(m for p, m in gaps if p == problem)
    common = set.intersection(*(set(gaps[(problem, m)]) for m in methods))
    print(f"\n{problem}: {len(methods)} methods, {len(common)} networks where all ran")
    print(f"{'method':36} {'optimal':>7} {'mean %':>8} {'max %':>8}")
    table = summary_table(drop_duplicates(networks, duplicates), problem).set_index("method")
    for method in sorted(methods, key=lambda m: statistics.mean(gaps[(problem, m)][i]
                                                                for i in common)):
        values = [gaps[(problem, method)][i] for i in sorted(common)]
        print(f"{method:36} {sum(v == 0 for v in values):7d} "
              f"{100 * statistics.mean(values):8.2f} {100 * max(values):8.2f}")
        if len(gaps[(problem, method)]) == len(common):  # the summary's set is the same one
            assert table.loc[method, "instances"] == len(common)
            assert abs(table.loc[method, "mean_gap"] - statistics.mean(values)) < 1e-9, method
            assert table.loc[method, "optimal"] == sum(v == 0 for v in values), method

    # Pairwise: on how many common networks is the row method strictly better?
    best = sorted(methods, key=lambda m: statistics.mean(gaps[(problem, m)][i]
                                                         for i in common))[:6]
    print("\nwins (row better than column) on the common networks:")
    print(" " * 24 + "".join(f"{m[:10]:>11}" for m in best))
    for a in best:
        wins = [sum(gaps[(problem, a)][i] < gaps[(problem, b)][i] for i in common) for b in best]
        print(f"{a[:24]:24}" + "".join(f"{w:11d}" for w in wins))
