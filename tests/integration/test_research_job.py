"""Research jobs end to end: real sources, store, evidence cache, embedder and LLM client,
against the fake E-utilities, Europe PMC and OpenAI-compatible servers on loopback."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from medlit.config import Settings
from medlit.errors import LLMConfigError
from medlit.research.models import JobStatus, ProgressEvent, ResearchJob, SubQuestionStatus
from medlit.research.report import job_to_dict, render_markdown
from medlit.research.runtime import open_orchestrator
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder
from tests.integration.research_fixtures import (
    QUESTION,
    answered,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
)
from tests.integration.research_fixtures import steps as _steps

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]


class SimulatedKill(BaseException):
    """Raised from the progress callback: the process 'dies' mid-EXECUTING."""


async def _run(settings: Settings, depth: str = "quick", **kwargs: Any) -> ResearchJob:
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(QUESTION, depth)
        return await orchestrator.run(job, **kwargs)


async def test_full_job_completes_with_only_retrieved_references(
    rsettings: Settings, llm_server: FakeLLMServer, eutils: FakeEutils
) -> None:
    events: list[ProgressEvent] = []
    started = time.monotonic()
    job = await _run(rsettings, on_progress=events.append)
    elapsed = time.monotonic() - started
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.completed_stages == [
        JobStatus.PLANNING, JobStatus.EXECUTING, JobStatus.VERIFYING, JobStatus.SYNTHESIZING,
    ]  # fmt: skip
    statuses = {q.id: (q.status, q.skip_reason or "") for q in job.plan.sub_questions}  # type: ignore[union-attr]
    assert (
        statuses["q1"][0] is statuses["q2"][0] is statuses["q3"][0] is SubQuestionStatus.COMPLETED
    )
    assert statuses["q4"][0] is SubQuestionStatus.SKIPPED
    assert statuses["q4"][1].startswith("topic already visited")  # a rewording of q1
    assert statuses["q3.1"] == (SubQuestionStatus.SKIPPED, "depth exceeded (2 > max 1)")

    # Fabricated claims (a quote not in the abstract, a PMID not the article's) were dropped.
    claims = " ".join(f.claim for f in job.findings)
    assert "cured" not in claims and "halves" not in claims
    assert len(job.findings) == 6

    # Several agreeing sources: one high-confidence fact citing all of them.
    q1_facts = [f for f in job.facts if f.sub_question_id == "q1"]
    assert len(q1_facts) == 1 and q1_facts[0].confidence == "high"
    assert {s.pmid for s in q1_facts[0].sources} == {"40000001", "40000002", "40000003"}
    # Conflicting sources: a discrepancy, each side with its sources.
    assert len(job.discrepancies) == 1
    sides = [{s.pmid for s in c.sources} for c in job.discrepancies[0].claims]
    assert sides == [{"40000004"}, {"40000005"}]
    # A single source: a low-confidence fact.
    q3_facts = [f for f in job.facts if f.sub_question_id == "q3"]
    assert [(f.confidence, [s.pmid for s in f.sources]) for f in q3_facts] == [
        ("low", ["40000006"])
    ]

    report = job.report
    assert report is not None
    efetched = {
        pmid for r in eutils.requests("efetch") for pmid in r.params.get("id", "").split(",")
    }
    retrieved = {a.pmid for a in job.articles.values()}
    assert {r.pmid for r in report.references} <= retrieved
    assert {r.pmid for r in report.references} <= efetched | {
        a.pmid for a in job.articles.values() if a.source == "europepmc"
    }
    assert [r.number for r in report.references] == list(range(1, len(report.references) + 1))
    # Numbered in reading order: the first section's sources come first.
    assert {r.pmid for r in report.references[:3]} == {"40000001", "40000002", "40000003"}
    markdown = render_markdown(report, job)
    assert "99999999" not in markdown and "[42]" not in markdown
    body = markdown.split("## References")[0]
    cited = {int(n) for group in re.findall(r"\[(\d+(?:, \d+)*)\]", body)
             for n in group.split(", ")}  # fmt: skip
    assert cited
    assert cited <= {r.number for r in report.references}
    assert len(report.sections) == 3
    assert all(s.word_count >= 300 and not s.short for s in report.sections)
    assert all(re.search(r"Based on \d+ articles?\b", s.evidence_quality) for s in report.sections)
    assert "10.5555/stroke.1" in markdown  # DOI of the RCT, with its link

    # Accounting: what the job says it spent is what the fakes saw.
    data = job_to_dict(job)
    assert data["usage"]["llm_calls"] == len(llm_server.completions)
    assert data["usage"]["calls"]["pubmed"] == len(eutils.history)
    assert data["report_markdown"] == markdown
    assert _steps(llm_server) == {
        "plan": 1, "extract": 6, "cross-reference": 2, "summary": 1, "section": 3,
        "evidence-row": 6,  # one per included study
    }  # fmt: skip
    assert events[-1].stage is JobStatus.COMPLETED and events[-1].facts == len(job.facts)
    print(f"\nquick job: {elapsed:.2f}s, usage {data['usage']['calls']}, "
          f"llm {data['usage']['llm_calls']}, tokens {data['usage']['tokens']}")  # fmt: skip


async def test_a_later_job_reuses_the_evidence_cache(
    rsettings: Settings, eutils: FakeEutils
) -> None:
    first = await _run(rsettings)
    efetches = len(eutils.requests("efetch"))
    before = len(eutils.history)
    second = await _run(rsettings)
    assert second.status is JobStatus.COMPLETED
    assert len(eutils.requests("efetch")) == efetches  # every record was fresh in tier 2
    q1 = second.plan.get("q1")  # type: ignore[union-attr]
    assert q1 is not None and q1.from_cache  # cached chunks answered it: no search at all
    assert len(eutils.history) - before < before
    assert {r.pmid for r in second.report.references} == {  # type: ignore[union-attr]
        r.pmid
        for r in first.report.references  # type: ignore[union-attr]
    }


@pytest.mark.parametrize(
    ("step", "stage", "reason"),
    [
        ("plan", JobStatus.PLANNING, "planner's LLM call failed"),
        ("extract", JobStatus.EXECUTING, "every fact extraction failed"),
        ("cross-reference", JobStatus.VERIFYING, "injected failure in cross-reference"),
        ("section", JobStatus.SYNTHESIZING, "injected failure in section"),
    ],
)
async def test_a_failure_in_each_stage_ends_failed_then_resumes(
    rsettings: Settings,
    responder: ResearchResponder,
    llm_server: FakeLLMServer,
    step: str,
    stage: JobStatus,
    reason: str,
) -> None:
    responder.fail = {step}
    job = await _run(rsettings)
    assert job.status is JobStatus.FAILED
    assert job.failed_stage is stage
    assert reason in (job.error or "")
    assert stage not in job.completed_stages
    before = _steps(llm_server)

    responder.fail = set()
    llm_server.clear()
    async with open_orchestrator(rsettings) as orchestrator:
        assert orchestrator.get(job.id).status is JobStatus.FAILED  # persisted
        resumed = await orchestrator.resume(job.id)
    assert resumed.status is JobStatus.COMPLETED, resumed.error
    assert resumed.error is None and resumed.resumed == 1
    after = _steps(llm_server)
    # Completed stages are not paid for again.
    if stage is not JobStatus.PLANNING:
        assert after["plan"] == 0
    if stage in (JobStatus.VERIFYING, JobStatus.SYNTHESIZING):
        assert after["extract"] == 0
    if stage is JobStatus.SYNTHESIZING:
        assert after["cross-reference"] == 0
    assert before[step] >= 1


def _searched(eutils: FakeEutils) -> list[str]:
    """The search terms PubMed was asked."""
    return [r.params.get("term", "") for r in eutils.requests("esearch")]


async def _killed_at(settings: Settings, message: str) -> None:
    """Run a quick job one sub-question at a time; it "dies" at the progress ``message``."""
    settings.research.concurrency = 1

    def kill(event: ProgressEvent) -> None:
        if event.message == message:
            raise SimulatedKill

    with pytest.raises(SimulatedKill):
        await _run(settings, on_progress=kill)


async def test_a_killed_job_resumes_without_repeating_paid_work(
    rsettings: Settings, llm_server: FakeLLMServer
) -> None:
    await _killed_at(rsettings, "q1 completed")
    first_run = _steps(llm_server)
    assert first_run == {"plan": 1, "extract": 3}

    llm_server.clear()
    async with open_orchestrator(rsettings) as orchestrator:  # a new "process"
        (job_id, status, *_), *_ = orchestrator.jobs.list()
        assert status == "INTERRUPTED"  # the run saw it coming: saved, and says so
        saved = orchestrator.get(job_id)
        assert saved.plan.get("q1").status is SubQuestionStatus.COMPLETED  # type: ignore[union-attr]
        job = await orchestrator.resume(job_id)
    assert job.status is JobStatus.COMPLETED, job.error
    resumed = _steps(llm_server)
    assert resumed["plan"] == 0
    assert resumed["extract"] == 3  # q2 (2 articles) and q3 (1); q1's 3 are not redone
    assert len(job.findings) == 6
    # Usage covers both runs.
    assert job_to_dict(job)["usage"]["llm_calls"] == sum(first_run.values()) + sum(resumed.values())


async def test_a_job_killed_mid_sub_question_does_not_read_its_articles_again(
    rsettings: Settings, llm_server: FakeLLMServer, eutils: FakeEutils
) -> None:
    await _killed_at(rsettings, "q2: 1 of 2 read")
    assert _steps(llm_server) == {"plan": 1, "extract": 4}  # q1's three, q2's first
    read_before = answered(llm_server)
    assert "aspirin major bleeding" in _searched(eutils)

    llm_server.clear()
    eutils.reset()
    async with open_orchestrator(rsettings) as orchestrator:
        (job_id, *_), *_ = orchestrator.jobs.list()
        saved = orchestrator.get(job_id)
        q2 = saved.plan.get("q2")  # type: ignore[union-attr]
        assert q2 is not None and len(q2.read) == 1 and q2.status is SubQuestionStatus.IN_PROGRESS
        assert len(q2.found) == 2 and q2.read[0] in q2.found
        assert any(f.sub_question_id == "q2" for f in saved.findings)  # kept at once
        job = await orchestrator.resume(job_id)
    assert job.status is JobStatus.COMPLETED, job.error
    # q2's articles come from the evidence cache its search filled: PubMed is not asked again.
    assert "aspirin major bleeding" not in _searched(eutils)
    assert any("resistance" in term for term in _searched(eutils))  # q3 had not searched yet
    assert job.plan.get("q2").articles_found == 2  # type: ignore[union-attr]
    again = answered(llm_server)
    assert not set(read_before) & set(again), set(read_before) & set(again)
    again_steps = _steps(llm_server)
    assert again_steps["plan"] == 0
    assert again_steps["extract"] == 2  # q2's second article and q3's one
    assert len(job.findings) == 6
    assert len(job.plan.get("q2").read) == 2  # type: ignore[union-attr]


async def test_recursion_stops_at_max_depth(rsettings: Settings) -> None:
    rsettings.research.quick.max_depth = 2
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    subs = {q.id: q for q in job.plan.sub_questions}  # type: ignore[union-attr]
    assert subs["q3.1"].status is SubQuestionStatus.COMPLETED and subs["q3.1"].depth == 2
    assert subs["q3.1"].parent_id == "q3"
    assert subs["q3.1.1"].status is SubQuestionStatus.SKIPPED
    assert subs["q3.1.1"].skip_reason == "depth exceeded (3 > max 2)"
    # The follow-up found a new article; its finding joins the root topic's facts.
    assert any(f.pmid == "40000007" and f.sub_question_id == "q3.1" for f in job.findings)
    assert any(
        s.pmid == "40000007" for f in job.facts if f.sub_question_id == "q3" for s in f.sources
    )
    assert "depth exceeded" in " ".join(job.report.limitations)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("limit", "value", "reason"),
    [
        ("max_llm_calls", 4, "LLM call budget of 4 used"),
        ("max_provider_calls", 3, "provider call budget of 3 used"),
        # The time is the whole job's: it runs out while the plan is written.
        ("max_seconds", 0.001, "time budget of 0.001 s used during planning"),
    ],
)
async def test_budgets_stop_the_job_cleanly(
    rsettings: Settings, llm_server: FakeLLMServer, limit: str, value: float, reason: str
) -> None:
    rsettings.research.concurrency = 1
    setattr(rsettings.research.quick, limit, value)
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.budget_stop_reason == reason
    assert any(reason in item for item in job.report.limitations)  # type: ignore[union-attr]
    skipped = [q for q in job.plan.sub_questions if q.skip_reason == f"budget: {reason}"]  # type: ignore[union-attr]
    assert skipped
    if limit == "max_llm_calls":
        assert _steps(llm_server)["extract"] == 4
    if limit == "max_provider_calls":
        assert job.research_provider_calls <= 3 + 2  # a search in flight may finish


async def test_no_model_fails_fast_before_any_work(
    rsettings: Settings, llm_server: FakeLLMServer, eutils: FakeEutils
) -> None:
    rsettings.llm.model = None
    async with open_orchestrator(rsettings) as orchestrator:
        with pytest.raises(LLMConfigError, match="MEDLIT_LLM_MODEL"):
            orchestrator.create_job(QUESTION, "quick")
        assert orchestrator.jobs.list() == []
    assert llm_server.history == [] and eutils.history == []


async def test_progress_stream(rsettings: Settings) -> None:
    async with open_orchestrator(rsettings) as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick")
        events = [event async for event in orchestrator.stream(job)]
    stages = [event.stage for event in events]
    assert stages[0] is JobStatus.PLANNING and stages[-1] is JobStatus.COMPLETED
    assert JobStatus.EXECUTING in stages and JobStatus.SYNTHESIZING in stages
    # While a sub-question is read, each article read is told (a slow model takes minutes).
    steps = [e.message for e in events if e.message.startswith("q1: ")]
    found = re.fullmatch(r"q1: \d+ articles? found, (\d+) to read", steps[0])
    assert found is not None, steps
    assert steps[1:] == [f"q1: {n} of {found[1]} read" for n in range(1, int(found[1]) + 1)]
    llm_calls = [e.llm_calls for e in events if e.message.startswith("q1: ")]
    assert llm_calls == sorted(llm_calls) and llm_calls[-1] > llm_calls[0]


def test_cli_runs_lists_shows_and_resumes_a_job(
    rsettings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    llm_server: FakeLLMServer,
) -> None:
    import json

    from typer.testing import CliRunner

    from medlit.cli import app

    for key, value in {
        "MEDLIT_HOME": str(rsettings.home),
        "MEDLIT_PUBMED_BASE_URL": rsettings.pubmed.base_url,
        "MEDLIT_PUBMED_API_KEY": "test-key",
        "MEDLIT_EUROPEPMC_BASE_URL": rsettings.europepmc.base_url,
        "MEDLIT_LOCAL_ENABLED": "false",
        "MEDLIT_AGENT_MIN_DOCS": "1",
        "MEDLIT_LLM_BASE_URL": llm_server.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
    }.items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    out = tmp_path / "report.md"
    result = runner.invoke(app, ["research", QUESTION, "--depth", "quick", "--json",
                                 "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"id", "status", "plan", "facts", "discrepancies", "report_markdown",
                         "usage"}  # fmt: skip
    assert data["status"] == "COMPLETED"
    # 13 for the report, 6 for the evidence table's rows (one per included study)
    assert data["usage"]["llm_calls"] == 13 + 6 and data["usage"]["provider_calls"] > 0
    assert data["usage"]["tokens"] > 0
    assert out.read_text().strip() == data["report_markdown"].strip()

    listed = runner.invoke(app, ["research", "list", "--json"])
    assert [row["id"] for row in json.loads(listed.stdout)] == [data["id"]]
    # In an 80-column terminal the question keeps the room (as a fifth column it had 19
    # characters a line), with the depth and time under it.
    from medlit.cli.app import console

    monkeypatch.setattr(console, "width", 80)
    narrow = runner.invoke(app, ["research", "list"]).stdout
    assert all(len(line) <= 80 for line in narrow.splitlines())
    assert QUESTION[:40] in narrow and f"quick · {data['created_at'][:10]}" in narrow
    shown = runner.invoke(app, ["research", "status", data["id"]]).stdout
    assert all(len(line) <= 80 for line in shown.splitlines())
    assert "depth 1 · " in shown and "SKIPPED" in shown
    status = runner.invoke(app, ["research", "status", data["id"][:6], "--json"])
    assert json.loads(status.stdout)["status"] == "COMPLETED"
    text = runner.invoke(app, ["research", "status", data["id"]])
    assert "q4" in text.stdout and "SKIPPED" in text.stdout  # the table folds long text
    calls = len(llm_server.completions)
    resumed = runner.invoke(app, ["research", "resume", data["id"], "--json"])
    assert resumed.exit_code == 0 and json.loads(resumed.stdout)["status"] == "COMPLETED"
    assert len(llm_server.completions) == calls  # a completed job costs nothing to resume
    markdown = runner.invoke(app, ["research", "resume", data["id"]])
    assert markdown.stdout.startswith("# Aspirin after ischaemic stroke")

    # Without --json, on a stderr that is not a terminal (a log, a pipe): one line per
    # progress event, as it happens, not a progress bar drawn once at the end.
    again = runner.invoke(app, ["research", QUESTION, "--depth", "quick",
                                "--out", str(tmp_path / "again.md")])  # fmt: skip
    assert again.exit_code == 0, again.output
    lines = [line for line in again.stderr.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
    assert lines[0].split()[1:4] == ["PLANNING", "planning", "started"], lines
    assert any("sub-questions" in line for line in lines if " EXECUTING " in line)
    assert lines[-1].split()[1:3] == ["COMPLETED", "completed"], lines
    assert (tmp_path / "again.md").read_text().startswith("# Aspirin after ischaemic stroke")


@pytest.mark.slow
async def test_a_process_killed_mid_executing_resumes_where_it_stopped(
    rsettings: Settings, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    """A real `medlit research` process, SIGKILLed while researching the second sub-question."""
    import asyncio
    import os
    import signal
    import sqlite3
    import subprocess
    import sys

    # q2's replies are held: the process hangs in q2's first extraction until it is killed.
    responder.hold("40000004", "40000005")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDLIT_")}
    env.update({
        "MEDLIT_HOME": str(rsettings.home),
        "MEDLIT_PUBMED_BASE_URL": rsettings.pubmed.base_url,
        "MEDLIT_PUBMED_API_KEY": "test-key",
        "MEDLIT_EUROPEPMC_BASE_URL": rsettings.europepmc.base_url,
        "MEDLIT_LOCAL_ENABLED": "false",
        "MEDLIT_AGENT_MIN_DOCS": "1",
        "MEDLIT_LLM_BASE_URL": rsettings.llm.base_url or "",
        "MEDLIT_LLM_MODEL": "fake-model",
        "MEDLIT_RESEARCH_CONCURRENCY": "1",
    })  # fmt: skip
    code = "from medlit.cli import main; main()"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, "research", QUESTION, "--depth", "quick", "--json",
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any("PMID: 4000000" + n in str(r.json) for r in llm_server.completions
                   for n in "45"):  # fmt: skip
                break  # q1 is saved; q2 is waiting on its first extraction
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the research process never reached q2")
    finally:
        proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), timeout=120)  # reaped after its teardown
    conn = sqlite3.connect(rsettings.db_path)
    (status,) = conn.execute("SELECT status FROM research_jobs").fetchone()
    conn.close()
    assert status == "EXECUTING"  # no chance to record anything: it was killed
    first = _steps(llm_server)
    assert first == {"plan": 1, "extract": 4}  # q1's three, and q2's first (never answered)

    llm_server.clear()
    responder.release()
    async with open_orchestrator(rsettings) as orchestrator:
        ((job_id, *_),) = orchestrator.jobs.list()
        job = await orchestrator.resume(job_id)
    assert job.status is JobStatus.COMPLETED, job.error
    again = _steps(llm_server)
    assert again["plan"] == 0 and again["extract"] == 3  # only q2 and q3
    assert len(job.findings) == 6


async def test_a_job_already_running_elsewhere_is_refused_not_run_twice(
    rsettings: Settings, llm_server: FakeLLMServer
) -> None:
    from filelock import FileLock

    from medlit.errors import JobBusy

    async with open_orchestrator(rsettings) as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick")
        # Another process holding the job's lock (a separate open file: flock semantics).
        other = FileLock(str(rsettings.home / "locks" / f"research-{job.id}.lock"))
        with other:
            with pytest.raises(JobBusy, match=job.id):
                await orchestrator.resume(job.id)
            assert llm_server.completions == []  # nothing was paid for
            assert orchestrator.get(job.id).status is JobStatus.PENDING
        done = await orchestrator.resume(job.id)  # released: it runs
    assert done.status is JobStatus.COMPLETED, done.error


def test_failed_sources_are_reported_and_an_unwritable_report_is_kept(
    rsettings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    llm_server: FakeLLMServer,
    europepmc: FakeEuropePMC,
) -> None:
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from medlit.cli import app
    from medlit.cli.research import _finish
    from medlit.errors import StorageError
    from medlit.research.runtime import open_job_store
    from tests.fakes.europepmc_server import Fault

    europepmc.enqueue(Fault.status(503), times=1000)  # Europe PMC is down for the whole job
    for key, value in {
        "MEDLIT_HOME": str(rsettings.home),
        "MEDLIT_PUBMED_BASE_URL": rsettings.pubmed.base_url,
        "MEDLIT_PUBMED_API_KEY": "test-key",
        "MEDLIT_EUROPEPMC_BASE_URL": rsettings.europepmc.base_url,
        "MEDLIT_EUROPEPMC_MAX_RETRIES": "0",
        "MEDLIT_LOCAL_ENABLED": "false",
        "MEDLIT_AGENT_MIN_DOCS": "1",
        "MEDLIT_LLM_BASE_URL": llm_server.base_url,
        "MEDLIT_LLM_MODEL": "fake-model",
        "MEDLIT_RESEARCH_CONCURRENCY": "1",  # one sub-question after another
        "MEDLIT_SEARCH_DEFAULT_SOURCE": "all",  # Europe PMC is a configured source here
    }.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["research", QUESTION, "--depth", "quick", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    failed = data["failed_sources"]
    assert list(failed) == ["europepmc"] and "503" in failed["europepmc"]["error"]
    assert failed["europepmc"]["sub_questions"]
    limitations = data["report"]["limitations"]
    assert any(line.startswith("Source europepmc failed") for line in limitations)
    assert "Source europepmc failed" in data["report_markdown"]
    assert "warning: europepmc failed for" in result.stderr
    # Once it had failed it rested: not asked again for every sub-question and query.
    assert len(failed["europepmc"]["sub_questions"]) >= 2
    assert len(europepmc.history) == 1

    # The report cannot be written after the work: one error saying where the report is kept.
    jobs, db = open_job_store(rsettings)
    try:
        job = jobs.get(data["id"])
    finally:
        db.close()
    with pytest.raises(StorageError, match=rf"kept in job {job.id}.*research resume {job.id}"):
        _finish(job, Path(tmp_path) / "gone" / "report.md", as_json=False)
