"""A cited sentence carrying a technical term only an article it does not cite says."""

from __future__ import annotations

from medlit.words.word_rarity import is_technical
from tests.unit._checks import checked
from tests.unit.agent.articles import article

QUESTION = "Does vancomycin peak concentration monitoring help in adults?"


ARTICLES = {
    "25336163": article(
        "25336163",
        "Meropenem concentrations in interstitial fluid of critically ill patients",
        "Interstitial fluid (ISF) trough concentrations of meropenem were significantly lower "
        "than plasma concentrations in critically ill patients. This evidence supports dosing "
        "by plasma levels.",
    ),
    "24300001": article(
        "24300001",
        "Is cycloplegic autorefraction needed in young adults?",
        "Cycloplegic autorefraction changed the prescription in few young adults; it is not "
        "necessary in this age group. The evidence is strong.",
    ),
}


def test_the_observed_mix_is_left_out_with_both_articles_named() -> None:
    text = (
        "ISF trough concentrations are significantly lower than plasma concentrations in "
        "critically ill patients, suggesting that cycloplegic autorefraction is not necessary "
        "in this age group [PMID:25336163]. Meropenem trough concentrations in ISF were lower "
        "than in plasma [PMID:25336163]."
    )
    out = checked("borrowed-terms", text, ARTICLES, QUESTION)
    assert out.text == (
        "Meropenem trough concentrations in ISF were lower than in plasma [PMID:25336163]."
    )
    assert out.warnings == [
        "a sentence was left out: it cited PMID 25336163, but its 'cycloplegic' comes from "
        "PMID 24300001, which it does not cite"
    ]


def test_what_the_cited_articles_or_the_question_say_is_kept() -> None:
    text = (
        "Cycloplegic autorefraction is not necessary in young adults [PMID:24300001]. "
        "ISF meropenem was lower than plasma [PMID:25336163][PMID:24300001]. "
        "Vancomycin peak concentrations were not studied [PMID:24300001]."
    )
    assert checked("borrowed-terms", text, ARTICLES, QUESTION).text == text


def test_common_words_and_words_no_article_says_are_not_borrowed() -> None:
    # "evidence" and "necessary" are only in the other article, but common in English;
    # "carbapenem" is rare, but no article says it: the model's own word, not a mix.
    text = (
        "The evidence shows ISF concentrations of this carbapenem are necessary to know "
        "[PMID:25336163]."
    )
    assert checked("borrowed-terms", text, ARTICLES, QUESTION).text == text


def test_technical_is_rare_in_english() -> None:
    assert is_technical("cycloplegic") and is_technical("vancomycin")
    assert not is_technical("evidence") and not is_technical("association")
    assert not is_technical("isf")  # too short to judge


def test_a_suspended_prefix_is_no_term() -> None:
    # "peri-" in "peri- and postmenopausal" stands for "perimenopausal", which the cited
    # article says; another article's "peri" (a suspended prefix there too) lends nothing.
    articles = {
        "31000001": article(
            "31000001",
            "Depression in perimenopausal and postmenopausal women",
            "Depressive symptoms were more frequent in perimenopausal and postmenopausal women "
            "than in premenopausal women.",
        ),
        "31000002": article(
            "31000002",
            "Bleeding after peri- and postoperative anticoagulation",
            "Bleeding was more frequent with peri- and postoperative heparin.",
        ),
    }
    text = (
        "Depressive symptoms were more frequent in peri- and postmenopausal women [PMID:31000001]."
    )
    out = checked("borrowed-terms", text, articles, "Is depression more frequent around menopause?")
    assert out.text == text and out.warnings == []
