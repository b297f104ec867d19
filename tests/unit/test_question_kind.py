"""The question-type reader: its cues (``kind.*`` of words/data/cues.toml), on questions shaped
like those of the tune half, and on the hand-labelled questions of ../shared/data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from medlit.words.question_kind import QUESTION_KINDS, question_kind
from tests.conftest import shared_data_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # a prognosis in a patient's words, and "can X cause Y"
        ("I burned my hand on the stove last week. Will the blister go away by itself?", "risk"),
        ("Is it possible to survive pancreatic cancer?", "risk"),
        ("I fell off my bike yesterday, am I ok to keep running?", "risk"),
        ("Can an underactive thyroid cause hair loss?", "risk"),
        # a complaint told: what is it, unless a treatment is asked for
        ("I have a red itchy rash on both elbows since Monday. What could this be?", "diagnosis"),
        ("Been having sharp pains under my left ribs when I breathe in deeply?", "diagnosis"),
        ("I have a painful sore on my lip. How do I treat it?", "effect"),
        ("I have had a headache for two days, what should I do?", "effect"),
        # how two things differ is a description
        ("How do eczema and psoriasis differ?", "definition"),
        ("What is the difference between a cold and the flu?", "definition"),
        # as before
        ("Does vitamin D reduce falls in older adults?", "effect"),
        ("Which genes are linked to early-onset Alzheimer disease?", "list"),
    ],
)
def test_the_cues_read_the_type(question: str, kind: str) -> None:
    assert question_kind(question) == kind


def test_the_reader_does_at_least_as_well_as_measured_on_the_check_half() -> None:
    shared_data_path("pubmedqa", "pqal_dev.json")
    shared = shared_data_path("mqp", "mqp_dev.csv").parents[1]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from question_kinds import LABELS, load
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    cases = load(LABELS, shared)
    assert len(cases) >= 120 and {c.kind for c in cases} == set(QUESTION_KINDS)
    check = [c for c in cases if c.half == "check"]
    right = sum(question_kind(c.question) == c.kind for c in check)
    # benchmarks/question_kinds.py: 51 of 88 (the reader before these cues: 46).
    assert right >= 51, f"{right} of {len(check)}"
