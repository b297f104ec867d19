"""What the checks left that answers the question (``medlit.checks.answering``)."""

from __future__ import annotations

import pytest

from medlit.checks.answering import answering_statements, names_near
from medlit.checks.draft import Draft
from medlit.embeddings.base import Embedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame
from medlit.words.search_plan import phrases_sharing_a_word


def _article(pmid: str, title: str, text: str) -> Article:
    section = AbstractSection(label="RESULTS", category="RESULTS", text=text)
    return Article(pmid=pmid, title=title, abstract=[section])


ARTICLES = {
    "1": _article(
        "1",
        "Preoperative C-reactive protein and prostate cancer",
        "CRP and upstaging were measured.",
    ),
    "3": _article("3", "Preoperative CRP in prostate cancer", "CRP was measured."),
    "2": _article("2", "Knee pain in runners", "Runners reported knee pain."),
}
FRAME = read_frame("Does preoperative CRP predict upstaging at radical prostatectomy?")


def test_a_cited_statement_about_the_subject_answers() -> None:
    text = (
        "The evidence shows that CRP does not predict upstaging. "
        "No association was found between preoperative CRP and tumour stage [PMID:1]. "
        "Knee pain was common in runners [PMID:2]."
    )
    found = answering_statements(FRAME, Draft.parse(text), ARTICLES)
    assert found == [
        "No association was found between preoperative CRP and tumour stage [PMID:1]. "
    ]


def test_a_statement_citing_an_article_on_something_else_does_not() -> None:
    text = "Preoperative CRP did not predict upstaging [PMID:2]."
    assert answering_statements(FRAME, Draft.parse(text), ARTICLES) == []
    # An article on the subject that never speaks of the outcome asked about answers nothing.
    text = "Preoperative CRP did not predict upstaging [PMID:3]."
    assert answering_statements(FRAME, Draft.parse(text), ARTICLES) == []
    assert answering_statements(None, Draft.parse(text), ARTICLES) == []


def test_a_statement_names_the_question_as_its_article_does() -> None:
    """A statement naming the subject by an abbreviation its cited article defines, over an
    article naming the subject and the outcome by their rare words (not every word of the
    question: "testing", "injury", "rise"), answers."""
    frame = read_frame(
        "Does dobutamine stress testing cause myocardial injury detectable as a troponin rise?"
    )
    article = _article(
        "4",
        "Can dobutamine stress echocardiography induce cardiac troponin elevation?",
        "Cardiac troponin I (cTnI) was measured after dobutamine stress echocardiography (DSE).",
    )
    text = "None of the patients had elevated cTnI after the DSE [PMID:4]."
    assert answering_statements(frame, Draft.parse(text), {"4": article}) == [text]
    # The same statement over an article that never names the subject answers nothing.
    other = _article("5", "Cardiac troponin after exercise", "Troponin rose after exercise.")
    said = "Troponin did not rise after dobutamine [PMID:5]."
    assert answering_statements(frame, Draft.parse(said), {"5": other}) == []


def _concluding(pmid: str, conclusion: str) -> Article:
    return Article(
        pmid=pmid,
        title="Preoperative CRP and upstaging of prostate cancer",
        abstract=[
            AbstractSection(label="RESULTS", category="RESULTS", text="CRP was measured."),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text=conclusion),
        ],
    )


async def _read_no() -> str:
    return "no"


async def test_the_verdict_follows_what_the_cited_articles_conclude() -> None:
    from medlit.checks.answering import followed_verdict

    question = "Does preoperative CRP predict upstaging at radical prostatectomy?"
    yes = _concluding("1", "Preoperative CRP predicts upstaging at radical prostatectomy.")
    no = _concluding("2", "Preoperative CRP does not predict upstaging.")
    silent = _article("3", "Preoperative CRP in prostate cancer", "CRP was measured.")
    cases = [
        ({"1": yes}, "[PMID:1]", ("yes", None)),  # the article, not the model's misreading
        ({"3": silent}, "[PMID:3]", ("no", None)),  # no conclusion: the model's reading
    ]
    for articles, cite, expected in cases:
        draft = Draft.parse(f"Preoperative CRP was related to upstaging {cite}.")
        assert await followed_verdict(FRAME, draft, articles, question, _read_no) == expected
    both = Draft.parse("Preoperative CRP was related to upstaging [PMID:1] [PMID:2].")
    verdict, cause = await followed_verdict(FRAME, both, {"1": yes, "2": no}, question, _read_no)
    assert verdict == "uncertain" and cause is not None and cause.kind == "policy"


def test_no_statement_answers_a_change_no_article_speaks_of() -> None:
    from medlit.checks.answering import asks_unheld_change

    frame = read_frame("Does concept mapping impair learning outcome of nursing students?")
    assert asks_unheld_change(frame, ["impair"])
    assert not asks_unheld_change(frame, ["nursing"])
    assert not asks_unheld_change(None, ["impair"])


def test_no_statement_answers_an_outcome_no_article_mentions() -> None:
    from medlit.checks.answering import outcome_unmentioned

    frame = read_frame("Does aspirin cause tinnitus?")
    assert outcome_unmentioned(frame, ["tinnitus"])
    assert not outcome_unmentioned(frame, []) and not outcome_unmentioned(None, ["tinnitus"])


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return OnnxEmbedder()


def test_an_article_naming_the_outcome_in_other_words_answers_with_an_embedder(
    embedder: Embedder,
) -> None:
    frame = read_frame("Is hippocampal volume loss on MRI a predictor of cognitive deterioration?")
    article = _article(
        "6",
        "Hippocampal atrophy and the course of Alzheimer's disease",
        "There was no difference in the rate of cognitive decline between subjects with and "
        "without hippocampal atrophy.",
    )
    text = "Hippocampal atrophy did not predict cognitive decline [PMID:6]."
    # As asked, the article never names "cognitive deterioration": nothing answers ...
    assert answering_statements(frame, Draft.parse(text), {"6": article}) == []
    # ... but "cognitive decline" names it otherwise, near enough.
    assert answering_statements(frame, Draft.parse(text), {"6": article}, embedder) == [text]
    # An article on another outcome of the same subject does not name it, however near.
    other = _article(
        "7",
        "Hippocampal atrophy and mortality",
        "Mortality was higher in subjects with hippocampal atrophy; cognitive tests were not done.",
    )
    said = "Hippocampal atrophy predicted death [PMID:7]."
    assert answering_statements(frame, Draft.parse(said), {"7": other}, embedder) == []


def test_a_near_name_holds_a_word_of_the_concept(embedder: Embedder) -> None:
    runs = phrases_sharing_a_word(
        "cognitive deterioration", "Rates of cognitive decline, mortality, or dementia."
    )
    assert "cognitive decline" in runs
    assert not any("mortality" in run for run in runs)  # a clause break ends a run
    assert names_near("cognitive deterioration", "the rate of cognitive decline", embedder)
    # no word shared, however near in meaning: not named (the embedder is not asked)
    assert not names_near("upstaging", "a locally advanced tumour stage", embedder)
    assert phrases_sharing_a_word("the use", "use of aspirin") == []  # framing words alone
