"""Checks shared by the tests of the distributed backends (Dask, Ray)."""

from __future__ import annotations


def outcome_by_job(table) -> dict:
    """Each job's status and integer objective (``None`` when it has none), by job id: what
    two backends running one config must agree on."""
    return {row.job_id: (row.status, None if row.objective is None else int(row.objective))
            for row in table.astype(object).where(table.notna(), None).itertuples()}
