# %% [markdown]
# # Why FlexNN's latency is not monotone in the budget
#
# In the committed preload sweep, FlexNN's latency sometimes *rises* when the memory budget
# grows, although the proven optimum can only fall. Take the largest such rise and run
# FlexNN's planner (Li et al., MobiCom'24; `optplan.preload.flexnn`) at both budgets, with and
# without its pinning step: the plan before pinning is the same, and the larger budget ends
# with *more* pinned weights and a *longer* latency. Pins are kept whenever the latency does
# not grow; with more memory, pins that do not shorten the latency fit and are kept, and
# their memory is gone when a useful pin comes up.

# %%
from _common import raw_rows

from optplan.analysis.load import instance_for_key
from optplan.preload.flexnn import flexnn
from optplan.validate import validate

rows = [r for r in raw_rows() if r["problem"] == "preload" and r["budget"] is not None]
assert rows, "no committed preload sweep"
latency = {}
for row in rows:
    if row["method"] == "flexnn" and row["valid"]:
        latency[(row["instance"], int(row["budget"]))] = (int(row["objective"]),
                                                          row["instance_key"])

# %%
rises = []
for instance in sorted({name for name, _ in latency}):
    budgets = sorted(b for name, b in latency if name == instance)
    for low, high in zip(budgets, budgets[1:]):
        before, after = latency[(instance, low)][0], latency[(instance, high)][0]
        if after > before:
            rises.append((after - before, instance, low, high))
print(f"{len(rises)} rise(s) of FlexNN's latency with a larger budget")
assert rises, "FlexNN is monotone on this sweep: nothing to explain"
_, name, low, high = max(rises)

# %%
base = instance_for_key(latency[(name, low)][1])
summary = {}
for budget in (low, high):
    instance = base.with_budget(budget)
    pinned_plan, unpinned_plan = flexnn(instance), flexnn(instance, pinning=False)
    for plan in (pinned_plan, unpinned_plan):
        assert validate(instance, "preload", plan) == []
    assert pinned_plan.latency_us == latency[(name, budget)][0]  # the committed row
    pins = [e for e in pinned_plan.entries if e.pinned]
    pinned_bytes = sum(instance.tensors[i].size for i, e in enumerate(pinned_plan.entries)
                       if e.pinned)
    summary[budget] = (unpinned_plan.latency_us, pinned_plan.latency_us, len(pins), pinned_bytes)
    print(f"{name} at {budget / 2**20:.2f} MiB: before pinning {unpinned_plan.latency_us} us, "
          f"after {pinned_plan.latency_us} us with {len(pins)} pinned weights "
          f"({pinned_bytes / 2**20:.2f} MiB)")

# The larger budget pins more and ends slower, from the same latency before pinning.
assert summary[high][1] > summary[low][1]
assert summary[high][2] >= summary[low][2]
