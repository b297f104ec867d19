"""``/v1/research``: durable deep-research jobs over HTTP, each tenant's own.

::

    POST /v1/research {question, depth}      202, the job id and its URL (Location)
    GET  /v1/research?limit=&offset=         the caller's jobs, newest first
    GET  /v1/research/{id}                   status, stage, sub-questions, usage
    GET  /v1/research/{id}/events            SSE: every progress event, id = its number;
                                             resumable (Last-Event-ID header or ?after=)
    GET  /v1/research/{id}/report            Markdown, or JSON with Accept: application/json;
                                             ?version=N: an earlier version a refresh kept
    GET  /v1/research/{id}/export?format=    ris | bibtex | csl-json (reference managers)
    POST /v1/research/{id}/cancel            stops at the job's next step: CANCELLED

Jobs run in the server's :class:`~medlit.research.worker.ResearchWorkers` (started and stopped
with the app by :func:`research_workers`). Another tenant's job is a 404, exactly like one that
does not exist.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from medlit.errors import MedlitError
from medlit.log import get_logger
from medlit.research.exports import EXPORT_FORMATS, export_job
from medlit.research.models import JobStatus, NarrativeReport, ResearchJob
from medlit.research.report import render_markdown, report_to_dict
from medlit.research.worker import ResearchWorkers
from medlit.research.worker_process import ResearchProcess
from medlit.service.auth import CurrentTenant
from medlit.service.deps import ServiceState, get_state
from medlit.service.problems import PROBLEM_RESPONSES, ProblemError

__all__ = ["ResearchJobView", "ResearchRequest", "job_view", "research_workers", "router"]

router = APIRouter(prefix="/v1/research", tags=["research"])

log = get_logger("service.research")

EVENTS_POLL_S = 0.25  # an event stream's look for events the research process stored
WATCHDOG_S = 5.0  # how often a research process that is not running is looked after
JOB_ID = r"^[A-Za-z0-9_-]{1,64}$"
QUEUE_FULL_RETRY_S = 30  # Retry-After of a full tenant queue (a quick job takes about this)
MAX_EVENT_ID = 2**53  # the largest ?after= (Last-Event-ID: 15 digits); within SQL's BIGINT
_PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: PROBLEM_RESPONSES[code] for code in (400, 401, 403, 404, 429)
}
_CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {**PROBLEM_RESPONSES[400], "description": "Conflict"}
}


@asynccontextmanager
async def research_workers(state: ServiceState) -> AsyncIterator[ResearchWorkers]:
    """The app's research workers, for its lifespan (``settings.service.research_workers``
    jobs at once); jobs accepted before a crash are resumed as it starts.

    By default (``service.research_process``) the jobs run in a child process
    (:class:`ResearchProcess`), started when the first job needs it; this process accepts,
    lists, cancels and streams them through the store."""
    settings = state.runtime.settings
    if not settings.service.research_process:
        workers = ResearchWorkers(state.runtime, workers=settings.service.research_workers)
        state.extras["research"] = workers
        async with workers:
            yield workers
        return
    process = ResearchProcess(settings, settings.service.research_workers)
    workers = ResearchWorkers(
        state.runtime, workers=0, poll_s=EVENTS_POLL_S, on_submit=process.wake
    )
    state.extras["research"] = workers
    state.extras["research_process"] = process
    watchdog = asyncio.create_task(_watch(workers, process), name="medlit-research-watchdog")
    try:
        async with workers:
            yield workers
    finally:
        watchdog.cancel()
        with suppress(asyncio.CancelledError):
            await watchdog
        await asyncio.to_thread(process.stop)


async def _watch(workers: ResearchWorkers, process: ResearchProcess) -> None:
    """Start the research process while a job waits for it: at start (jobs a stopped or dead
    server left) and whenever the process has died with jobs unfinished."""
    while True:
        if not process.running:
            try:
                if await asyncio.to_thread(workers.runnable):
                    await asyncio.to_thread(process.wake)
            except MedlitError as exc:
                log.warning("research_watchdog_failed", error=str(exc))
        await asyncio.sleep(WATCHDOG_S)


async def get_workers(request: Request) -> ResearchWorkers:
    """The app's worker pool (``async``: no worker-thread hop to read it)."""
    workers = get_state(request).extras.get("research")
    if not isinstance(workers, ResearchWorkers):
        raise ProblemError(503, "research jobs are not available: the worker pool is not running")
    return workers


WorkersDep = Annotated[ResearchWorkers, Depends(get_workers)]


class ResearchRequest(BaseModel):
    """A research job for ``POST /v1/research`` (the options of ``medlit research``)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=20000, description="The research question.")
    depth: Literal["quick", "standard", "deep"] = Field(
        "standard", description="How far to research: quick, standard or deep."
    )


class JobLinks(BaseModel):
    """Where to follow a job."""

    self: str
    events: str
    report: str
    export: str
    cancel: str


class SubQuestionView(BaseModel):
    """One sub-question of the plan and how far it got."""

    id: str
    text: str
    status: str
    depth: int
    parent_id: str | None = None
    skip_reason: str | None = None
    articles_found: int = 0
    from_cache: bool = False


class ResearchJobView(BaseModel):
    """A job's state (``GET /v1/research/{id}``)."""

    id: str
    question: str
    depth: str
    status: JobStatus = Field(
        description="PENDING ... COMPLETED, FAILED or CANCELLED; INTERRUPTED: its run was "
        "stopped (a worker shut down mid-job), its work kept, and a research worker resumes it."
    )
    stage: str = Field(
        description="The stage it is in, or where it failed, was cancelled or was interrupted."
    )
    created_at: datetime
    updated_at: datetime
    error: str | None = None
    budget_stop_reason: str | None = None
    sub_questions: list[SubQuestionView] = Field(default_factory=list)
    articles: int = Field(0, description="Articles retrieved.")
    findings: int = 0
    facts: int = 0
    discrepancies: int = 0
    usage: dict[str, Any] = Field(default_factory=dict, description="Calls and tokens so far.")
    links: JobLinks


class JobSummary(BaseModel):
    """One line of the job list."""

    id: str
    status: JobStatus
    depth: str
    created_at: str
    question: str
    url: str


class JobPage(BaseModel):
    """A page of the caller's jobs, newest first."""

    items: list[JobSummary]
    total: int
    limit: int
    offset: int
    next: str | None = Field(None, description="The next page, if there is one.")


def _url(job_id: str, tail: str = "") -> str:
    return f"/v1/research/{job_id}{tail}"


def job_view(job: ResearchJob) -> ResearchJobView:
    """The API view of a job (also what the MCP server returns)."""
    usage = dict(job.usage)
    calls = usage.get("calls")
    provider_calls = sum(int(v) for v in calls.values()) if isinstance(calls, dict) else 0
    stopped = (JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.INTERRUPTED)
    stage = job.failed_stage if job.status in stopped else None
    return ResearchJobView(
        id=job.id,
        question=job.question,
        depth=job.depth,
        status=job.status,
        stage=(stage or job.status).value,
        created_at=job.created_at,
        updated_at=job.updated_at,
        error=job.error,
        budget_stop_reason=job.budget_stop_reason,
        sub_questions=[
            SubQuestionView.model_validate(q.model_dump())
            for q in (job.plan.sub_questions if job.plan else [])
        ],
        articles=len(job.articles),
        findings=len(job.findings),
        facts=len(job.facts),
        discrepancies=len(job.discrepancies),
        usage={"provider_calls": provider_calls, **usage},
        links=JobLinks(
            self=_url(job.id),
            events=_url(job.id, "/events"),
            report=_url(job.id, "/report"),
            export=_url(job.id, "/export?format=ris"),
            cancel=_url(job.id, "/cancel"),
        ),
    )


def _check_id(job_id: str) -> str:
    # Any id that cannot exist is simply not found (never a 500, never a different answer).
    if not re.match(JOB_ID, job_id):
        raise ProblemError(404, f"no research job {job_id!r}")
    return job_id


@router.post(
    "",
    status_code=202,
    response_model=ResearchJobView,
    responses={
        **_PROBLEMS,
        202: {
            "description": "Accepted: the job is queued.",
            "headers": {
                "Location": {"description": "The job's URL.", "schema": {"type": "string"}}
            },
        },
        413: PROBLEM_RESPONSES[413],
        503: PROBLEM_RESPONSES[503],
    },
    summary="Start a research job",
)
async def start_research(
    body: ResearchRequest, response: Response, tenant: CurrentTenant, workers: WorkersDep
) -> ResearchJobView:
    """Accept a research question; a worker runs it. Follow it at ``links.self`` and
    ``links.events``. A tenant with ``service.research_tenant_queue`` unfinished jobs gets a
    429 (with ``Retry-After``) until one ends."""
    limit = workers.runtime.settings.service.research_tenant_queue
    unfinished = await asyncio.to_thread(workers.jobs.unfinished, tenant.name)
    if unfinished >= limit:
        raise ProblemError(
            429,
            f"you have {unfinished} research jobs queued or running, the most one tenant may "
            "have; wait for one to finish or cancel one, then try again",
            headers={"Retry-After": str(QUEUE_FULL_RETRY_S)},
        )
    job = await workers.submit(body.question, body.depth, tenant.name)
    response.headers["Location"] = _url(job.id)
    return job_view(job)


@router.get("", response_model=JobPage, responses=_PROBLEMS, summary="List your research jobs")
async def list_research(
    tenant: CurrentTenant,
    workers: WorkersDep,
    limit: Annotated[int, Query(ge=1, le=100, description="Jobs per page.")] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000, description="Jobs to skip.")] = 0,
) -> JobPage:
    """The caller's jobs, newest first."""
    rows, total = await workers.list(tenant.name, limit, offset)
    items = [
        JobSummary(
            id=job_id,
            status=JobStatus(status),
            depth=depth,
            created_at=created,
            question=question,
            url=_url(job_id),
        )
        for job_id, status, depth, created, question in rows
    ]
    more = offset + len(items) < total
    return JobPage(
        items=items,
        total=total,
        limit=limit,
        offset=offset,
        next=f"/v1/research?limit={limit}&offset={offset + limit}" if more else None,
    )


@router.get(
    "/{job_id}", response_model=ResearchJobView, responses=_PROBLEMS, summary="A research job"
)
async def get_research(job_id: str, tenant: CurrentTenant, workers: WorkersDep) -> ResearchJobView:
    """The job's status, current stage, sub-questions and usage."""
    return job_view(await workers.get(_check_id(job_id), tenant.name))


_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: one `progress` event per step (its `id` is the "
        "event number; reconnect with `Last-Event-ID`), ending with the COMPLETED, FAILED or "
        "CANCELLED event.",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


@router.get(
    "/{job_id}/events",
    responses={**_PROBLEMS, **_SSE_DOC},
    response_class=EventSourceResponse,
    summary="Follow a job's progress (SSE)",
)
async def research_events(
    job_id: str,
    tenant: CurrentTenant,
    workers: WorkersDep,
    after: Annotated[
        int | None,
        Query(ge=0, le=MAX_EVENT_ID, description="Send the events after this number."),
    ] = None,
    last_event_id: Annotated[
        str,
        Header(
            pattern=r"^[0-9]{1,15}$",
            description="Resume after this event number (what a browser's EventSource sends "
            "on reconnecting): a whole number of at most 15 digits, else a 400.",
        ),
    ] = "",
) -> EventSourceResponse:
    """Every progress event of the job, stored ones first, then live until it ends."""
    start = after or 0
    if last_event_id:  # the pattern has held it to 15 digits: within SQL's BIGINT
        start = max(start, int(last_event_id))
    job = await workers.get(_check_id(job_id), tenant.name)  # 404 before the stream starts

    async def stream() -> AsyncIterator[dict[str, str]]:
        async for event in workers.events(job.id, tenant.name, start):
            yield {"event": "progress", "id": str(event.seq), "data": event.model_dump_json()}

    return EventSourceResponse(stream(), ping=15)


class MarkdownResponse(PlainTextResponse):
    """A Markdown document (for the OpenAPI document: the report's default type)."""

    media_type = "text/markdown"


class ExportResponse(PlainTextResponse):
    """A reference file; its media type is the format's (for the OpenAPI document)."""

    media_type = EXPORT_FORMATS["ris"][0]


_CSL_JSON: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["id", "type"],
        "properties": {"id": {"type": "string"}, "type": {"type": "string"}},
    },
}


def _completed(job: ResearchJob) -> ResearchJob:
    if job.status is not JobStatus.COMPLETED or job.report is None:
        raise ProblemError(
            409,
            f"research job {job.id} has no report yet: it is {job.status.value}"
            + (" (follow it at its events URL)" if not job.status.terminal else ""),
        )
    return job


@router.get(
    "/{job_id}/report",
    responses={
        **_PROBLEMS,
        **_CONFLICT,
        200: {
            "model": NarrativeReport,
            "description": "The report: Markdown, or JSON with `Accept: application/json`.",
            "content": {"text/markdown": {"schema": {"type": "string"}}},
        },
    },
    response_class=JSONResponse,  # the documented model's; Markdown is sent unless asked
    summary="A completed job's report",
)
async def research_report(
    job_id: str,
    request: Request,
    tenant: CurrentTenant,
    workers: WorkersDep,
    version: Annotated[
        int | None,
        Query(ge=1, le=2**31, description="An earlier version (a refresh kept it); default: now."),
    ] = None,
) -> Response:
    """The report with its numbered references (409 while the job has not completed); with a
    version number, that version of it (404 if the job has none such)."""
    job = _completed(await workers.get(_check_id(job_id), tenant.name))
    if version is not None:
        job = await asyncio.to_thread(workers.jobs.version, job.id, version, tenant.name)
    assert job.report is not None
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse(report_to_dict(job.report, job))
    return MarkdownResponse(render_markdown(job.report, job))


@router.get(
    "/{job_id}/export",
    responses={
        **_PROBLEMS,
        **_CONFLICT,
        200: {
            "description": "The report's references as RIS, BibTeX or CSL-JSON (an array of "
            "CSL items).",
            "content": {
                media: {"schema": _CSL_JSON if name == "csl-json" else {"type": "string"}}
                for name, (media, _) in EXPORT_FORMATS.items()
            },
            "headers": {
                "Content-Disposition": {
                    "description": "attachment; filename=medlit-ID.EXT",
                    "schema": {"type": "string"},
                }
            },
        },
    },
    response_class=ExportResponse,
    summary="Export a report's references (RIS, BibTeX, CSL-JSON)",
)
async def research_export(
    job_id: str,
    tenant: CurrentTenant,
    workers: WorkersDep,
    format: Annotated[
        Literal["ris", "bibtex", "csl-json", "csv"],
        Query(description="ris, bibtex or csl-json; csv: the evidence table."),
    ] = "ris",
) -> Response:
    """The references of a completed job's report, for Zotero, EndNote or Mendeley."""
    job = _completed(await workers.get(_check_id(job_id), tenant.name))
    media, extension = EXPORT_FORMATS[format]
    return Response(
        export_job(job, format),
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="medlit-{job.id}.{extension}"'},
    )


@router.post(
    "/{job_id}/cancel",
    status_code=202,
    response_model=ResearchJobView,
    responses={**_PROBLEMS, **_CONFLICT},
    summary="Cancel a research job",
)
async def cancel_research(
    job_id: str, tenant: CurrentTenant, workers: WorkersDep
) -> ResearchJobView:
    """Stop the job at its next step (it ends CANCELLED; a queued job at once). A job that
    already completed or failed is a 409."""
    job = await workers.cancel(_check_id(job_id), tenant.name)
    if job.status in (JobStatus.COMPLETED, JobStatus.FAILED):
        raise ProblemError(409, f"research job {job.id} has already ended: {job.status.value}")
    return job_view(job)
