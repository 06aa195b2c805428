"""``optplan instances``: the committed real-network instances and their figures."""

from __future__ import annotations

import json

from optplan import instances

COLUMNS = (("name", "name"), ("ops", "ops"), ("tensors", "tensors"),
           ("naive_bytes", "naive"), ("offsets_lower_bound", "oc_lb"),
           ("shared_objects_lower_bound", "so_lb"), ("peak_live_count", "peak_live"),
           ("mean_live_count", "mean_live"), ("overlap_density", "overlap"),
           ("largest_tensor_share", "top_share"))


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "instances", help="list the committed real-network instances (data/networks)")
    parser.add_argument("--json", action="store_true",
                        help="a JSON list of {name, ops, tensors, naive_bytes, "
                             "offsets_lower_bound, shared_objects_lower_bound, source, "
                             "peak_live_count, mean_live_count, overlap_density, "
                             "largest_tensor_share}")
    parser.set_defaults(run=run)


def run(args) -> int:
    rows = [instances.summary(name) for name in instances.names()]
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print(f"no instances in {instances.data_dir()}")
        return 0
    table = [[str(row[key]) for key, _ in COLUMNS] for row in rows]
    headers = [title for _, title in COLUMNS]
    widths = [max(len(headers[i]), *(len(line[i]) for line in table)) for i in range(len(COLUMNS))]
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                    for i, (h, w) in enumerate(zip(headers, widths))))
    for line in table:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                        for i, (cell, w) in enumerate(zip(line, widths))))
    return 0
