"""A research claim must not put one of its article's terms where its quote says another
(:func:`medlit.checks.swapped_terms.swapped_term`)."""

from __future__ import annotations

import pytest

from medlit.checks.claims import result_sentence_for
from medlit.checks.swapped_terms import Swap, swapped_term
from medlit.research.models import SubQuestion
from medlit.research.prompts import ExtractedClaim
from medlit.types import AbstractSection, Article
from tests.unit._research_llm import bare_researcher
from tests.unit._sjogren import FATIGUE_RESULT, SJOGREN


def test_a_claim_giving_one_terms_finding_to_another_is_a_swap() -> None:
    # The local model's claim: most of its content words are the quote's, and the report
    # gave fatigue's 68% as fibromyalgia's prevalence (it is 12%).
    claim = (
        "The prevalence of fibromyalgia in primary Sjögren's syndrome is significantly higher "
        "than in lupus patients."
    )
    assert swapped_term(claim, FATIGUE_RESULT, SJOGREN) == Swap("fibromyalgia", "fatigue")


FM_RESULT = "FM was present in 12% of patients with pSS, compared with 5% of lupus patients."


@pytest.mark.parametrize(
    ("claim", "quote"),
    [
        # The quote's finding in other words and order, its abbreviation spelled out.
        ("The prevalence of fatigue is significantly higher in primary Sjögren's syndrome than "
         "in lupus.", FATIGUE_RESULT),
        ("Fatigue was reported by 68% of patients with primary Sjögren's syndrome.",
         FATIGUE_RESULT),
        ("Fibromyalgia was present in 12% of patients with primary Sjögren's syndrome.",
         FM_RESULT),
        # The abbreviation as the quote writes it.
        ("In pSS, fatigue was significantly more prevalent than in lupus patients.",
         FATIGUE_RESULT),
    ],
)  # fmt: skip
def test_a_claim_saying_its_quotes_finding_swaps_nothing(claim: str, quote: str) -> None:
    assert swapped_term(claim, quote, SJOGREN) is None


WARFARIN = Article(
    pmid="1",
    title="Warfarin for the prevention of stroke in patients with anaemia and atrial "
    "fibrillation",
    abstract=[
        AbstractSection(label="METHODS", text="Anaemic patients with atrial fibrillation were "
                        "given warfarin or placebo."),
        AbstractSection(label="RESULTS", category="RESULTS", text="Warfarin reduced stroke by "
                        "22% compared with placebo. It lowered bleeding episodes in anaemia."),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("claim", "quote"),
    [
        # The article's population added, its comparator dropped: context, not a swap.
        ("Warfarin reduced stroke by 22% in atrial fibrillation patients.",
         "Warfarin reduced stroke by 22% compared with placebo."),
        # The quote names its subject by a pronoun; the claim by its name.
        ("Warfarin lowered bleeding episodes in anaemia.",
         "It lowered bleeding episodes in anaemia."),
        # Two forms of one word.
        ("It lowered bleeding episodes in anaemic patients.",
         "It lowered bleeding episodes in anaemia."),
    ],
)  # fmt: skip
def test_context_a_pronoun_or_another_form_of_a_word_is_no_swap(claim: str, quote: str) -> None:
    assert swapped_term(claim, quote, WARFARIN) is None


def test_a_swapped_claim_is_dropped_and_its_true_form_kept() -> None:
    researcher = bare_researcher()
    question = SubQuestion(id="q1", text="How common is fibromyalgia in Sjögren's syndrome?")
    # The local model's claim: with pSS read as its long form, 9 of its 11 content words are
    # the quote's.
    swapped = ExtractedClaim(
        claim="The prevalence of fibromyalgia in primary Sjögren's syndrome is significantly "
        "higher in patients with pSS compared to lupus patients.",
        quote=FATIGUE_RESULT,
        pmid="11053064",
    )
    assert researcher._finding(question, SJOGREN, swapped) is None
    # No other result sentence says it either: none stands in for the quote.
    assert result_sentence_for(swapped.claim, SJOGREN) is None
    true = ExtractedClaim(
        claim="Fatigue is significantly more prevalent in primary Sjögren's syndrome than in "
        "lupus.",
        quote=FATIGUE_RESULT,
        pmid="11053064",
    )
    finding = researcher._finding(question, SJOGREN, true)
    assert finding is not None
    assert finding.quote == FATIGUE_RESULT
