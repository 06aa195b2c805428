"""Peer allocators run inside optplan: the field's own planners, measured like every method.

* :mod:`optplan.peers.omnimalloc` — every allocator of OmniMalloc (PyPI ``omnimalloc``,
  Apache-2.0; the ``peers`` extra) that installs from PyPI, as offsets methods
  ``omnimalloc_<name>``;
* :mod:`optplan.peers.minimalloc` — MiniMalloc's solver (google/minimalloc, not on PyPI) under
  a capacity bisection, when its binary (``MINIMALLOC_BIN``) or Python module is present.

Every answer goes through optplan's validator like any method's; a peer's packing that the
validator rejects is returned as it is (:func:`rejected`), so that the result reports it
invalid instead of hiding it behind a warm start. Peers ignore in-place pairs
(such tensors then simply do not share memory, which the validator accepts). They are not
*built-in* methods (:attr:`optplan.registry.MethodInfo.builtin`): warm starts and the
experiments' ``kind`` selectors never pick them up, so a result never depends on whether an
optional peer is installed; experiments name them explicitly.
"""

from __future__ import annotations

from optplan.errors import OptplanError
from optplan.exact.run import ExactRun
from optplan.model import Instance, OffsetsSolution
from optplan.result import SolverOutcome, Status

__all__ = ["PeerUnavailableError", "unit_instance", "offsets_in_bytes", "rejected"]


class PeerUnavailableError(OptplanError):
    """A peer's package or binary is not installed here (the message says what to install)."""


def unit_instance(instance: Instance) -> Instance:
    """``instance`` in units of its alignment, as the peers see it: sizes rounded up to whole
    units (``ceil(size / alignment)``), ids ``"0"``, ``"1"``, ... (the record indices), no
    alignment and no in-place pairs.

    Offsets that are multiples of the alignment overlap exactly when the rounded-up sizes do,
    and the objective (the arena rounded up to the alignment) is then the unit arena times the
    alignment: so a packing of the unit instance is a packing of ``instance`` and the two
    optima agree. The units cannot overflow a peer's 64-bit arithmetic: an instance's aligned
    sizes sum to at most 2^62 (checked when it is built).
    """
    unit = instance.alignment
    sizes = [-(-record.size // unit) for record in instance.records]
    return Instance.from_tuples(
        [(record.first_op, record.last_op, size) for record, size in zip(instance.records, sizes)],
        name=instance.name)


def offsets_in_bytes(instance: Instance, unit_offsets) -> OffsetsSolution:
    """The solution of ``instance`` from the offsets a peer gave its :func:`unit_instance`."""
    return OffsetsSolution.from_offsets(
        instance, [int(offset) * instance.alignment for offset in unit_offsets])


def rejected(run: ExactRun, solution: OffsetsSolution, violation) -> SolverOutcome:
    """The outcome of ``run`` when its peer answered ``solution`` and optplan's validator
    rejected it (``violation``: the first reason): that packing, ``FEASIBLE`` with the bound
    proven so far, and ``info["rejected"]`` saying why. It is never swapped for the
    incumbent (the warm start): the peer's failure is what the result must show."""
    run.info["rejected"] = str(violation)
    return SolverOutcome(Status.FEASIBLE, solution, run.bound, run.solver, run.version,
                         run.trajectory.as_tuple(), run.info)
