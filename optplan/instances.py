"""The catalogue of committed real-network instances (``data/networks/*.json``).

>>> from optplan import instances
>>> names = instances.names()                                  # doctest: +SKIP
>>> instance = instances.load("mobilenet_v2_fused_tflite_224")  # doctest: +SKIP
>>> instances.summary(instance)["ops"]                          # doctest: +SKIP
65

:func:`features` explains why gaps differ between instances: how many tensors are live at once
(peak and mean), how densely lifetimes overlap, and how much of the peak one tensor takes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from optplan.bounds import lower_bound
from optplan.errors import InputError
from optplan.formats.instance_json import instance_to_dict, read_json_instance
from optplan.model import Instance
from optplan.problems import Problem
from optplan.profiles import compressed_times

__all__ = ["data_dir", "names", "load", "features", "summary", "content_hash",
           "write_instance", "live_counts"]


def data_dir() -> Path:
    """``$OPTPLAN_DATA/networks`` if set, else the repository's ``data/networks``."""
    root = os.environ.get("OPTPLAN_DATA")
    base = Path(root) if root else Path(__file__).resolve().parents[1] / "data"
    return base / "networks"


def names() -> list[str]:
    """Names of the committed instances, sorted."""
    directory = data_dir()
    return sorted(path.stem for path in directory.glob("*.json")) if directory.is_dir() else []


def load(name: str) -> Instance:
    """The committed instance ``name``; an unknown name lists the valid ones."""
    path = data_dir() / f"{name}.json"
    if not path.is_file():
        raise InputError(f"unknown instance {name!r}; valid: {', '.join(names()) or '(none)'}",
                         field="name")
    return read_json_instance(path)


def live_counts(instance: Instance) -> np.ndarray:
    """Number of records live at every kept op (:func:`optplan.profiles.compressed_times`;
    every op of a network graph is kept). Difference array, O(n log n)."""
    first, last, kept = compressed_times(instance)
    delta = np.zeros(kept + 1, dtype=np.int64)
    np.add.at(delta, first, 1)
    np.add.at(delta, last + 1, -1)
    return np.cumsum(delta)[:-1]


def _conflicting_pairs(instance: Instance) -> int:
    """Pairs of records whose intervals intersect: all pairs minus the disjoint ones, where a
    disjoint pair is counted once, at its earlier record. O(n log n)."""
    count = len(instance)
    starts = np.sort(instance.first_ops)
    later = count - np.searchsorted(starts, instance.last_ops, side="right")
    return count * (count - 1) // 2 - int(later.sum())


def features(instance: Instance) -> dict:
    """Instance features that explain heuristic gaps.

    ``peak_live_count``/``mean_live_count``: records live per op (max, mean over ops);
    ``overlap_density``: conflicting pairs / all pairs (1.0: every pair conflicts);
    ``largest_tensor_share``: the largest record's size / the max breadth.
    """
    if len(instance) == 0:
        return {"peak_live_count": 0, "mean_live_count": 0.0, "overlap_density": 0.0,
                "largest_tensor_share": 0.0}
    counts = live_counts(instance)
    pairs = len(instance) * (len(instance) - 1) // 2
    breadth = lower_bound(instance.without_inplace().with_alignment(1), Problem.OFFSETS)
    return {"peak_live_count": int(counts.max()),
            "mean_live_count": round(float(counts.mean()), 3),
            "overlap_density": round(_conflicting_pairs(instance) / pairs, 4) if pairs else 0.0,
            "largest_tensor_share": round(int(instance.sizes.max()) / breadth, 4)}


def _source_text(provenance: dict) -> str:
    source = provenance.get("source")
    if isinstance(source, dict):
        return source.get("path") or source.get("builder") or source.get("file") or ""
    return str(source or provenance.get("generator", ""))


def summary(instance: Instance | str) -> dict:
    """One catalogue row: name, ops, tensors, naive bytes, both lower bounds, source, features.

    ``naive_bytes`` is the sum of all record sizes (every non-constant tensor, graph inputs and
    outputs included). ``ops`` counts the graph's ops when the instance carries its graph.
    """
    if isinstance(instance, str):
        instance = load(instance)
    graph = instance.provenance.get("graph")
    ops = len(graph["ops"]) if isinstance(graph, dict) else instance.num_ops
    plain = instance.without_inplace()
    row = {"name": instance.name, "ops": ops, "tensors": len(instance),
           "naive_bytes": int(instance.sizes.sum()),
           # The plain problems' bounds (what `optplan solve` reports without --inplace) ...
           "offsets_lower_bound": lower_bound(plain, Problem.OFFSETS),
           "shared_objects_lower_bound": lower_bound(plain, Problem.SHARED_OBJECTS),
           # ... and the in-place variants' (over the trimmed profiles; equal without pairs).
           "offsets_lower_bound_inplace": lower_bound(instance, Problem.OFFSETS),
           "shared_objects_lower_bound_inplace": lower_bound(instance, Problem.SHARED_OBJECTS),
           "source": _source_text(instance.provenance)}
    row.update(features(instance))
    return row


def content_hash(instance: Instance) -> str:
    """SHA-256 of the instance's canonical JSON (records, pairs, alignment, graph) — stable
    across writers, blind to provenance."""
    data = instance_to_dict(instance)
    canonical = {key: data[key] for key in ("records", "inplace", "alignment", "graph")
                 if key in data}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def write_instance(instance: Instance, path: str | Path) -> None:
    """Write optplan instance JSON compactly: one line per record, tensor and op, so committed
    files stay small and diff well. Readable by :func:`optplan.formats.load_instance`."""
    data = instance_to_dict(instance)
    graph = data.pop("graph", None)

    def block(items, indent="  "):
        return "[\n" + ",\n".join(indent + json.dumps(item, separators=(",", ":"))
                                  for item in items) + "\n" + indent[:-2] + "]"

    lines = ["{"]
    body = []
    for key, value in data.items():
        text = block(value, "    ") if key == "records" else json.dumps(value)
        body.append(f'  "{key}": {text}')
    if graph is not None:
        parts = []
        for key, value in graph.items():
            text = block(value, "      ") if key in ("tensors", "ops") else json.dumps(value)
            parts.append(f'    "{key}": {text}')
        body.append('  "graph": {\n' + ",\n".join(parts) + "\n  }")
    lines.append(",\n".join(body))
    lines.append("}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
