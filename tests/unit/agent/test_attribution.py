"""Sentences taken from an evidence article without a citation get that article's PMID."""

from __future__ import annotations

from medlit.checks.attribution import attribute_uncited
from tests.unit.agent.articles import article

ARTICLES = {
    "21865668": article(
        "21865668",
        "Does automatic transmission improve driving behavior in older drivers?",
        "Switching to automatic transmission may be recommended for older drivers as a means "
        "to maintain safe driving and the quality of their transport mobility.",
    ),
    "25432938": article(
        "25432938",
        "Driving cessation and depression in older adults",
        "Stopping driving was associated with more depressive symptoms.",
    ),
}


def test_a_sentence_taken_from_one_article_is_attributed_to_it() -> None:
    answer = (
        "Verdict: Yes\n\nThe evidence shows that switching to automatic transmission may be "
        "recommended for older drivers to maintain safe driving. Nothing else is known."
    )
    text, attributed = attribute_uncited(answer, ARTICLES)
    assert attributed == ["21865668"]
    assert "to maintain safe driving [PMID:21865668]. Nothing else is known." in text
    assert text.startswith("Verdict: Yes\n\n")


def test_cited_vague_or_foreign_sentences_are_left_alone() -> None:
    answer = (
        "Stopping driving was associated with depression [PMID:25432938]. It may help. "
        "Statins lower cholesterol in adults with heart failure and diabetes."
    )
    text, attributed = attribute_uncited(answer, ARTICLES)
    assert (text, attributed) == (answer, [])
    assert attribute_uncited(answer, {}) == (answer, [])


def test_an_abbreviation_does_not_end_the_sentence_a_citation_is_added_to() -> None:
    # The local model wrote "(0.67 vs. 1.58 mmol/l)"; a citation landed inside it, before the
    # period of "vs.", breaking the figures apart.
    articles = {
        "17113061": article(
            "17113061",
            "Do mutations causing low HDL-C promote increased carotid intima-media thickness?",
            "cIMT was nearly identical between cases and controls despite significantly lower "
            "HDL cholesterol (0.67 vs. 1.58 mmol/l) in carriers of the mutations.",
        ),
        **ARTICLES,
    }
    answer = (
        "Carriers had nearly identical cIMT despite significantly lower HDL cholesterol "
        "(0.67 vs. 1.58 mmol/l) than controls. Nothing else is known."
    )
    text, attributed = attribute_uncited(answer, articles)
    assert attributed == ["17113061"]
    assert "(0.67 vs. 1.58 mmol/l) than controls [PMID:17113061]. Nothing else" in text
    assert text.replace(" [PMID:17113061]", "") == answer
