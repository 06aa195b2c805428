"""Seeded synthetic instances for scaling studies: random DAGs, chains with skips, transformers.

Four kinds, all deterministic for a given ``(num_tensors, seed)`` and vectorised with numpy so
that 100,000 tensors take well under a second:

``random_dag``
    A random DAG in topological order: op ``i`` produces tensor ``i`` and reads the previous
    tensor plus, with some probability, one or two earlier tensors at a geometric distance
    (long skips are rare, as in real networks).
``chain_skip``
    A ResNet-like chain: residual blocks of 2–4 ops whose last op also reads the block input;
    the tensor size halves at every stage boundary (five stages).
``transformer``
    Pre-LayerNorm transformer encoder blocks (embedding, LN, Q/K/V, scores, softmax, context,
    projection, residual add, LN, FF1, GELU, FF2, residual add), shapes drawn from BERT/GPT-like
    choices. Softmax and GELU are declared in-place on their inputs.
``minimalloc``
    MiniMalloc-style random buffers (Moffitt 2023, the benchmark CSVs): start times uniform on
    the horizon, geometric lifespans, sizes in 1 KiB units drawn log-uniformly, and a few
    buffers that span the whole run.

The three network-like kinds also exist as graphs (:func:`generate_graph`) whose lifetime
analysis gives exactly the generated records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from optplan.errors import InputError
from optplan.model import Instance, UsageRecord

__all__ = ["GENERATORS", "generate", "generate_graph", "random_dag", "chain_skip",
           "transformer", "minimalloc_style", "random_dag_graph"]

_FLOAT32_BYTES = 4


def _check_count(num_tensors: int) -> int:
    if isinstance(num_tensors, bool) or not isinstance(num_tensors, (int, np.integer)):
        raise InputError(f"must be an integer, got {num_tensors!r}", field="num_tensors")
    if num_tensors < 1:
        raise InputError(f"must be >= 1, got {num_tensors}", field="num_tensors")
    return int(num_tensors)


def _instance(name: str, first_ops, last_ops, sizes, *, kind: str, num_tensors: int,
              seed: int, inplace_pairs=(), **extra) -> Instance:
    records = tuple(UsageRecord(f"t{i}", first, last, size) for i, (first, last, size)
                    in enumerate(zip(np.asarray(first_ops).tolist(),
                                     np.asarray(last_ops).tolist(),
                                     np.asarray(sizes).tolist())))
    provenance = {"generator": kind, "num_tensors": num_tensors, "seed": seed,
                  "command": f"optplan.generators.generate({kind!r}, {num_tensors}, "
                             f"seed={seed})", **extra}
    return Instance(records, name=name, inplace_pairs=tuple(inplace_pairs),
                    provenance=provenance)


# --- network-like kinds: op i produces tensor i ---------------------------------------------

@dataclass(frozen=True)
class _Network:
    """A generated network as arrays: op ``i`` produces tensor ``i``; ``sources[e]`` is read by
    op ``consumers[e]``; tensors in ``outputs`` are graph outputs (live to the last op)."""

    name: str
    sizes: np.ndarray
    sources: np.ndarray
    consumers: np.ndarray
    outputs: np.ndarray
    op_types: tuple[str, ...]
    inplace_pairs: tuple[tuple[int, int], ...] = ()
    extra: dict = field(default_factory=dict)


def _records(network: _Network) -> tuple[np.ndarray, np.ndarray]:
    count = len(network.sizes)
    first_ops = np.arange(count)
    last_ops = first_ops.copy()
    np.maximum.at(last_ops, network.sources, network.consumers)
    last_ops[network.outputs] = count - 1
    return first_ops, last_ops


def _network_instance(network: _Network, kind: str, seed: int) -> Instance:
    first_ops, last_ops = _records(network)
    pairs = [(a, b) for a, b in network.inplace_pairs
             if last_ops[a] == first_ops[b] and network.sizes[b] <= network.sizes[a]]
    return _instance(network.name, first_ops, last_ops, network.sizes, kind=kind,
                     num_tensors=len(network.sizes), seed=seed, inplace_pairs=pairs,
                     **network.extra)


def _network_graph(network: _Network, kind: str, seed: int):
    """The :class:`~optplan.graph.model.Graph` of a generated network. Op 0 also reads a graph
    input ``input``, so the graph has one tensor more than the records generator."""
    from optplan.graph.model import Graph, Op, Tensor

    count = len(network.sizes)
    inputs_of: list[dict[str, None]] = [{} for _ in range(count)]
    inputs_of[0]["input"] = None
    order = np.lexsort((network.sources, network.consumers))
    for source, consumer in zip(network.sources[order].tolist(),
                                network.consumers[order].tolist()):
        inputs_of[consumer][f"t{source}"] = None
    tensors = {"input": Tensor("input", (16,), "float32", 16 * _FLOAT32_BYTES)}
    for index, size in enumerate(network.sizes.tolist()):
        tensors[f"t{index}"] = Tensor(f"t{index}", (size // _FLOAT32_BYTES,), "float32", size)
    inplace_of: dict[int, list[tuple[str, str]]] = {}
    for a, b in network.inplace_pairs:
        inplace_of.setdefault(b, []).append((f"t{a}", f"t{b}"))
    ops = [Op(f"op{i}", network.op_types[i], tuple(inputs_of[i]), (f"t{i}",),
              inplace=tuple(inplace_of.get(i, ()))) for i in range(count)]
    outputs = tuple(f"t{i}" for i in sorted(set(network.outputs.tolist())))
    return Graph(network.name, tuple(ops), tensors, inputs=("input",), outputs=outputs,
                 provenance={"generator": kind, "num_tensors": count, "seed": seed,
                             **network.extra})


def _random_dag_network(num_tensors: int, seed: int) -> _Network:
    rng = np.random.default_rng(seed)
    ops = np.arange(1, num_tensors)
    sources = [ops - 1]                # every op reads its predecessor's output
    consumers = [ops]
    for probability in (0.3, 0.1):     # an extra skip input, sometimes a second one
        chosen = ops[rng.random(len(ops)) < probability]
        distance = rng.geometric(1 / 8, size=len(chosen)) + 1
        sources.append(np.maximum(chosen - distance, 0))
        consumers.append(chosen)
    sources = np.concatenate(sources)
    consumers = np.concatenate(consumers)
    # Sizes: float32 tensors of 16..2^16 elements, log-uniform (one activation map each).
    elements = np.round(2.0 ** rng.uniform(4, 16, size=num_tensors)).astype(np.int64)
    reads = np.bincount(consumers, minlength=num_tensors)
    op_types = tuple(np.where(reads > 1, "ADD", "CONV_2D").tolist())
    return _Network(f"random_dag_{num_tensors}_seed{seed}", elements * _FLOAT32_BYTES,
                    sources, consumers, np.array([num_tensors - 1]), op_types)


def _chain_skip_network(num_tensors: int, seed: int) -> _Network:
    rng = np.random.default_rng(seed)
    ops = np.arange(1, num_tensors)
    lengths = rng.integers(2, 5, size=num_tensors // 2 + 1)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    ends = starts[1:]
    keep = ends < num_tensors
    # every op reads its predecessor; a block's last op (the add) also reads the block input
    sources = np.concatenate([ops - 1, starts[:-1][keep]])
    consumers = np.concatenate([ops, ends[keep]])
    stage = np.minimum(np.arange(num_tensors) * 5 // num_tensors, 4)
    base = 64 * 112 * 112 * _FLOAT32_BYTES
    widen = rng.choice(np.array([1, 2, 4]), size=num_tensors, p=[0.6, 0.3, 0.1])
    sizes = np.maximum(base * widen // (4 ** stage) // 4, _FLOAT32_BYTES)
    is_add = np.zeros(num_tensors, dtype=bool)
    is_add[ends[keep]] = True
    op_types = tuple(np.where(is_add, "ADD", "CONV_2D").tolist())
    return _Network(f"chain_skip_{num_tensors}_seed{seed}", sizes, sources, consumers,
                    np.array([num_tensors - 1]), op_types)


# One encoder block, one op (and one output tensor) per row: (op name, op type, the ops whose
# outputs it reads, shape kind). "x" is the block input: the previous block's output.
_BLOCK = (
    ("ln1", "LAYER_NORM", ("x",), "sd"),
    ("q", "FULLY_CONNECTED", ("ln1",), "sd"), ("k", "FULLY_CONNECTED", ("ln1",), "sd"),
    ("v", "FULLY_CONNECTED", ("ln1",), "sd"),
    ("scores", "BATCH_MATMUL", ("q", "k"), "hss"), ("probs", "SOFTMAX", ("scores",), "hss"),
    ("context", "BATCH_MATMUL", ("probs", "v"), "sd"),
    ("projection", "FULLY_CONNECTED", ("context",), "sd"),
    ("add1", "ADD", ("x", "projection"), "sd"), ("ln2", "LAYER_NORM", ("add1",), "sd"),
    ("ff1", "FULLY_CONNECTED", ("ln2",), "s4d"), ("gelu", "GELU", ("ff1",), "s4d"),
    ("ff2", "FULLY_CONNECTED", ("gelu",), "sd"), ("add2", "ADD", ("add1", "ff2"), "sd"),
)
_BLOCK_INPLACE = (("scores", "probs"), ("ff1", "gelu"))


def _transformer_network(num_tensors: int, seed: int) -> _Network:
    rng = np.random.default_rng(seed)
    hidden = int(rng.choice([256, 512, 768, 1024]))
    sequence = int(rng.choice([128, 256, 384, 512]))
    heads = hidden // 64
    elements = {"sd": sequence * hidden, "hss": heads * sequence * sequence,
                "s4d": sequence * 4 * hidden}
    block_size = len(_BLOCK)
    position = {name: offset for offset, (name, _, _, _) in enumerate(_BLOCK)}
    position["x"] = -1
    edges = np.array([(position[source], position[name])
                      for name, _, inputs, _ in _BLOCK for source in inputs])
    blocks = -(-(num_tensors - 1) // block_size)
    offsets = 1 + block_size * np.arange(blocks)   # op index of each block's first op
    sizes = np.concatenate([[elements["sd"]],
                            np.tile([elements[kind] for *_, kind in _BLOCK], blocks)])
    sources = (offsets[:, None] + edges[None, :, 0]).ravel()
    consumers = (offsets[:, None] + edges[None, :, 1]).ravel()
    # Truncation: tensors read by a cut-off op are graph outputs instead.
    cut = consumers >= num_tensors
    outputs = np.unique(np.concatenate([sources[cut & (sources < num_tensors)],
                                        [num_tensors - 1]]))
    sources, consumers = sources[~cut], consumers[~cut]
    op_types = ("GATHER",) + tuple(op_type for _, op_type, _, _ in _BLOCK) * blocks
    pairs = tuple((int(o + position[a]), int(o + position[b])) for o in offsets.tolist()
                  for a, b in _BLOCK_INPLACE if o + position[b] < num_tensors)
    return _Network(f"transformer_{num_tensors}_seed{seed}",
                    sizes[:num_tensors] * _FLOAT32_BYTES, sources, consumers, outputs,
                    op_types[:num_tensors], pairs,
                    {"hidden": hidden, "sequence": sequence, "heads": heads})


_NETWORKS = {"random_dag": _random_dag_network, "chain_skip": _chain_skip_network,
             "transformer": _transformer_network}


def random_dag(num_tensors: int, *, seed: int = 0) -> Instance:
    """Records of a random DAG network; see the module docstring. O(n)."""
    num_tensors = _check_count(num_tensors)
    return _network_instance(_random_dag_network(num_tensors, seed), "random_dag", seed)


def chain_skip(num_tensors: int, *, seed: int = 0) -> Instance:
    """A ResNet-like chain with residual skips; see the module docstring. O(n)."""
    num_tensors = _check_count(num_tensors)
    return _network_instance(_chain_skip_network(num_tensors, seed), "chain_skip", seed)


def transformer(num_tensors: int, *, seed: int = 0) -> Instance:
    """Transformer encoder blocks truncated to ``num_tensors`` tensors; see the module
    docstring. Tensor 0 is the embedding output (op 0); each block adds 14 ops, one tensor
    each; softmax and GELU are in place on their inputs. O(n)."""
    num_tensors = _check_count(num_tensors)
    return _network_instance(_transformer_network(num_tensors, seed), "transformer", seed)


def generate_graph(kind: str, num_tensors: int, *, seed: int = 0):
    """The network behind :func:`generate`'s ``random_dag``, ``chain_skip`` or
    ``transformer`` instance as a :class:`~optplan.graph.model.Graph` (for graph-level
    methods). Op 0 also reads a graph input ``input``; :func:`optplan.graph.lifetimes` of the
    graph gives :func:`generate`'s records (ids ``t0..``) plus that input's record.
    """
    num_tensors = _check_count(num_tensors)
    if kind not in _NETWORKS:
        raise InputError(f"no graph generator {kind!r}; valid: {', '.join(_NETWORKS)}",
                         field="kind")
    return _network_graph(_NETWORKS[kind](num_tensors, seed), kind, seed)


def random_dag_graph(num_tensors: int, *, seed: int = 0):
    """``generate_graph("random_dag", num_tensors, seed=seed)``."""
    return generate_graph("random_dag", num_tensors, seed=seed)


# --- MiniMalloc-style --------------------------------------------------------------------------

def minimalloc_style(num_tensors: int, *, seed: int = 0) -> Instance:
    """MiniMalloc-style random buffers; see the module docstring.

    The horizon has ``num_tensors`` time steps and lifespans average about 30 steps (a quarter
    of the horizon on small instances), so about 30 buffers are live at a time, as in the
    challenging suite (a few dozen per step).
    """
    num_tensors = _check_count(num_tensors)
    rng = np.random.default_rng(seed)
    horizon = max(num_tensors, 2)
    first_ops = rng.integers(0, horizon, size=num_tensors)
    mean_length = min(30.0, max(2.0, horizon / 4))
    lengths = rng.geometric(1 / mean_length, size=num_tensors) - 1
    last_ops = np.minimum(first_ops + lengths, horizon - 1)
    whole_run = rng.random(num_tensors) < 0.02
    first_ops[whole_run] = 0
    last_ops[whole_run] = horizon - 1
    units = np.floor(2.0 ** rng.uniform(0, 10, size=num_tensors)).astype(np.int64)
    sizes = units * 1024
    return _instance(f"minimalloc_{num_tensors}_seed{seed}", first_ops, last_ops, sizes,
                     kind="minimalloc", num_tensors=num_tensors, seed=seed)


GENERATORS: dict[str, Callable[..., Instance]] = {
    "random_dag": random_dag,
    "chain_skip": chain_skip,
    "transformer": transformer,
    "minimalloc": minimalloc_style,
}
"""Kind name → record generator ``f(num_tensors, *, seed) -> Instance``."""


def generate(kind: str, num_tensors: int, *, seed: int = 0) -> Instance:
    """A seeded synthetic instance of ``kind`` with ``num_tensors`` records.

    Parameters
    ----------
    kind : str
        One of :data:`GENERATORS` (``random_dag``, ``chain_skip``, ``transformer``,
        ``minimalloc``).
    num_tensors : int
        Number of usage records, >= 1 (100,000 takes well under a second).
    seed : int
        Seed of ``numpy.random.default_rng``; the same arguments give the same instance.

    Examples
    --------
    >>> from optplan.generators import generate
    >>> instance = generate("chain_skip", 50, seed=1)
    >>> len(instance), instance == generate("chain_skip", 50, seed=1)
    (50, True)
    """
    try:
        generator = GENERATORS[kind]
    except (KeyError, TypeError):
        raise InputError(f"unknown generator {kind!r}; valid: {', '.join(GENERATORS)}",
                         field="kind") from None
    return generator(num_tensors, seed=seed)
