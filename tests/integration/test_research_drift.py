"""Research with a model that plans and summarises badly (what a 1.5B model did, issue 10):
the plan stays anchored, empty searches broaden, and the summary never claims what the
verified facts do not say."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from medlit.config import Settings
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.runtime import open_orchestrator
from tests.conftest import shared_data_path
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ARTICLES, ResearchResponder, numbered_lines


class CarelessResponder(ResearchResponder):
    """Drifting sub-questions, honest extraction of whatever it reads, a hopeful summary."""

    def _extract(self, request_json: dict[str, Any]) -> dict[str, Any]:
        user = request_json["messages"][-1]["content"]
        pmid = re.search(r"Article PMID: (\d+)", user).group(1)  # type: ignore[union-attr]
        first = next(t for _, where, t in numbered_lines(user) if where != "title").rstrip(".")
        return {"claims": [{"claim": first + ".", "quote": first, "pmid": pmid, "numbers": []}]}

    def _summary(self, request_json: dict[str, Any]) -> dict[str, Any]:
        return {
            "title": "Vitamin D and fractures",
            "executive_summary": "Evidence from various studies indicates that vitamin D "
            "supplementation may have some protective effects against fractures [1]. More "
            "research is needed.",
        }


DRIFT = [
    {"text": "What is the population of older adults?", "priority": 1,
     "search_query": "older adults population"},
    {"text": "What is the outcome of interest in this research question?", "priority": 2},
    {"text": "How common are falls in older adults?", "priority": 3,
     "search_query": "falls older adults"},
]  # fmt: skip


def _configure(settings: Settings, eutils: FakeEutils, llm: FakeLLMServer) -> Settings:
    settings.pubmed.base_url = eutils.base_url
    settings.pubmed.requests_per_second = 50.0
    settings.local.enabled = False
    settings.search.default_source = "pubmed"
    settings.llm.base_url = llm.base_url
    settings.llm.model = "small-model"
    settings.llm.max_retries = 0
    settings.research.min_section_words = 50
    return settings


async def _research(settings: Settings, question: str) -> ResearchJob:
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(question, "quick")
        return await orchestrator.run(job)


@pytest.fixture
def pubmedqa_eutils() -> Iterator[FakeEutils]:
    xml = shared_data_path("pubmedqa", "pqal_dev_pubmed.xml")
    with FakeEutils.from_xml(xml, rate_limit=None, rate_limit_with_key=None) as fake:
        yield fake


async def test_a_question_the_corpus_cannot_answer_gets_a_report_that_says_so(
    settings: Settings, pubmedqa_eutils: FakeEutils
) -> None:
    question = "Does vitamin D supplementation prevent fractures in older adults?"
    responder = CarelessResponder(plan=list(DRIFT))
    with FakeLLMServer(responder=responder) as llm:
        job = await _research(_configure(settings, pubmedqa_eutils, llm), question)
        extracted = [
            re.search(r"^\[1\] \(title\) (.*)$", r.json["messages"][-1]["content"], re.M).group(1)  # type: ignore[union-attr]
            for r in llm.completions
            if "medlit research: extract" in r.json["messages"][0]["content"]
        ]
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.plan is not None
    # The drifting sub-questions were dropped; the question itself was researched.
    assert [q.text for q in job.plan.sub_questions] == [question]
    # Only articles about the question's subject were read (no falls, no skull fractures).
    assert extracted and all(re.search(r"vitamin|fracture", t, re.I) for t in extracted), extracted
    report = job.report
    assert report is not None
    summary = report.executive_summary
    assert "protective" not in summary and "More research" not in summary
    assert (
        summary.startswith(
            ("The evidence found does not answer this question", "No articles were found")
        )
        or " so this report draws no conclusion from them" in summary
    )
    assert {r.article_key for r in report.references} <= set(job.articles)
    assert any("left out" in line for line in report.limitations) or not report.references


async def test_an_empty_search_is_broadened(settings: Settings) -> None:
    plan = [
        {"text": "Does aspirin reduce recurrent ischaemic stroke?", "priority": 1,
         # Every term ANDed: no article has both bleeding and resistance, nothing found.
         "search_query": "aspirin recurrent stroke bleeding resistance"},
    ]  # fmt: skip
    with (
        FakeEutils(articles=ARTICLES, rate_limit=None, rate_limit_with_key=None) as eutils,
        FakeLLMServer(responder=ResearchResponder(plan=plan)) as llm,
    ):
        settings = _configure(settings, eutils, llm)
        settings.research.quick.min_sub_questions = 1
        job = await _research(settings, "Does aspirin prevent recurrent ischaemic stroke?")
        terms = [r.params.get("term", "") for r in eutils.requests("esearch")]
    assert job.status is JobStatus.COMPLETED, job.error
    q1 = job.plan.get("q1")  # type: ignore[union-attr]
    assert q1 is not None and q1.articles_found > 0
    assert terms[0] == "aspirin recurrent stroke bleeding resistance"
    assert len(terms) >= 2 and any(f.sub_question_id == "q1" for f in job.findings)


class HopefulResponder(CarelessResponder):
    """Writes the answer it hopes for as the claim, beside a real quote about something else."""

    def _extract(self, request_json: dict[str, Any]) -> dict[str, Any]:
        reply = super()._extract(request_json)
        for claim in reply["claims"]:
            claim["claim"] = "Vitamin D supplementation prevents fractures in older adults."
        return reply


async def test_a_claim_its_quote_does_not_say_is_not_a_fact(
    settings: Settings, pubmedqa_eutils: FakeEutils
) -> None:
    """What the 1.5B model did: the claim "prevents fractures" over the verbatim quote
    "interventions to prevent hip fracture have documented poor compliance"."""
    question = "Does vitamin D supplementation prevent fractures in older adults?"
    with FakeLLMServer(responder=HopefulResponder(plan=list(DRIFT))) as llm:
        job = await _research(_configure(settings, pubmedqa_eutils, llm), question)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.findings == [] and job.facts == []
    assert job.report is not None
    assert "prevents fractures" not in job.report.executive_summary
    assert (
        job.report.executive_summary.startswith(
            ("The evidence found does not answer this question", "No articles were found")
        )
        or " so this report draws no conclusion from them" in job.report.executive_summary
    )
