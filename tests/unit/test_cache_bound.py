"""The cache's stated error bound matches the committed contrast set."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from medlit.cache.bound import MEASURED, upper_bound
from medlit.cache.guard import QuestionGuard

CONTRAST = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "cache_contrast.csv"


def test_the_shipped_figure_is_the_guard_on_the_held_out_edits() -> None:
    with CONTRAST.open(newline="", encoding="utf-8") as fh:
        edits = [r for r in csv.DictReader(fh) if r["part"] == "check" and r["group"] == "edit"]
    guard = QuestionGuard()
    served = sum(guard.check(r["asked"], r["cached"]).ok for r in edits)
    assert (MEASURED.served, MEASURED.edits) == (served, len(edits))
    assert "part check" in MEASURED.contrast
    shown = MEASURED.as_dict()
    assert shown["wrong_hits"] == served and 0 < float(shown["upper_95"]) < 0.03  # type: ignore[arg-type]


def test_the_upper_bound_of_no_failures_is_the_rule_of_three() -> None:
    assert upper_bound(0, 153) == pytest.approx(1 - 0.05 ** (1 / 153), rel=1e-6)
    assert upper_bound(0, 153) == pytest.approx(3 / 153, rel=0.05)
    assert upper_bound(2, 100) == pytest.approx(0.0616, abs=0.001)  # Clopper-Pearson tables
    assert upper_bound(1, 100) > upper_bound(0, 100)
    assert upper_bound(0, 0) == 1.0
