"""What a review team needs to rerun and audit a job's search: the search log, the articles
excluded and why, and the PRISMA-style flow identified -> duplicates removed -> screened ->
included.

Every article a job's searches found ends in exactly one place: included (it gave a verified
finding, or it was read and its title keeps the question's subject words) or excluded with
one reason, the first that applies of :data:`REASONS`. So the flow adds up by construction:
identified = not English + duplicates + screened, and screened = included + the excluded at
screening.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from medlit.research.flow_diagram import flow_image_markdown, flow_steps
from medlit.research.models import ExcludedArticle, ResearchJob, job_frame
from medlit.words.topics import anchor_terms, on_topic

__all__ = [
    "REASONS",
    "Flow",
    "excluded_articles",
    "flow_of",
    "included_keys",
    "render_flow",
    "search_log_rows",
]

#: Why a screened article is not evidence, in the order they are decided.
REASONS = (
    "retracted",
    "retraction notice",
    "no abstract",
    "off the question",
    "budget",
    "extraction failed",
    "no verified finding",
)


class Flow(BaseModel):
    """The PRISMA-style counts of one job."""

    identified: int = Field(description="Records the searches returned (every source).")
    not_english: int = Field(description="Removed by the sources' English filter.")
    duplicates_removed: int = Field(description="The same article found again.")
    screened: int = Field(description="Distinct articles screened.")
    excluded: dict[str, int] = Field(description="Excluded at screening, by reason.")
    included: int = Field(
        description="Studies included: those that gave a verified finding, and those read whose "
        "title keeps the question's subject (one evidence-table row each)."
    )


def included_keys(job: ResearchJob) -> list[str]:
    """Keys of the studies included, retracted ones never: first those that gave a verified
    finding (in the order their findings were made), then those read for the job whose title
    keeps the question's subject words (of the job's frame's question:
    :func:`~medlit.words.topics.anchor_terms`, :func:`~medlit.words.topics.on_topic`) although
    no finding of theirs was verified (a weak model's claims may all fail their checks; the
    study is still on the question, and its table row quotes it verbatim or stays empty)."""
    keys: list[str] = []
    for finding in job.findings:
        article = job.articles.get(finding.article_key)
        if article is not None and article.retraction is not None:
            continue
        if finding.article_key not in keys:
            keys.append(finding.article_key)
    # The question's own words, as the researcher screens what it reads (``_bearing``): the
    # fewer the frame asks about (asked_terms) keep a title on one word more often; on the
    # reworded questions' titles that kept 22 near misses where these keep 9 (check half).
    anchors = anchor_terms(job_frame(job).question)
    subs = job.plan.sub_questions if job.plan is not None else []
    for key in dict.fromkeys(k for q in subs for k in q.read):
        article = job.articles.get(key)
        if (
            key not in keys
            and article is not None
            and article.retraction is None
            and article.abstract
            and on_topic(article.title, anchors)
        ):
            keys.append(key)
    return keys


def _found_keys(job: ResearchJob) -> list[str]:
    keys = [k for entry in job.search_log for k in entry.found]
    return list(dict.fromkeys([*keys, *job.articles]))


def excluded_articles(job: ResearchJob) -> list[ExcludedArticle]:
    """Every article found and not included, with its reason (see :data:`REASONS`)."""
    included = set(included_keys(job))
    subs = job.plan.sub_questions if job.plan is not None else []
    read = {k for q in subs for k in q.read}
    unreadable = {k for q in subs for k in q.unreadable} - read
    # Off the question for every sub-question that found it (read by none).
    off = {k for q in subs for k in q.off_question} - read
    out: list[ExcludedArticle] = []
    for key in _found_keys(job):
        if key in included:
            continue
        article = job.articles.get(key)
        if article is None:
            # Found, but past the results a sub-question may read.
            reason = "budget"
        elif article.retraction is not None:
            reason = article.retraction
        elif not article.abstract:
            reason = "no abstract"
        elif key in off:
            reason = "off the question"
        elif key in unreadable:
            reason = "extraction failed"
        elif key in read:
            reason = "no verified finding"
        else:
            reason = "budget"
        out.append(
            ExcludedArticle(
                pmid=article.pmid if article is not None else _pmid_of(key),
                article_key=key,
                title=article.title if article is not None else "",
                reason=reason,
            )
        )
    return out


def _pmid_of(key: str) -> str | None:
    return key.removeprefix("pmid:") if key.startswith("pmid:") else None


def flow_of(job: ResearchJob, excluded: list[ExcludedArticle] | None = None) -> Flow:
    """The job's flow; ``excluded`` as :func:`excluded_articles` gives it (computed if None)."""
    excluded = excluded_articles(job) if excluded is None else excluded
    screened = len(_found_keys(job))
    hits = sum(e.hits for e in job.search_log)
    not_english = sum(e.non_english for e in job.search_log)
    by_reason = {r: n for r in REASONS if (n := sum(e.reason == r for e in excluded))}
    return Flow(
        identified=hits + not_english,
        not_english=not_english,
        # Articles a resumed job held before its log began count as found once.
        duplicates_removed=max(0, hits - screened),
        screened=screened,
        excluded=by_reason,
        included=screened - len(excluded),
    )


def search_log_rows(job: ResearchJob) -> list[dict[str, Any]]:
    """The search log as ``--json`` shows it: one row per query and source."""
    return [
        {
            "sub_question_id": e.sub_question_id,
            "source": e.source,
            "query": e.query,
            "date": e.date.isoformat(),
            "hits": e.hits,
            "non_english": e.non_english,
            "limit": e.limit,
            "status": e.status,
            **({"step": e.step} if e.step else {}),
            **({"error": e.error} if e.error else {}),
        }
        for e in job.search_log
    ]


def render_flow(job: ResearchJob, flow: Flow | None = None, *, drawing: bool = True) -> list[str]:
    """The search and its flow as Markdown lines (a section of the report): the log, the flow
    drawn (an SVG embedded as a ``data:`` image, :mod:`medlit.research.flow_diagram`) and its
    counts as a table under it, for readers and screen readers (``drawing=False``: the table
    alone, for a terminal)."""
    flow = flow or flow_of(job)
    out = ["## Search and selection", ""]
    searched = {(e.source, e.query, e.limit) for e in job.search_log if e.status != "cache"}
    if not job.search_log:
        return [*out, "No search was logged for this job.", ""]
    out += ["| Date (UTC) | Source | Query | Step | Hits |", "| --- | --- | --- | --- | --- |"]
    for entry in job.search_log:
        query = entry.query.replace("|", "\\|")
        hits = str(entry.hits) if entry.status in {"ok", "no_match", "cache"} else entry.status
        step = entry.step.replace("|", "\\|")
        out.append(f"| {entry.date:%Y-%m-%d %H:%M} | {entry.source} | {query} | {step} | {hits} |")
    out += [
        "",
        f"Rerun with `medlit research rerun-search {job.id}` "
        f"({len(searched)} {'query' if len(searched) == 1 else 'queries'} to repeat, for the "
        f"articles entered since); `medlit research refresh {job.id}` takes what is new into "
        "this report.",
        "",
        "### Flow of records",
        "",
        *([flow_image_markdown(flow), ""] if drawing else []),
        "| Step | Records |",
        "| --- | --- |",
    ]
    out += [f"| {step} | {count} |" for step, count in flow_steps(flow)]
    out.append("")
    return out
