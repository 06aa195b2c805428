"""Instance factories for tests: named tiny cases a reader can draw, and hypothesis strategies."""

from __future__ import annotations

from hypothesis import strategies as st

from optplan import Instance
from optplan.preload import Layer, PreloadInstance, PreloadTensor

# Named cases, (first_op, last_op, size) each.
NAMED = {
    # The paper's Figure 1 example (Pisarchyk & Lee 2020).
    "paper_example": [(0, 1, 32), (1, 4, 28), (2, 5, 36), (3, 5, 16), (4, 5, 8), (5, 7, 64),
                      (6, 8, 10), (7, 8, 40)],
    # A staircase: each tensor overlaps only its neighbours.
    "stairs": [(0, 1, 10), (1, 2, 20), (2, 3, 30), (3, 4, 40), (4, 5, 50)],
    # Tetris: a long thin tensor under short wide ones.
    "tetris": [(0, 9, 4), (0, 2, 16), (3, 5, 16), (6, 9, 16), (1, 7, 8)],
    # All alive at once: every method must stack them.
    "clique": [(0, 3, 7), (1, 3, 5), (2, 3, 3), (3, 3, 1)],
    # Nothing overlaps: one object of the largest size suffices.
    "disjoint": [(0, 0, 5), (1, 1, 9), (2, 2, 3), (3, 3, 9)],
    # A sparse time axis (MiniMalloc-like): compression must not change anything.
    "sparse": [(0, 999, 64), (1000, 4999, 32), (500, 1500, 16), (5000, 2**20, 64)],
}


def named(name: str, **kwargs) -> Instance:
    return Instance.from_tuples(NAMED[name], name=name, **kwargs)


@st.composite
def instances(draw, max_tensors: int = 8, max_ops: int = 10, max_size: int = 64,
              alignment: bool = False, inplace: bool = False, min_tensors: int = 0) -> Instance:
    """Random small instances; optionally a random alignment and in-place pairs."""
    count = draw(st.integers(min_tensors, max_tensors))
    triples = []
    for _ in range(count):
        first = draw(st.integers(0, max_ops - 1))
        last = draw(st.integers(first, max_ops - 1))
        triples.append((first, last, draw(st.integers(1, max_size))))
    chosen_alignment = draw(st.sampled_from([1, 1, 4, 8])) if alignment else 1
    pairs = []
    if inplace:
        used = set()
        for a, (_, last_a, size_a) in enumerate(triples):
            for b, (first_b, _, size_b) in enumerate(triples):
                if (a != b and last_a == first_b and size_b <= size_a and b not in used
                        and draw(st.booleans())):
                    pairs.append((a, b))
                    used.add(b)
                    break
    return Instance.from_tuples(triples, alignment=chosen_alignment, inplace_pairs=pairs)


TINY_SIZES = [1, 2, 3, 4, 5, 8, 12, 16]


@st.composite
def tiny_instances(draw, max_tensors: int = 7) -> Instance:
    """Up to ``max_tensors`` records on 9 ops, sizes times a common factor (gcd scaling), an
    optional alignment, and any subset of the admissible in-place pairs (fan-outs, joins and
    chains through single-op tensors included)."""
    count = draw(st.integers(1, max_tensors))
    factor = draw(st.sampled_from([1, 1, 16]))
    triples = []
    for _ in range(count):
        first = draw(st.integers(0, 6))
        last = draw(st.integers(first, first + 2))
        triples.append((first, last, factor * draw(st.sampled_from(TINY_SIZES))))
    alignment = draw(st.sampled_from([1, 1, 2, 4, 32]))
    admissible = [(a, b) for a, ta in enumerate(triples) for b, tb in enumerate(triples)
                  if a != b and ta[1] == tb[0] and tb[2] <= ta[2]]
    pairs = draw(st.lists(st.sampled_from(admissible), unique=True, max_size=4)
                 if admissible else st.just([]))
    return Instance.from_tuples(triples, alignment=alignment, inplace_pairs=pairs)


@st.composite
def tiny_preload_instances(draw):
    """Preload instances: <= 4 layers, <= 3 weights, <= 8 tensors."""
    layers = draw(st.integers(1, 4))
    compute = draw(st.lists(st.integers(0, 20), min_size=layers, max_size=layers))
    tensors = []
    for k in range(draw(st.integers(0, 3))):
        first = draw(st.integers(0, layers - 1))
        last = draw(st.integers(first, layers - 1))
        tensors.append(PreloadTensor(f"a{k}", "activation", draw(st.integers(1, 6)), first,
                                     last))
    for k in range(draw(st.integers(1, 3))):
        layer = draw(st.integers(0, layers - 1))
        tensors.append(PreloadTensor(f"w{k}", "weight", draw(st.integers(1, 6)), layer, layer,
                                     draw(st.integers(0, 30))))
    if draw(st.booleans()):
        step = draw(st.integers(0, layers - 1))
        tensors.append(PreloadTensor("s", "scratch", draw(st.integers(1, 4)), step, step))
    window = draw(st.one_of(st.none(), st.integers(0, 2)))
    return PreloadInstance(tuple(Layer(f"l{i}", c) for i, c in enumerate(compute)),
                           tuple(tensors), "tiny", window)
