"""Shared test fixtures: where the shared reference data lives, and instance factories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("OPTPLAN_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance" / "tflite_memory_management.json"
MINIMALLOC = SHARED / "peer" / "minimalloc"


@pytest.fixture
def minimalloc_dir() -> Path:
    if not (MINIMALLOC / "challenging").is_dir():
        pytest.skip(f"MiniMalloc benchmark CSVs not found at {MINIMALLOC}")
    return MINIMALLOC
