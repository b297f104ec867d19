"""A research claim must not turn the direction of change its quote states for the same
measure (the ``claim-opposite-direction`` check,
:func:`medlit.checks.claim_direction.turned_direction`)."""

from __future__ import annotations

import pytest

from medlit.checks import check_claim
from medlit.checks.claim_direction import turned_direction
from medlit.types import AbstractSection, Article

REDUCED = "Aspirin reduced recurrent stroke by 22%."
ARTICLE = Article(
    pmid="7",
    title="Aspirin after a first stroke",
    abstract=[
        AbstractSection(label="METHODS", category="METHODS", text="We randomised 4,000 adults."),
        AbstractSection(label="RESULTS", category="RESULTS", text=f"{REDUCED} Bleeding was rare."),
    ],
)
QUESTION = "Does aspirin prevent recurrent stroke?"


def test_a_claim_turning_its_quotes_direction_is_dropped() -> None:
    claim = "Aspirin increased recurrent stroke by 22%"
    off = check_claim(claim, REDUCED, ARTICLE, QUESTION, {"claim-opposite-direction"})
    assert off.reason is None  # every other claim check keeps it: the error this check is for
    checked = check_claim(claim, REDUCED, ARTICLE, QUESTION)
    assert (checked.quote, checked.reason) == (REDUCED, "claim_opposite_direction")
    assert checked.finding is not None and checked.finding.check == "claim-opposite-direction"
    assert checked.finding.action == "drop" and checked.finding.pmids == ("7",)


@pytest.mark.parametrize(
    ("claim", "quote", "turned"),
    [
        ("Aspirin increased recurrent stroke by 22%", REDUCED, ("increased", "reduced")),
        ("Statins lowered LDL cholesterol in older adults.",
         "Statins raised LDL cholesterol in older adults.", ("lowered", "raised")),
        ("Troponin was higher in patients who died within 30 days.",
         "Troponin was lower in patients who died within 30 days.", ("higher", "lower")),
        # the other change of the sentence kept, one turned
        ("Aspirin reduced stroke and increased major bleeding in older adults.",
         "Aspirin reduced stroke and reduced major bleeding in older adults.",
         ("increased", "reduced")),
    ],
)  # fmt: skip
def test_one_change_turned_for_the_same_measure_is_read(
    claim: str, quote: str, turned: tuple[str, str]
) -> None:
    assert turned_direction(claim, quote) == turned


@pytest.mark.parametrize(
    ("claim", "quote"),
    [
        # the same direction in other words
        ("Aspirin lowered the rate of recurrent stroke.", REDUCED),
        ("Aspirin reduced recurrent stroke by 22%.", REDUCED),
        # two changes turned say the same relation
        ("Higher BMI was associated with increased mortality.",
         "Lower BMI was associated with reduced mortality."),
        # another measure: what went up is not what the quote says went down
        ("Aspirin increased gastrointestinal bleeding among those treated.",
         "Aspirin reduced recurrent ischaemic stroke among those treated."),
        # a negated change is no change the other way; and a claim with no change
        ("Aspirin increased recurrent stroke.", "Aspirin did not reduce recurrent stroke."),
        ("Recurrent stroke was similar with aspirin.", REDUCED),
        # a claim stating more changes than its quote is no turned copy of it
        ("Aspirin increased bleeding and reduced recurrent stroke.", REDUCED),
    ],
)  # fmt: skip
def test_no_turn_is_read_where_the_direction_is_kept_or_another_measure_changes(
    claim: str, quote: str
) -> None:
    assert turned_direction(claim, quote) is None


def test_the_check_turned_off_keeps_the_claim_and_without_a_quote_reads_nothing() -> None:
    claim = "Aspirin increased recurrent stroke by 22%"
    kept = check_claim(claim, REDUCED, ARTICLE, QUESTION, {"claim-opposite-direction"})
    assert kept.reason is None and kept.quote == REDUCED
    # with claim-quote off and a quote the article lacks there is no sentence to set it against
    made_up = "Aspirin reduced recurrent stroke by a third."
    unquoted = check_claim(claim, made_up, ARTICLE, QUESTION, {"claim-quote"})
    assert (unquoted.quote, unquoted.reason) == (None, None)
