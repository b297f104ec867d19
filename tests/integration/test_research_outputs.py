"""What a review team gets from a research job: a job that survives a malformed reply, the
sources the settings name, the question searched as ``ask`` searches it, and the search log,
against the fake E-utilities, Europe PMC and LLM servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medlit.agent.query import search_steps
from medlit.config import Settings
from medlit.research.models import JobStatus, ResearchJob
from medlit.research.report import job_to_dict, render_markdown
from medlit.research.runtime import open_orchestrator
from medlit.research.synthesizer import UNWRITTEN_SECTION
from tests.fakes.europepmc_server import FakeEuropePMC
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.research_responder import ResearchResponder, step_of
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


async def _run(settings: Settings, depth: str = "quick", **kwargs: Any) -> ResearchJob:
    async with open_orchestrator(settings) as orchestrator:
        job = orchestrator.create_job(QUESTION, depth)
        return await orchestrator.run(job, **kwargs)


async def test_a_malformed_section_reply_costs_that_section_not_the_job(
    rsettings: Settings, responder: ResearchResponder, llm_server: FakeLLMServer
) -> None:
    responder.malformed = {"section:Does aspirin increase major bleeding"}
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    report = job.report
    assert report is not None and len(report.sections) == 3
    unwritten = [s for s in report.sections if s.unwritten]
    assert [s.heading for s in unwritten] == ["Does aspirin increase major bleeding after stroke"]
    section = unwritten[0]
    # Its verified facts stand in for the prose, cited; the others were written as usual.
    # (its topic is a conflict: both sides, each with its source)
    assert "The sources disagree on Major bleeding with aspirin:" in section.content
    assert "Aspirin increased major bleeding [" in section.content
    assert len(section.references) == 2
    assert all(not s.unwritten and s.word_count >= 300 for s in report.sections if s is not section)
    markdown = render_markdown(report)
    # The reader is told what the section is; how it came to be is in Limitations (details).
    assert f"> **Note:** {UNWRITTEN_SECTION}" in markdown
    assert "The model could not write" not in markdown.split("## Limitations")[0]
    assert any("could not write the section on" in item for item in report.limitations)
    # The bad reply and its one repair: two requests for that section, no more.
    assert _steps(llm_server)["section"] == 3 + 1


async def test_a_malformed_summary_and_plan_still_complete(
    rsettings: Settings, responder: ResearchResponder
) -> None:
    responder.malformed = {"plan", "summary"}
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.plan is not None and [q.id for q in job.plan.sub_questions] == ["q0"]
    assert job.plan.note is not None and "could not write a research plan" in job.plan.note
    report = job.report
    assert report is not None and "reduced recurrent ischaemic stroke" in report.executive_summary
    assert any("executive summary" in item for item in report.limitations)
    assert report.references  # the question's own search found and verified evidence


async def test_research_asks_only_the_sources_the_settings_name(
    rsettings: Settings, europepmc: FakeEuropePMC, eutils: FakeEutils
) -> None:
    assert rsettings.search.default_source == "pubmed" and rsettings.europepmc.enabled
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert europepmc.history == []
    assert job.search_log and {e.source for e in job.search_log} == {"pubmed"}
    searched = [e for e in job.search_log if e.status != "cache"]
    assert len(eutils.requests("esearch")) >= len(searched)


async def test_the_question_is_searched_as_ask_searches_it(
    rsettings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    job = await _run(rsettings)
    asked = [e for e in job.search_log if e.sub_question_id == "q0"]
    assert job.frame is not None and job.frame.subject == "aspirin"
    steps = search_steps(job.frame, max_terms=rsettings.agent.max_query_terms)
    assert asked, "the research question itself was not searched"
    assert asked[0].query == steps[0].query
    assert asked[0].limit == rsettings.agent.fetch_per_round
    planned = {step.query: step.why for step in steps}
    assert {a.query for a in asked} <= set(planned)
    terms = [r.params.get("term") for r in eutils.requests("esearch")]
    assert steps[0].query in terms
    # Each search in the log says what it is: the concepts it widened or dropped, in the
    # planner's order; the subject is in every one.
    assert [a.step for a in asked] == [planned[a.query] for a in asked]
    assert asked[0].step == "every concept of the question"
    assert all("aspirin" in a.query for a in job.search_log if a.status != "cache")
    # The report is written from the job's frame: its prompts name the frame's subject and
    # outcome.
    told = "Subject: aspirin\nOutcome: recurrent ischaemic stroke\n"
    written = [r.json["messages"][-1]["content"] for r in llm_server.completions
               if step_of(r.json) in ("summary", "section")]  # fmt: skip
    assert written and all(told in text for text in written)


async def test_a_sub_question_that_finds_little_is_broadened(rsettings: Settings) -> None:
    rsettings.agent.min_docs = 3  # as ask needs by default
    # Room for every relaxed step: the sub-questions search at once, and which reaches the
    # relaxation budget first (research.RELAX_SHARE) is a race; the budget has its own test.
    rsettings.research.depth_config("quick").max_provider_calls = 200
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    q3 = [e for e in job.search_log if e.sub_question_id == "q3"]
    # "How common is aspirin resistance in stroke survivors?": its planned query finds one
    # article; broader ones follow until three are found or the queries run out.
    assert len(q3) >= 2
    assert len(q3[0].found) < 3
    assert len({k for e in q3 for k in e.found}) > len(q3[0].found)
    data = job_to_dict(job)
    assert data["search_log"][0].keys() >= {"source", "query", "date", "hits"}


def test_flow_counts_add_up_and_rerun_search_finds_what_is_new(
    rsettings: Settings, eutils: FakeEutils, monkeypatch: Any, tmp_path: Path
) -> None:
    import asyncio
    import base64
    import json
    import re
    from datetime import UTC, datetime
    from xml.etree import ElementTree

    from typer.testing import CliRunner

    from medlit.cli import app
    from tests.fakes.research_responder import ARTICLES
    from tests.integration.research_fixtures import env_for

    job = asyncio.run(_run(rsettings))
    data = job_to_dict(job)
    flow = data["flow"]
    assert flow["identified"] == flow["not_english"] + flow["duplicates_removed"] + flow["screened"]
    assert flow["screened"] == flow["included"] + sum(flow["excluded"].values())
    assert flow["screened"] == len({k for e in job.search_log for k in e.found} | set(job.articles))
    assert flow["included"] == len({f.article_key for f in job.findings})
    assert len(data["excluded"]) == sum(flow["excluded"].values())
    assert all(e["reason"] for e in data["excluded"])
    # The exported report draws the flow (an SVG embedded as an image) above its counts table.
    markdown = data["report_markdown"]
    image = re.search(r"!\[[^\n]*\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", markdown)
    assert image and markdown.index("### Flow of records") < image.start()
    drawing = ElementTree.fromstring(base64.b64decode(image.group(1)))
    shown = " ".join(el.text or "" for el in drawing.iter("{http://www.w3.org/2000/svg}text"))
    for count in [
        flow["identified"],
        flow["screened"],
        flow["included"],
        *flow["excluded"].values(),
    ]:
        assert str(count) in shown.split() or f": {count}" in shown, (count, shown)
    assert f"| Records identified | {flow['identified']} |" in markdown[image.end() :]
    assert f"| Included (evidence) | {flow['included']} |" in markdown
    assert f"medlit research rerun-search {job.id}" in data["report_markdown"]

    # A new trial is published: a rerun of the logged searches finds it, and only it.
    new = ARTICLES[0].model_copy(
        update={"pmid": "40000077", "doi": None, "title": "Aspirin after ischaemic stroke: a "
                "second randomised controlled trial of recurrent ischaemic stroke"}
    )  # fmt: skip
    eutils.add_article(new, entered=datetime.now(UTC).date())
    for key, value in env_for(rsettings).items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["research", "rerun-search", job.id, "--json"])
    assert result.exit_code == 0, result.output
    rerun = json.loads(result.stdout)
    assert rerun["new"] == ["40000077"]
    searched = {(e.source, e.query, e.limit) for e in job.search_log if e.status != "cache"}
    assert {(q["source"], q["query"], q["limit"]) for q in rerun["queries"]} == searched
    text = CliRunner().invoke(app, ["research", "rerun-search", job.id])
    assert "New since: 40000077" in text.stdout

    # A terminal gets the flow's table; the report written to a file gets the drawing too.
    shown = CliRunner().invoke(app, ["research", "resume", job.id])
    assert shown.exit_code == 0, shown.output
    assert "| Included (evidence) |" in shown.stdout and "data:image" not in shown.stdout
    out = tmp_path / "report.md"
    written = CliRunner().invoke(app, ["research", "resume", job.id, "--out", str(out)])
    assert written.exit_code == 0, written.output
    assert "![PRISMA-style flow of records: " in out.read_text()


def _in_article(quote: str, article: Any) -> bool:
    from medlit.checks.claims import quote_in_article

    return quote_in_article(quote, article, min_words=1)


async def test_the_evidence_table_has_a_quoted_row_per_included_study(
    rsettings: Settings, llm_server: FakeLLMServer
) -> None:
    from medlit.research.evidence_table import rows_from_csv, rows_to_csv
    from medlit.research.exports import export_job
    from medlit.research.screening import included_keys

    job = await _run(rsettings)
    rows = job.evidence_table
    assert [r.article_key for r in rows] == included_keys(job) and len(rows) == 6
    assert _steps(llm_server)["evidence-row"] == len(rows)  # one extraction call per study
    filled = 0
    for row in rows:
        article = job.articles[row.article_key]
        for name, cell in row.cells().items():
            if cell is not None:
                filled += 1
                assert _in_article(cell.quote, article), (row.pmid, name, cell.quote)
        if row.direction_quote:
            assert _in_article(row.direction_quote, article)
    assert filled >= 12
    designs = {r.pmid: r.design for r in rows}
    # As the publication types say (Randomized Controlled Trial, Meta-Analysis, Cohort...).
    assert designs["40000001"] == "RCT" and designs["40000002"].startswith("systematic review")
    assert designs["40000004"] != "RCT" and all(r.design_from != "none" for r in rows)
    # The comparator the model quoted from nowhere is left empty, with why.
    meta = next(r for r in rows if r.pmid == "40000002")
    assert meta.comparator is None and meta.dropped["comparator"] == "quote_not_in_article"
    directions = {r.pmid: r.direction for r in rows}
    assert directions["40000001"] == "supports"

    certainty = job.certainty
    assert certainty is not None and certainty.draft and certainty.level in (
        "high", "moderate", "low", "very low"
    )  # fmt: skip
    assert any(m.domain == "inconsistency" for m in certainty.moves)  # the bleeding conflict
    data = job_to_dict(job)
    assert data["evidence_table"][0].keys() >= {"pmid", "design", "direction"}
    assert data["certainty"]["draft"] is True
    assert "## Evidence table" in data["report_markdown"]
    assert "## Certainty of the evidence (draft)" in data["report_markdown"]

    text = export_job(job, "csv")
    again = rows_from_csv(text)
    assert rows_to_csv(again) == text
    assert [(r.pmid, r.design, r.direction, r.cells()) for r in again] == [
        (r.pmid, r.design, r.direction, r.cells()) for r in rows
    ]


async def test_a_malformed_evidence_row_reply_keeps_the_job(
    rsettings: Settings, responder: ResearchResponder
) -> None:
    responder.malformed = {"evidence-row"}
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.evidence_table and all("llm" in r.dropped for r in job.evidence_table)
    # Only what the article's structure gives, each cell still quoted from its article.
    assert all(r.filled_by == "article structure" for r in job.evidence_table)


class _UnquotedClaims(ResearchResponder):
    """A weak model: every claim it extracts says what its quote does not."""

    def _extract(self, request_json: dict[str, Any]) -> dict[str, Any]:
        reply = super()._extract(request_json)
        for claim in reply["claims"]:
            claim["claim"] = "Aspirin abolished every recurrent event in every patient."
        return reply


async def test_a_study_read_on_the_question_is_a_row_though_no_claim_verified(
    rsettings: Settings, llm_server: FakeLLMServer
) -> None:
    llm_server.responder = _UnquotedClaims()
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert not job.findings  # nothing the model claimed was verified
    data = job_to_dict(job)
    read = {k for q in job.plan.sub_questions for k in q.read} if job.plan else set()
    rows = {r.article_key for r in job.evidence_table}
    assert rows and rows <= read
    # Each included study is a row; a read study left out is off the question's subject.
    assert data["flow"]["included"] == len(rows)
    excluded = {e["article_key"]: e["reason"] for e in data["excluded"]}
    assert not rows & set(excluded)
    assert all(excluded[k] == "no verified finding" for k in read - rows)
    for row in job.evidence_table:
        for cell in row.cells().values():
            assert cell is None or _in_article(cell.quote, job.articles[row.article_key])


async def test_relaxed_searches_leave_the_budget_for_reading_what_they_found(
    rsettings: Settings,
) -> None:
    # Every search finds fewer than it wants, so each is relaxed word by word: without a share
    # of the provider budget kept back, the relaxations spend it all and every sub-question is
    # skipped before it reads what they found.
    rsettings.agent.min_docs = 50
    rsettings.research.depth_config("quick").max_provider_calls = 8
    job = await _run(rsettings)
    assert job.status is JobStatus.COMPLETED, job.error
    assert job.evidence_table and job.findings, "what the searches found was never read"
