"""A model's remark about the question's form ("This is a yes/no question.") is no part of the
answer: the ``question-remarks`` check leaves it out, and leaves every statement of the
literature as it was."""

from __future__ import annotations

import pytest

from medlit.checks import ORDER, REGISTRY, check_answer
from medlit.checks.apply import apply
from medlit.checks.context import CheckContext
from medlit.checks.draft import Draft
from medlit.checks.question_remarks import question_remarks, without_question_remark
from medlit.types import AbstractSection, Article

REMARKS = [
    "This is a yes/no question.",
    "This is a yes-or-no question.",
    "The question is a yes or no question.",
    "This question is a binary one.",
    "It is a clinical yes/no question.",
    "This appears to be a comparative question.",
    "This question asks whether aspirin prevents stroke in adults.",
    "The question is asking about statin use after a stroke.",
    "Your question asks if vitamin D lowers the risk of fractures.",
]
OPENERS = [
    (
        "Since this is a yes/no question, the answer rests on two trials [PMID:1].",
        "The answer rests on two trials [PMID:1].",
    ),
    ("As a yes/no question, the evidence leans yes [PMID:1].", "The evidence leans yes [PMID:1]."),
    (
        "This is a yes/no question, and the trials say yes [PMID:2].",
        "The trials say yes [PMID:2].",
    ),
    ("To answer this question, two trials matter [PMID:3].", "Two trials matter [PMID:3]."),
]
KEPT = [
    "This is a randomized trial [PMID:1].",
    "This is a randomized trial.",
    "The question of dosing remains open [PMID:2].",
    "It is an important question whether aspirin helps.",
    "This remains an open question.",
    "This is an open question.",
    "Whether aspirin helps is an open question.",
    "The trial asked whether aspirin helps [PMID:1].",
    "As a result, strokes fell [PMID:1].",
    "Aspirin reduced stroke by 22% [PMID:1].",
    "This is a yes/no question [PMID:1].",  # it cites: not left out unseen
]


@pytest.mark.parametrize("remark", REMARKS)
def test_a_remark_about_the_question_s_form_is_left_out(remark: str) -> None:
    assert without_question_remark(remark) == ""


@pytest.mark.parametrize(("sentence", "after"), OPENERS)
def test_a_remark_opening_a_sentence_is_taken_off_it(sentence: str, after: str) -> None:
    assert without_question_remark(sentence) == after


@pytest.mark.parametrize("sentence", KEPT)
def test_a_statement_about_the_literature_is_kept(sentence: str) -> None:
    assert without_question_remark(sentence) == sentence


def test_the_check_is_registered_first_so_no_check_cites_the_remark() -> None:
    check = REGISTRY["question-remarks"]
    assert check.stage == "cite" and ORDER[0] == "question-remarks"
    assert "question's form" in check.doc


def test_the_check_drops_the_remark_silently() -> None:
    articles = {"1": Article(pmid="1", title="Aspirin and stroke")}
    text = "This is a yes/no question. Aspirin cut strokes [PMID:1]."
    ctx = CheckContext("Does aspirin prevent stroke?", articles, Draft.parse(text))
    findings = question_remarks(ctx)
    assert [(f.check, f.action, f.sentence, f.message) for f in findings] == [
        ("question-remarks", "drop", 0, "")
    ]
    assert apply(ctx.draft, findings).text == "Aspirin cut strokes [PMID:1]."


async def _no_reading(question: str, text: str) -> None:
    raise AssertionError("a remark left out is no reason to read the verdict again")


async def test_a_checked_answer_keeps_no_remark_and_warns_of_none() -> None:
    section = AbstractSection(
        label="CONCLUSIONS", category="CONCLUSIONS", text="Aspirin reduced stroke by 22%."
    )
    article = Article(pmid="1", title="Aspirin and stroke", abstract=[section], year=2014)
    checked = await check_answer(
        "Does aspirin reduce stroke?",
        "This is a yes/no question. Aspirin reduced stroke by 22% [PMID:1].",
        "yes",
        {"1": article},
        article,
        is_yes_no=True,
        read_verdict=_no_reading,
        nothing_supported="NOTHING",
    )
    assert "yes/no question" not in checked.text
    assert "Aspirin reduced stroke by 22% [PMID:1]." in checked.text
    assert checked.warnings == [] and checked.verdict == "yes"
    off = await check_answer(
        "Does aspirin reduce stroke?",
        "This is a yes/no question. Aspirin reduced stroke by 22% [PMID:1].",
        "yes",
        {"1": article},
        article,
        is_yes_no=True,
        read_verdict=_no_reading,
        nothing_supported="NOTHING",
        disabled={"question-remarks"},
    )
    assert "This is a yes/no question." in off.text
