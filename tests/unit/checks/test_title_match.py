"""A verdict withheld for the question's words alone is earned back by a cited article that asks
the question itself, in other words: its title near the question (the shipped embedder), the
same direction of change named, its conclusion read by rule and the model's verdict agreeing.
Never over a population moved, a direction turned, or a model that reads otherwise."""

from __future__ import annotations

import pytest

from medlit.checks.answer import CheckedAnswer, check_answer
from medlit.checks.answering import TITLE_MATCH, title_matched_verdict
from medlit.embeddings.base import Embedder
from medlit.embeddings.onnx import OnnxEmbedder
from medlit.types import AbstractSection, Article
from medlit.words.frame import read_frame

# A plain rewording of the article's title: its subject in other words, none of them its
# article's ("physical activity" for "exercise"), so no cited article is about the subject as
# the question words it, nor near it by a word of it.
QUESTION = "Does physical activity during pregnancy lower the incidence of postpartum depression?"
ARTICLE = Article(
    pmid="21880023",
    title="Does exercise during pregnancy prevent postnatal depression?",
    year=2012,
    abstract=[
        AbstractSection(
            label="METHODS",
            category="METHODS",
            text="Eight hundred and fifty-five pregnant women were randomized to a 12 week "
            "exercise program or to regular antenatal care.",
        ),
        AbstractSection(
            label="CONCLUSIONS",
            category="CONCLUSIONS",
            text="We did not find a lower prevalence of high EPDS scores among women randomized "
            "to regular exercise during pregnancy compared with the control group.",
        ),
    ],
)
ANSWER = (
    "Women randomized to a 12 week exercise program during pregnancy did not have a lower "
    "prevalence of high depression scores than controls [PMID:21880023]."
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return OnnxEmbedder()


async def _checked(
    question: str,
    embedder: Embedder | None,
    read: str | None = "no",
    line: str | None = None,
) -> tuple[CheckedAnswer, list[str]]:
    asked: list[str] = []

    async def read_verdict(question: str, text: str) -> str | None:
        asked.append(text)
        return read

    answer = await check_answer(
        question,
        ANSWER,
        line,  # type: ignore[arg-type]
        {ARTICLE.pmid: ARTICLE},
        ARTICLE,
        is_yes_no=True,
        read_verdict=read_verdict,  # type: ignore[arg-type]
        nothing_supported="Nothing the evidence supports is left.",
        frame=read_frame(question),
        embedder=embedder,
    )
    return answer, asked


async def test_without_the_embedder_the_subject_note_withholds_the_verdict() -> None:
    answer, _ = await _checked(QUESTION, None)
    assert answer.verdict == "uncertain"
    assert answer.cause is not None and answer.cause.check == "cited-off-subject"


async def test_an_article_asking_the_question_in_other_words_earns_the_verdict(
    embedder: Embedder,
) -> None:
    answer, asked = await _checked(QUESTION, embedder)
    assert answer.verdict == "no"
    assert answer.cause is None
    assert asked == [ANSWER]  # the model read what the checks left, once
    # The note that said no article is about the subject gives way to what the verdict rests on.
    assert answer.text.startswith("Verdict: No\n\nThe verdict rests on “Does exercise during")
    assert "None of the articles cited is about" not in answer.text


async def test_the_models_verdict_line_is_taken_without_a_read(embedder: Embedder) -> None:
    answer, asked = await _checked(QUESTION, embedder, read=None, line="no")
    assert answer.verdict == "no"
    assert asked == []


async def test_a_model_reading_otherwise_leaves_it_withheld(embedder: Embedder) -> None:
    for read in ("yes", "uncertain", None):
        answer, _ = await _checked(QUESTION, embedder, read=read)
        assert answer.verdict == "uncertain", read
        assert answer.cause is not None and answer.cause.check == "cited-off-subject"


async def test_the_question_turned_earns_nothing(embedder: Embedder) -> None:
    turned = QUESTION.replace("lower", "raise")
    answer, _ = await _checked(turned, embedder, read="no")
    assert answer.verdict == "uncertain"


async def test_a_population_moved_withholds_it_whatever_the_title(embedder: Embedder) -> None:
    moved = QUESTION.replace("?", " in men?")
    answer, _ = await _checked(moved, embedder)
    assert answer.verdict == "uncertain"
    assert answer.cause is not None and answer.cause.check == "populations-unspoken"


async def test_a_title_asking_another_question_earns_nothing(embedder: Embedder) -> None:
    other = "Does oral contraceptive use raise the risk of colorectal cancer?"
    vectors = embedder.embed([other, ARTICLE.title])
    assert float(vectors[0] @ vectors[1]) < TITLE_MATCH

    async def model() -> str:
        return "no"

    earned = await title_matched_verdict(
        read_frame(other), other, ANSWER, {ARTICLE.pmid: ARTICLE}, embedder, model
    )
    assert earned is None
    earned = await title_matched_verdict(
        read_frame(QUESTION), QUESTION, ANSWER, {ARTICLE.pmid: ARTICLE}, embedder, model
    )
    assert earned == ("no", ARTICLE.pmid)


async def test_an_article_naming_the_subject_near_is_about_it(embedder: Embedder) -> None:
    # "a structured exercise programme": its article says "a 12 week exercise program"
    question = QUESTION.replace("physical activity", "a structured exercise programme")
    without, _ = await _checked(question, None)
    assert without.cause is not None and without.cause.check == "cited-off-subject"
    answer, _ = await _checked(question, embedder)
    assert answer.verdict == "no" and answer.cause is None
    assert "None of the articles cited is about" not in answer.text
