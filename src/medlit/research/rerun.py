"""Repeat a job's logged searches and say what is new since (``medlit research rerun-search``).

Each distinct (source, query, limit) of the job's search log is sent again to that source; an
article found now whose key the job never saw (neither found by its searches nor held) is
new. Entries that were no search (articles taken from the evidence cache) are not repeated.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from medlit.research.models import ResearchJob, utcnow
from medlit.types import SearchQuery, SearchResults

__all__ = ["RerunQuery", "RerunReport", "SourceSearch", "render_rerun", "rerun_search"]

#: Search the named sources (only those) for a query: (source names, query) -> results.
SourceSearch = Callable[[Sequence[str], SearchQuery], Awaitable[SearchResults]]


class RerunQuery(BaseModel):
    """One logged query sent again."""

    source: str
    query: str
    limit: int
    first_run: datetime = Field(description="When the job first sent it.")
    hits_then: int
    hits_now: int
    status: str
    new: list[str] = Field(default_factory=list, description="PMIDs (else keys) new since.")


class RerunReport(BaseModel):
    """What a rerun of a job's searches found."""

    job_id: str
    rerun_at: datetime = Field(default_factory=utcnow)
    queries: list[RerunQuery] = Field(default_factory=list)
    new: list[str] = Field(default_factory=list, description="Every new PMID (or key), once.")


def _label(key: str) -> str:
    return key.removeprefix("pmid:")


async def rerun_search(job: ResearchJob, search: SourceSearch) -> RerunReport:
    """Send the job's logged queries again; see the module docstring."""
    seen = set(job.articles) | {k for entry in job.search_log for k in entry.found}
    report = RerunReport(job_id=job.id)
    done: set[tuple[str, str, int]] = set()
    for entry in job.search_log:
        if entry.status == "cache":
            continue
        key = (entry.source, entry.query, entry.limit)
        if key in done:
            continue
        done.add(key)
        then = [e for e in job.search_log if (e.source, e.query, e.limit) == key]
        results = await search([entry.source], SearchQuery(term=entry.query, limit=entry.limit))
        status = results.providers.get(entry.source)
        new = [_label(a.key) for a in results.articles if a.key not in seen]
        report.queries.append(
            RerunQuery(
                source=entry.source,
                query=entry.query,
                limit=entry.limit,
                first_run=then[0].date,
                hits_then=then[0].hits,
                hits_now=status.count if status is not None else len(results.articles),
                status=status.status if status is not None else "ok",
                new=new,
            )
        )
        report.new.extend(n for n in new if n not in report.new)
    return report


def render_rerun(report: RerunReport) -> str:
    """The rerun as text for a person."""
    lines = [f"Searches of job {report.job_id} repeated {report.rerun_at:%Y-%m-%d %H:%M} UTC:"]
    for q in report.queries:
        when = f"{q.first_run:%Y-%m-%d}"
        state = "" if q.status == "ok" else f" ({q.status})"
        lines.append(
            f"- {q.source}: {q.query} -- {q.hits_then} hits on {when}, {q.hits_now} now{state}"
            + (f"; new: {', '.join(q.new)}" if q.new else "")
        )
    if not report.queries:
        lines.append("- no search was logged for this job")
    lines.append(
        f"New since: {', '.join(report.new)}" if report.new else "Nothing new since the job ran."
    )
    return "\n".join(lines)
