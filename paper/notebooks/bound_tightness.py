# %% [markdown]
# # Lower-bound tightness, plain and in place
#
# How close is the combinatorial lower bound of Pisarchyk & Lee 2020 (sum of positional
# maximums for shared objects, maximum breadth for offsets) to the proven optimum? And with
# in-place pairs (SO-IP, OC-IP: a pair may share memory at its junction op), how close are the
# in-place bounds (the same bounds over the in-place-trimmed profiles, `optplan.bounds`) to
# the in-place optimum? Every recorded bound is recomputed from the instance file — without
# its pairs for a plain job, with them for an in-place job, as `optplan.solve.solve` does —
# and every proven optimum must lie at or above its bound.

# %%
from _common import proven_optima, raw_rows

from optplan.analysis.load import instance_for_key
from optplan.bounds import lower_bound

rows = raw_rows()
VARIANTS = {False: {"shared-objects": "SO", "offsets": "OC"},
            True: {"shared-objects": "SO-IP", "offsets": "OC-IP"}}
instances, missing = {}, set()


def instance_of(key: str):
    """The instance of a row (``None`` when its file is not here: MiniMalloc's CSVs live in
    the shared folder, which a fresh clone does not have)."""
    if key not in instances and key not in missing:
        try:
            instances[key] = instance_for_key(key)
        except (OSError, ValueError):
            missing.add(key)
    return instances.get(key)


# %%
recorded = {False: {}, True: {}}
keys = {}
for row in rows:
    if row["problem"] in VARIANTS[False] and row.get("lower_bound") is not None:
        inplace = bool(row.get("inplace"))
        recorded[inplace].setdefault((row["instance"], row["problem"]), set()).add(
            int(row["lower_bound"]))
        keys[row["instance"]] = row["instance_key"]
for inplace, bounds in recorded.items():
    assert all(len(v) == 1 for v in bounds.values()), "one instance, several recorded bounds"
    recorded[inplace] = {key: values.pop() for key, values in bounds.items()}

# %%
checked = 0
for inplace, bounds in recorded.items():
    for (name, problem), bound in sorted(bounds.items()):
        instance = instance_of(keys[name])
        if instance is None:
            continue
        recomputed = lower_bound(instance if inplace else instance.without_inplace(), problem)
        assert recomputed == bound, (name, problem, inplace, recomputed, bound)
        checked += 1
print(f"{checked} recorded lower bounds equal optplan.bounds.lower_bound "
      f"({len(missing)} instance file(s) not here, skipped)")

# %% [markdown]
# ## Slack of the bound under each proven optimum

# %%
print(f"{'instance':36} {'problem':7} {'bound':>12} {'optimum':>12} {'slack %':>8}")
slack = {}
for inplace, labels in VARIANTS.items():
    for (name, problem), optimum in sorted(proven_optima(rows, inplace=inplace).items()):
        bound = recorded[inplace][(name, problem)]
        assert bound <= optimum, (name, problem, inplace, bound, optimum)
        slack[(name, labels[problem])] = (optimum - bound) / bound
        print(f"{name:36} {labels[problem]:7} {bound:12d} {optimum:12d} "
              f"{100 * slack[(name, labels[problem])]:8.2f}")

summary = {}
for label in ("SO", "OC", "SO-IP", "OC-IP"):
    values = [s for (_, variant), s in slack.items() if variant == label]
    if values:
        summary[label] = (sum(v == 0 for v in values), len(values), max(values))
        print(f"{label}: bound = optimum on {summary[label][0]} of {summary[label][1]}, "
              f"worst slack {100 * summary[label][2]:.1f} %")
    else:
        print(f"{label}: no proven optimum in the committed runs")

# %% [markdown]
# ## In place against plain
#
# In-place pairs only relax the problem: the in-place optimum is at most the plain one, and
# the in-place bound (trimmed profiles) at most the plain bound.

# %%
plain_optima = proven_optima(rows, inplace=False)
pairs = 0
for (name, problem), optimum in proven_optima(rows, inplace=True).items():
    assert recorded[True][(name, problem)] <= recorded[False].get((name, problem), float("inf"))
    if (name, problem) in plain_optima:
        assert optimum <= plain_optima[(name, problem)], (name, problem)
        saved = 1 - optimum / plain_optima[(name, problem)]
        print(f"{name:36} {VARIANTS[True][problem]:7} in place saves {100 * saved:5.1f} %")
        pairs += 1
print(f"{pairs} instance/problem pairs proven both plain and in place")
