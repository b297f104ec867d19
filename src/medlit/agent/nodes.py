"""The graph's nodes (seed 001), as async methods of :class:`AskNodes`.

Each node reads the state and returns a partial update; :func:`timed` adds the node's wall
time to ``timings``. The nodes hold no per-question state themselves, so one ``AskNodes`` serves
every question of an :class:`~medlit.assistant.Assistant`.

``plan_query`` and ``query_cache`` import nothing heavy (no LangGraph, no openai, no httpx)
unless the question needs the LLM planner: the assistant runs them before the graph so that a
tier-1 hit never pays for those imports.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from medlit.agent import decisions, query, scoring
from medlit.agent.deps import AgentDeps
from medlit.agent.memory import Turn, session_key, summary_messages
from medlit.agent.prompt import (
    ANSWER_AGAINST_ARTICLES,
    ANSWER_ECHOED,
    ANSWER_EMPTY,
    ANSWER_UNSUPPORTED,
    NO_EVIDENCE_ANSWER,
    NOTHING_SUPPORTED,
    best_article_lost,
    build_messages,
    expand_context,
    without_headers,
)
from medlit.agent.state import AgentState
from medlit.checks.answer_wording import third_person, unauthored, without_opening_connective
from medlit.checks.attribution import attribute_uncited
from medlit.checks.borrowed_terms import drop_borrowed_terms
from medlit.checks.citation_names import (
    drop_misattributed,
    left_unanswered,
    misattribution_warnings,
    unaddressed,
)
from medlit.checks.citations import (
    CitationCheck,
    Verdict,
    drop_citation_only,
    enforce_citations,
    extract_pmids,
    is_yes_no_question,
    reasoned_verdict,
    verdict_first,
    without_citations,
)
from medlit.checks.cited_authors import drop_wrong_authors
from medlit.checks.cited_designs import drop_wrong_designs
from medlit.checks.cited_numbers import drop_unsourced_numbers
from medlit.checks.cited_subjects import drop_unsaid_subjects, populations_unspoken
from medlit.checks.cited_years import drop_wrong_years
from medlit.checks.contradicted import (
    consistent_verdict,
    drop_against_conclusions,
    drop_contradicted,
    states_only_otherwise,
)
from medlit.checks.correlation_strength import drop_overstated_correlations
from medlit.checks.defined_terms import spell_out
from medlit.checks.inferences import drop_unsupported_inferences
from medlit.checks.off_question import drop_borrowed_support, drop_off_question
from medlit.checks.restated_titles import drop_restated_titles
from medlit.checks.reversed_findings import drop_reversed_findings
from medlit.checks.stated_aims import drop_aims_as_findings
from medlit.checks.swapped_groups import drop_swapped_groups
from medlit.checks.swapped_subjects import drop_swapped_subjects
from medlit.checks.unmentioned import unmentioned_terms
from medlit.checks.unsupported import drop_unsupported, says_all
from medlit.checks.verdict import read_verdict
from medlit.errors import CacheAdmissionError, LLMError, SourceError, SourceUnavailable
from medlit.llm.extractive import about_question
from medlit.log import get_logger
from medlit.progress import emit, streaming_wanted
from medlit.text import all_of, counted, drop_repeated_sentences, either_of, only_points
from medlit.types import Article, Citation, Evidence, SearchQuery
from medlit.usage import usage_scope

__all__ = ["AskNodes", "Node", "off_loop", "timed"]

log = get_logger("agent")

Node = Callable[[AgentState], Awaitable[dict[str, Any]]]
T = TypeVar("T")


#: What a person watching is told when a node starts (see :mod:`medlit.progress`).
STAGE_MESSAGES = {
    "plan_query": "reading the question",
    "query_cache": "checking the answer cache",
    "chunk_store_search": "searching cached evidence",
    "score": "scoring the evidence",
    "build_prompt": "preparing the evidence",
    "call_llm": "writing the answer",
    "update_memory": "updating the conversation",
    "admit_cache": "saving the answer",
}
#: Nodes that say what they do themselves ("searching PubMed for “statins AND dementia”").
SELF_REPORTED = frozenset({"fetch_pubmed", "decision"})
_WORDS = re.compile(r"[^\W\d_]{2,}")
_SOURCE_LABELS = {"pubmed": "PubMed", "europepmc": "Europe PMC", "local": "the local corpus"}


def _found(articles: int, new: int, failed: list[str]) -> str:
    """What a search gave: "12 articles found, 5 new", "nothing found (1 source failed)"."""
    text = f"{counted(articles, 'article')} found, {new} new" if articles else "nothing found"
    if failed:
        text += f" ({counted(len(failed), 'source')} failed)"
    return text


def _sources_label(names: list[str]) -> str:
    labels = [_SOURCE_LABELS.get(name, name) for name in names]
    return (
        " and ".join(labels) if len(labels) < 3 else ", ".join(labels[:-1]) + f" and {labels[-1]}"
    )


_HEAVY: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


async def off_loop(func: Callable[..., T], *args: Any, heavy: bool = False, **kwargs: Any) -> T:
    """Run blocking work (embedding, the store, the digest) in a worker thread.

    The event loop keeps serving meanwhile: in a server, a cached answer never waits behind
    another question's embedding or database write. Heavy CPU work (embedding a page of new
    articles, the extractive digest) runs one call at a time per event loop, so misses cannot
    take every core from the hits; its model computation runs in the heavy lane, below a
    server's CPU priority (:class:`medlit.heavy.LaneEmbedder`). The Python around it stays at
    normal priority: a thread holding the GIL must never wait for the CPU behind the hits,
    which would then wait for the GIL.
    """
    limiter = None
    if heavy:
        loop = asyncio.get_running_loop()
        limiter = _HEAVY.get(loop)
        if limiter is None:
            limiter = _HEAVY[loop] = anyio.CapacityLimiter(1)
    return await anyio.to_thread.run_sync(functools.partial(func, *args, **kwargs), limiter=limiter)


def timed(name: str, node: Node) -> Node:
    """Wrap a node so its update carries its wall time in ``timings[name]`` (milliseconds).

    It also reports the node's start as a ``stage`` progress event.
    """

    async def run(state: AgentState) -> dict[str, Any]:
        if name not in SELF_REPORTED:
            emit("stage", name, STAGE_MESSAGES.get(name, name.replace("_", " ")))
        start = time.perf_counter()
        update = await node(state)
        update["timings"] = {name: (time.perf_counter() - start) * 1000.0}
        return update

    run.__name__ = name
    return run


class AskNodes:
    """The nodes of the ask graph, bound to their dependencies.

    Args:
        deps: settings, caches, embedder, sources and LLM client the nodes use.
    """

    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps
        self.agent = deps.settings.agent

    # -- plan and tier 1 ---------------------------------------------------------------
    async def plan_query(self, state: AgentState) -> dict[str, Any]:
        """Make the question standalone and build its PubMed queries (LLM only for follow-ups)."""
        question = state["question"]
        previous = state.get("previous_question")
        plan = query.deterministic_plan(question, max_terms=self.agent.max_query_terms)
        by_llm = False
        swapped = query.name_swap(question, previous) if previous else None
        if swapped is not None:  # "what about type 1?": the previous question, renamed
            plan = query.deterministic_plan(swapped, max_terms=self.agent.max_query_terms)
            log.info("plan_query_name_swap", follow_up=question, standalone=swapped)
        elif previous and query.looks_like_follow_up(question):
            plan = query.contextual_plan(question, previous, max_terms=self.agent.max_query_terms)
            if self.deps.llm_configured("plan_query"):
                try:
                    rewritten = await self._llm_plan(question, state.get("memory_summary", ""))
                except LLMError as exc:
                    log.warning("plan_query_llm_failed", error=str(exc))
                else:
                    # A rewrite that lost what the follow-up asks would be answered (or served
                    # from the cache) as the previous question: keep the contextual plan then.
                    if query.keeps_follow_up(question, rewritten.standalone_question):
                        plan, by_llm = rewritten, True
                    else:
                        log.warning(
                            "plan_query_rewrite_dropped_follow_up",
                            follow_up=question,
                            rewrite=rewritten.standalone_question,
                        )
        vector = self.deps.remembered_embedding(plan.standalone_question)
        if vector is None:
            vector = await off_loop(self.deps.embed_one, plan.standalone_question)
        return {
            "standalone_question": plan.standalone_question,
            "pubmed_query": plan.pubmed_query,
            "broad_query": plan.broad_query,
            "focus": plan.focus,
            "is_yes_no": is_yes_no_question(plan.standalone_question),
            "rewritten_by_llm": by_llm,
            "query_vector": vector,
        }

    async def _llm_plan(self, question: str, memory: str) -> query.QueryPlan:
        messages = [
            {
                "role": "system",
                "content": "Rewrite the user's latest question so it can be understood without "
                "the conversation (resolve 'it', 'they', 'and in children?' from the summary), "
                "build a PubMed query for it (key terms joined with AND; synonyms in "
                "parentheses with OR) and name its focus (treatment, safety, diagnosis, "
                "prognosis, aetiology or other). Keep the user's intent; add nothing new.",
            },
            {
                "role": "user",
                "content": f"Conversation summary:\n{memory or '(none)'}\n\n"
                f"Latest question: {question}",
            },
        ]
        out = await self.deps.llm().complete_json("plan_query", messages, query.PlanOutput)
        standalone = query.normalise_question(out.standalone_question) or question
        _narrow, broad = query.build_queries(standalone, max_terms=self.agent.max_query_terms)
        narrow = " ".join(out.pubmed_query.split()) or _narrow
        return query.QueryPlan(
            standalone, narrow, broad, out.focus or query.suggest_focus(standalone)
        )

    def _fingerprint(self, state: AgentState) -> str:
        return state.get("fingerprint") or self.deps.fingerprint(state.get("sources", ["pubmed"]))

    async def query_cache(self, state: AgentState, *, count_miss: bool = True) -> dict[str, Any]:
        """Tier 1: a stored answer to the same question (the cache's guard has the last word).

        ``count_miss=False``: a miss is left uncounted, for a caller that may look again.
        """
        if not state.get("use_cache", True) or not self.deps.settings.cache.enabled:
            return {"cache_hit": False, "miss_reason": "disabled", "guard_reason": None}
        lookup = await self.deps.lookup_answer(
            state["standalone_question"],
            state["query_vector"],
            namespace=state.get("namespace", self.deps.settings.namespace),
            fingerprint=self._fingerprint(state),
            count_miss=count_miss,
        )
        if not lookup.hit or lookup.entry is None:
            return {
                "cache_hit": False,
                "miss_reason": lookup.miss_reason,
                "guard_reason": lookup.guard_reason,
                "similarity": round(lookup.similarity, 4) if lookup.similarity else None,
            }
        entry = lookup.entry
        payload = entry.model_dump(mode="json")
        return {
            "cache_hit": True,
            "cache_payload": payload,
            "similarity": round(lookup.similarity, 4),
            "verified_by": lookup.verified_by,
            "miss_reason": None,
            "guard_reason": None,
            "final_answer": entry.answer,
            "verdict": entry.verdict if entry.verdict in ("yes", "no", "uncertain") else None,
            "citations": list(entry.citations),  # the entry is this lookup's own copy
            "mode": entry.extra.get("mode", "llm"),
            "retrieval_score": entry.retrieval_score,
            "doc_scores": dict(entry.doc_scores),
            "decision": "stop",
            "stop_reason": "cache_hit",
        }

    # -- the retrieval loop ------------------------------------------------------------
    async def chunk_store_search(self, state: AgentState) -> dict[str, Any]:
        """Tier 2: the stored chunks nearest the question (only this question's, without cache)."""
        only: list[str] | None = None
        if not state.get("use_cache", True):
            only = list(state.get("documents", {}))
            if not only:
                return {"anchor_chunks": []}
        anchors = await off_loop(
            self.deps.search_chunks, state["query_vector"], self.agent.candidate_chunks, only
        )
        documents = dict(state.get("documents", {}))
        chunk_map: dict[str, list[str]] = {}
        for item in anchors:
            documents.setdefault(item.article.key, item.article)
            chunk_map.setdefault(item.article.key, []).append(item.chunk.id)
        return {"anchor_chunks": anchors, "documents": documents, "doc_chunks_map": chunk_map}

    async def score(self, state: AgentState) -> dict[str, Any]:
        """Score the anchors: per-document max, retrieval_score, confident."""
        report = scoring.score_evidence(state.get("anchor_chunks", []), self.agent)
        return {
            "evidence": report.evidence,
            "doc_scores": report.doc_scores,
            "retrieval_score": report.retrieval_score,
            "num_docs": report.num_docs,
            "confident": report.confident,
            "prev_retrieval_scores": [
                *state.get("prev_retrieval_scores", []),
                report.retrieval_score,
            ],
        }

    async def decision(self, state: AgentState) -> dict[str, Any]:
        """Stop or fetch more (``decisions.decide``); stop_reason is set whenever it stops."""
        step = decisions.decide(state, self.agent)
        told = decisions.decision_message(state, step.decision, step.stop_reason)
        if told is not None:
            emit("stage", "decision", told)
        update: dict[str, Any] = {"decision": step.decision}
        if step.stop_reason:
            update["stop_reason"] = step.stop_reason
        log.debug(
            "decision",
            decision=step.decision,
            reason=step.stop_reason,
            score=state.get("retrieval_score"),
            docs=state.get("num_docs"),
            iteration=state.get("iteration"),
        )
        return update

    def _next_query(self, state: AgentState) -> tuple[str, int, str] | None:
        """(term, offset, mode) of the next fetch: page on while pages are full, then broaden."""
        narrow, broad = state["pubmed_query"], state.get("broad_query") or state["pubmed_query"]
        limit = self.agent.fetch_per_round
        if state.get("iteration", 0) == 0:
            return (narrow, 0, "broad" if narrow == broad else "narrow")
        mode = state.get("query_mode", "narrow")
        full_page = state.get("last_fetch_count", 0) >= limit
        if full_page:
            term = broad if mode == "broad" else narrow
            return (term, state.get("page_offset", 0) + limit, mode)
        if mode == "narrow":
            return (broad, 0, "broad")
        return None  # the broad query has no more pages

    async def fetch_pubmed(self, state: AgentState) -> dict[str, Any]:
        """Tier 3: search the sources, store what is new (chunked and embedded) in tier 2."""
        nxt = self._next_query(state)
        iteration = state.get("iteration", 0) + 1
        if nxt is None:
            emit("stage", "fetch_pubmed", "no other search to try")
            return {
                "iteration": iteration,
                "last_fetch_count": 0,
                "last_fetch_new": 0,
                "query_mode": "broad",
            }
        term, offset, mode = nxt
        where = _sources_label(state["sources"])
        page = f", results from {offset + 1}" if offset else ""
        emit("stage", "fetch_pubmed", f"searching {where} for “{term}”{page}", query=term)
        search = SearchQuery(term=term, limit=self.agent.fetch_per_round, offset=offset)
        errors = list(state.get("fetch_errors", []))
        use_cache = state.get("use_cache", True)
        with usage_scope() as usage:
            try:
                articles, failed = await self.deps.search(search, state["sources"], use_cache)
            except SourceError as exc:
                log.warning("fetch_failed", query=term, error=str(exc))
                articles, failed = [], [str(exc)]
        errors.extend(failed)
        searched_ok = state.get("searched_ok", False) or len(failed) < len(state["sources"])
        calls = sum(usage.calls.values())
        documents = dict(state.get("documents", {}))
        new = [a for a in articles if a.key not in documents]
        downloaded = (
            await off_loop(self.deps.store_articles, new, use_cache, heavy=True) if new else []
        )
        for article in new:
            documents[article.key] = article
        if not articles:
            log.info("no_search_results", query=term, offset=offset)
        emit("stage", "fetch_pubmed", _found(len(articles), len(new), failed), found=len(articles))
        return {
            "iteration": iteration,
            "api_calls": state.get("api_calls", 0) + calls,
            "page_offset": offset,
            "query_mode": mode,
            "last_fetch_count": len(articles),
            "last_fetch_new": len(new),
            "documents": documents,
            "downloaded_keys": [*state.get("downloaded_keys", []), *downloaded],
            "fetch_errors": errors,
            "searched_ok": searched_ok,
        }

    # -- the answer --------------------------------------------------------------------
    async def build_prompt(self, state: AgentState) -> dict[str, Any]:
        """Context expansion (neighbouring chunks) and the answer prompt."""
        evidence = state.get("evidence", [])
        if not evidence:
            return {"prompt_messages": [], "context_chunks": 0, "evidence_reused": 0}
        blocks = await off_loop(
            expand_context,
            evidence,
            self.deps.neighbours,
            window=self.agent.neighbour_chunks,
            max_chars=self.agent.max_context_chars,
        )
        messages = build_messages(
            state["question"],
            blocks,
            standalone_question=state.get("standalone_question"),
            focus=state.get("focus"),
            memory_summary=state.get("memory_summary", ""),
            yes_no=state.get("is_yes_no", False),
        )
        downloaded = set(state.get("downloaded_keys", []))
        reused = sum(1 for ev in evidence if ev.article.key not in downloaded)
        return {
            "prompt_messages": messages,
            "context_chunks": sum(len(b.chunks) for b in blocks),
            "evidence_reused": reused if state.get("use_cache", True) else 0,
        }

    async def call_llm(self, state: AgentState) -> dict[str, Any]:
        """The answer: the LLM from the prompt, or the extractive digest without an LLM."""
        evidence: list[Evidence] = state.get("evidence", [])
        configured = self.deps.llm_configured("answer")
        mode = "llm" if configured else "evidence_digest"
        if not evidence:
            errors = state.get("fetch_errors", [])
            if errors and not state.get("searched_ok", False):
                # "No evidence found" would be false: the literature was never searched.
                raise SourceUnavailable(
                    "could not search the literature and no cached evidence answers this "
                    f"question: {'; '.join(dict.fromkeys(errors))}"
                )
            return {
                "final_answer": NO_EVIDENCE_ANSWER,
                "verdict": None,
                "citations": [],
                "mode": mode,
                "stop_reason": "no_results",
            }
        articles = {ev.article.pmid: ev.article for ev in evidence if ev.article.pmid}
        if configured:
            written = await self._write_answer(state["prompt_messages"])
            text = drop_repeated_sentences(written)
            if text != written:
                log.info("answer_repeats_dropped", chars=len(written) - len(text))
            verdict = None
            if state.get("is_yes_no"):
                # The model's own verdict line, if it wrote one after its reasoning; an opening
                # guess is dropped (read_verdict asks once the text is checked).
                verdict, text = reasoned_verdict(text)
            said = without_headers(text, (ev.article for ev in evidence))
            if _WORDS.search(said) and not only_points(without_citations(said)):
                check, verdict, warnings = await self._checked_answer(
                    state, said, verdict, articles
                )
                if check.digest_instead is not None:  # nothing of the model's stands
                    why, warned = check.digest_instead
                    log.warning("answer_replaced_by_digest", why=why)
                    mode = "evidence_digest"
                    check, verdict = await self._digest(state, evidence, articles, why)
                    warnings = [*warnings, warned]
            else:
                # A verdict alone ("Verdict: Yes"), citations alone ("[PMID:18784527]" under
                # "Verdict: No"), the evidence's titles or nothing: no statement to stand on,
                # and a verdict read from nothing would be a guess. The evidence digest answers.
                log.warning("answer_without_statements", written=written[:200])
                empty = ANSWER_EMPTY if said == text.strip() else ANSWER_ECHOED
                mode = "evidence_digest"
                check, verdict = await self._digest(
                    state, evidence, articles, "the model's answer held no statement"
                )
                warnings = [empty]
        else:
            check, verdict = await self._digest(state, evidence, articles)
            warnings = []
        doc_scores = state.get("doc_scores", {})
        citations = [
            Citation.from_article(articles[p], doc_scores.get(articles[p].key, 0.0))
            for p in check.cited
        ]
        if state.get("is_yes_no") and verdict is None:
            log.info("no_verdict_line", mode=mode)
        shown = unauthored(check.text)
        if mode == "llm":  # a digest quotes as written
            shown = third_person(shown)
        return {
            "final_answer": spell_out(
                shown, [articles[p] for p in extract_pmids(check.text) if p in articles]
            ).strip(),
            "verdict": verdict,
            "citations": citations,
            "removed_citations": check.removed,
            "left_out": len(warnings),
            "answer_warnings": warnings,
            "mode": mode,
        }

    async def _digest(
        self,
        state: AgentState,
        evidence: list[Evidence],
        articles: dict[str, Article],
        why: str | None = None,
    ) -> tuple[CitationCheck, Verdict | None]:
        """The extractive evidence digest, its citations checked against ``articles``, and its
        verdict for a yes/no question (``why`` no generated answer is given, when a model is
        configured)."""
        text, verdict = await off_loop(
            self.deps.digest, state["standalone_question"], evidence, why, heavy=True
        )
        check = enforce_citations(text, articles)
        if state.get("is_yes_no") and verdict in ("yes", "no", "uncertain"):
            return check, verdict  # type: ignore[return-value]
        return check, None

    async def _checked_answer(
        self,
        state: AgentState,
        text: str,
        verdict: Verdict | None,
        articles: dict[str, Article],
    ) -> tuple[CitationCheck, Verdict | None, list[str]]:
        """The model's answer held to its evidence, its verdict, and what was left out.

        Citations are enforced and attributed; a citation to an article about something else the
        sentence names, that lacks a number the sentence gives, or that never speaks of a
        subject or population of the question the sentence names, goes, and so does a sentence
        left with none; so does one to an article that gives a number of the sentence for the
        opposite group ("longer" where it says "shorter"), or says the group the sentence names
        ("a longer duration of treatment") goes the other way
        (:mod:`medlit.checks.swapped_groups`), or whose finding the sentence copies word for
        word with another subject in front (:mod:`medlit.checks.swapped_subjects`); a
        publication year ("published in 2012") no cited
        article has is taken out, and so is an author ("by Stahl et al.") no cited article
        lists, and a systematic review or randomised trial no cited article is
        (:mod:`medlit.checks.cited_designs`), and "strong" said of a correlation whose own
        coefficient is under 0.5 (:mod:`medlit.checks.correlation_strength`); a sentence carrying
        a technical term only an article it does not cite says goes; a citation to an article
        whose matching sentence states the opposite comparison ("higher" over "similar") goes;
        an inference ("..., suggesting that ...") no article it cites draws goes; so does a
        citation for what the cited study set out to test, stated as what it found
        (:mod:`medlit.checks.stated_aims`); a citation for the answer to its article's title
        question that the article does not give goes; so does a citation of a sentence naming
        none of the question's subject terms to an article naming none of them (an asthma review
        cited for "also suggests" under a question on atropine with ketamine:
        :mod:`medlit.checks.off_question`), and a claim that an article supports the answer
        ("also supports this conclusion by showing that ...") when it names not every subject
        term of the question; an uncited conclusion no article supports goes; when nothing cited
        is left, or what is left does not cite the best-matching article, which says what that
        conclusion said that nothing left says, and that article names every subject of the
        question, the check ends with ``digest_instead`` set, and the caller answers with the
        digest. The verdict is asked of the checked text when the model wrote none, or when a
        sentence it may have rested on was left out; it is "uncertain" when what the question
        names, or a subject word of it, was said only by sentences left out, when none of the
        articles cited speaks of the population the question names, when no retrieved article
        mentions a subject term of the question (:mod:`medlit.checks.unmentioned`; the answer
        says so first), when nothing citing evidence is left, or when it is the answer a
        sentence left out gave the title question of an article about the question, which
        concludes the other (:mod:`medlit.checks.restated_titles`). Then a Yes turns to No (or
        Uncertain) when the cited articles and the answer's own cited sentences say no, or to
        Uncertain when an article whose finding the answer reversed concludes the other way; a
        cited sentence stating the answer opposite to the verdict goes when every article it
        cites concludes the verdict's; and one stating the verdict's own answer goes when every
        article it cites concludes the other, the verdict then Uncertain (``digest_instead`` set
        when nothing cited is left, or only articles not about the question while the
        best-matching article names all of it: :mod:`medlit.checks.contradicted`).
        """
        question = state.get("standalone_question") or state["question"]
        check = enforce_citations(text, articles)
        check.text, attributed = attribute_uncited(check.text, articles)
        if attributed:
            log.info("citations_attributed", pmids=attributed)
            check.cited.extend(p for p in attributed if p not in check.cited)
        check.text = drop_citation_only(check.text)
        check.text, misattributed = drop_misattributed(check.text, articles)
        check.text, unsourced = drop_unsourced_numbers(check.text, articles)
        check.text, swapped = drop_swapped_groups(check.text, articles)
        check.text, resubjected = drop_swapped_subjects(check.text, articles)
        check.text, misdated = drop_wrong_years(check.text, articles)
        check.text, misnamed = drop_wrong_authors(check.text, articles)
        check.text, redesigned = drop_wrong_designs(check.text, articles)
        check.text, overstated = drop_overstated_correlations(check.text)
        check.text, reversed_, reversed_from = drop_reversed_findings(check.text, articles)
        check.text, inferred = drop_unsupported_inferences(check.text, articles)
        check.text, aims = drop_aims_as_findings(check.text, articles)
        restated = drop_restated_titles(check.text, articles)
        check.text, titled = restated.text, restated.warnings
        check.text, off = drop_off_question(check.text, articles, question)
        check.text, borrowed_support = drop_borrowed_support(check.text, articles, question)
        unsaid = drop_unsaid_subjects(check.text, articles, question)
        borrowed = drop_borrowed_terms(unsaid.text, articles, question)
        unsupported = drop_unsupported(borrowed.text, articles, question)
        check.text = without_opening_connective(unsupported.text)  # its antecedent went
        warnings = (
            misattribution_warnings(misattributed)
            + unsourced
            + swapped
            + resubjected
            + misdated
            + misnamed
            + redesigned
            + overstated
            + reversed_
            + inferred
            + aims
            + titled
            + off
            + borrowed_support
            + unsaid.warnings
            + borrowed.warnings
            + unsupported.warnings
        )
        kept = set(extract_pmids(check.text))
        missing = left_unanswered(check.text, misattributed, question)
        unspoken = unsupported.unaddressed()
        untold = unsaid.unaddressed(check.text, [articles[p] for p in kept if p in articles])
        absent = [] if untold else populations_unspoken(question, check.text, articles)
        noted = bool(missing or unspoken or untold or absent)
        unnamed = unmentioned_terms(question, articles.values())
        best = state["evidence"][0].article
        on_question = bool(best.pmid) and not (
            missing or unnamed or unmentioned_terms(question, [best])
        )
        if on_question and warnings and not kept:
            # Nothing the model cited is left, and the best-matching article names every
            # subject of the question: its sentences answer better than no answer (the local
            # model's answer on fasting glucose and CABG mortality lost every sentence, one
            # for a number, one for a borrowed term). Not when the evidence itself misses what
            # was asked: then NOTHING_SUPPORTED below says so.
            check.digest_instead = ANSWER_UNSUPPORTED
            return check, verdict, warnings
        if on_question and unspoken and best.pmid not in kept and says_all(best, unspoken):
            # What is left does not speak of what the uncited conclusion left out did, and no
            # longer cites (or never cited) the best-matching article, which does: the local
            # model's answers on fasting glucose before bypass surgery were left with one
            # sentence on gastric bypass for diabetes, and one on sleeve gastrectomy, under
            # "None of the retrieved articles speaks of ... together". The digest answers.
            check.digest_instead = best_article_lost(str(best.pmid))
            return check, verdict, warnings
        # What the answer says first about its evidence; the checks below read the rest.
        note = ""
        if missing:  # what was asked about was said only by sentences left out
            note = unaddressed("", missing)
            if not extract_pmids(check.text):
                check.text = ""  # uncited prose would read as the answer
        elif warnings and not kept:
            # Nothing that cites evidence is left; uncited prose ("The evidence is strong")
            # would read as the answer, so none is kept.
            note, check.text = NOTHING_SUPPORTED, ""
            if unnamed:
                note = f"None of the retrieved articles mentions {either_of(unnamed)}. {note}"
        elif unspoken:  # "fracture" was only in the conclusion left out
            words = all_of(unsupported.words)
            note = (
                f"None of the retrieved articles speaks of {words} together: the statements "
                "that did, citing nothing, were left out."
            )
        elif untold:  # "in children" was only in a sentence citing an adult study
            words = " and ".join(untold)
            note = (
                f"None of the articles cited speaks of {words}: the statements that said so "
                "were left out."
            )
        elif absent:  # asked about children, answered from studies that never mention them
            words = " and ".join(absent)
            note = (
                f"None of the articles cited speaks of {words}: what they found may not hold "
                f"for {words}."
            )
        elif unnamed:  # asked about statin myopathy, answered from statin studies of stroke
            note = (
                f"None of the retrieved articles mentions {either_of(unnamed)}, so what follows "
                "may not answer the question."
            )
        if state.get("is_yes_no"):
            if noted or unnamed or (warnings and not kept):
                verdict = "uncertain"
            elif (
                verdict is None or warnings or states_only_otherwise(check.text, verdict, question)
            ):
                # Never a default nor an opening guess, nor a verdict line against every
                # answer the text states: ask which way the checked text goes.
                log.info("no_verdict_line" if verdict is None else "verdict_reread", mode="llm")
                verdict = await read_verdict(self.deps.llm(), question, check.text)
        if verdict in ("yes", "no") and any(
            said == verdict and about_question(question)(articles[pmid])
            for pmid, said in restated.said.items()
        ):
            # "No" read again from what was left, where the model's "No" to the question of an
            # article on it, which concludes yes, was left out: two readings against it.
            log.info("verdict_made_consistent", read=verdict, verdict="uncertain")
            verdict = "uncertain"
        if verdict in ("yes", "no"):
            # "Verdict: No" over "X is a contraindication [the article concluding it is not]"
            verdict = consistent_verdict(check.text, verdict, articles, question, reversed_from)
            check.text, contradicted = drop_contradicted(check.text, verdict, articles, question)
            warnings += contradicted
        if verdict is not None:
            # "Verdict: No" over "X is not dangerous [the article concluding it is]"; under
            # Uncertain, a sentence stating either answer against its article goes too.
            text, against = check.text, []
            for stated in ("yes", "no") if verdict == "uncertain" else (verdict,):
                text, dropped = drop_against_conclusions(text, stated, articles, question)
                against += dropped
            warnings += against
            if against and not extract_pmids(text):
                check.digest_instead = ANSWER_AGAINST_ARTICLES
                return check, verdict, warnings
            left = [articles[p] for p in extract_pmids(text) if p in articles]
            if (
                against
                and on_question
                and best.pmid not in {a.pmid for a in left}
                and not any(map(about_question(question), left))
            ):
                # What was left cites only articles on something else: the local model's "can
                # predict kidney stone composition [the article concluding it cannot]" went,
                # leaving a CT scanner study's finding under Uncertain.
                check.digest_instead = best_article_lost(str(best.pmid))
                return check, verdict, warnings
            if against:
                check.text, verdict = text, "uncertain"
        # Its first statement may have been left out since: "Specifically, a retrospective
        # study found ..." stood first, after a cited sentence read against its article went.
        body = without_opening_connective(check.text)
        check.text = f"{note}\n\n{body.strip()}" if note and body.strip() else note or body
        if verdict is not None:
            check.text = verdict_first(verdict, check.text)
        cited_now = set(extract_pmids(check.text))  # what the checks left cited
        check.cited = [p for p in check.cited if p in cited_now]
        return check, verdict, warnings

    async def _write_answer(self, messages: list[dict[str, str]]) -> str:
        """The model's answer; streamed as ``token`` events when someone is watching."""
        llm = self.deps.llm()
        if not streaming_wanted():
            return (await llm.complete("answer", messages)).text
        stream = llm.stream("answer", messages)
        try:
            async for delta in stream:
                emit("token", "call_llm", delta)
        except LLMError as exc:
            # Cut off or broken half-way (a shared llama-cpp-python server interrupts streams):
            # the answer is asked for again in one piece, and replaces the draft shown.
            log.warning("stream_failed", error=str(exc), fallback="complete")
            emit("warning", "call_llm", "the streamed answer was cut off; asking again")
            return (await llm.complete("answer", messages)).text
        return stream.reply.text

    async def update_memory(self, state: AgentState) -> dict[str, Any]:
        """Remember the turn in the session (LLM summary every N turns, never on a hit)."""
        session = state.get("session_id")
        if not session:
            return {}
        summarizer = None
        if not state.get("cache_hit") and self.deps.llm_configured("summarize_memory"):
            summarizer = self._summarize
        turn = Turn(
            state["question"],
            state.get("standalone_question", state["question"]),
            state.get("final_answer", ""),
        )
        key = session_key(state.get("namespace", self.deps.settings.namespace), session)
        await self.deps.memory().update(key, turn, summarizer=summarizer)
        return {}

    async def _summarize(self, summary: str, turns: list[Turn]) -> str:
        reply = await self.deps.llm().complete("summarize_memory", summary_messages(summary, turns))
        return reply.text

    async def admit_cache(self, state: AgentState) -> dict[str, Any]:
        """Store the answer in tier 1 when ``should_cache`` admits it."""
        retrieved = [a.pmid for a in state.get("documents", {}).values() if a.pmid]
        verdict = decisions.should_cache(
            state, self.agent, self.deps.settings.cache, retrieved_pmids=retrieved
        )
        if not verdict.admit:
            return {"admitted": False, "admission_reason": verdict.reason}
        payload = {
            "answer": state["final_answer"],
            "verdict": state.get("verdict"),
            "citations": [c.model_dump() for c in state.get("citations", [])],
            "retrieval_score": min(1.0, max(0.0, state.get("retrieval_score", 0.0))),
            "doc_scores": state.get("doc_scores", {}),
            "extra": {"mode": state.get("mode"), "stop_reason": state.get("stop_reason")},
        }
        try:
            await off_loop(
                self.deps.add_answer,
                state["standalone_question"],
                state["query_vector"],
                payload,
                namespace=state.get("namespace", self.deps.settings.namespace),
                fingerprint=self._fingerprint(state),
            )
        except CacheAdmissionError as exc:
            log.warning("answer_not_cached", reason=str(exc))
            return {"admitted": False, "admission_reason": "refused"}
        return {"admitted": True, "admission_reason": "ok"}
