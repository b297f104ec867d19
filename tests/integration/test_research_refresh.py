"""A research job's searches rerun for what is new, and its report refreshed from it.

Against the fake E-utilities (which honour ``datetype=edat`` windows for records with an entry
date), Europe PMC and LLM servers: a rerun costs one search per logged query and source and a
fetch only of new ids; a refresh with nothing new calls no model and leaves the report as it
is; with a new article it reads only that one, keeps the old report as version 1 and says what
changed; an interrupted refresh resumes without searching again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from medlit.config import Settings
from medlit.errors import NotFoundError
from medlit.research.answer import verdict_of
from medlit.research.jobs import JobStore
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.report import job_to_dict, render_markdown
from medlit.research.rerun import rerun_search
from medlit.research.runtime import open_orchestrator, source_search
from medlit.runtime import Runtime
from medlit.sources.base import HeldArticles
from medlit.sources.pubmed import entrez_window
from medlit.storage import open_store
from tests.fakes import research_responder
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ARTICLES, ResearchResponder, step_of
from tests.integration.research_fixtures import (
    QUESTION,
    env_for,
    europepmc,
    eutils,
    llm_server,
    responder,
    rsettings,
)

__all__ = ["europepmc", "eutils", "llm_server", "responder", "rsettings"]

NEW_PMID = "40000088"
#: A trial entered after the job ran, on its first sub-question (recurrent stroke).
NEW = ARTICLES[0].model_copy(
    update={
        "pmid": NEW_PMID,
        "doi": None,
        "title": "Aspirin and recurrent ischaemic stroke in older adults: a randomised "
        "controlled trial",
        "year": 2026,
        "pub_date": "2026 Nov",
        "abstract": [
            ARTICLES[0]
            .abstract[0]
            .model_copy(
                update={"text": "Aspirin reduced recurrent ischaemic stroke by 30% (HR 0.70)."}
            ),
            ARTICLES[0]
            .abstract[1]
            .model_copy(
                update={"text": "Aspirin reduces recurrent ischaemic stroke in older adults."}
            ),
        ],
    }
)


@pytest.fixture
def new_trial(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake model reads the new trial as it reads the others."""
    monkeypatch.setitem(
        research_responder.CLAIMS,
        NEW_PMID,
        (
            "Aspirin reduced recurrent ischaemic stroke by 30%.",
            "Aspirin reduced recurrent ischaemic stroke by 30%",
            ["HR 0.70"],
        ),
    )
    monkeypatch.setitem(research_responder.BY_PMID, NEW_PMID, NEW)


async def _run(settings: Settings) -> ResearchJob:
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(QUESTION, "quick")
        return await orchestrator.run(job)


def _queries(job: ResearchJob, source: str) -> set[tuple[str, int]]:
    return {
        (e.query, e.limit) for e in job.search_log if e.source == source and e.status != "cache"
    }


def _paid(server: FakeLLMServer) -> Counter[tuple[str, str]]:
    """(step, PMID named in the prompt or "") of every model request."""
    out: Counter[tuple[str, str]] = Counter()
    pmids = [a.pmid or "" for a in ARTICLES] + [NEW_PMID]
    for record in server.completions:
        text = str(record.json)
        pmid = next((p for p in pmids if f"PMID: {p}" in text), "")
        out[(step_of(record.json), pmid)] += 1
    return out


def _today() -> Any:
    return datetime.now(UTC).date()


async def test_a_refresh_with_nothing_new_searches_once_per_query_and_calls_no_model(
    rsettings: Settings, eutils: FakeEutils, europepmc: FakeEuropePMC, llm_server: FakeLLMServer
) -> None:
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    eutils.reset()
    llm_server.clear()
    europe_before = len(europepmc.history)
    async with Runtime(rsettings) as runtime, runtime.orchestrator() as orchestrator:
        rerun, after = await orchestrator.refresh(job.id, source_search(runtime))
        kept = orchestrator.jobs.versions(job.id)
    assert rerun is not None and rerun.new == [] and rerun.since == job.searched_at()
    # One search per logged query and source, inside the window; no fetch, no model call.
    esearch = eutils.requests("esearch")
    assert sorted((r.params["term"], int(r.params["retmax"])) for r in esearch) == sorted(
        _queries(job, "pubmed")
    )
    window = entrez_window(job.searched_at())  # type: ignore[arg-type]
    assert {(r.params["datetype"], r.params["mindate"]) for r in esearch} == {("edat", window[0])}
    assert eutils.requests("efetch") == []
    assert len(europepmc.history) - europe_before == len(_queries(job, "europepmc"))
    assert llm_server.completions == []
    # The report as it was, the check recorded, no version kept.
    assert after.report == job.report and after.report_version == 1 and kept == []
    assert after.checked_at == rerun.rerun_at and after.status is JobStatus.COMPLETED
    assert after.search_log == job.search_log


async def test_a_rerun_finds_only_the_article_entered_after_the_job_and_fetches_only_it(
    rsettings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    job = await _run(rsettings)
    eutils.add_article(NEW, entered=_today())
    eutils.reset()
    llm_server.clear()
    async with Runtime(rsettings) as runtime:
        known = HeldArticles(job.articles, runtime.evidence)
        rerun = await rerun_search(job, source_search(runtime), known=known)
    assert rerun.new == [NEW_PMID]
    assert [(a.pmid, a.title) for a in rerun.articles] == [(NEW_PMID, NEW.title)]
    assert "q1" in rerun.articles[0].sub_questions
    fetched = [r.params["id"] for r in eutils.requests("efetch")]
    assert fetched == [NEW_PMID]  # once, however many queries found it
    assert len(eutils.requests("esearch")) == len(_queries(job, "pubmed"))
    assert llm_server.completions == []
    # An explicit --since before the job: everything the searches find is in the window,
    # and still only the trial is new.
    since = datetime(2000, 1, 1, tzinfo=UTC)
    async with Runtime(rsettings) as runtime:
        known = HeldArticles(job.articles, runtime.evidence)
        again = await rerun_search(job, source_search(runtime), since=since, known=known)
    assert again.new == [NEW_PMID] and again.since == since


def test_refresh_keeps_the_old_version_and_cites_the_new_article(
    rsettings: Settings,
    eutils: FakeEutils,
    llm_server: FakeLLMServer,
    new_trial: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from medlit.cli import app

    job = asyncio.run(_run(rsettings))
    old = job.report
    assert old is not None and job.certainty is not None
    eutils.add_article(NEW, entered=_today())
    llm_server.clear()
    for key, value in env_for(rsettings).items():
        monkeypatch.setenv(key, value)
    shown = CliRunner().invoke(app, ["research", "rerun-search", job.id])
    assert shown.exit_code == 0, shown.output
    assert f"PMID {NEW_PMID}: {NEW.title}" in shown.stdout
    assert f"medlit research refresh {job.id}" in shown.stdout
    assert llm_server.completions == []

    eutils.reset()
    result = CliRunner().invoke(app, ["research", "refresh", job.id, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "COMPLETED" and data["report_version"] == 2
    assert data["refreshed"] is True and data["rerun"]["new"] == [NEW_PMID]
    changes = data["changes"]
    assert changes["new_articles"] == [NEW_PMID] and changes["previous_version"] == 1
    cited = {r["pmid"]: r["number"] for r in data["report"]["references"]}
    assert NEW_PMID in cited and changes["new_citations"] == [cited[NEW_PMID]]
    assert changes["verdict_before"] == verdict_of(old.executive_summary)
    assert changes["verdict_turned"] is (changes["verdict_before"] != changes["verdict_now"])
    assert changes["certainty_before"] == job.certainty.level
    markdown = data["report_markdown"]
    assert "## What changed since version 1" in markdown
    assert f"(PMID {NEW_PMID})" in markdown.split("## What changed since version 1")[1]
    # Only the new article was read and tabled; the plan was not made again.
    paid = _paid(llm_server)
    assert paid[("extract", NEW_PMID)] == 1
    assert not [k for k in paid if k[0] == "extract" and k[1] != NEW_PMID]
    assert not [k for k in paid if k[0] == "evidence-row" and k[1] != NEW_PMID]
    assert paid[("evidence-row", NEW_PMID)] == 1 and paid[("plan", "")] == 0
    # What the docs give as its cost: of the job's 19 calls, 7 (the group the trial joins
    # checked again, of 2; the summary and the 3 sections written again).
    assert Counter(step for step, _ in paid.elements()) == {
        "extract": 1, "cross-reference": 1, "summary": 1, "section": 3, "evidence-row": 1,
    }  # fmt: skip
    assert len(eutils.requests("efetch")) == 1
    assert NEW_PMID in {row["pmid"] for row in data["evidence_table"]}
    # The refresh's searches are in the log, so the flow still adds up.
    flow = data["flow"]
    assert flow["identified"] == flow["not_english"] + flow["duplicates_removed"] + flow["screened"]
    assert any(row["step"].startswith("refresh: entered since") for row in data["search_log"])

    # The old version is kept and readable.
    listed = CliRunner().invoke(app, ["research", "versions", job.id, "--json"])
    assert listed.exit_code == 0, listed.output
    versions = json.loads(listed.stdout)
    assert [v["version"] for v in versions["versions"]] == [1, 2] and versions["current"] == 2
    first = CliRunner().invoke(app, ["research", "versions", job.id, "1", "--json"])
    assert first.exit_code == 0, first.output
    kept = json.loads(first.stdout)
    assert kept["report"] == json.loads(old.model_dump_json()) and kept["report_version"] == 1
    assert NEW_PMID not in {r["pmid"] for r in kept["report"]["references"]}
    missing = CliRunner().invoke(app, ["research", "versions", job.id, "7"])
    assert missing.exit_code != 0 and "has no report version 7" in missing.output

    # Nothing newer since the refresh: a second one changes nothing and calls no model.
    llm_server.clear()
    again = CliRunner().invoke(app, ["research", "refresh", job.id])
    assert again.exit_code == 0, again.output
    assert "Nothing new since the job searched." in again.stdout
    assert "Report version 2 unchanged." in again.stdout
    assert llm_server.completions == []


async def test_a_trial_against_the_verdict_turns_it_and_the_report_says_so(
    rsettings: Settings, eutils: FakeEutils, monkeypatch: pytest.MonkeyPatch
) -> None:
    against = NEW.model_copy(
        update={
            "title": "Aspirin and recurrent ischaemic stroke: a large randomised controlled trial",
            "abstract": [
                NEW.abstract[0].model_copy(
                    update={"text": "Aspirin did not reduce recurrent ischaemic stroke (HR 1.01)."}
                ),
                NEW.abstract[1].model_copy(
                    update={"text": "Aspirin does not prevent recurrent ischaemic stroke."}
                ),
            ],
        }
    )
    claim = "Aspirin did not reduce recurrent ischaemic stroke"
    monkeypatch.setitem(research_responder.CLAIMS, NEW_PMID, (f"{claim}.", claim, ["HR 1.01"]))
    monkeypatch.setitem(research_responder.BY_PMID, NEW_PMID, against)
    monkeypatch.setattr(research_responder, "NEGATIVE", {*research_responder.NEGATIVE, NEW_PMID})
    job = await _run(rsettings)
    assert job.report is not None and verdict_of(job.report.executive_summary) == "Yes"
    eutils.add_article(against, entered=_today())
    async with Runtime(rsettings) as runtime, runtime.orchestrator() as orchestrator:
        _, after = await orchestrator.refresh(job.id, source_search(runtime))
    changes = after.changes
    assert changes is not None and changes.verdict_before == "Yes" and changes.verdict_turned
    row = next(r for r in after.evidence_table if r.pmid == NEW_PMID)
    assert row.direction in {"opposes", "no difference"}
    markdown = render_markdown(after.report, after)  # type: ignore[arg-type]
    assert "- Verdict turned: Yes before, " in markdown
    assert f"(PMID {NEW_PMID})" in markdown.split("## What changed since version 1")[1]


async def test_an_interrupted_refresh_resumes_without_searching_again(
    rsettings: Settings,
    eutils: FakeEutils,
    llm_server: FakeLLMServer,
    responder: ResearchResponder,
    new_trial: None,
) -> None:
    job = await _run(rsettings)
    eutils.add_article(NEW, entered=_today())
    responder.hold(NEW_PMID)
    async with Runtime(rsettings) as runtime, runtime.orchestrator() as orchestrator:
        task = asyncio.create_task(orchestrator.refresh(job.id, source_search(runtime)))
        deadline = time.monotonic() + 60
        while not _paid(llm_server)[("extract", NEW_PMID)]:
            assert time.monotonic() < deadline, "the new article was never read"
            await asyncio.sleep(0.02)
        task.cancel()  # what SIGINT does to `medlit research refresh`
        responder.release()
        with pytest.raises(asyncio.CancelledError):
            await task
        stopped = orchestrator.jobs.get(job.id)
        assert stopped.status is JobStatus.INTERRUPTED and stopped.refresh is not None
        assert [v for v, _, _ in orchestrator.jobs.versions(job.id)] == [1]
        eutils.reset()
        done = await orchestrator.resume(job.id)
    assert done.status is JobStatus.COMPLETED, done.error
    assert done.refresh is None and done.report_version == 2
    assert done.changes is not None and done.changes.new_articles == [NEW_PMID]
    assert NEW_PMID in {r.pmid for r in done.report.references}  # type: ignore[union-attr]
    assert eutils.requests("esearch") == [] and eutils.requests("efetch") == []
    assert "## What changed since version 1" in render_markdown(done.report, done)  # type: ignore[arg-type]
    changes = job_to_dict(done)["changes"]
    assert changes["verdict_before"] == verdict_of(job.report.executive_summary)  # type: ignore[union-attr]
    assert changes["verdict_now"] == verdict_of(done.report.executive_summary)  # type: ignore[union-attr]


@pytest.fixture(params=["sqlite", "postgres"])
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    settings = Settings(home=tmp_path / "home")
    if request.param == "postgres":
        settings.database_url = request.getfixturevalue("pg_url")
    with open_store(settings) as store:
        yield JobStore(store)


def test_report_versions_are_kept_once_and_read_back(jobs: JobStore) -> None:
    job = ResearchJob(id="fed123", question="Does aspirin help?", status=JobStatus.COMPLETED)
    jobs.save(job)
    assert jobs.versions(job.id) == []
    jobs.keep_version(job)
    jobs.keep_version(job)  # a second keep of one version changes nothing
    job.report_version = 2
    job.question = "Does aspirin help, now?"
    jobs.save(job)
    assert [v for v, _, _ in jobs.versions(job.id)] == [1]
    assert jobs.version("fed1", 1).question == "Does aspirin help?"
    assert jobs.version(job.id, 2).question == "Does aspirin help, now?"
    with pytest.raises(NotFoundError, match="has no report version 3"):
        jobs.version(job.id, 3)
    assert jobs.mark_checked(job.id, datetime(2026, 12, 1, tzinfo=UTC))
    assert jobs.get(job.id).checked_at == datetime(2026, 12, 1, tzinfo=UTC)


def test_verdict_of_reads_the_summary_s_first_line() -> None:
    assert verdict_of("**Verdict:** Yes, as the conclusions say [1].\n\nMore.") == "Yes"
    assert verdict_of("**Verdict:** Uncertain: too little evidence.") == "Uncertain"
    assert verdict_of("**Answer from the articles' own sentences:** x [1].") is None
    assert verdict_of("Aspirin helps.") is None
