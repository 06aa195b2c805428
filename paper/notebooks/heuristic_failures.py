# %% [markdown]
# # Where a heuristic fails, and why
#
# For offsets, take the instance where greedy by size (Pisarchyk & Lee 2020 §5.2) is furthest
# from the proven optimum. Reload both committed solutions, re-validate them, and find the
# tensor whose top edge sets the heuristic's arena: at the operators where it is live, the
# live tensors need far less than the arena — the rest is fragmentation that the optimum avoids.

# %%
from pathlib import Path

from _common import proven_optima, raw_rows

from optplan.analysis.load import instance_for_key
from optplan.bounds import max_breadth
from optplan.formats import read_solution_csv
from optplan.validate import validate

METHOD = "greedy_by_size"
rows = raw_rows()
optima = proven_optima(rows)

# %%
candidates = []
for row in rows:
    key = (row["instance"], "offsets")
    if (row["method"] == METHOD and row["problem"] == "offsets" and row["valid"]
            and not row.get("inplace")
            and key in optima and row.get("solution_file")
            and (Path(row["run_dir"]) / row["solution_file"]).is_file()):
        candidates.append(((row["objective"] - optima[key]) / optima[key], row))
assert candidates, "no committed greedy-by-size offsets solution with a proven optimum"
gap, heuristic_row = max(candidates, key=lambda c: c[0])
name = heuristic_row["instance"]
print(f"worst instance for {METHOD}: {name}, gap {100 * gap:.1f} %")

# %%
instance = instance_for_key(heuristic_row["instance_key"]).without_inplace()  # as solve() ran it
heuristic = read_solution_csv(instance, "offsets",
                              Path(heuristic_row["run_dir"]) / heuristic_row["solution_file"])
assert validate(instance, "offsets", heuristic) == []
assert heuristic.arena_size == heuristic_row["objective"]

optimal_rows = [r for r in rows if r["instance"] == name and r["problem"] == "offsets"
                and not r.get("inplace")
                and r["status"] == "OPTIMAL" and r.get("solution_file")
                and (Path(r["run_dir"]) / r["solution_file"]).is_file()]
if optimal_rows:
    optimal_row = optimal_rows[0]
    optimum = read_solution_csv(instance, "offsets",
                                Path(optimal_row["run_dir"]) / optimal_row["solution_file"])
    assert validate(instance, "offsets", optimum) == []
    assert optimum.arena_size == optima[(name, "offsets")] <= heuristic.arena_size
    print(f"optimum ({optimal_row['method']}): {optimum.arena_size} B, "
          f"{METHOD}: {heuristic.arena_size} B")

# %% [markdown]
# ## The tensor that sets the arena, and the memory live under it

# %%
records = instance.records
top = max(range(len(records)), key=lambda i: heuristic.offsets[i] + records[i].size)
record = records[top]
assert heuristic.offsets[top] + record.size == heuristic.arena_size


def live_bytes(op: int) -> int:
    return sum(r.size for r in records if r.first_op <= op <= r.last_op)


live_peak = max(live_bytes(op) for op in range(record.first_op, record.last_op + 1))
print(f"top tensor #{top}: {record.size} B live over ops [{record.first_op}, {record.last_op}], "
      f"placed at offset {heuristic.offsets[top]}")
print(f"live bytes at its ops: at most {live_peak}; arena {heuristic.arena_size}; "
      f"fragmentation {heuristic.arena_size - live_peak} B "
      f"({100 * (heuristic.arena_size - live_peak) / heuristic.arena_size:.1f} % of the arena)")
print(f"max breadth of the instance: {max_breadth(instance)}")

# The heuristic's extra memory over the optimum is wasted address space, not live data:
# the live bytes under the top tensor fit in the optimum's arena.
if gap > 0:
    assert live_peak <= optima[(name, "offsets")] < heuristic.arena_size
