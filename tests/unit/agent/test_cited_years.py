"""A publication year a sentence gives for what it cites must be the cited article's
(:mod:`medlit.checks.cited_years`)."""

from __future__ import annotations

import pytest

from medlit.types import Article
from tests.unit._checks import checked

ARTICLES = {"1": Article(pmid="1", title="A case report", year=2014)}


@pytest.mark.parametrize(
    ("sentence", "kept", "phrase"),
    [
        # What the local model wrote over one case report of 2014.
        ("The evidence from two studies published between 2011 and 2013, both of which "
         "describe cases [PMID:1].",
         "The evidence from two studies, both of which describe cases [PMID:1].",
         '"published between 2011 and 2013"'),
        ("A study, which was published in 2010, found it [PMID:1].",
         "A study found it [PMID:1].", '"which was published in 2010"'),
        ("It was found in a trial published in 2012 [PMID:1].",
         "It was found in a trial [PMID:1].", '"published in 2012"'),
        ("A 2012 randomized trial found it [PMID:1].", "A randomized trial found it [PMID:1].",
         '"2012"'),
    ],
)  # fmt: skip
def test_a_year_no_cited_article_has_is_taken_out(sentence: str, kept: str, phrase: str) -> None:
    assert checked("wrong-years", sentence, ARTICLES) == (
        kept,
        [f"a publication year was taken out: {phrase}, where what it cites is of 2014"],
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "A study published in 2014 found it [PMID:1].",
        "Studies published between 2010 and 2015 found it [PMID:1].",
        "The 2014 study found it [PMID:1].",
        "Patients treated from 2001 to 2009 did well [PMID:1].",  # a study period
        "A study published in 2012 found it.",  # cites nothing to hold it to
    ],
)
def test_the_cited_articles_year_and_other_years_stay(sentence: str) -> None:
    assert checked("wrong-years", sentence, ARTICLES) == (sentence, [])
