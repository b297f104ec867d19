"""The recorded answers of a real model to the turned contrast set, replayed through the
checks of this code (``benchmarks/turned_verdicts.py --replay``): a turned question, whose
articles say the opposite of what it asks, is answered "yes" no more often than measured, and
the questions as written keep their yes."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import shared_data_path

ROOT = Path(__file__).resolve().parents[2]


def _count(figure: str) -> int:
    return int(figure.split("/")[0])


def test_the_turned_set_replayed_says_yes_no_more_than_measured() -> None:
    data = shared_data_path("pubmedqa", "pqal_dev.json")
    path = list(sys.path)
    try:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from turned_verdicts import _replay

        figures = _replay(ROOT / "benchmarks" / "data" / "recorded_turned.jsonl", data)
    finally:
        sys.path[:] = path
    # docs/benchmarks.md: as the model answered, tune 5/19 and check 3/21 turned questions
    # got "yes"; through the checks, 0/19 and 1/21, with every yes as written kept.
    assert figures["unread"] == 0
    assert _count(figures["turned_yes_tune"]) == 0
    assert _count(figures["turned_yes_check"]) <= 1
    for half in ("tune", "check"):
        assert figures[f"written_yes_{half}"] == figures[f"written_yes_{half}_recorded"]
