"""Repeat a job's logged searches for what is new since (``medlit research rerun-search``).

Each distinct (source, query, limit) of the job's search log is sent again to that source, for
the articles entered in it since a moment: by default when the job last searched (its newest
logged search; a refresh's searches are logged too), else a date given. That is one search per
logged query and source; an id the job already holds is not fetched again, so only new
articles cost a fetch. An article found whose key the job never saw (neither found by its
searches nor held) is new. Entries that were no search (articles taken from the evidence
cache) are not repeated.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from pydantic import BaseModel, Field, PrivateAttr

from medlit.research.models import ResearchJob, SearchLogEntry, utcnow
from medlit.sources.base import FreshArticles, HeldArticles
from medlit.types import Article, SearchQuery, SearchResults

__all__ = [
    "NewArticle",
    "RerunQuery",
    "RerunReport",
    "SourceSearch",
    "render_rerun",
    "rerun_search",
]

#: Search the named sources (only those) for a query, ``known`` holding what need not be
#: fetched again: (source names, query, known) -> results.
SourceSearch = Callable[
    [Sequence[str], SearchQuery, FreshArticles | None], Awaitable[SearchResults]
]


class NewArticle(BaseModel):
    """An article a rerun found that the job never saw."""

    key: str
    pmid: str | None = None
    title: str = ""
    year: int | None = None
    sub_questions: list[str] = Field(
        default_factory=list, description="Ids of the sub-questions whose searches found it."
    )


class RerunQuery(BaseModel):
    """One logged query sent again."""

    source: str
    query: str
    limit: int
    sub_questions: list[str] = Field(default_factory=list, description="Who sent it.")
    first_run: datetime = Field(description="When the job first sent it.")
    hits_then: int
    hits_now: int = Field(description="Its hits among the articles entered since.")
    status: str
    new: list[str] = Field(default_factory=list, description="PMIDs (else keys) new since.")


class RerunReport(BaseModel):
    """What a rerun of a job's searches found."""

    job_id: str
    since: datetime | None = Field(
        None, description="Articles entered since then were looked for (None: any)."
    )
    rerun_at: datetime = Field(default_factory=utcnow)
    last_checked: datetime | None = Field(
        None, description="When the job's searches were rerun before this."
    )
    queries: list[RerunQuery] = Field(default_factory=list)
    new: list[str] = Field(default_factory=list, description="Every new PMID (or key), once.")
    articles: list[NewArticle] = Field(default_factory=list, description="The new articles.")
    _found: dict[str, Article] = PrivateAttr(default_factory=dict)

    @property
    def found(self) -> dict[str, Article]:
        """The new articles themselves, by key (for a refresh to read)."""
        return self._found


def _label(key: str) -> str:
    return key.removeprefix("pmid:")


def rerun_since(job: ResearchJob, since: datetime | None = None) -> datetime | None:
    """The moment a rerun looks for articles entered since: ``since`` if given, else when the
    job last searched (None: it never did, and the rerun looks at everything)."""
    return since if since is not None else job.searched_at()


async def rerun_search(
    job: ResearchJob,
    search: SourceSearch,
    *,
    since: datetime | None = None,
    known: FreshArticles | None = None,
    log: list[SearchLogEntry] | None = None,
) -> RerunReport:
    """Send the job's logged queries again, for articles entered since ``since`` (default:
    :func:`rerun_since`); see the module docstring.

    Args:
        job: the job.
        search: sends a query to the named sources.
        since: look for articles entered since then (time zone required).
        known: articles the sources need not fetch again (the job's, the evidence cache's).
        log: where to log the searches sent (a refresh's, in the job's search log).
    """
    window = rerun_since(job, since)
    seen = set(job.articles) | {k for entry in job.search_log for k in entry.found}
    report = RerunReport(job_id=job.id, since=window, last_checked=job.checked_at)
    done: set[tuple[str, str, int]] = set()
    for entry in list(job.search_log):
        if entry.status == "cache":
            continue
        key = (entry.source, entry.query, entry.limit)
        if key in done:
            continue
        done.add(key)
        then = [e for e in job.search_log if (e.source, e.query, e.limit) == key]
        asked = list(dict.fromkeys(e.sub_question_id for e in then))
        at = utcnow()
        query = SearchQuery(term=entry.query, limit=entry.limit, entered_since=window)
        # What this rerun fetched already is not fetched again for the next query.
        results = await search([entry.source], query, HeldArticles(report.found, known))
        status = results.providers.get(entry.source)
        fresh = [a for a in results.articles if a.key not in seen]
        for article in fresh:
            if article.key not in report.found:
                report.found[article.key] = article
                report.new.append(_label(article.key))
                report.articles.append(
                    NewArticle(
                        key=article.key, pmid=article.pmid, title=article.title, year=article.year
                    )
                )
            told = next(a for a in report.articles if a.key == article.key)
            told.sub_questions += [q for q in asked if q not in told.sub_questions]
        hits = status.count if status is not None else len(results.articles)
        state = status.status if status is not None else "ok"
        report.queries.append(
            RerunQuery(
                source=entry.source,
                query=entry.query,
                limit=entry.limit,
                sub_questions=asked,
                first_run=then[0].date,
                hits_then=then[0].hits,
                hits_now=hits,
                status=state,
                new=[_label(a.key) for a in fresh],
            )
        )
        if log is not None:
            log.append(
                SearchLogEntry(
                    sub_question_id=asked[0],
                    source=entry.source,
                    query=entry.query,
                    limit=entry.limit,
                    date=at,
                    hits=hits,
                    non_english=status.dropped_non_english if status is not None else 0,
                    status=state,
                    error=status.error if status is not None else None,
                    found=[a.key for a in results.articles],
                    step=f"refresh: entered since {window:%Y-%m-%d}" if window else "refresh",
                    entered_since=window,
                )
            )
    return report


def render_rerun(report: RerunReport, *, advise: bool = True) -> str:
    """The rerun as text for a person (``advise``: with how to take what is new in)."""
    window = (
        f" for articles entered since {report.since:%Y-%m-%d %H:%M} UTC" if report.since else ""
    )
    lines = [
        f"Searches of job {report.job_id} repeated {report.rerun_at:%Y-%m-%d %H:%M} UTC{window}:"
    ]
    for q in report.queries:
        when = f"{q.first_run:%Y-%m-%d}"
        state = "" if q.status == "ok" else f" ({q.status})"
        lines.append(
            f"- {q.source}: {q.query} -- {q.hits_then} hits on {when}, {q.hits_now} "
            f"{'entered since' if report.since else 'now'}{state}"
            + (f"; new: {', '.join(q.new)}" if q.new else "")
        )
    if not report.queries:
        lines.append("- no search was logged for this job")
    if report.articles:
        lines.append(f"New since: {', '.join(report.new)}")
        for article in report.articles:
            name = f"PMID {article.pmid}" if article.pmid else article.key
            year = f" ({article.year})" if article.year else ""
            lines.append(f"  {name}: {article.title}{year}")
        if advise:
            lines.append(
                f"Take them into the report with `medlit research refresh {report.job_id}` "
                "(its old version is kept)."
            )
    else:
        lines.append("Nothing new since the job searched.")
    if report.last_checked is not None:
        lines.append(f"Last checked before: {report.last_checked:%Y-%m-%d %H:%M} UTC.")
    return "\n".join(lines)
