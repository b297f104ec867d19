"""Visited topics, budgets and quote validation of the researcher."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel

from medlit.checks.claims import (
    article_quote,
    quote_in_article,
    quotes_a_result,
    result_sentence_for,
)
from medlit.config import ResearchDepth, Settings
from medlit.errors import LLMTimeout, TimeBudgetSpent
from medlit.research.models import SubQuestion
from medlit.research.prompts import ExtractedClaim
from medlit.research.researcher import search_terms
from medlit.research.tracking import (
    Budget,
    Spend,
    TimedLLM,
    VisitedTopics,
    normalise_topic,
    question_aspects,
)
from medlit.types import AbstractSection, Article
from medlit.usage import Usage, record_call, record_llm, usage_scope
from medlit.words.frame import read_frame
from tests.unit._research_llm import bare_researcher
from tests.unit._sjogren import SJOGREN


def test_normalise_topic_ignores_case_order_stop_words_and_plurals() -> None:
    assert normalise_topic("Statins and the risk of strokes?") == normalise_topic(
        "stroke risk with statin"
    )
    assert normalise_topic("Statins in children") != normalise_topic("Statins")


def test_visited_topics_without_embedder_match_normalised_text_only() -> None:
    visited = VisitedTopics(None, 0.88)
    visited.add("Does metformin reduce mortality?")
    assert visited.match("does METFORMIN reduce mortality") is not None
    assert visited.match("Does metformin lower death?") is None


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    from medlit.embeddings import load_embedder

    return load_embedder(Settings())


def test_visited_topics_match_rewordings_but_not_other_drugs_or_narrower_populations(
    embedder,  # type: ignore[no-untyped-def]
) -> None:
    visited = VisitedTopics(embedder, 0.88)
    visited.add("Does metformin reduce cardiovascular mortality in type 2 diabetes?")
    hit = visited.match("Does metformin lower cardiovascular death in type 2 diabetes?")
    assert hit is not None and hit[1] >= 0.88
    assert (
        visited.match("Does sitagliptin reduce cardiovascular mortality in type 2 diabetes?")
        is None
    )
    assert (
        visited.match("Does metformin reduce cardiovascular mortality in children with T2D?")
        is None
    )
    assert visited.match("Does metformin cause lactic acidosis?") is None


def test_budget_counts_earlier_runs_and_records_the_first_reason() -> None:
    limits = ResearchDepth(max_provider_calls=3, max_llm_calls=2, max_seconds=100)
    with usage_scope() as usage:
        budget = Budget(limits=limits, usage=usage, before=Spend(provider_calls=2, llm_calls=0))
        assert budget.allow(provider=True)
        record_call("pubmed")
        assert budget.allow(llm=True)  # the LLM budget is separate
        assert not budget.allow(provider=True)
        assert budget.stop_reason == "provider call budget of 3 used"
        record_llm("extract_facts")
        record_llm("extract_facts")
        assert not budget.allow(llm=True)
        assert budget.stop_reason == "provider call budget of 3 used"  # the first reason stays
    timed = Budget(limits=limits, usage=usage, before=Spend(elapsed_s=100.0))
    assert not timed.allow()
    assert timed.stop_reason == "time budget of 100 s used"


class _Reply(BaseModel):
    text: str


class _SlowLLM:
    """Answers after ``delay_s``; counts the calls it was sent."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.sent = 0

    def is_configured(self, task: str) -> bool:
        return True

    async def complete_json(self, task: str, messages: Any, schema: type[Any]) -> Any:
        self.sent += 1
        await asyncio.sleep(self.delay_s)
        return schema(text="written")


async def test_timed_llm_cuts_a_call_at_the_time_budget_and_sends_none_after() -> None:
    budget = Budget(limits=ResearchDepth(max_seconds=100), usage=Usage(), before=Spend())
    fast = TimedLLM(_SlowLLM(0.0), budget)
    assert (await fast.complete_json("synthesize", [], _Reply)).text == "written"
    assert budget.stop_reason is None  # time to spare: the reply as it came

    budget = Budget(
        limits=ResearchDepth(max_seconds=100), usage=Usage(), before=Spend(elapsed_s=99.8)
    )
    slow = _SlowLLM(30.0)
    llm = TimedLLM(slow, budget)
    llm.during = "synthesis"
    started = time.monotonic()
    with pytest.raises(TimeBudgetSpent, match="time budget of 100 s used during synthesis"):
        await llm.complete_json("synthesize", [], _Reply)
    assert time.monotonic() - started < 2.0  # cut at the budget, not after the reply's 30 s
    assert budget.stop_reason == "time budget of 100 s used during synthesis"
    assert budget.remaining_s() == 0.0
    with pytest.raises(LLMTimeout):  # every stage takes it as a timeout
        await llm.complete_json("synthesize", [], _Reply)
    assert slow.sent == 1  # no time left: not sent


async def test_timed_llm_passes_on_a_timeout_that_is_not_the_budget() -> None:
    class _Raises(_SlowLLM):
        async def complete_json(self, task: str, messages: Any, schema: type[Any]) -> Any:
            raise TimeoutError("a timeout of the call itself")

    budget = Budget(limits=ResearchDepth(max_seconds=100), usage=Usage(), before=Spend())
    with pytest.raises(TimeoutError, match="of the call"):
        await TimedLLM(_Raises(0.0), budget).complete_json("synthesize", [], _Reply)
    assert budget.stop_reason is None


ARTICLE = Article(
    pmid="123",
    title="Aspirin for primary prevention: a randomised trial",
    abstract=[
        AbstractSection(label="RESULTS", text="Aspirin reduced  stroke by 20% (HR 0.80, 95% CI "
                        "0.70\u20130.91) among 10\u2009000 adults."),
        AbstractSection(label="CONCLUSIONS", text="Aspirin\u2019s benefit was modest."),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("quote", "ok"),
    [
        ("Aspirin reduced stroke by 20% (HR 0.80, 95% CI 0.70-0.91)", True),
        ("...aspirin reduced STROKE by 20%...", True),
        ("Aspirin's benefit was modest.", True),
        ("a randomised trial", True),
        ("Aspirin reduced stroke by 40%", False),  # not what it says
        ("Aspirin reduced", False),  # too short to prove anything
        ("RESULTS: Aspirin reduced stroke", True),  # the label shown inline is not quoted
        ("Conclusions: aspirin's benefit was modest", True),
        ("RESULTS: Aspirin reduced stroke by 40%", False),
        ("RESULTS: Aspirin", False),  # the label does not count as quoted words
        ("METHODS: Aspirin reduced stroke", False),  # not a label of this article
        ("", False),
    ],
)
def test_quotes_must_occur_in_the_article(quote: str, ok: bool) -> None:
    assert quote_in_article(quote, ARTICLE) is ok


def test_a_quoted_label_is_left_out_of_the_quote_kept() -> None:
    # The local model quoted "Conclusions: Severe hypoglycaemia is associated with ..." from
    # the abstract it was shown (labels inline); the only article's finding was dropped.
    assert article_quote(" Conclusions:  Aspirin\u2019s benefit was modest.", ARTICLE) == (
        "Aspirin\u2019s benefit was modest."
    )
    plain = "Aspirin's benefit was modest."
    assert article_quote(plain, ARTICLE) == plain


LEPTIN = Article(
    pmid="17285311",
    title="Are serum leptin levels a prognostic factor in advanced lung cancer?",
    abstract=[
        AbstractSection(label="BACKGROUND", text="The analysis of serum leptin values did not "
                        "show any association with weight loss in earlier reports."),
        AbstractSection(label="RESULTS", category="RESULTS", text="The analysis of serum leptin "
                        "values did not show any association with the overall survival of the "
                        "patients."),
    ],
)  # fmt: skip


@pytest.mark.parametrize(
    ("quote", "kept"),
    [
        # What the local model quoted: a result, with the label it was shown inline.
        ("RESULTS: The analysis of serum leptin values did not show any association with the "
         "overall survival of the patients.", True),
        ("The analysis of serum leptin values did not show any association with weight loss",
         False),  # the background: not what the study found
    ],
)  # fmt: skip
def test_a_negative_finding_in_the_titles_words_is_kept_when_its_quote_is_a_result(
    quote: str, kept: bool
) -> None:
    researcher = bare_researcher()
    claim = ExtractedClaim(
        claim="Serum leptin levels are not a prognostic factor in advanced lung cancer.",
        quote=quote,
        pmid="17285311",
    )
    question = SubQuestion(id="q0", text=LEPTIN.title)
    finding = researcher._finding(question, LEPTIN, claim)
    assert (finding is not None) is kept
    assert quotes_a_result(quote.removeprefix("RESULTS: "), LEPTIN) is kept
    if finding is not None:
        assert finding.quote.startswith("The analysis of serum leptin")  # no label


METS = Article(
    pmid="19155657",
    title="Does accompanying metabolic syndrome contribute to heart dimensions in hypertensive "
    "patients?",
    abstract=[
        AbstractSection(label="BACKGROUND", text="Metabolic syndrome (MetS) is associated with "
                        "increased risk for cardiovascular events."),
    ],
)  # fmt: skip


def test_a_claim_in_the_questions_words_about_another_subject_is_dropped() -> None:
    # What the local model extracted for a hypoglycaemia sub-question from an article on the
    # metabolic syndrome: 4 of the claim's 6 words are in the quote, and it became a fact.
    researcher = bare_researcher()
    question = SubQuestion(
        id="q2",
        text="What are the mechanisms by which hypoglycaemia increases the risk of "
        "cardiovascular events in diabetes?",
    )
    quote = "Metabolic syndrome (MetS) is associated with increased risk for cardiovascular events."
    invented = ExtractedClaim(
        claim="Hypoglycaemia increases the risk of cardiovascular events in diabetes.", quote=quote
    )
    assert researcher._finding(question, METS, invented) is None
    said = ExtractedClaim(
        claim="Metabolic syndrome increases the risk of cardiovascular events.", quote=quote
    )
    assert researcher._finding(question, METS, said) is not None


def test_a_sub_question_keeps_the_questions_subject_and_its_own_words_go_first() -> None:
    # The local model's sub-question: the longest words gave "interest AND undergoing AND
    # laparoscopic", which found nothing; the on-point article (24267613) says "elderly",
    # "laparoscopic" and "outcome", and "underwent".
    frame = read_frame("Is laparoscopic surgery safe in elderly patients?")
    question = SubQuestion(
        id="q1",
        text="What is the primary outcome of interest in elderly patients undergoing "
        "laparoscopic surgery compared to open surgery?",
    )
    queries = search_terms(question, frame)
    assert all("laparoscopic" in q for q in queries) and "elderly" in queries[0]
    assert not any("undergoing" in q or "interest" in q for q in queries[1:])


def test_an_unplanned_sub_question_is_searched_by_its_query_words_first() -> None:
    # A sub-question with no planned query was searched first by every content word as
    # written, "undergoing" included: ANDed, it loses the abstracts that say "underwent".
    question = SubQuestion(
        id="q1", text="Does aspirin reduce the risk of stroke in adults undergoing surgery?"
    )
    frame = read_frame(question.text)
    queries = search_terms(question, frame)
    assert queries[0].startswith("(aspirin OR ") and "stroke" in queries[0]
    assert not any("undergoing" in q for q in queries)
    planned = question.model_copy(update={"search_query": "aspirin stroke prevention"})
    assert search_terms(planned, frame)[:2] == ["aspirin stroke prevention", queries[0]]


def test_other_aspects_of_one_subject_are_new_topics(embedder) -> None:  # type: ignore[no-untyped-def]
    # Issue 10: the second was skipped as a visited topic of the first (similarity 0.88).
    visited = VisitedTopics(embedder, 0.88)
    visited.add("What is the prevalence of COVID-19 in children compared to adults?")
    assert (
        visited.match("What are the clinical characteristics of COVID-19 in children compared "
                      "to adults?") is None
    )  # fmt: skip
    assert visited.match("How severe is COVID-19 in children compared with adults?") is None
    # A rewording that asks about the same aspect is still the same topic.
    hit = visited.match("How prevalent is COVID-19 among children compared with adults?")
    assert hit is not None and hit[0].startswith("What is the prevalence")
    assert question_aspects("Clinical characteristics and mortality of COVID-19") == {
        "clinical features",
        "severity",
    }
    assert question_aspects("Does aspirin lower the risk of recurrent stroke?") == frozenset()


def test_benefits_and_risks_of_one_comparison_are_two_topics(embedder) -> None:  # type: ignore[no-untyped-def]
    # The local model's quick plan: both were skipped as visited topics of the first
    # (similarity 0.93 and 0.91), so the report never looked for the risks.
    visited = VisitedTopics(embedder, 0.88)
    visited.add(
        "What is the primary outcome of interest in elderly patients undergoing laparoscopic "
        "surgery compared to open surgery?"
    )
    benefits = (
        "What are the potential benefits of laparoscopic surgery compared to open surgery in "
        "elderly patients?"
    )
    risks = (
        "What are the potential risks associated with laparoscopic surgery compared to open "
        "surgery in elderly patients?"
    )
    assert visited.match(benefits) is None and visited.match(risks) is None
    visited.add(benefits)
    assert visited.match(risks) is None
    assert (
        visited.match(
            "What are the advantages of laparoscopic over open surgery in elderly patients?"
        )
        is not None
    )
    assert question_aspects(risks) == {"harms"}
    assert question_aspects("What are the risks and benefits of statins?") == {"harms", "benefits"}


DEXAMETHASONE = Article(
    pmid="24785562",
    title="Is dexamethasone an effective alternative to oral prednisone in the treatment of "
    "pediatric asthma exacerbations?",
    abstract=[
        AbstractSection(label="BACKGROUND", category="BACKGROUND", text="We reviewed the "
                        "literature to determine if there is sufficient evidence that "
                        "dexamethasone can be used as an effective alternative in the treatment "
                        "of pediatric asthma exacerbations in the inpatient setting."),
        AbstractSection(label="RESULTS", category="RESULTS", text="Six completed pediatric "
                        "clinical trials met the inclusion criteria. All of the pediatric trials "
                        "found that prednisone is not superior to dexamethasone in treating mild "
                        "to moderate asthma exacerbations."),
        AbstractSection(label="CONCLUSIONS", category="CONCLUSIONS", text="The current "
                        "literature suggests that dexamethasone can be used as an effective "
                        "alternative to prednisone in the treatment of mild to moderate acute "
                        "asthma exacerbations in children, with the added benefits of improved "
                        "compliance, palatability, and cost. However, more research is needed "
                        "to examine the role of dexamethasone in hospitalized children."),
    ],
)  # fmt: skip
CONCLUSION = (
    "The current literature suggests that dexamethasone can be used as an effective alternative "
    "to prednisone in the treatment of mild to moderate acute asthma exacerbations in children, "
    "with the added benefits of improved compliance, palatability, and cost."
)


def test_a_claim_quoted_from_the_wrong_sentence_takes_the_result_sentence_that_says_it() -> None:
    # What the local model extracted, four times: the conclusion as its claim, beside the
    # result "prednisone is not superior ..." (negative, so the claim was dropped each time).
    researcher = bare_researcher()
    question = SubQuestion(id="q1", text=DEXAMETHASONE.title)
    claim = ExtractedClaim(
        claim="Dexamethasone is an effective alternative to oral prednisone in the treatment of "
        "pediatric asthma exacerbations.",
        quote="All of the pediatric trials found that prednisone is not superior to dexamethasone "
        "in treating mild to moderate asthma exacerbations.",
        pmid="24785562",
    )
    finding = researcher._finding(question, DEXAMETHASONE, claim)
    assert finding is not None
    assert finding.quote == CONCLUSION
    assert result_sentence_for(claim.claim, DEXAMETHASONE) == CONCLUSION


@pytest.mark.parametrize(
    "claim",
    [
        # A word the article never puts beside the others: two common words are not enough.
        "Dexamethasone cured every pediatric asthma exacerbation.",
        # Said only by the background (what the review set out to determine).
        "There is sufficient evidence on dexamethasone in the inpatient setting.",
        # The conclusion says the opposite.
        "Dexamethasone cannot be used as an effective alternative to prednisone in children.",
    ],
)
def test_no_result_sentence_stands_in_for_a_claim_the_results_do_not_say(claim: str) -> None:
    researcher = bare_researcher()
    question = SubQuestion(id="q1", text=DEXAMETHASONE.title)
    wrong = ExtractedClaim(claim=claim, quote="Six completed pediatric clinical trials met the "
                           "inclusion criteria.", pmid="24785562")  # fmt: skip
    assert result_sentence_for(claim, DEXAMETHASONE) is None
    assert researcher._finding(question, DEXAMETHASONE, wrong) is None


def test_a_claim_citing_another_article_is_not_given_a_sentence_of_this_one() -> None:
    researcher = bare_researcher()
    claim = ExtractedClaim(
        claim="Dexamethasone is an effective alternative to prednisone in the treatment of "
        "asthma exacerbations in children.",
        quote="not in this article at all, anywhere",
        pmid="11111111",
    )
    question = SubQuestion(id="q1", text=DEXAMETHASONE.title)
    assert researcher._finding(question, DEXAMETHASONE, claim) is None


def test_a_two_part_question_is_not_visited_by_its_first_part(embedder) -> None:  # type: ignore[no-untyped-def]
    # The local model's job skipped the research question itself (similarity 0.96 to its
    # first part), so the timing of exposure, asked only there, was never researched.
    first = (
        "Does binge drinking during early pregnancy increase the risk of psychomotor deficits "
        "in children?"
    )
    visited = VisitedTopics(embedder, 0.88)
    visited.add(first)
    both = first.rstrip("?") + ", and does the timing of exposure matter?"
    assert visited.match(both) is None
    assert visited.match(first.replace("increase", "raise")) is not None  # a rewording still is
    visited.add(both)
    assert visited.match(both.replace("increase", "raise")) is not None


def test_a_claim_may_report_its_result_sentences_finding_with_a_verb_it_does_not_use() -> None:
    # The local model's true claim, quoted from the results: the conclusion that says it was
    # not taken in the quote's place because of the claim's "occur".
    claim = "Fatigue in primary Sjögren's syndrome does not occur due to coexisting fibromyalgia."
    assert result_sentence_for(claim, SJOGREN) == SJOGREN.abstract[2].text
    # A word of content the sentence does not say still keeps it from standing in.
    assert result_sentence_for(claim.replace("occur", "worsen"), SJOGREN) is None


def test_a_finding_is_kept_without_the_frame_that_names_its_article() -> None:
    researcher = bare_researcher()
    question = SubQuestion(id="q1", text=DEXAMETHASONE.title)
    framed = ExtractedClaim(
        claim="The article states that dexamethasone can be used as an effective alternative "
        "to prednisone in the treatment of mild to moderate acute asthma exacerbations.",
        quote=CONCLUSION,
        pmid="24785562",
    )
    finding = researcher._finding(question, DEXAMETHASONE, framed)
    assert finding is not None
    assert finding.claim.startswith("Dexamethasone can be used as an effective alternative")


GOOGLE = Article(
    pmid="20100000",
    title="Is Google useful as a diagnostic tool in difficult immunological cases?",
    abstract=[
        AbstractSection(label="OBJECTIVE", category="OBJECTIVE", text="The aim of this study "
                        "was to evaluate whether searching Google with disease-related terms was "
                        "effective in the diagnosis of difficult immunological cases."),
        AbstractSection(label="RESULTS", category="RESULTS", text="Google found the diagnosis "
                        "in 15 of 26 cases."),
    ],
)  # fmt: skip


def test_a_studys_aim_and_a_question_are_no_findings() -> None:
    # The local model's claims: the title said as a finding over the study's aim, and the
    # title itself.
    researcher = bare_researcher()
    question = SubQuestion(id="q1", text=GOOGLE.title)
    aim = GOOGLE.abstract[0].text
    for claim in (
        "Google is useful as a diagnostic tool in difficult immunological cases.",
        "Is Google effective in the diagnosis of difficult immunological cases?",
    ):
        assert researcher._finding(question, GOOGLE, ExtractedClaim(claim=claim, quote=aim)) is None
    found = ExtractedClaim(claim="Google found the diagnosis in 15 of 26 cases.", quote=GOOGLE
                           .abstract[1].text)  # fmt: skip
    assert researcher._finding(question, GOOGLE, found) is not None
