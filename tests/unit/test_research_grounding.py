"""A claim must say what its verbatim quote says (:func:`claim_supported`), and a report's
sentence what its facts say (:func:`ground_text`)."""

from __future__ import annotations

import pytest

from medlit.research.grounding import claim_supported, fact_support, ground_text
from medlit.research.models import VerifiedFact
from medlit.research.synthesizer import citation_key
from medlit.types import Citation


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
        # One letter or number names another thing than the quote does.
        ("Vitamin D reduced complex regional pain syndrome after wrist fractures.",
         "vitamin C reduced complex regional pain syndrome after wrist fractures", False),
        ("COX-1 inhibitors lowered postoperative pain scores.",
         "COX-2 inhibitors lowered postoperative pain scores", False),
        ("Vitamin D3 lowered falls in older adults.", "vitamin D lowered falls in older adults",
         True),
        ("", "Anything", False),
    ],
)  # fmt: skip
def test_claim_supported(claim: str, quote: str, expected: bool) -> None:
    assert claim_supported(claim, quote) is expected


def test_a_summary_sentence_naming_another_vitamin_than_its_facts_is_left_out() -> None:
    source = Citation(pmid="1", title="Vitamin C and wrist fractures")
    fact = VerifiedFact(
        statement="Vitamin C reduced complex regional pain syndrome after wrist fractures",
        confidence="high",
        sub_question_id="q1",
        sources=[source],
    )
    numbers = {citation_key(source): 1}
    support = fact_support([fact], [], numbers)
    text = (
        "Vitamin D reduced complex regional pain syndrome after wrist fractures [1]. "
        "Vitamin C reduced complex regional pain syndrome after wrist fractures [1]."
    )
    grounded = ground_text(text, "Does vitamin D prevent pain after wrist fractures?", support)
    assert grounded.text == text.split(" [1]. ")[1]
    assert grounded.removed == [text.split(" Vitamin C")[0]]
