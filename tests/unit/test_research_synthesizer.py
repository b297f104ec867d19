"""generate_report (word counts, expansion, citations, references) and report rendering."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from medlit.config import ResearchSettings
from medlit.research.models import (
    ConflictingClaim,
    Discrepancy,
    ResearchPlan,
    SubQuestion,
    SubQuestionStatus,
    VerifiedFact,
)
from medlit.research.report import render_json, render_markdown
from medlit.research.synthesizer import (
    build_references,
    clean_citations,
    count_words,
    evidence_quality,
    generate_report,
    report_title,
)
from medlit.types import AbstractSection, Article, Citation
from medlit.words.frame import read_frame
from tests.unit._research_llm import ScriptedLLM

ARTICLES = {
    a.key: a
    for a in [
        Article(pmid="111", doi="10.1000/abc", title="Trial of X", year=2020, journal="J Med",
                publication_types=["Randomized Controlled Trial"]),
        Article(pmid="222", title="Cohort on X", year=2018,
                publication_types=["Observational Study"]),
        Article(pmid="333", title="Review of X", publication_types=["Meta-Analysis"]),
    ]
}  # fmt: skip


def _cite(pmid: str) -> Citation:
    return Citation.from_article(ARTICLES[f"pmid:{pmid}"])


FACTS = [
    VerifiedFact(statement="X lowers Y", confidence="high", sub_question_id="q1",
                 sources=[_cite("111"), _cite("222")]),
    VerifiedFact(statement="X is safe", confidence="low", sub_question_id="q2",
                 sources=[_cite("333")]),
    # A source that was never retrieved must never become a reference.
    VerifiedFact(statement="Ghost", confidence="low", sub_question_id="q2",
                 sources=[Citation(pmid="999", title="Invented")]),
]  # fmt: skip
PLAN = ResearchPlan(
    question="Does X reduce Y?",
    depth="quick",
    sub_questions=[
        SubQuestion(id="q1", text="Does X reduce Y?"),
        SubQuestion(id="q2", text="Is X safe?"),
        SubQuestion(id="q1.1", text="In children?", depth=2, parent_id="q1",
                    status=SubQuestionStatus.SKIPPED, skip_reason="depth exceeded (2 > max 1)"),
    ],
)  # fmt: skip


def _words(n: int, cite: str = " [1]") -> str:
    return " ".join(["benefit"] * n) + cite + "."


def test_count_words_ignores_citations() -> None:
    assert count_words("X lowers Y [1, 2] in adults [3].") == 5


def test_clean_citations_removes_what_was_not_retrieved() -> None:
    from medlit.research.synthesizer import build_references

    refs = build_references(FACTS, [], ARTICLES)
    text = (
        "X works [1, 7] and is safe [3-5] (PMID 999), see PMID: 111 and doi:10.1000/abc "
        "or 10.9999/fake [8]."
    )
    cleaned, cited = clean_citations(text, refs)
    assert cited == [1, 3]
    assert "[1]" in cleaned and "[3]" in cleaned
    assert (
        "7" not in cleaned
        and "999" not in cleaned
        and "fake" not in cleaned
        and "[8]" not in cleaned
    )
    assert "PMID: 111" in cleaned and "10.1000/abc" in cleaned


async def test_sections_are_expanded_a_bounded_number_of_times_then_flagged_short() -> None:
    settings = ResearchSettings(min_section_words=60, expand_tries=2)

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        system = msgs[0]["content"]
        user = msgs[1]["content"]
        if system.startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "X lowers Y [1] [9]."}
        if "Is X safe?" in user:  # always too short, even expanded
            return {"heading": "Safety", "content": _words(10, " [3]")}
        if system.startswith("medlit research: expand"):
            return {"heading": "Efficacy", "content": _words(70)}
        return {"heading": "Efficacy", "content": _words(20)}

    llm = ScriptedLLM(answer)
    report = await generate_report(
        read_frame(PLAN.question), FACTS, [], ARTICLES, llm, settings, plan=PLAN
    )
    # summary; efficacy: draft + 1 expansion (then long enough); safety: draft + 2 (the bound)
    assert llm.tasks() == ["synthesize"] * 6
    efficacy, safety = report.sections
    assert (efficacy.heading, efficacy.short, efficacy.word_count) == ("Efficacy", False, 70)
    assert (safety.heading, safety.short, safety.word_count) == ("Safety", True, 10)
    assert report.executive_summary == "X lowers Y [1]."  # [9] is not a reference
    assert [r.pmid for r in report.references] == ["111", "222", "333"]  # 999 was not retrieved
    assert "1 RCT" in efficacy.evidence_quality and "1 observational" in efficacy.evidence_quality
    assert "systematic review" in safety.evidence_quality
    assert any("depth exceeded" in item for item in report.limitations)
    assert any(
        "on little evidence" in item and "marked short" in item for item in report.limitations
    )
    assert not any("stayed under" in item for item in report.limitations)


async def test_a_section_is_not_expanded_again_after_an_expansion_that_only_padded() -> None:
    # The local model padded a one-fact section with uncited textbook prose, twice; grounding
    # then removed all of it: the second expansion was an LLM call wasted.
    settings = ResearchSettings(min_section_words=300, expand_tries=3)
    padding = " ".join(["Textbook prose about the topic in general."] * 12)

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        system = msgs[0]["content"]
        if system.startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "X lowers Y [1]."}
        if system.startswith("medlit research: expand"):
            return {"heading": "Efficacy", "content": f"X lowers Y [1]. {padding}"}
        return {"heading": "Efficacy", "content": "X lowers Y [1]."}

    llm = ScriptedLLM(answer)
    report = await generate_report(
        read_frame(PLAN.question), FACTS[:1], [], ARTICLES, llm, settings, plan=PLAN
    )
    assert llm.tasks() == ["synthesize"] * 3  # summary, draft, one expansion (not three)
    (section,) = report.sections
    assert section.content == "X lowers Y [1]." and section.short


async def test_a_topic_repeating_an_earlier_topics_finding_joins_its_section() -> None:
    # The local model read one article's finding for two sub-questions, nearly word for word:
    # two one-sentence sections said the same thing, at a section call each.
    first = FACTS[0].model_copy(
        update={"statement": "Serum leptin is not a prognostic factor in advanced lung cancer"}
    )
    repeated = first.model_copy(
        update={"statement": f"{first.statement} patients", "sub_question_id": "q2"}
    )
    other_source = repeated.model_copy(update={"sources": [_cite("333")]})

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        if msgs[0]["content"].startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "X lowers Y [1]."}
        return {"heading": "Leptin", "content": f"{first.statement} [1]."}

    settings = ResearchSettings(expand_tries=0)
    llm = ScriptedLLM(answer)
    facts = [first, repeated]
    report = await generate_report(
        read_frame(PLAN.question), facts, [], ARTICLES, llm, settings, plan=PLAN
    )
    assert llm.tasks() == ["synthesize"] * 2  # the summary and one section
    (section,) = report.sections
    assert section.sub_question_ids == ["q1", "q2"]
    # The same words from another article are a finding of their own: two sections.
    llm = ScriptedLLM(answer)
    facts = [first, other_source]
    report = await generate_report(
        read_frame(PLAN.question), facts, [], ARTICLES, llm, settings, plan=PLAN
    )
    assert [s.sub_question_ids for s in report.sections] == [["q1"], ["q2"]]


async def test_no_facts_gives_a_report_without_llm_calls() -> None:
    llm = ScriptedLLM(lambda task, msgs: AssertionError("no call expected"))
    report = await generate_report(read_frame("Q?"), [], [], {}, llm, ResearchSettings())
    assert llm.calls == [] and report.sections == [] and report.references == []
    assert report.executive_summary == (
        "No articles were found for this question, so this report has no findings."
    )


async def test_a_report_whose_every_claim_was_dropped_names_the_articles_it_read() -> None:
    # The local model read the one article on the question three times and gave each time
    # fatigue's 68% as fibromyalgia's prevalence: every claim was dropped, and the report
    # said no evidence answering the question was found.
    question = "How common is fibromyalgia in patients with primary Sjögren's syndrome?"
    read = {
        "pmid:11053064": Article(pmid="11053064", title="Fatigue in primary Sjögren's "
                                 "syndrome: is there a link with the fibromyalgia syndrome?"),
        "pmid:27991408": Article(pmid="27991408", title="Do dermatomyositis and polymyositis "
                                 "affect similar thigh muscles?"),
    }  # fmt: skip
    llm = ScriptedLLM(lambda task, msgs: AssertionError("no call expected"))
    report = await generate_report(read_frame(question), [], [], read, llm, ResearchSettings())
    assert llm.calls == []
    assert report.executive_summary == (
        "2 articles were found, but nothing they were read to say could be confirmed in their "
        "own text, so this report draws no conclusion from them. Found on fibromyalgia, to "
        "read for yourself: Fatigue in "
        "primary Sjögren's syndrome: is there a link with the fibromyalgia syndrome? (PMID "
        "11053064)."
    )


ORAL_CONTRACEPTIVES = (
    "Is oral contraceptive use associated with colorectal cancer risk in pre-menopausal women?"
)


async def test_a_report_with_no_fact_names_articles_on_the_frames_subject() -> None:
    # Issue 61: the question's words kept "colorectal", "cancer" and "pre-menopausal" of an
    # article that says nothing of oral contraceptives, and named it as on the subject.
    frame = read_frame(ORAL_CONTRACEPTIVES)
    cancer = Article(pmid="1", title="Colorectal cancer risk in pre-menopausal women")
    pill = Article(pmid="2", title="Oral contraceptives and colorectal cancer: a cohort study")
    llm = ScriptedLLM(lambda task, msgs: AssertionError("no call expected"))
    off = await generate_report(frame, [], [], {cancer.key: cancer}, llm, ResearchSettings())
    assert off.executive_summary.endswith(
        "None of them, by its title, is about oral contraceptive use."
    )
    both = {cancer.key: cancer, pill.key: pill}
    report = await generate_report(frame, [], [], both, llm, ResearchSettings())
    assert report.executive_summary.endswith(
        "Found on oral contraceptive use, to read for yourself: Oral contraceptives and "
        "colorectal cancer: a cohort study (PMID 2)."
    )
    assert report.question == ORAL_CONTRACEPTIVES and llm.calls == []


async def test_the_summary_and_section_prompts_tell_the_frames_subject_and_outcome() -> None:
    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        if msgs[0]["content"].startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "X lowers Y [1]."}
        return {"heading": "Efficacy", "content": "X lowers Y [1]."}

    llm = ScriptedLLM(answer)
    frame = read_frame(ORAL_CONTRACEPTIVES)
    settings = ResearchSettings(expand_tries=0)
    await generate_report(frame, FACTS[:1], [], ARTICLES, llm, settings, plan=PLAN)
    summary, section = (msgs[1]["content"] for _, msgs in llm.calls)
    asked = (
        "Subject: oral contraceptive use\nOutcome: colorectal cancer risk\n"
        "Populations: women, colorectal\n\n"
    )
    assert summary.startswith(
        f"Research question: {ORAL_CONTRACEPTIVES}\n{asked}Verified facts:\n- (high"
    )
    assert section.startswith(f"Topic: Does X reduce Y?\n{asked}Verified facts:\n- (high")
    # A frame that read no subject, outcome or population adds no line.
    llm = ScriptedLLM(answer)
    bare = replace(read_frame("Q?"), subject="")
    await generate_report(bare, FACTS[:1], [], ARTICLES, llm, settings, plan=PLAN)
    assert llm.calls[0][1][1]["content"].startswith("Research question: Q?\n\nVerified facts")


async def test_a_short_plan_is_a_limitation_of_the_report() -> None:
    short = PLAN.model_copy(update={"note": "The planner proposed 1 usable sub-question."})
    llm = ScriptedLLM(lambda task, msgs: AssertionError("no call expected"))
    report = await generate_report(
        read_frame("Q?"), [], [], {}, llm, ResearchSettings(), plan=short
    )
    assert report.limitations[0] == "The planner proposed 1 usable sub-question."
    # With no second source, "no conflicting findings" would say more than was checked.
    assert "Fewer than two articles were cited, so no findings" in render_markdown(report)


async def test_markdown_and_json_rendering() -> None:
    discrepancy = Discrepancy(
        topic="Effect size",
        sub_question_id="q1",
        claims=[
            ConflictingClaim(claim="Large effect", sources=[_cite("111")]),
            ConflictingClaim(claim="No effect", sources=[_cite("222")]),
        ],
    )

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        if msgs[0]["content"].startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "Summary [1]."}
        return {"heading": "Topic", "content": _words(300)}

    report = await generate_report(
        read_frame("Does X reduce Y?"), FACTS[:1], [discrepancy], ARTICLES, ScriptedLLM(answer),
        ResearchSettings(), plan=PLAN,
    )  # fmt: skip
    markdown = render_markdown(report)
    assert markdown.startswith("# X and Y\n")
    assert "## Executive summary" in markdown and "## Topic" in markdown
    assert "> **Evidence quality:** Based on 2 articles" in markdown
    assert "## Discrepancies\n\n### Effect size\n\n- Large effect [1]\n- No effect [2]" in markdown
    assert (
        "1. Trial of X. J Med (2020). _RCT_. PMID: [111](https://pubmed.ncbi.nlm.nih.gov/111/)."
        in markdown
    )
    assert "DOI: [10.1000/abc](https://doi.org/10.1000/abc)" in markdown
    data = json.loads(render_json(report))
    assert data["references"][0]["pmid"] == "111" and data["sections"][0]["short"] is False


async def test_section_sentences_that_cite_no_verified_fact_are_left_out() -> None:
    # Asked for 60 words from one fact, the local model padded a section with textbook prose
    # citing nothing; another section cited only a reference that is not in the report.
    settings = ResearchSettings(min_section_words=60, expand_tries=0)
    padding = " ".join(["Surgery has improved a great deal over the last decades."] * 8)

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        system, user = msgs[0]["content"], msgs[1]["content"]
        if system.startswith("medlit research: summary"):
            return {"title": "X and Y", "executive_summary": "X lowers Y [1]."}
        if "Is X safe?" in user:
            return {"heading": "Safety", "content": f"{padding} X is safe [9]."}
        return {"heading": "Efficacy", "content": f"X lowers Y (0.67 vs. 1.58) [1].\n\n{padding}"}

    report = await generate_report(
        read_frame(PLAN.question), FACTS, [], ARTICLES, ScriptedLLM(answer), settings, plan=PLAN
    )
    efficacy, safety = report.sections
    assert efficacy.content == "X lowers Y (0.67 vs. 1.58) [1]."
    assert efficacy.short and efficacy.word_count == 8 and efficacy.references == [1]
    # Nothing of the draft held: the section shows its verified facts, with their references.
    assert safety.content == "The verified findings on this topic: X is safe [3]."
    assert safety.references == [3]
    assert any(
        item.startswith("17 sentences drafted for the sections were left out")
        for item in report.limitations
    ), report.limitations
    assert "Surgery has improved" not in render_markdown(report)


def test_a_title_does_not_claim_a_study_design_the_report_is_not() -> None:
    # The local model titled a report on 2 articles "...: A Systematic Review".
    cases = {
        "Hypoglycaemia and Cardiovascular Events in Diabetes: A Systematic Review": (
            "Hypoglycaemia and Cardiovascular Events in Diabetes"
        ),
        "Statins and dementia \u2013 a meta-analysis": "Statins and dementia",
        "A Systematic Review of Statins": "Research report: Q?",
        "Leptin in advanced lung cancer": "Leptin in advanced lung cancer",
        "  ": "Research report: Q?",
        "Dexamethasone for Pediatric Asthma Exacerbations: A Comparative Study": (
            "Dexamethasone for Pediatric Asthma Exacerbations"
        ),
    }
    for drafted, title in cases.items():
        assert report_title(drafted, "Q?") == title
    # Evidence that does not answer the question gets no topic of the model's making; a title
    # in the question's words stays.
    question = "Does laparoscopic surgery improve outcomes compared with open surgery in elderly?"
    drafted = "Comparison of Laparoscopic and Open Surgery in Elderly Patients for Weight Loss"
    assert report_title(drafted, question, answered=False) == f"Research report: {question}"
    assert report_title(drafted, question) == drafted
    kept = "Laparoscopic Surgery vs. Open Surgery in the Elderly: A Comparative Study"
    assert (
        report_title(kept, question, answered=False)
        == "Laparoscopic Surgery vs. Open Surgery in the Elderly"
    )


def test_the_evidence_note_and_the_references_give_an_unindexed_article_one_design() -> None:
    # PubMed lists only "Journal Article" until it indexes an article: its stated design counts
    # in the section's evidence note as in its reference, not "other" in one and RCT in the other.
    trial = Article(
        pmid="444", title="Aspirin after stroke", publication_types=["Journal Article"],
        abstract=[AbstractSection(label="METHODS", text="Patients were randomized to aspirin.")],
    )  # fmt: skip
    fact = VerifiedFact(statement="Aspirin helps", confidence="high", sub_question_id="q1",
                        sources=[Citation.from_article(trial)])  # fmt: skip
    note = evidence_quality([fact], {trial.key: 1}, {trial.key: trial})
    (reference,) = build_references([fact], [], {trial.key: trial})
    assert reference.study_type == "RCT"
    assert "(1 RCT)" in note and "No randomised trial" not in note


async def _one_fact_report(
    question: str, article: Article, statement: str, title: str, summary: str, section: str
) -> Any:
    """The report on ``question`` from one fact citing ``article``, as a model that drafts
    ``title`` and ``summary``, and ``section`` for the one sub-question (the question), writes
    it (no expansion)."""
    fact = VerifiedFact(
        statement=statement,
        confidence="low",
        sub_question_id="q1",
        sources=[Citation.from_article(article)],
    )
    plan = ResearchPlan(
        question=question, depth="quick", sub_questions=[SubQuestion(id="q1", text=question)]
    )

    def answer(task: str, msgs: list[dict[str, str]]) -> Any:
        if msgs[0]["content"].startswith("medlit research: summary"):
            return {"title": title, "executive_summary": summary}
        return {"heading": "Findings", "content": section}

    settings = ResearchSettings(min_section_words=50, expand_tries=0)
    return await generate_report(
        read_frame(question),
        [fact],
        [],
        {article.key: article},
        ScriptedLLM(answer),
        settings,
        plan=plan,
    )


async def test_a_report_whose_evidence_does_not_answer_is_titled_by_its_question() -> None:
    # The local model's report: its one fact was on sleeve gastrectomy, its summary said
    # nothing a fact backs, but its one section did (the title once read that section's check).
    question = "Does laparoscopic surgery improve outcomes compared with open surgery in elderly?"
    sleeve = Article(
        pmid="24827404",
        title="Is resected stomach volume related to weight loss after laparoscopic sleeve "
        "gastrectomy?",
    )
    report = await _one_fact_report(
        question,
        sleeve,
        "Mean excess body weight loss was 62% at 12 months after sleeve gastrectomy",
        title="Comparison of Laparoscopic and Open Surgery in Elderly Patients for Weight Loss",
        summary="Laparoscopic surgery improves outcomes in the elderly [1].",
        section="Mean excess body weight loss was 62% at 12 months after sleeve gastrectomy [1].",
    )
    assert report.executive_summary.startswith("The evidence found does not answer")
    assert report.sections[0].content.startswith("Mean excess body weight loss")
    assert report.title == f"Research report: {question}"


async def test_a_report_spells_out_abbreviations_and_reads_no_citation_as_an_author() -> None:
    trial = Article(
        pmid="444",
        title="Re-siting of cannulae",
        abstract=[AbstractSection(text="Peripheral venous thrombophlebitis (PVT) is common.")],
    )
    report = await _one_fact_report(
        "Does re-siting cannulae reduce PVT?",
        trial,
        "Re-siting cannulae reduced PVT",
        title="Re-siting",
        summary="Re-siting cannulae reduced PVT [1].",
        section="Re-siting cannulae reduced PVT [1]. The study by [1] saw PVT fall.",
    )
    spelled = "Re-siting cannulae reduced peripheral venous thrombophlebitis (PVT) [1]."
    assert report.executive_summary == spelled
    assert report.sections[0].content == f"{spelled} The study [1] saw PVT fall."
