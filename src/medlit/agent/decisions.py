"""Stop rules and the cache admission rule (seed 001, ``decision`` and ``should_cache``).

Both are pure functions of the state and the settings, so every rule can be tested on its own
and the graph only routes on their result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from medlit.agent.state import AgentState, Decision, StopReason
from medlit.config import AgentSettings, CacheSettings
from medlit.text import counted

__all__ = [
    "Admission",
    "StepDecision",
    "decide",
    "decision_message",
    "is_stagnant",
    "should_cache",
]


@dataclass(frozen=True)
class StepDecision:
    """What the decision node concluded: stop (with a reason) or fetch more."""

    decision: Decision
    stop_reason: StopReason | None = None


def is_stagnant(scores: list[float], *, rounds: int, min_gain: float) -> bool:
    """True when the last ``rounds`` rounds together gained less than ``min_gain``.

    ``scores`` is the retrieval score after each round, oldest first (the current round last);
    fewer than ``rounds + 1`` scores are never stagnant, since there is no history to judge.
    """
    if len(scores) < rounds + 1:
        return False
    window = scores[-(rounds + 1) :]
    return max(window[1:]) - window[0] < min_gain


def decide(state: AgentState, settings: AgentSettings) -> StepDecision:
    """Stop or fetch more, in order of precedence.

    1. a tier-1 hit stops at once;
    2. a score over ``score_threshold`` with confident evidence, an article of it speaking of
       the question's subject, stops (``threshold``), and so
       do ``min_docs`` articles that speak of the question's subject and its outcome
       (``enough``: another search would find what they say);
    3. when every source of the last round was unreachable (a host that does not resolve or
       refuses connections), stop (``unreachable``): another round would fail the same way;
    4. when even the broadened query returned nothing and there is no evidence at all, stop
       (``no_results``): the answer says no evidence was found, it never loops or invents one;
    5. the fetch-round and source-call budgets stop (``max_iterations``, ``max_api_calls``);
    6. no gain over the last ``stagnation_rounds`` rounds stops (``stagnation``);
    7. the broad query returned its last page or nothing new: stop (``exhausted``);
    8. otherwise: fetch more.
    """
    if state.get("cache_hit"):
        return StepDecision("stop", "cache_hit")
    score = state.get("retrieval_score", 0.0)
    if state.get("confident") and score >= settings.score_threshold and state.get("on_subject"):
        return StepDecision("stop", "threshold")
    if state.get("on_question", 0) >= settings.min_docs and state.get("evidence"):
        return StepDecision("stop", "enough")
    has_evidence = bool(state.get("evidence"))
    if state.get("unreachable"):
        return StepDecision("stop", "unreachable")
    fetched = state.get("iteration", 0) > 0
    last_count = state.get("last_fetch_count", -1)
    broad = state.get("query_mode") == "broad"
    if fetched and last_count == 0 and not has_evidence and broad:
        # Even the broadened query found nothing: say so rather than loop.
        return StepDecision("stop", "no_results")
    if state.get("iteration", 0) >= settings.max_iterations:
        return StepDecision("stop", "no_results" if not has_evidence else "max_iterations")
    if state.get("api_calls", 0) >= settings.max_api_calls:
        return StepDecision("stop", "no_results" if not has_evidence else "max_api_calls")
    history = state.get("prev_retrieval_scores", [])
    if is_stagnant(history, rounds=settings.stagnation_rounds, min_gain=settings.min_gain):
        return StepDecision("stop", "stagnation" if has_evidence else "no_results")
    paged_out = 0 <= last_count < settings.fetch_per_round
    if fetched and broad and (paged_out or state.get("last_fetch_new", -1) == 0):
        # The broad query returned its last page, or nothing new: another round cannot help.
        return StepDecision("stop", "exhausted" if has_evidence else "no_results")
    return StepDecision("fetch_more")


#: What the decision node tells a person watching, by why the loop stopped.
_STOPPED = {
    "threshold": "the evidence is enough: answering from {docs}",
    "enough": "enough articles on the question: answering from {docs}",
    "max_iterations": "search rounds used up: answering from {docs}",
    "max_api_calls": "search budget used up: answering from {docs}",
    "stagnation": "further searches added nothing better: answering from {docs}",
    "exhausted": "the sources have nothing more: answering from {docs}",
    "no_results": "no evidence found",
    "unreachable": "the sources are unreachable: answering from {docs} stored",
}


def decision_message(
    state: AgentState, decision: Decision, stop_reason: StopReason | None
) -> str | None:
    """What the decision node concluded, in words ("not enough evidence yet (2 articles):
    searching further"); None for a cache hit, which says so itself."""
    docs = counted(state.get("num_docs", 0), "article")
    if decision == "fetch_more":
        if not state.get("evidence"):
            return "no stored evidence answers it yet: searching"
        return f"not enough evidence yet ({docs}): searching further"
    template = _STOPPED.get(stop_reason or "")
    return template.format(docs=docs) if template else None


@dataclass(frozen=True)
class Admission:
    """Whether an answer may enter tier 1, and why not when it may not.

    ``path`` says which bar an admitted answer cleared: ``confident`` (enough articles, or
    one that studied exactly this question) or ``subject`` (one cited article speaks of the
    question's subject and outcome, or the one article it cites stood its checks); a hit on a
    ``subject`` answer needs ``cache.subject_min_score``, not ``cache.min_score``.
    """

    admit: bool
    reason: str
    path: Literal["confident", "subject"] | None = None


#: The causes of a withheld verdict that keep an answer out: a check dropped what the verdict
#: rested on, or there was nothing to read a verdict from.
_WITHHELD = {"check": "verdict_support_dropped", "no_evidence": "no_evidence"}


def _cites_subject(state: AgentState) -> bool:
    """Whether an article the answer cites speaks of the frame's subject and its outcome."""
    frame = state.get("frame")
    if frame is None:
        return False
    from medlit.agent.query import about_question

    cited = {c.pmid for c in state.get("citations", []) if c.pmid}
    articles = [a for a in state.get("documents", {}).values() if a.pmid in cited]
    return about_question(frame, articles) > 0


def _one_article_stood(state: AgentState) -> bool:
    """Whether the answer rests on one article and its checks changed nothing: it cites one
    PMID, its yes or no is the model's own (no check withheld, flipped or left anything
    out), though the article may word the subject or the outcome otherwise than the
    question does."""
    verdict = state.get("verdict")
    cited = {c.pmid for c in state.get("citations", []) if c.pmid}
    return (
        len(cited) == 1
        and verdict in ("yes", "no")
        and state.get("verdict_cause") is None
        and state.get("drafted_verdict") in (None, verdict)
        and not state.get("left_out")
        and not state.get("removed_citations")
    )


def _bar(state: AgentState, cache: CacheSettings) -> str:
    """The bar the answer clears ("confident" first, then "subject"), or why it clears
    neither: ``not_confident`` (too few articles, none it cites about the question) or
    ``low_score`` (a bar it stands at asks a higher retrieval score)."""
    score = state.get("retrieval_score", 0.0)
    confident = bool(state.get("confident"))
    if confident and score >= max(cache.min_score, 0.0):
        return "confident"
    subject = cache.subject_min_score is not None and (
        _cites_subject(state) or _one_article_stood(state)
    )
    if subject and score >= max(cache.subject_min_score or 0.0, 0.0):
        return "subject"
    return "low_score" if confident or subject else "not_confident"


def should_cache(
    state: AgentState,
    agent: AgentSettings,
    cache: CacheSettings,
    *,
    retrieved_pmids: Iterable[str],
) -> Admission:
    """Admit to tier 1 only a checked answer whose citations are all retrieved evidence.

    A wrong hit is a wrong medical answer served to someone else later, so the bar is high:
    the answer must exist, cite at least one article, cite nothing that was not retrieved for
    it (an answer from which an invented citation had to be stripped, or a sentence or
    citation its checks left out, is not admitted either), keep the verdict its checks left it
    (one withheld because a check dropped its support, or for want of evidence, is not
    admitted), not be a "no evidence found" reply (the literature may catch up), and clear one
    of two bars:

    - ``confident``: confident evidence (``agent.min_docs`` articles, or one that studied
      exactly this question) scoring at least ``cache.min_score``;
    - ``subject``: where that bar is not cleared (fewer articles, or one article whose score,
      the mean over ``min_docs`` articles, cannot reach ``min_score``), one article it cites
      speaks of the question's subject and its outcome (the one article that answers it), or
      it cites one article and its checks changed nothing (:func:`_one_article_stood`), and
      the evidence scores at least ``cache.subject_min_score`` (None: no such answer is
      admitted).

    ``benchmarks/admission.py`` measures both bars (``docs/cache-guard.md``).
    """
    if not cache.enabled or not state.get("use_cache", True):
        return Admission(False, "cache_disabled")
    if state.get("cache_hit"):
        return Admission(False, "already_cached")
    if state.get("stop_reason") == "no_results" or not state.get("final_answer", "").strip():
        return Admission(False, "no_answer")
    if state.get("fetch_errors"):
        # Some provider failed: the answer rests on partial retrieval; serve it, don't keep it.
        return Admission(False, "source_failed")
    cause = state.get("verdict_cause")
    if cause is not None and cause.kind in _WITHHELD:
        return Admission(False, _WITHHELD[cause.kind])
    path = _bar(state, cache)
    if path not in ("confident", "subject"):
        return Admission(False, path)
    citations = state.get("citations", [])
    if not citations:
        return Admission(False, "no_citations")
    if state.get("removed_citations"):
        return Admission(False, "invented_citations")
    if state.get("left_out"):
        # What was left out would not be said again on a hit: the next asker gets a fresh try.
        return Admission(False, "sentences_left_out")
    allowed = set(retrieved_pmids)
    if any(c.pmid is None or c.pmid not in allowed for c in citations):
        return Admission(False, "citation_not_in_evidence")
    return Admission(True, "ok", "confident" if path == "confident" else "subject")
