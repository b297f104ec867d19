"""Findings and table cells that point at the article's numbered sentences; the table's columns
and certainty by question type; the answer first; the relaxed search."""

from __future__ import annotations

from typing import Any

import pytest

from medlit.research.answer import ANSWER_HEAD, VERDICT_HEAD, answer_first
from medlit.research.certainty import draft_certainty, render_certainty
from medlit.research.evidence_table import llm_row, render_table, row_reply, structure_row
from medlit.research.models import (
    COLUMNS,
    Cell,
    EvidenceRow,
    NarrativeReport,
    Reference,
    SubQuestion,
    VerifiedFact,
)
from medlit.research.pointing import OUT_OF_RANGE, numbered_sentences, pointed_quote
from medlit.research.prompts import ExtractedClaim
from medlit.research.researcher import search_steps, search_terms
from medlit.types import AbstractSection, Article, Citation
from medlit.words.frame import read_frame
from tests.unit._research_llm import bare_researcher

GLOFITAMAB = Article(
    pmid="38000001",
    title="Glofitamab Treatment in Relapsed or Refractory DLBCL after CAR T-Cell Therapy",
    abstract=[
        AbstractSection(label="BACKGROUND", text="Patients with diffuse large B-cell lymphoma "
                        "(DLBCL) relapsing after CAR T-cell therapy have a poor prognosis."),
        AbstractSection(label="RESULTS", text="We treated 42 patients with glofitamab. The "
                        "overall response rate was 55% and the complete response rate was 37%."),
        AbstractSection(label="CONCLUSIONS", text="Our data suggest that glofitamab treatment "
                        "is well tolerated and effective in patients with DLBCL relapsing after "
                        "CAR T-cell therapy."),
    ],
)  # fmt: skip
QUESTION = SubQuestion(id="q0", text="What disease can be treated with glofitamab?")
CONCLUSION = GLOFITAMAB.abstract[2].text


def _number(sentence: str) -> int:
    return next(s.number for s in numbered_sentences(GLOFITAMAB) if s.text == sentence)


def test_the_article_is_shown_numbered_title_first() -> None:
    sentences = numbered_sentences(GLOFITAMAB)
    assert [s.passage for s in sentences] == [
        "title", "BACKGROUND", "RESULTS", "RESULTS", "CONCLUSIONS"
    ]  # fmt: skip
    assert sentences[0].text == GLOFITAMAB.title and sentences[-1].text == CONCLUSION
    # Two sentences next to each other in one section make one verbatim quote; a third,
    # elsewhere, does not join them; a number past the end makes none.
    both = pointed_quote([3, 4], sentences)
    assert both == GLOFITAMAB.abstract[1].text
    assert pointed_quote([3, 5], sentences) == "We treated 42 patients with glofitamab."
    assert pointed_quote([6], sentences) is None and pointed_quote([], sentences) is None


def test_a_finding_from_sentence_numbers_quotes_them_verbatim() -> None:
    researcher = bare_researcher()
    question = QUESTION.model_copy(deep=True)
    claim = ExtractedClaim(
        sentences=[_number(CONCLUSION)],
        claim="Glofitamab is effective in DLBCL relapsing after CAR T-cell therapy.",
        direction="supports",
    )
    finding = researcher._finding(question, GLOFITAMAB, claim, numbered_sentences(GLOFITAMAB))
    assert finding is not None and not finding.quoted
    assert finding.claim == claim.claim and finding.quote == CONCLUSION
    assert finding.sentences == [5] and finding.direction == "supports"


def test_an_out_of_range_number_drops_that_finding_with_its_reason() -> None:
    researcher = bare_researcher()
    question = QUESTION.model_copy(deep=True)
    claim = ExtractedClaim(sentences=[12], claim="Glofitamab treats DLBCL.")
    assert researcher._finding(question, GLOFITAMAB, claim, numbered_sentences(GLOFITAMAB)) is None
    assert question.dropped_findings == {OUT_OF_RANGE: 1}


def test_a_restatement_that_fails_its_check_falls_back_to_the_quoted_sentence() -> None:
    # The 1.5B model's paraphrase says more than its sentence: the sentence stands instead.
    researcher = bare_researcher()
    question = QUESTION.model_copy(deep=True)
    claim = ExtractedClaim(
        sentences=[_number(CONCLUSION)], claim="Glofitamab cures every lymphoma in children."
    )
    finding = researcher._finding(question, GLOFITAMAB, claim, numbered_sentences(GLOFITAMAB))
    assert finding is not None and finding.quoted
    assert finding.claim == finding.quote == CONCLUSION
    # Written as a quote instead of numbers, the same paraphrase is dropped as before.
    quoted = ExtractedClaim(claim=claim.claim, quote=CONCLUSION)
    assert researcher._finding(question, GLOFITAMAB, quoted) is None


def test_a_model_that_writes_quotes_still_works_through_the_quote_lookup() -> None:
    researcher = bare_researcher()
    claim = ExtractedClaim(
        claim="Glofitamab treatment is well tolerated in DLBCL.", quote=CONCLUSION.upper()
    )
    finding = researcher._finding(QUESTION, GLOFITAMAB, claim, numbered_sentences(GLOFITAMAB))
    assert finding is not None and finding.sentences == [] and not finding.quoted


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_each_question_type_has_its_columns(kind: str) -> None:
    fields = set(row_reply(kind).model_fields) - {"n"}
    assert fields == set(COLUMNS[kind])
    row = structure_row(GLOFITAMAB, read_frame(QUESTION.text), kind=kind)
    unused = set(row.cells()) - set(COLUMNS[kind])
    assert all(getattr(row, name) is None for name in unused), kind
    assert (row.direction == "not applicable") is (kind in {"frequency", "definition", "list"})
    head = render_table([row], columns=COLUMNS[kind])[2]
    assert head.count("|") == len(COLUMNS[kind]) + 2 + (head.endswith("Direction |")) + 1


class _Model:
    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def is_configured(self, task: object) -> bool:
        return True

    async def complete_json(self, task: object, messages: Any, schema: Any) -> Any:
        self.prompts.append(messages[0]["content"] + messages[-1]["content"])
        return schema.model_validate(self.reply)


async def test_table_cells_point_at_sentences_like_findings() -> None:
    model = _Model({
        "answer": {"sentences": [5], "text": "diffuse large B-cell lymphoma after CAR T-cells"},
    })  # fmt: skip
    row = await llm_row(GLOFITAMAB, read_frame(QUESTION.text), model, kind="list")  # type: ignore[arg-type]
    assert (
        "answer: what the article says" in model.prompts[0]
        and "[5] (CONCLUSIONS)" in (model.prompts[0])
    )
    assert row.answer is not None and row.answer.quote == CONCLUSION
    assert row.sentences == {"answer": [5]}
    # An entry its sentence does not hold: the sentence itself; a number past the end: dropped.
    model = _Model({
        "population": {"sentences": [3], "text": "42 children with asthma"},
        "estimate": {"sentences": [9], "text": "55%"},
    })  # fmt: skip
    row = await llm_row(GLOFITAMAB, read_frame(QUESTION.text), model, kind="frequency")  # type: ignore[arg-type]
    assert row.population is not None
    assert row.population.text == row.population.quote == "We treated 42 patients with glofitamab."
    assert row.estimate is None and row.dropped["estimate"] == OUT_OF_RANGE


def _row(key: str, design: str, direction: str = "unclear", **cells: Cell) -> EvidenceRow:
    return EvidenceRow(
        pmid=key, article_key=f"pmid:{key}", design=design, direction=direction, **cells
    )  # type: ignore[arg-type]


def test_certainty_is_not_applicable_to_a_list_and_a_review_is_not_a_trial() -> None:
    rows = [_row("1", "RCT"), _row("2", "systematic review/meta-analysis")]
    listed = draft_certainty(rows, [], read_frame("Which diseases does glofitamab treat?"))
    assert listed.level == "not applicable" and "list" in listed.start_reason
    assert "not applicable" in "\n".join(render_certainty(listed))
    survival = read_frame("Does glofitamab prolong survival?")
    effect = draft_certainty(rows, [], survival)
    assert effect.start == "high" and "1 of 1 primary studies" in effect.start_reason
    assert "1 review not counted" in effect.start_reason
    reviews = draft_certainty(rows[1:], [], survival)
    assert reviews.start == "low" and "rests on 1 review" in reviews.start_reason


def _report(*keys: str) -> NarrativeReport:
    refs = [Reference(number=n, article_key=f"pmid:{k}", pmid=k, title="t") for n, k in
            enumerate(keys, start=1)]  # fmt: skip
    return NarrativeReport(title="t", question="q", executive_summary="The summary.",
                           references=refs)  # fmt: skip


def _fact(*keys: str) -> VerifiedFact:
    return VerifiedFact(statement="s", confidence="low", sub_question_id="q0",
                        sources=[Citation(pmid=k, title="t") for k in keys])  # fmt: skip


def _study(key: str, title: str) -> Article:
    return Article(pmid=key, title=title, abstract=[AbstractSection(text="300 patients.")])


def _read(*keys: str, title: str = "Glofitamab and survival in DLBCL") -> dict[str, Article]:
    """The articles of ``keys``, by key, each titled ``title``."""
    return {f"pmid:{k}": _study(k, title) for k in keys}


def test_the_summary_opens_with_the_answer_items_or_the_verdict() -> None:
    answer = Cell(text="DLBCL relapsing after CAR T-cell therapy", quote=CONCLUSION)
    rows = [_row("1", "cohort", answer=answer), _row("2", "cohort")]
    listed = read_frame("Which diseases can be treated with glofitamab?")
    read = _read("1", "2")
    summary = answer_first(_report("1", "2"), rows, listed, [_fact("1", "2")], read)
    assert summary.startswith(f"{ANSWER_HEAD} DLBCL relapsing after CAR T-cell therapy [1].")
    assert summary.endswith("The summary.")
    # Only an article backing a verified fact answers; none: the summary as it was.
    assert answer_first(_report("1"), rows, listed, [_fact("2")], read) == "The summary."
    asked = read_frame("Does glofitamab improve survival in DLBCL?")
    rows = [_row("1", "RCT", "supports"), _row("2", "RCT", "opposes")]
    split = answer_first(_report("1", "2"), rows, asked, [_fact("1", "2")], read)
    assert split.startswith(f"{VERDICT_HEAD} Uncertain") and "yes [1]; no [2]" in split
    yes = answer_first(_report("1"), rows[:1], asked, [_fact("1")], read)
    assert yes.startswith(f"{VERDICT_HEAD} Yes") and "[1]" in yes


def test_one_observational_study_leans_a_report_no_verdict() -> None:
    # The digest's policy: two studies agreeing, or one systematic review or RCT.
    asked = read_frame("Does glofitamab improve survival in DLBCL?")
    read = _read("1", "2")
    one = [_row("1", "cohort", "supports")]
    lean = answer_first(_report("1"), one, asked, [_fact("1")], read)
    assert lean.startswith(f"{VERDICT_HEAD} Uncertain")
    assert "lean yes [1], which is not a verdict" in lean
    two = [_row("1", "cohort", "supports"), _row("2", "case-control", "supports")]
    agreed = answer_first(_report("1", "2"), two, asked, [_fact("1", "2")], read)
    assert agreed.startswith(f"{VERDICT_HEAD} Yes") and "[1][2]" in agreed
    against = [_row("1", "cohort", "opposes"), _row("2", "cohort", "no difference")]
    said_no = answer_first(_report("1", "2"), against, asked, [_fact("1", "2")], read)
    assert said_no.startswith(f"{VERDICT_HEAD} No")


def test_a_report_verdict_from_studies_of_another_site_is_uncertain() -> None:
    wrist = _read("1", title="Vitamin C and complex regional pain syndrome after wrist fractures")
    rows = [_row("1", "RCT", "supports")]
    hip = read_frame("Does vitamin C prevent complex regional pain syndrome after hip fractures?")
    withheld = answer_first(_report("1"), rows, hip, [_fact("1")], wrist)
    assert withheld.startswith(f"{VERDICT_HEAD} Uncertain") and "speaks of hip" in withheld
    asked_wrist = read_frame(hip.question.replace("hip", "wrist"))
    kept = answer_first(_report("1"), rows, asked_wrist, [_fact("1")], wrist)
    assert kept.startswith(f"{VERDICT_HEAD} Yes")


def test_a_conclusion_about_another_subject_never_counts_toward_a_report_verdict() -> None:
    # Issue 61: "Does exercise in pregnancy prevent postnatal depression?" counted a
    # conclusion on binge drinking and children's motor function toward its "No".
    asked = read_frame("Does exercise in pregnancy prevent postnatal depression?")
    on = _study("1", "Exercise in pregnancy and postnatal depression: a randomised trial")
    drinking = _study("2", "Binge drinking in pregnancy and motor function in children")
    walking = _study("3", "Exercise in pregnancy and gestational weight gain")
    read = {a.key: a for a in (on, drinking, walking)}
    against = [_row("2", "RCT", "opposes"), _row("3", "RCT", "opposes")]
    # Every study read is about something else: no verdict, and the line names them.
    off = answer_first(_report("1", "2", "3"), against, asked, [_fact("2", "3")], read)
    assert off.startswith(
        f"{VERDICT_HEAD} Uncertain: none of the studies read [2][3] speaks of exercise and "
        "postnatal depression together, so their conclusions are set aside."
    )
    only_drinking = answer_first(_report("2"), against[:1], asked, [_fact("2")], read)
    assert "speaks of exercise, so their conclusions are set aside" in only_drinking
    # The one study about the question decides; the others' "no" is not counted against it.
    rows = [_row("1", "RCT", "supports"), *against]
    yes = answer_first(_report("1", "2", "3"), rows, asked, [_fact("1", "2", "3")], read)
    assert yes.startswith(f"{VERDICT_HEAD} Yes, as the conclusions of the studies read say [1].")
    # A study not at hand cannot show what it speaks of: it is set aside too.
    unread = answer_first(_report("1"), rows[:1], asked, [_fact("1")], {})
    assert unread.startswith(f"{VERDICT_HEAD} Uncertain: none of the studies read [1]")


def test_a_sub_question_is_searched_by_the_frame_never_without_its_subject() -> None:
    # "diseases AND treated AND glofitamab" found nothing, and ORing every word brought 20
    # articles on other diseases: the subject stays in every search, the outcome goes last.
    text = "What diseases can be treated with glofitamab?"
    frame = read_frame(text)
    question = SubQuestion(id="q1", text=text)
    steps = search_steps(question, frame)
    queries = [query for query, _ in steps]
    assert queries == search_terms(question, frame)
    assert all("glofitamab" in query for query in queries)
    assert queries[-1] == "glofitamab" and steps[-1][1] == "dropped the outcome: diseases"
    # A sub-question keeps the research question's subject; its own words say which part it
    # asks, dropped one at a time, the commonest first; the question's outcome is searched
    # where the sub-question names it.
    part = SubQuestion(id="q2", text="What bleeding risk does aspirin carry in the elderly?")
    asked = read_frame("Does aspirin prevent recurrent stroke?")
    steps = search_steps(part, asked)
    assert all("aspirin" in query for query, _ in steps)
    assert "bleeding" in steps[0][0] and "stroke" not in steps[0][0]
    assert [why for _, why in steps[1:]] == [
        "dropped the qualifier: carry",
        "dropped the qualifier: bleeding",
    ]
    named = SubQuestion(id="q3", text="Does aspirin prevent recurrent stroke in women?")
    assert "recurrent stroke" in search_steps(named, asked)[0][0]


def test_ask_and_research_plan_the_same_searches() -> None:
    from medlit.agent.query import search_steps as ask_steps

    text = "Does concept mapping impair learning outcome of nursing students?"
    frame = read_frame(text)
    research = [q for q, _ in search_steps(SubQuestion(id="q0", text=text), frame)]
    # The same, but the question's last resorts (its subject by fewer words, any of its rarer
    # words): a research part searches its own part of the question, never by those.
    assert research == [step.query for step in ask_steps(frame) if not step.last_resort]
    # The change asked about is no word to search by: the articles say which way it went.
    assert not any("impair" in query for query in research)
