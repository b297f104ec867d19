"""An author a sentence names for what it cites must be an author of the cited article
(:mod:`medlit.checks.cited_authors`)."""

from __future__ import annotations

from medlit.types import Article
from tests.unit._checks import checked

LISTED = Article(pmid="1", title="Psychological distress and disability", authors=["Stahl D"])
UNLISTED = Article(pmid="2", title="Does psychological distress predict disability?")
ARTICLES = {"1": LISTED, "2": UNLISTED}


def test_an_author_no_cited_article_lists_is_taken_out() -> None:
    # What the local model wrote, over a record with no authors.
    said = "Specifically, a study published in 1997 by Stahl et al. [PMID:2] found that X."
    assert checked("wrong-authors", said, ARTICLES) == (
        "Specifically, a study published in 1997 [PMID:2] found that X.",
        ['an author name was taken out: "by Stahl et al.", which no article it cites lists'],
    )
    # The name as the sentence's subject gives way to "A study"; "as reported by" goes whole.
    assert checked("wrong-authors", "Jones et al. (1997) reported X [PMID:1].", ARTICLES)[0] == (
        "A study reported X [PMID:1]."
    )
    assert checked("wrong-authors", "X fell [PMID:2], as reported by Smith et al.", ARTICLES)[
        0
    ] == ("X fell [PMID:2].")


def test_a_listed_author_and_an_uncited_name_stay() -> None:
    for said in (
        "A study published in 1997 by Stahl et al. [PMID:1] found that X.",
        "Stahl and colleagues found X [PMID:1].",
        "Stahl et al. found X.",  # cites nothing: an author of a retrieved article
    ):
        assert checked("wrong-authors", said, ARTICLES) == (said, [])


def test_an_author_a_sentence_citing_nothing_names_must_be_of_a_retrieved_article() -> None:
    # The local model, before the sentence citing the article, whose title opens "Bridge
    # experience with long-term implantable left ventricular assist devices" (no authors).
    bridge = Article(pmid="9107172", title="Bridge experience with long-term implantable LVADs")
    said = (
        "The study by Bridge et al. (1997) demonstrated that long-term use of LVADs as bridges "
        "to transplantation is successful. The study also found X [PMID:9107172]."
    )
    assert checked("wrong-authors", said, {"9107172": bridge}) == (
        "The study demonstrated that long-term use of LVADs as bridges to transplantation is "
        "successful. The study also found X [PMID:9107172].",
        [
            'an author name was taken out: "by Bridge et al. (1997)", which no retrieved '
            "article lists"
        ],
    )
    assert checked("wrong-authors", "Jones et al. found X.", ARTICLES)[0] == "A study found X."
    # With no evidence at all there is nothing to hold a name to.
    assert checked("wrong-authors", "Jones et al. found X.", {}) == ("Jones et al. found X.", [])


def test_a_surname_of_more_than_one_word_is_listed_by_its_last() -> None:
    vries = Article(pmid="3", title="t", authors=["De Vries K"])
    said = "De Vries et al. found X [PMID:3]."
    assert checked("wrong-authors", said, {"3": vries}) == (said, [])
