"""The checks as one system: the answer parsed once into a draft, each check returning
findings, one ``apply`` changing the text, the order as data, the policy a function of the
findings, and checks turned off by id."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from medlit.checks import ORDER, REGISTRY, check_answer, enabled, unknown_ids
from medlit.checks.apply import apply
from medlit.checks.cited_years import wrong_years
from medlit.checks.context import CheckContext
from medlit.checks.draft import Draft, rewrite_sentences
from medlit.checks.findings import Finding
from medlit.checks.policy import TOGETHER, Facts, after_verdict, decide, warnings_of
from medlit.config import Settings
from medlit.text import rewrite_sentences as text_rewrite_sentences
from medlit.types import AbstractSection, Article

ANSWER = (
    "Aspirin cut strokes by 22% [PMID:1]. A trial published in 2012 found it [PMID:1][PMID:2].\n"
    "Specifically, bleeding rose [PMID:2]. Nothing else is known."
)
ARTICLES = {
    "1": Article(pmid="1", title="Aspirin and stroke", year=2014),
    "2": Article(pmid="2", title="Aspirin and bleeding", year=2014),
}


@given(st.text(alphabet="ab .!?\n[]PMID:12", max_size=80))
def test_a_draft_gives_back_its_text(text: str) -> None:
    assert Draft.parse(text).text == text


@given(st.text(alphabet="ab .!?\n[]PMID:12", max_size=80), st.integers(0, 5))
def test_the_checks_walk_is_the_text_walk(text: str, dropped: int) -> None:
    def rewrite(sentence: str) -> str:
        return "" if len(sentence) % 6 == dropped else sentence.upper()

    assert rewrite_sentences(text, rewrite) == text_rewrite_sentences(text, rewrite)


def test_a_sentence_check_returns_findings_that_apply_gives_back() -> None:
    ctx = CheckContext("Does aspirin prevent stroke?", ARTICLES, Draft.parse(ANSWER))
    findings = wrong_years(ctx)
    assert [(f.check, f.action, f.sentence) for f in findings] == [("wrong-years", "rewrite", 1)]
    assert findings[0].message.startswith("a publication year was taken out")
    assert "2012" not in apply(ctx.draft, findings).text
    assert ctx.draft.text == ANSWER  # the check changed nothing itself


def test_findings_of_one_kind_are_told_once_with_how_many() -> None:
    def dropped(sentence: int, message: str, together: str | None) -> Finding:
        data = {TOGETHER: together} if together else {}
        return Finding("x", "drop", message, (), sentence, "s", data=data)

    findings = [
        dropped(0, "a sentence was left out: A", "{n} sentences were left out: A"),
        dropped(1, "a sentence was left out: B", "{n} sentences were left out: B"),
        dropped(2, "a sentence was left out: A", "{n} sentences were left out: A"),
        dropped(3, "a sentence was left out: C", None),
        dropped(4, "a sentence was left out: C", None),  # no line for several: told each time
    ]
    assert warnings_of(findings) == [
        "2 sentences were left out: A",
        "a sentence was left out: B",
        "a sentence was left out: C",
        "a sentence was left out: C",
    ]


def test_the_registry_names_every_check_once_in_kebab_case_with_what_it_catches() -> None:
    assert len(set(ORDER)) == len(ORDER) == len(REGISTRY)
    for check_id, check in REGISTRY.items():
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", check_id)
        assert check.doc and len(check.doc) > 20, check_id
    stages = [REGISTRY[i].stage for i in ORDER]
    order = ["cite", "sentence", "note", "verdict", "claim", "report"]
    assert stages == sorted(stages, key=order.index)
    assert unknown_ids(["wrong-years", "nope"]) == ["nope"]
    assert "wrong-years" not in [c.id for c in enabled("sentence", {"wrong-years"})]


def test_an_unknown_check_id_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLIT_CHECKS_DISABLED", '["wrong-years", "no-such-check"]')
    with pytest.raises(ValidationError, match=r"unknown check id.*no-such-check"):
        Settings()
    monkeypatch.setenv("MEDLIT_CHECKS_DISABLED", '["wrong-years"]')
    assert Settings().checks.disabled == ["wrong-years"]


def _facts(**given: object) -> Facts:
    values: dict[str, object] = {
        "kept": frozenset({"1"}),
        "best_pmid": "1",
        "best_names_question": True,
        "best_says_unaddressed": False,
        "states_only_otherwise": False,
        "is_yes_no": True,
        "verdict_given": True,
    }
    return Facts(**{**values, **given})  # type: ignore[arg-type]


DROPPED = Finding("wrong-years", "drop", "a sentence was left out", ("1",), 0, "x")


def test_the_policy_is_a_function_of_the_findings() -> None:
    assert decide([], _facts(), "NOTHING").verdict == "keep"
    assert decide([DROPPED], _facts(), "NOTHING").verdict == "reread"  # something went
    assert decide([], _facts(verdict_given=False), "NOTHING").verdict == "reread"
    # nothing cited is left and the best article is on the question: the digest answers
    assert decide([DROPPED], _facts(kept=frozenset()), "NOTHING").fallback == "unsupported"
    off = decide([DROPPED], _facts(kept=frozenset(), best_names_question=False), "NOTHING")
    assert (off.fallback, off.note, off.blank, off.verdict) == (None, "NOTHING", True, "uncertain")
    unnamed = Finding("unmentioned-terms", "note", "None ...", data={"terms": ["myopathy"]})
    noted = decide([DROPPED, unnamed], _facts(kept=frozenset()), "NOTHING")
    assert noted.note == "None of the retrieved articles mentions myopathy. NOTHING"
    assert decide([unnamed], _facts(), "NOTHING").note == "None ..."


def test_a_sentence_stated_against_its_articles_turns_the_verdict_uncertain() -> None:
    against = Finding("against-conclusions", "drop", "left out", ("2",), 1, "x")
    decision = decide([], _facts(), "NOTHING")
    assert after_verdict([], decision, "1", frozenset({"1"}), True) == (None, False)
    assert after_verdict([against], decision, "1", frozenset({"1"}), True) == (None, True)
    assert after_verdict([against], decision, "1", frozenset(), True)[0] == "against-articles"
    lost = after_verdict([against], decision, "1", frozenset({"3"}), False)
    assert lost[0] == "best-article-lost"


def _article(pmid: str, title: str, text: str, year: int) -> Article:
    section = AbstractSection(label="RESULTS", category="RESULTS", text=text)
    return Article(pmid=pmid, title=title, abstract=[section], year=year)


async def _no_reading(question: str, text: str) -> None:
    raise AssertionError("the verdict needs no reading here")


async def test_a_check_turned_off_finds_nothing_and_changes_nothing() -> None:
    articles = {
        "1": _article("1", "Aspirin and stroke", "Aspirin reduced stroke by 22%.", 2014),
    }
    written = "Aspirin reduced stroke by 22% in a trial published in 2012 [PMID:1]."
    ask = {
        "question": "Does aspirin reduce stroke?",
        "text": written,
        "verdict": None,
        "articles": articles,
        "best": articles["1"],
        "is_yes_no": False,
        "read_verdict": _no_reading,
        "nothing_supported": "NOTHING",
    }
    checked = await check_answer(**ask)  # type: ignore[arg-type]
    assert "wrong-years" in {f.check for f in checked.findings}
    assert "2012" not in checked.text and checked.cited == ["1"]
    unchecked = await check_answer(**ask, disabled={"wrong-years"})  # type: ignore[arg-type]
    assert "wrong-years" not in {f.check for f in unchecked.findings}
    assert "published in 2012" in unchecked.text


def test_the_committed_catalogue_is_the_registrys() -> None:
    from pathlib import Path

    from medlit.checks.catalogue import catalogue

    page = Path(__file__).resolve().parents[3] / "docs" / "checks.md"
    assert page.read_text() == catalogue(), (
        "run: python -m medlit.checks.catalogue > docs/checks.md"
    )
    assert all(f"`{check_id}`" in page.read_text() for check_id in ORDER)


def test_an_evidence_view_reads_its_article_once() -> None:
    from medlit.words.evidence import EvidenceView

    article = Article(
        pmid="7",
        title="Aspirin and stroke",
        abstract=[
            AbstractSection(
                label="RESULTS", category="RESULTS", text="Stroke fell by 22% in 1,000."
            ),
            AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text="Aspirin helps."),
        ],
        mesh_terms=["Aspirin", "Stroke"],
        publication_types=["Randomized Controlled Trial"],
    )
    view = EvidenceView(article)
    assert {"22", "1,000"} <= view.numbers
    assert view.conclusions == ("Aspirin helps.",)
    assert {"aspiri", "stroke"} <= view.words
    assert view.words is view.words  # computed once
    assert view.mesh == ("Aspirin", "Stroke")
    assert view.publication_types == ("Randomized Controlled Trial",)
    ctx = CheckContext("q", {"7": article}, Draft.parse(""))
    assert ctx.view("7") is ctx.view("7")


def test_a_verdict_follows_a_cited_statement_left_when_a_question_word_went_unaddressed() -> None:
    unaddressed = Finding("unaddressed-words", "note", "None ...", data={"words": ["mildly"]})
    untold = Finding("untold-subjects", "note", "None ...", data={"words": ["upstaging"]})
    unnamed = Finding("unmentioned-terms", "note", "None ...", data={"terms": ["cochlea"]})
    for note in (unaddressed, untold, unnamed):
        assert decide([DROPPED, note], _facts(), "NOTHING").verdict == "uncertain"
        left = decide([DROPPED, note], _facts(answered=True), "NOTHING")
        assert (left.verdict, left.note) == ("reread", "None ...")  # read off what is left
        assert decide([note], _facts(answered=True), "NOTHING").verdict == "reread"
    # what is left answers another population or subject: withheld all the same
    for check, key in (("populations-unspoken", "words"), ("cited-off-subject", "subject")):
        firm = Finding(check, "note", "None ...", data={key: ["children"]})
        assert decide([firm, unaddressed], _facts(answered=True), "N").verdict == "uncertain"
    # nothing citing evidence is left: no statement to follow
    gone = _facts(kept=frozenset(), answered=True, best_names_question=False)
    assert decide([DROPPED, unaddressed], gone, "N").verdict == "uncertain"
