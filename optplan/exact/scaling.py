"""Integers for the solvers: gcd scaling, the range each solver admits, and what a solver's
floating-point bound proves.

CP-SAT works on int64; the MILP solvers (HiGHS, CBC) work in doubles with tolerances. An
exact method reports OPTIMAL only on an exact proof:

* CP-SAT's proofs are exact (integer arithmetic); its bounds come back as doubles, exact below
  2^53 and rounded beyond, so :func:`proven_bound` takes one unit of last place off there.
* A MILP solver's proof (its "optimal", its dual bound, its "infeasible") is trusted only
  when the model's numbers are small enough that a whole unit lies beyond the solvers'
  tolerances (:func:`milp_proof_trusted`): every big-M coefficient at most
  :data:`MILP_BIG_M_LIMIT` (a binary within the integrality tolerance 1e-6 of its value then
  moves its row by less than one unit) and every number at most :data:`MILP_PROOF_LIMIT`
  (relative tolerances of 1e-9). The audit of issue 16 found HiGHS and CBC "optimal" above the
  optimum on an arena of 1e8 units with 7-unit tensors. Beyond these limits a MILP run keeps
  its solutions (validated exactly) and proves only what meets an exactly computed bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optplan.errors import SolverRangeError
from optplan.model import Instance

__all__ = ["CPSAT_LIMIT", "MILP_LIMIT", "MILP_BIG_M_LIMIT", "MILP_PROOF_LIMIT", "Scaling",
           "scaling", "offset_unit", "check_range", "check_values", "proven_bound",
           "milp_proof_trusted"]

CPSAT_LIMIT = 2 ** 60
"""CP-SAT works on int64 and rejects models whose linear sums could overflow; every scaled
quantity (the sum of all sizes bounds every offset, arena and objective) must stay below this."""
MILP_LIMIT = 10 ** 15
"""MILP solvers work in doubles: models with larger integers are not built at all."""
MILP_BIG_M_LIMIT = 10 ** 6
"""The largest big-M coefficient (units) of a MILP model whose proofs are taken."""
MILP_PROOF_LIMIT = 10 ** 9
"""The largest number (units) in a MILP model whose proofs are taken."""


def milp_proof_trusted(big_m: int, magnitude: int) -> bool:
    """Whether a MILP solver's proofs on a model with these numbers are taken (see above)."""
    return big_m <= MILP_BIG_M_LIMIT and magnitude <= MILP_PROOF_LIMIT


@dataclass(frozen=True)
class Scaling:
    """Sizes (and the alignment) divided by their greatest common divisor ``unit``.

    ``alignment`` is the instance alignment in units: offsets are multiples of it.
    """

    unit: int
    sizes: tuple[int, ...]
    alignment: int


def offset_unit(sizes, alignment: int) -> tuple[int, int]:
    """The unit offsets are counted in and the alignment in that unit: the sizes' gcd, joined
    by an alignment above one byte. Without one, offsets in multiples of the sizes' gcd lose
    nothing: letting every tensor of a packing drop until it rests on another (or on 0) never
    raises the arena, and leaves each offset a sum of sizes."""
    values = [int(size) for size in sizes]
    if alignment > 1:
        values.append(alignment)
    unit = math.gcd(*values) or 1  # gcd() of nothing is 0
    return unit, (alignment // unit if alignment > 1 else 1)


def scaling(instance: Instance, *, with_alignment: bool) -> Scaling:
    """The gcd scaling of ``instance``; ``with_alignment`` (offsets) counts an alignment above
    one byte (:func:`offset_unit`)."""
    sizes = [r.size for r in instance.records]
    unit, alignment = offset_unit(sizes, instance.alignment if with_alignment else 1)
    return Scaling(unit, tuple(size // unit for size in sizes), alignment)


def check_range(instance: Instance, scale: Scaling, limit: int, solver: str) -> None:
    """Raise :class:`SolverRangeError` when the scaled instance exceeds ``limit``.

    The sum of the scaled sizes (plus one alignment step) bounds every offset, arena and
    objective value a model holds, so it is the quantity checked.
    """
    total = sum(scale.sizes) + scale.alignment
    if total > limit:
        largest = max(range(len(instance)), key=lambda i: instance.records[i].size)
        raise SolverRangeError(
            f"sizes too large for {solver}: their sum is {total} units of {scale.unit} bytes "
            f"after gcd scaling, above the solver's limit {limit} (largest: tensor "
            f"{instance.records[largest].id} with {instance.records[largest].size} bytes)",
            field="size")


def check_values(total: int, limit: int, solver: str, what: str, field: str) -> None:
    """Raise :class:`SolverRangeError` when ``total`` (the largest number a model holds)
    exceeds ``limit``."""
    if total > limit:
        raise SolverRangeError(f"{what} too large for {solver}: {total} > the solver's limit "
                               f"{limit}", field=field)


def proven_bound(value: float | None) -> int | None:
    """The integer lower bound a solver's float lower bound ``value`` proves on an integer
    objective: ``ceil`` up to a 1e-6 tolerance while doubles hold integers exactly (below
    2^53), one unit of last place lower beyond (the double may have been rounded up)."""
    if value is None or not math.isfinite(value):
        return None
    if abs(value) >= 2.0 ** 53:
        return int(value) - int(math.ulp(value))
    return int(math.ceil(value - 1e-6))
