"""The question frame: one reading of what a question asks."""

from __future__ import annotations

import pytest

from medlit.words.frame import read_frame


@pytest.mark.parametrize(
    ("question", "direction"),
    [
        ("Does aspirin prevent stroke in adults?", "down"),
        ("Does aspirin cause stroke in adults?", "up"),
        ("Does exercise lower blood pressure?", "down"),
        ("Does smoking increase the risk of lung cancer?", "up"),
        ("Is vitamin D deficiency common among nursing home residents?", None),
    ],
)
def test_direction_asked(question: str, direction: str | None) -> None:
    assert read_frame(question).direction == direction


def test_populations_named_alike() -> None:
    frame = read_frame("Does aspirin prevent stroke in elderly women?")
    assert frame.population_names("age") == {"elderly"}
    assert frame.population_names("sex") == {"female"}


def test_sources_are_part_of_the_frame_and_json() -> None:
    frame = read_frame("Does aspirin prevent stroke?", sources=["local"])
    assert frame.sources == ("local",)
    assert frame.to_json()["sources"] == ("local",)
    assert read_frame("Does aspirin prevent stroke?").sources == ()


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Does aspirin prevent stroke in adults?", "effect"),
        ("What disease can be treated with Glofitamab?", "list"),
        ("What is CHARMS?", "definition"),
        ("How common is vitamin D deficiency in nursing homes?", "frequency"),
        ("How accurate is ultrasound for appendicitis?", "diagnosis"),
        ("Is obesity associated with knee osteoarthritis?", "risk"),
    ],
)
def test_kind(question: str, kind: str) -> None:
    assert read_frame(question).kind == kind
