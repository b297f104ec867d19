"""A cited article's title question said as an answer it does not give goes
(:mod:`medlit.checks.restated_titles`)."""

from __future__ import annotations

from medlit.checks.restated_titles import title_answer
from medlit.types import AbstractSection, Article
from tests.unit._checks import left_for_later


def _article(title: str, conclusion: str) -> Article:
    return Article(
        pmid="1",
        title=title,
        abstract=[
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
    )


TITLE = "Does pretreatment with statins improve clinical outcome after stroke?"
NO = _article(TITLE, "Pretreatment with statins did not improve clinical outcome after stroke.")
SAID_BACK = (
    "The evidence shows that pretreatment with statins improves clinical outcome after stroke"
)


def test_a_sentence_saying_its_title_back_gives_an_answer_to_it() -> None:
    assert title_answer(f"{SAID_BACK} [PMID:1].", NO) == "yes"
    denied = "Pretreatment with statins does not improve clinical outcome after stroke [PMID:1]."
    assert title_answer(denied, NO) == "no"
    assert title_answer("Statins were given to 40 patients [PMID:1].", NO) is None
    # A title that asks nothing is said back by nothing.
    stated = _article("Statin pretreatment and outcome after stroke", "No effect.")
    assert title_answer(f"{SAID_BACK} [PMID:1].", stated) is None


def test_the_title_said_back_as_an_answer_its_article_does_not_give_goes() -> None:
    # What the local model wrote over PubMedQA 11340218 (gold no): "Verdict: Yes".
    text = f"{SAID_BACK} [PMID:1]. Statins were given to 40 patients [PMID:1]."
    restated, said = left_for_later("restated-titles", text, {"1": NO})
    assert restated.text == "Statins were given to 40 patients [PMID:1]."
    assert said == {"1": "yes"}
    assert restated.warnings == [
        "a sentence was left out: it cited PMID 1 for the answer 'yes' to the question its "
        "title asks, where it concludes 'no'"
    ]


def test_the_answer_its_article_gives_or_none_stays() -> None:
    text = f"{SAID_BACK} [PMID:1]."
    improved = _article(TITLE, "Pretreatment with statins improved clinical outcome.")
    assert left_for_later("restated-titles", text, {"1": improved}) == ((text, []), {})
    unclear = _article(TITLE, "More studies are needed.")
    assert left_for_later("restated-titles", text, {"1": unclear}) == ((text, []), {})
