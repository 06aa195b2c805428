# %% [markdown]
# # Lower-bound tightness
#
# How close is the combinatorial lower bound of Pisarchyk & Lee 2020 (sum of positional
# maximums for shared objects, maximum breadth for offsets) to the proven optimum? The bound
# recorded in the results is recomputed from the instance file (without its in-place pairs
# when the job ran without them, as `optplan.solve.solve` does), and every proven optimum must
# lie at or above it.

# %%
from _common import proven_optima, raw_rows

from optplan.analysis.load import instance_for_key
from optplan.bounds import lower_bound

rows = raw_rows()
optima = proven_optima(rows)

# %%
recorded = {}
keys = {}
for row in rows:
    if row["problem"] in ("shared_objects", "offsets") and row.get("lower_bound") is not None:
        recorded.setdefault((row["instance"], row["problem"]), set()).add(int(row["lower_bound"]))
        keys[row["instance"]] = row["instance_key"]
        assert not row["inplace"], "this notebook covers the plain problems"
assert all(len(v) == 1 for v in recorded.values()), "one instance, several recorded bounds"
recorded = {key: values.pop() for key, values in recorded.items()}

# %%
for (instance, problem), bound in sorted(recorded.items()):
    recomputed = lower_bound(instance_for_key(keys[instance]).without_inplace(), problem)
    assert recomputed == bound, (instance, problem, recomputed, bound)
print(f"{len(recorded)} recorded lower bounds equal optplan.bounds.lower_bound")

# %%
print(f"{'instance':36} {'problem':15} {'bound':>12} {'optimum':>12} {'slack %':>8}")
slack = {}
for (instance, problem), optimum in sorted(optima.items()):
    bound = recorded[(instance, problem)]
    assert bound <= optimum, (instance, problem, bound, optimum)
    slack[(instance, problem)] = (optimum - bound) / bound
    print(f"{instance:36} {problem:15} {bound:12d} {optimum:12d} "
          f"{100 * slack[(instance, problem)]:8.2f}")

for problem in ("shared_objects", "offsets"):
    values = [s for (_, p), s in slack.items() if p == problem]
    if values:
        print(f"{problem}: bound = optimum on {sum(v == 0 for v in values)} of {len(values)}, "
              f"worst slack {100 * max(values):.1f} %")
