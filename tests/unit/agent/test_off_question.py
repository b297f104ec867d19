"""A cited sentence naming nothing the question asks, citing an article that names none of it
either, goes (:mod:`medlit.agent.off_question`)."""

from __future__ import annotations

from medlit.agent.off_question import drop_off_question
from tests.unit.agent.articles import article

# PubMedQA 16498158 (gold yes) and the asthma review the local model cited beside it.
ATROPINE = article(
    "16498158",
    "Is atropine needed with ketamine sedation?",
    "The use of atropine as an adjunct for intramuscular ketamine sedation in children "
    "significantly reduces hypersalivation and may lower the incidence of post-procedural "
    "vomiting.",
)
ASTHMA = article(
    "24785562",
    "Is dexamethasone an effective alternative to oral prednisone in the treatment of pediatric "
    "asthma exacerbations?",
    "Dexamethasone can be used as an effective alternative to prednisone in the treatment of "
    "mild to moderate acute asthma exacerbations in children.",
)
ARTICLES = {"16498158": ATROPINE, "24785562": ASTHMA}
QUESTION = "Should atropine be given routinely when sedating children with ketamine?"
ON = "Atropine reduced hypersalivation during ketamine sedation [PMID:16498158]."
OFF = (
    "The evidence from [PMID:24785562] also suggests that dexamethasone can be used as an "
    "effective alternative to prednisone in the treatment of pediatric asthma exacerbations."
)


def test_a_sentence_about_something_else_citing_an_article_about_it_goes() -> None:
    text, warnings = drop_off_question(f"{ON} {OFF}", ARTICLES, QUESTION)
    assert text == ON
    assert warnings == [
        "a sentence was left out: it cited PMID 24785562 for something else than was asked: "
        "neither names atropine or ketamine"
    ]


def test_what_names_the_question_or_cites_an_article_that_does_stays() -> None:
    # Going on about the subject without naming it: its article names it.
    on = "It also lowered vomiting after the procedure [PMID:16498158]."
    assert drop_off_question(on, ARTICLES, QUESTION) == (on, [])
    # The sentence names the question's subject; whether the article does is another check's.
    named = "Ketamine sedation in asthma was studied too [PMID:24785562]."
    assert drop_off_question(named, ARTICLES, QUESTION) == (named, [])
    # Citing both, only the citation of the article about something else goes.
    both = "Children tolerated it well [PMID:16498158] [PMID:24785562]."
    text, warnings = drop_off_question(both, ARTICLES, QUESTION)
    assert "24785562" not in text and "16498158" in text and len(warnings) == 1
    assert warnings[0].startswith("a citation was removed: it cited PMID 24785562")


def test_a_question_with_one_rare_word_is_not_checked() -> None:
    # "amenable" is how the question frames its subject, not the subject (PubMedQA's
    # injury and poisoning question).
    question = "Are any common factors amenable to prevention?"
    assert drop_off_question(OFF, ARTICLES, question) == (OFF, [])
