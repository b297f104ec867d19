"""A cached answer checked for new articles (``cache.recheck_after_s``).

A tier-1 entry keeps what it rests on beside it in the store (its ``basis``, which a hit never
reads: :meth:`medlit.storage.base.Store.answer_basis`): its searches (source, query, when run),
the keys of the articles they found (``evidence_keys``) and its sources. A hit last checked (or
stored) longer ago than ``recheck_after_s`` runs those searches again for the articles
*entered* in each source since then (:attr:`medlit.types.SearchQuery.entered_since`), one
search per source: the queries of a source are joined with ``OR``.

Only the searches that kept the question's outcome are rerun (all of them when every search
dropped it), and a new article counts only when it speaks of the question's subject and
outcome (:func:`medlit.words.search_plan.speaks_of`, as the digest counts conclusions): one
about something else cannot change the answer, and does not cost a model call.

- Nothing new: the answer is served and records the check (``checked_at``); no model call.
- Something new: the new articles are stored in tier 2 and the question is answered again
  through the ask graph (its checks included), from the stored evidence and the new articles;
  the old entry is replaced (or dropped, when the new answer is not admitted) and the result
  says what changed (:func:`changes`).
- A source failed: the answer is served as it was, saying it could not be checked, and stays
  due.

Replicas sharing a store check an entry once: the check holds a lease in the store
(:meth:`medlit.storage.base.Store.claim_answer_check`); one that does not get it serves the
entry as it is. The TTL (``answer_ttl_s``) counts from when the entry was stored, whatever
the checks: it stays the upper bound.

Imported only when a hit is due (a hit that is not pays nothing for it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from medlit.agent.deps import AgentDeps
from medlit.agent.hit_nodes import off_loop, question_frame, served
from medlit.agent.state import AgentState, initial_state
from medlit.errors import SourceError
from medlit.log import get_logger
from medlit.progress import emit
from medlit.storage.base import AnswerRecord
from medlit.types import Article, SearchQuery
from medlit.words.search_plan import speaks_of

__all__ = [
    "NEW_ARTICLES_LIMIT",
    "DueReport",
    "FoundNew",
    "changes",
    "find_new_articles",
    "is_due",
    "recheck_due",
    "recheck_hit",
    "rests_on",
]

log = get_logger("agent.recheck")

#: Articles entered since the last check asked of each source at most: a week's new articles
#: on one question are a handful; more than this and the answer is asked again anyway.
NEW_ARTICLES_LIMIT = 100

AnswerAgain = Callable[[AgentState], Awaitable[AgentState]]


def last_checked(payload: Mapping[str, Any]) -> float:
    """When a cached answer (its payload, as ``query_cache`` leaves it) was stored or last
    checked for new articles, epoch seconds."""
    return max(float(payload.get("created_at") or 0.0), float(payload.get("checked_at") or 0.0))


def is_due(payload: Mapping[str, Any], recheck_after_s: float, now: float) -> bool:
    """Whether a cached answer is due for a check (``recheck_after_s`` 0: always)."""
    return now - last_checked(payload) >= recheck_after_s


def rests_on(state: AgentState, sources: Sequence[str]) -> dict[str, Any]:
    """What an answer about to be cached rests on: its searches, one per source and query
    (source, query, when run; the latest run of each), the searches of the answer it replaces
    (a recheck), and the keys of every article they or the store gave it."""
    prior = state.get("rests_on") or {}
    searches: dict[tuple[str, str], dict[str, Any]] = {}
    for item in prior.get("searches", []):
        searches[(str(item["source"]), str(item["query"]))] = dict(item)
    logged_searches = state.get("searches", [])
    # A search that dropped the outcome finds every new article on the subject: rerun, it
    # would answer again for articles about something else. The searches that kept it are
    # rerun, or, when every search dropped it, all of them.
    kept = [s for s in logged_searches if "outcome" not in (s.get("dropped") or ())]
    for logged in kept or logged_searches:
        for source in sources:
            searches[(source, str(logged["query"]))] = {
                "source": source,
                "query": logged["query"],
                "at": logged.get("at"),
            }
    keys = set(prior.get("evidence_keys", []))
    keys.update(state.get("documents", {}))
    for logged in state.get("searches", []):
        keys.update(logged.get("found", []))
    return {
        "searches": list(searches.values()),
        "evidence_keys": sorted(keys),
        "sources": list(sources),
    }


@dataclass
class FoundNew:
    """What a search for articles entered since the last check found.

    Attributes:
        articles: the articles found that the answer does not rest on already.
        failed: one line per source that failed (the check then says nothing).
        searched: the sources asked.
    """

    articles: list[Article] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)


def _joined(queries: Iterable[str]) -> str:
    distinct = list(dict.fromkeys(q.strip() for q in queries if q and q.strip()))
    if len(distinct) == 1:
        return distinct[0]
    return " OR ".join(f"({q})" for q in distinct)


async def find_new_articles(
    deps: AgentDeps,
    searches: Sequence[Mapping[str, Any]],
    known_keys: Iterable[str],
    sources: Sequence[str],
    since: float,
) -> FoundNew:
    """Run ``searches`` again, per source, for the articles entered since ``since``: one
    search per source (its queries joined with OR), records fetched only for ids the evidence
    cache does not hold. Articles among ``known_keys`` are not new."""
    by_source: dict[str, list[str]] = {}
    for item in searches:
        if item.get("source") in sources:
            by_source.setdefault(str(item["source"]), []).append(str(item["query"]))
    entered = datetime.fromtimestamp(since, UTC)
    known = set(known_keys)
    found = FoundNew(searched=list(by_source))
    seen: set[str] = set()
    for source, queries in by_source.items():
        query = SearchQuery(term=_joined(queries), limit=NEW_ARTICLES_LIMIT, entered_since=entered)
        emit("stage", "recheck", f"searching {source} for articles entered since the last check")
        try:
            articles, failed, _ = await deps.search(query, [source], True)
        except SourceError as exc:
            articles, failed = [], [str(exc)]
        found.failed.extend(failed)
        for article in articles:
            if article.key not in known and article.key not in seen:
                seen.add(article.key)
                found.articles.append(article)
    return found


def changes(before: Mapping[str, Any], after: AgentState, new: Sequence[Article]) -> dict[str, Any]:
    """What a recheck changed: the new articles, the verdict before and after, the citations
    the new answer has that the old did not."""
    old_cited = {str(c.get("pmid")) for c in before.get("citations", []) if c.get("pmid")}
    cited = [c.pmid for c in after.get("citations", []) if c.pmid]
    verdict_before, verdict_after = before.get("verdict"), after.get("verdict")
    return {
        "new_articles": len(new),
        "new_pmids": [a.pmid for a in new if a.pmid],
        "verdict_before": verdict_before,
        "verdict_after": verdict_after,
        "verdict_turned": verdict_before != verdict_after,
        "new_citations": [p for p in cited if p not in old_cited],
    }


def _fresh_state(hit: AgentState, rests: dict[str, Any]) -> AgentState:
    """The state of the question answered again: the hit's question, plan and vector, past
    tier 1 (the graph enters at the evidence), with what the old answer rested on."""
    state = initial_state(
        hit["question"],
        session_id=hit.get("session_id"),
        sources=hit.get("sources"),
        use_cache=True,
        memory_summary=hit.get("memory_summary", ""),
        namespace=hit.get("namespace", "default"),
        fingerprint=hit.get("fingerprint", ""),
    )
    for key in (
        "previous_question",
        "standalone_question",
        "pubmed_query",
        "focus",
        "rewritten_by_llm",
        "query_vector",
    ):
        if key in hit:
            state[key] = hit[key]
    state["planned"] = True
    state["miss_reason"] = "new_articles"
    state["rests_on"] = rests
    return state


async def recheck_hit(deps: AgentDeps, hit: AgentState, answer_again: AnswerAgain) -> AgentState:
    """The state to answer with for a due tier-1 hit (see the module docstring).

    Args:
        deps: the ask's dependencies (store, sources, evidence cache).
        hit: the state after ``query_cache`` served the entry.
        answer_again: runs the ask graph on a state past tier 1 (the assistant's miss path).
    """
    settings = deps.settings.cache
    payload = hit.get("cache_payload") or {}
    entry_id = hit.get("cache_entry_id")
    since = last_checked(payload)
    now = time.time()
    hit["cache_checked_at"] = since
    if entry_id is None:
        return hit
    store = deps.answers.store
    claimed = await off_loop(
        store.claim_answer_check,
        entry_id,
        now=now,
        due_before=now - settings.recheck_after_s,
        lease_s=settings.recheck_lease_s,
    )
    if not claimed:  # another process is checking it (or just did): serve it as it is
        deps.answers.count_recheck("busy")
        hit["recheck"] = {"status": "busy", "since": since}
        return hit
    checked_at: float | None = None
    outcome = "failed"  # until the check says otherwise (an exception is a failed check)
    try:
        basis = await off_loop(store.answer_basis, entry_id)
        searches = basis.get("searches") or []
        sources = list(hit.get("sources") or basis.get("sources") or [])
        known = basis.get("evidence_keys") or []
        off_question = 0
        if not any(item.get("source") in sources for item in searches):
            # Cached before searches were kept (or none of this question's sources): nothing
            # to rerun, so nothing can be said to be unchanged.
            new: list[Article] = []
            log.info("recheck_unrecorded", entry=entry_id)
            status = "unrecorded"
        else:
            found = await find_new_articles(deps, searches, known, sources, since)
            if found.failed:
                log.warning("recheck_failed", entry=entry_id, failed=found.failed)
                hit["recheck"] = {"status": "failed", "since": since, "error": found.failed[0]}
                return hit
            frame = question_frame(hit)
            new = [a for a in found.articles if speaks_of(frame, a.everything_said)]
            off_question = len(found.articles) - len(new)
            if not new:
                checked_at, outcome = now, "unchanged"
                hit["cache_checked_at"] = now
                hit["recheck"] = {
                    "status": "unchanged",
                    "since": since,
                    "new_articles": 0,
                    "new_off_question": off_question,
                }
                return hit
            status = "changed"
            await off_loop(deps.store_articles, new, True, heavy=True)
        rests = {
            "searches": searches,
            "evidence_keys": [*known, *(a.key for a in new)],
        }
        emit("stage", "recheck", f"{len(new)} new article(s): answering again")
        try:
            final = await answer_again(_fresh_state(hit, rests))
        except Exception as exc:  # the cached answer still stands; it stays due
            log.warning("recheck_answer_failed", entry=entry_id, error=str(exc))
            hit["recheck"] = {
                "status": "failed",
                "since": since,
                "new_articles": len(new),
                "new_pmids": [a.pmid for a in new if a.pmid],
                "error": f"new articles found, but answering again failed: {exc}",
            }
            return hit
        # The old entry is outdated: replaced by the new answer (same question), else dropped.
        old = await off_loop(store.get_answer, entry_id)
        if old is not None:
            await off_loop(deps.answers.drop, [entry_id])
        final["cache_checked_at"] = now
        final["recheck"] = {
            "status": status,
            "since": since,
            **changes(payload, final, new),
            "new_off_question": off_question,
        }
        outcome = status
        return final
    finally:
        await off_loop(store.finish_answer_check, entry_id, checked_at=checked_at)
        deps.answers.count_recheck(outcome)


@dataclass
class DueReport:
    """What :func:`recheck_due` did: entries by outcome (``unchanged``, ``changed``,
    ``unrecorded``, ``failed``, ``busy``, ``skipped``: cached under other settings or sources
    than this process answers with, left for a process that has them)."""

    due: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    changed: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> None:
        """Count one entry's outcome."""
        self.outcomes[status] = self.outcomes.get(status, 0) + 1


def _sources_of(deps: AgentDeps, record: AnswerRecord) -> list[str] | None:
    """The sources a cached answer was asked of, when this process answers with the same
    settings for them (its fingerprint and origin agree), else None."""
    from itertools import combinations

    recorded = deps.answers.store.answer_basis(record.id).get("sources")
    if recorded:
        candidates = [list(recorded)]
    else:  # cached before its sources were kept: the sources whose fingerprint it has
        names = ["pubmed", "europepmc", "local"]
        candidates = [list(c) for n in range(1, 4) for c in combinations(names, n)]
    for names in candidates:
        if deps.fingerprint(names) == record.fingerprint and deps.origin(names) == record.origin:
            return names
    return None


async def recheck_due(
    deps: AgentDeps,
    answer_again: AnswerAgain,
    *,
    namespace: str | None = None,
    limit: int = 1000,
    on_entry: Callable[[int, int, str], None] | None = None,
) -> DueReport:
    """Check every tier-1 answer due (``cache.recheck_after_s``) for new articles, longest
    unchecked first, as a due hit would be (:func:`recheck_hit`); for a scheduled run
    (``medlit cache recheck``) and the service's background task.

    Args:
        deps: the dependencies (store, sources, evidence cache, LLM).
        answer_again: runs the ask graph on a state past tier 1.
        namespace: one tenant's answers (None: every tenant's).
        limit: at most this many entries.
        on_entry: called after each entry with (done, due, its outcome), for progress.
    """
    from medlit.agent.hit_nodes import HitNodes
    from medlit.cache.answers import CachedAnswer

    cfg = deps.settings.cache
    now = time.time()
    due = await off_loop(
        deps.answers.store.answers_due,
        checked_before=now - cfg.recheck_after_s,
        namespace=namespace,
        limit=limit,
    )
    report = DueReport(due=len(due))
    nodes = HitNodes(deps)
    for done, record in enumerate(due, start=1):
        status = "skipped"
        sources = await off_loop(_sources_of, deps, record)
        if sources is not None and now - record.created_at < cfg.answer_ttl_s:
            state = initial_state(
                record.question,
                sources=sources,
                namespace=record.namespace,
                fingerprint=record.fingerprint,
            )
            state.update(await nodes.plan_query(state, frame=False))  # type: ignore[typeddict-item]
            entry = CachedAnswer.model_validate(record.payload)
            entry.question, entry.created_at = record.question, record.created_at
            entry.checked_at = record.checked_at
            state.update(served(entry, entry_id=record.id))  # type: ignore[typeddict-item]
            state["planned"] = True
            final = await recheck_hit(deps, state, answer_again)
            status = (final.get("recheck") or {}).get("status", "busy")
            if status in ("changed", "unrecorded"):
                report.changed.append({"question": record.question, **(final.get("recheck") or {})})
        report.count(status)
        if on_entry is not None:
            on_entry(done, len(due), status)
    return report
