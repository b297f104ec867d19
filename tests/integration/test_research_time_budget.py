"""A research job's time budget (``max_seconds``) bounds the whole job: a slow model writing
the report, or reading the articles, does not carry it past its time. The job ends COMPLETED
with what it has and the stop reason, as the other budget stops do. Against the fake
E-utilities, Europe PMC and LLM servers, the LLM made slow."""

from __future__ import annotations

import time

from medlit.config import Settings
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.report import render_markdown
from medlit.research.runtime import open_orchestrator
from medlit.research.synthesizer import UNWRITTEN_SECTION
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import CLAIMS, ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
)
from tests.integration.research_fixtures import steps as _steps

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]

#: Slower than any budget below: a reply that would keep the job waiting without the budget.
SLOW_S = 30.0
#: What a job may run past its time: the work left after the model is cut off (the report
#: from the verified facts, the evidence table from the articles' structure, saving).
MARGIN_S = 3.0


async def _run(settings: Settings) -> tuple[ResearchJob, float]:
    started = time.monotonic()
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick")
        job = await orchestrator.run(job)
    return job, time.monotonic() - started


async def test_a_slow_report_ends_at_the_time_budget_with_the_verified_facts(
    rsettings: Settings, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    # Up to the report first (its summary request fails the job), then resumed with one
    # second left and a model slower than that: the time runs out while the report is written,
    # however long the first run took on this machine.
    responder.fail = {"summary"}
    job, _ = await _run(rsettings)
    assert job.status is JobStatus.FAILED and job.failed_stage is JobStatus.SYNTHESIZING
    assert job.facts and job.budget_stop_reason is None
    responder.fail = set()
    responder.delay_steps = {"summary": SLOW_S, "section": SLOW_S}
    limits = rsettings.research.depth_config("quick")
    limits.max_seconds = round(job.research_elapsed_s + 1.0, 1)
    started = time.monotonic()
    async with open_orchestrator(rsettings) as orchestrator:
        job = await orchestrator.resume(job.id)
    took = time.monotonic() - started

    assert took < 1.0 + MARGIN_S < SLOW_S
    assert job.research_elapsed_s < limits.max_seconds + MARGIN_S
    reason = f"time budget of {limits.max_seconds:g} s used during synthesis"
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.budget_stop_reason == reason
    report = job.report
    assert report is not None and report.limitations[0] == f"Research stopped early: {reason}."
    # The summary the model did not write in time is the verified facts, cited; no section
    # request was sent after the time ran out: each section is its facts too.
    assert "The verified findings:" in report.executive_summary
    assert report.title == f"Research report: {QUESTION}"
    assert report.references and "[1]" in report.executive_summary
    assert report.sections and all(s.unwritten == UNWRITTEN_SECTION for s in report.sections)
    assert any(
        "could not write the executive summary (the job's time budget ran out)" in item
        for item in report.limitations
    )
    assert _steps(llm_server)["summary"] == 2 and _steps(llm_server)["section"] == 0
    # The evidence table is the articles' structure: no row waited for the model.
    assert job.evidence_table
    assert all(row.filled_by != "llm" for row in job.evidence_table)
    assert reason in render_markdown(report, job)


async def test_a_slow_model_reading_articles_stops_at_the_time_budget(
    rsettings: Settings, responder: ResearchResponder
) -> None:
    responder.delay_pmids = dict.fromkeys(CLAIMS, SLOW_S)
    limits = rsettings.research.depth_config("quick")
    limits.max_seconds = 3.0
    job, took = await _run(rsettings)

    assert took < limits.max_seconds + MARGIN_S
    reason = "time budget of 3 s used"
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.budget_stop_reason == reason
    plan = job.plan
    assert plan is not None and job.report is not None
    # A reading cut off by the time is not a failed extraction (the job would fail as "the
    # LLM is unusable"): its sub-question is not researched, for the budget.
    assert not any(q.failed_extractions or q.unreadable for q in plan.sub_questions)
    # The three planned topics were cut while read, the question itself not started (the
    # fourth is a visited topic).
    stopped = {q.id for q in plan.sub_questions if q.skip_reason == f"budget: {reason}"}
    assert stopped == {"q0", "q1", "q2", "q3"}
    assert not job.findings
    assert job.report.limitations[0] == f"Research stopped early: {reason}."


async def test_a_job_with_time_to_spare_is_unchanged(
    rsettings: Settings, responder: ResearchResponder
) -> None:
    responder.delay_steps = {"summary": 0.5}
    job, took = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.budget_stop_reason is None
    report = job.report
    assert report is not None
    assert report.title == "Aspirin after ischaemic stroke"  # the model's summary came
    assert all(not s.unwritten for s in report.sections)
    assert not any(
        "time budget" in item or "could not write" in item for item in report.limitations
    )
    # The job's seconds are every stage's (the slow summary was written while synthesizing).
    assert 0.5 <= job.research_elapsed_s <= took
