"""A citation must be to an article about the thing its sentence names."""

from __future__ import annotations

from medlit.checks.citation_names import Misattribution, left_unanswered, unaddressed
from medlit.types import Article
from tests.unit._checks import checked, left_for_later
from tests.unit.agent.articles import article


def misattributed(text: str, articles: dict[str, Article]) -> tuple[str, list[Misattribution]]:
    """What ``misattributed-names`` left of ``text``, and what it removed (in order)."""
    result, found = left_for_later("misattributed-names", text, articles)
    return result.text, found


ARTICLES = {
    "1": article("1", "Vitamin C after wrist fractures", "Vitamin C reduced CRPS type I."),
    "2": article("2", "Vitamin D and falls", "Vitamin D3 reduced falls in older adults."),
    "3": article("3", "Calcium and fractures", "Calcium reduced fractures."),
}


def test_a_sentence_whose_only_citation_names_another_vitamin_is_left_out() -> None:
    text = (
        "Vitamin D supplementation reduced CRPS after wrist fractures [PMID:1]. "
        "Vitamin D reduced falls [PMID:2].\nCalcium helped too [PMID:3]."
    )
    kept, found = misattributed(text, ARTICLES)
    assert kept == "Vitamin D reduced falls [PMID:2].\nCalcium helped too [PMID:3]."
    assert [(m.pmid, m.claimed, m.found, m.sentence_dropped) for m in found] == [
        ("1", "vitamin D", "vitamin C", True)
    ]
    assert found[0].warning() == (
        "a sentence was left out: it cited PMID 1 for vitamin D, but that article is about "
        "vitamin C"
    )


def test_only_the_wrong_citation_goes_when_another_supports_the_sentence() -> None:
    text = "Vitamin D reduced falls and fractures [PMID:1][PMID:2] [PMID:3]."
    kept, found = misattributed(text, ARTICLES)
    # Article 3 names no vitamin, so it says nothing against the sentence.
    assert kept == "Vitamin D reduced falls and fractures [PMID:2] [PMID:3]."
    assert [(m.pmid, m.sentence_dropped) for m in found] == [("1", False)]
    assert found[0].warning().startswith("a citation was removed: it cited PMID 1")


def test_sentences_that_name_what_their_article_names_stay() -> None:
    text = (
        "Unlike vitamin D, vitamin C reduced CRPS type I [PMID:1]. "
        "Vitamin D3 reduced falls [PMID:2]. Uncited vitamin K lore."
    )
    assert misattributed(text, ARTICLES) == (text, [])


def test_an_answer_left_without_evidence_says_what_is_missing() -> None:
    _, found = misattributed("Vitamin D reduced CRPS [PMID:1].", ARTICLES)
    assert unaddressed("", found) == (
        "None of the retrieved articles addresses vitamin D: the statements written from "
        "articles about vitamin C were left out."
    )
    # Uncited prose left beside the note would read as the answer; cited text stays.
    assert unaddressed("The evidence is strong.", found) == unaddressed("", found)
    assert unaddressed("Calcium helped [PMID:3].", found).endswith("\n\nCalcium helped [PMID:3].")


def test_an_answer_whose_claim_on_the_asked_name_was_left_out_is_unanswered() -> None:
    # "Can clinicians use the PHQ-2 ...?": the model's PHQ-2 sentence cited the PHQ-9 study
    # and went; what is left is about the PHQ-9 and cannot carry a verdict on the PHQ-2.
    articles = {"9": article("9", "PHQ-9 in vision loss", "The PHQ-9 scale fits Rasch.")}
    text = "The PHQ-2 can be used here [PMID:9]. The PHQ-9 scale fits Rasch [PMID:9]."
    kept, found = misattributed(text, articles)
    assert kept == "The PHQ-9 scale fits Rasch [PMID:9]."
    question = "Can clinicians use the PHQ-2 to assess depression in vision loss?"
    assert left_unanswered(kept, found, question) == found
    # Asked about the PHQ-9, the same answer still answers it.
    assert left_unanswered(kept, found, "Is the PHQ-9 valid in vision loss?") == []
    # Nothing cited is left: unanswered whatever was asked.
    assert left_unanswered("No citations.", found, "Is the PHQ-9 valid?") == found


def test_sentences_left_out_for_the_same_reason_make_one_warning() -> None:
    text = "Vitamin D cut CRPS [PMID:1]. Vitamin D cut pain [PMID:1]. Vitamin D cut it [PMID:2]."
    assert checked("misattributed-names", text, ARTICLES).warnings == [
        "2 sentences were left out: they cited PMID 1 for vitamin D, but that article is about "
        "vitamin C"
    ]
