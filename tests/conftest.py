"""Shared test fixtures: where the shared reference data lives, and instance factories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("OPTPLAN_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance" / "tflite_memory_management.json"
MINIMALLOC = SHARED / "peer" / "minimalloc"
SMOKE = REPO / "experiments" / "smoke.toml"


@pytest.fixture
def minimalloc_dir() -> Path:
    if not (MINIMALLOC / "challenging").is_dir():
        pytest.skip(f"MiniMalloc benchmark CSVs not found at {MINIMALLOC}")
    return MINIMALLOC


@pytest.fixture
def mediapipe_file():
    """``mediapipe_file("mediapipe/modules/...tflite")``: that member of the MediaPipe 0.10.21
    wheel, extracted from the wheel ``make test`` downloads into optplan's cache (the test
    skips when the wheel is not there)."""
    from optplan.importers.sources import _cache_dir, resolve_source

    cache = _cache_dir() / "mediapipe-0.10.21"

    def member(path: str) -> Path:
        if not (cache / path).is_file() and not list(cache.glob("*.whl")):
            pytest.skip(f"MediaPipe wheel not cached at {cache} (make test fetches it)")
        return resolve_source(f"wheel:mediapipe==0.10.21/{path}")

    return member


@pytest.fixture
def patient_smoke(tmp_path) -> Path:
    """The smoke config with a watchdog grace of two minutes instead of ten seconds: for
    tests that compare two backends' results, so that a job slowed by the suite's other
    worker (a fresh Ray or Dask worker beside a two-thread search) is not killed in one run
    and finished in the other. The watchdog itself has tests of its own."""
    text = SMOKE.read_text(encoding="utf-8")
    assert "grace = 10.0" in text
    copy = tmp_path / "smoke.toml"
    copy.write_text(text.replace("grace = 10.0", "grace = 120.0"), encoding="utf-8")
    return copy
