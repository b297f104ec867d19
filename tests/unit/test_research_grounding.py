"""A claim must say what its verbatim quote says (:func:`claim_supported`)."""

from __future__ import annotations

import pytest

from medlit.research.grounding import claim_supported


@pytest.mark.parametrize(
    ("claim", "quote", "expected"),
    [
        ("Aspirin reduced recurrent ischaemic stroke by 22%.",
         "Aspirin reduced recurrent ischaemic stroke by 22%", True),
        ("Pooled trials show aspirin reduces recurrent ischaemic stroke.",
         "aspirin reduced recurrent ischaemic stroke (RR 0.80", True),
        ("Metformin lowered HbA1c by 0.8%.", "It lowered HbA1c by 0.8% at one year", True),
        # The local model's claims (issue 10): the hoped-for answer beside an unrelated quote.
        ("Vitamin D supplementation prevents fractures in older adults",
         "Pharmacologic and environmental interventions to prevent hip fracture have "
         "documented poor compliance.", False),
        ("Vitamin D supplementation increases Tregs frequency within circulating CD4+ T cells.",
         "Forty-six study participants completed the trial.", False),
        # A negation only one side has flips the meaning.
        ("Aspirin increased major bleeding.", "Low-dose aspirin did not increase major bleeding",
         False),
        ("Low-dose aspirin did not increase major bleeding.",
         "Low-dose aspirin did not increase major bleeding", True),
        ("", "Anything", False),
    ],
)  # fmt: skip
def test_claim_supported(claim: str, quote: str, expected: bool) -> None:
    assert claim_supported(claim, quote) is expected
