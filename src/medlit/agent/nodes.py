"""The graph's nodes (seed 001), as async methods of :class:`AskNodes`.

Each node reads the state and returns a partial update; :func:`timed` adds the node's wall
time to ``timings``. The nodes hold no per-question state themselves, so one ``AskNodes`` serves
every question of an :class:`~medlit.assistant.Assistant`.

``plan_query``, ``query_cache`` and ``update_memory`` are :class:`AskNodes`' base,
:class:`~medlit.agent.hit_nodes.HitNodes`, in a module of their own that imports nothing heavy
(no LangGraph, no openai, no httpx, not this module's prompt and answer checks, not the
question frame) unless the question needs the LLM planner: the assistant runs them before the
graph so that a tier-1 hit never pays for those imports.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from medlit.agent import decisions, query, scoring
from medlit.agent.hit_nodes import (
    HitNodes,
    Node,
    off_loop,
    question_frame,
    read_question_frame,
    stored_cause,
    timed,
)
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
    focus_blocks,
    passages_of,
    without_headers,
)
from medlit.agent.recheck import rests_on
from medlit.agent.state import AgentState
from medlit.cache.chunking import is_results_chunk
from medlit.checks import (
    CitationCheck,
    Verdict,
    enforce_citations,
    extract_pmids,
    reasoned_verdict,
    without_citations,
)
from medlit.errors import (
    CacheAdmissionError,
    LLMError,
    LLMUnreachable,
    SourceError,
    SourceUnavailable,
    SourceUnreachable,
)
from medlit.log import get_logger
from medlit.progress import emit, streaming_wanted
from medlit.text import counted, drop_repeated_sentences, only_points
from medlit.types import Article, Citation, Evidence, SearchQuery, VerdictCause
from medlit.usage import usage_scope

__all__ = ["AskNodes", "Node", "off_loop", "question_frame", "stored_cause", "timed"]

log = get_logger("agent")

#: Why the digest answers when nothing of the model's answer stands (the policy's fallback),
#: as (the digest's heading reason, the warning under the answer).
_FALLBACKS: dict[str, Callable[[AgentState], tuple[str, str]]] = {
    "unsupported": lambda state: ANSWER_UNSUPPORTED,
    "against-articles": lambda state: ANSWER_AGAINST_ARTICLES,
    "best-article-lost": lambda state: best_article_lost(str(state["evidence"][0].article.pmid)),
}


_WORDS = re.compile(r"[^\W\d_]{2,}")
_SOURCE_LABELS = {"pubmed": "PubMed", "europepmc": "Europe PMC", "local": "the local corpus"}


def _found(articles: int, new: int, failed: list[str]) -> str:
    """What a search gave: "12 articles found, 5 new", "nothing found (1 source failed)"."""
    text = f"{counted(articles, 'article')} found, {new} new" if articles else "nothing found"
    if failed:
        text += f" ({counted(len(failed), 'source')} failed)"
    return text


def _logged(search: query.SearchStep, articles: list[Article], offset: int) -> dict[str, Any]:
    """One search of an ask, as ``--json`` shows it: its query, what it is (which concept of
    the question it widened or dropped), from which result and what it found."""
    return {
        "query": search.query,
        "step": search.why,
        "dropped": list(search.dropped),
        "offset": offset,
        "found": [a.key for a in articles],
        "at": round(time.time(), 3),
    }


def _may_search(step: query.SearchStep, state: AgentState, held: dict[str, Article]) -> bool:
    """Whether the plan goes on to ``step``: a search by any of the question's words (its
    last resort) only while no article held names what the question asks about: of a yes/no
    question its subject and its outcome (:func:`~medlit.agent.query.names_question`: an
    article naming them otherwise, "proton pump inhibitors" for "PPI", is found only by the
    other words of the question); of another, its subject ("what diseases can be treated
    with X?": no article names "diseases", the kind of answer asked for)."""
    if not step.any_word:
        return True
    frame = state["frame"]
    if frame.yes_no:
        return not query.names_question(frame, held.values())
    return not query.about_subject(frame, held.values())


def _sources_label(names: list[str]) -> str:
    labels = [_SOURCE_LABELS.get(name, name) for name in names]
    return (
        " and ".join(labels) if len(labels) < 3 else ", ".join(labels[:-1]) + f" and {labels[-1]}"
    )


def _yes_no(state: AgentState) -> bool:
    """Whether the question asks yes or no: its frame says (read once: :func:`question_frame`)."""
    frame = state.get("frame")
    return frame is not None and frame.yes_no


class AskNodes(HitNodes):
    """The nodes of the ask graph, bound to their dependencies: the tier-1 nodes of
    :class:`~medlit.agent.hit_nodes.HitNodes` and the retrieval loop's.

    Args:
        deps: settings, caches, embedder, sources and LLM client the nodes use.
    """

    # -- a question not in English (a cache miss only) ---------------------------------
    async def read_language(self, state: AgentState) -> dict[str, Any]:
        """On a cache miss: a question not in English gets one line saying medlit searches
        English abstracts and the language it reads as; with a model (task
        ``translate_question``, one call), it is translated and the translation is what is
        searched, answered and checked. An English question passes unchanged.

        The language identifier loads here, on a miss: a cached answer never loads it (the
        answer stores what this node found, :meth:`admit_cache`).
        """
        from medlit.language import non_english, searched_in_english

        asked = state["standalone_question"]
        language = await off_loop(non_english, asked, heavy=True)
        if language is None:
            return {}
        log.info("question_not_english", language=language.code)
        translation: str | None = None
        if self.deps.llm_configured("translate_question"):
            emit("stage", "read_language", f"translating the question from {language.name}")
            try:
                translation = await self._translate(asked)
            except LLMError as exc:
                log.warning("translate_question_failed", error=str(exc))
        update: dict[str, Any] = {
            "question_language": language.code,
            "language_note": searched_in_english(language, translation),
        }
        if not translation:
            return update
        plan = query.deterministic_plan(translation)
        return {
            **update,
            "searched_question": plan.standalone_question,
            "asked_question": asked,
            "asked_vector": state.get("query_vector"),
            "standalone_question": plan.standalone_question,
            "pubmed_query": plan.pubmed_query,
            "focus": plan.focus,
            "frame": read_question_frame(plan.standalone_question, state.get("sources") or ()),
            "query_vector": None,  # the translation's, computed when first needed
        }

    async def _translate(self, question: str) -> str | None:
        """``question`` in English (task ``translate_question``), or None when the model
        gave back nothing."""
        messages = [
            {
                "role": "system",
                "content": "Translate the user's biomedical question into English, to search "
                "English abstracts with. Keep every drug, disease, population, outcome and "
                "number it names; add nothing, answer nothing. Reply with the question in "
                "English alone.",
            },
            {"role": "user", "content": question},
        ]
        out = await self.deps.llm().complete_json(
            "translate_question", messages, query.TranslatedQuestion
        )
        return query.normalise_question(out.english) or None

    # -- the retrieval loop ------------------------------------------------------------
    async def chunk_store_search(self, state: AgentState) -> dict[str, Any]:
        """Tier 2: the stored chunks nearest the question (only this question's, without cache)."""
        only: list[str] | None = None
        if not state.get("use_cache", True):
            only = list(state.get("documents", {}))
            if not only:
                return {"anchor_chunks": []}
        vector = await self._vector(state)
        anchors = await off_loop(
            self.deps.search_chunks,
            vector,
            self.agent.candidate_chunks,
            only,
            state.get("sources") or None,  # an answer rests only on the sources asked
        )
        documents = dict(state.get("documents", {}))
        chunk_map: dict[str, list[str]] = {}
        for item in anchors:
            documents.setdefault(item.article.key, item.article)
            chunk_map.setdefault(item.article.key, []).append(item.chunk.id)
        return {
            "query_vector": vector,
            "anchor_chunks": anchors,
            "documents": documents,
            "doc_chunks_map": chunk_map,
        }

    async def score(self, state: AgentState) -> dict[str, Any]:
        """Score the anchors: per-document max, retrieval_score, confident."""
        report = scoring.score_evidence(state.get("anchor_chunks", []), self.agent)
        articles = {e.article.key: e.article for e in report.evidence}
        return {
            "evidence": report.evidence,
            "on_subject": query.about_subject(state["frame"], articles.values()),
            "doc_scores": report.doc_scores,
            "retrieval_score": report.retrieval_score,
            "num_docs": report.num_docs,
            "confident": report.confident,
            "excluded": {**state.get("excluded", {}), **report.excluded},
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

    def _query_steps(self, state: AgentState) -> tuple[query.SearchStep, ...]:
        """The searches of the question, narrowest first: the planner's own query, if any,
        then those its frame plans (every concept; each widened; then without its qualifiers,
        populations, comparison and outcome: never without its subject)."""
        return query.search_steps(
            state["frame"],
            first=state.get("pubmed_query", ""),
            max_terms=self.agent.max_query_terms,
        )

    def _next_query(self, state: AgentState) -> tuple[query.SearchStep, int, str, int] | None:
        """(step, offset, mode, number) of the next fetch: page on while pages are full, then
        the next search of the plan; ``broad`` is the widest, after which nothing is left."""
        steps = self._query_steps(state)
        last = len(steps) - 1
        if state.get("iteration", 0) == 0:
            return (steps[0], 0, "broad" if last == 0 else "narrow", 0)
        step = min(state.get("query_step", 0), last)
        limit = self.agent.fetch_per_round
        if state.get("last_fetch_count", 0) >= limit and not steps[step].any_word:
            mode = "broad" if step == last else "narrow"  # a full page: page on
            return (steps[step], state.get("page_offset", 0) + limit, mode, step)
        if step < last and _may_search(steps[step + 1], state, state.get("documents", {})):
            return (steps[step + 1], 0, "broad" if step + 1 == last else "narrow", step + 1)
        return None  # the widest query has no more pages (a best match is one page)

    async def _search(
        self, state: AgentState, term: str, offset: int
    ) -> tuple[list[Article], list[str], bool]:
        """One search of the question's sources: (articles, failures, all unreachable). The
        articles this question holds already are not fetched again."""
        where = _sources_label(state["sources"])
        page = f", results from {offset + 1}" if offset else ""
        emit("stage", "fetch_pubmed", f"searching {where} for “{term}”{page}", query=term)
        search = SearchQuery(term=term, limit=self.agent.fetch_per_round, offset=offset)
        held = state.get("documents", {})
        try:
            return await self.deps.search(
                search, state["sources"], state.get("use_cache", True), held=held
            )
        except SourceError as exc:
            log.warning("fetch_failed", query=term, error=str(exc))
            return [], [str(exc)], isinstance(exc, SourceUnreachable)

    async def fetch_pubmed(self, state: AgentState) -> dict[str, Any]:
        """Tier 3: search the sources, store what is new (chunked and embedded) in tier 2. A
        query that finds nothing new is relaxed at once, in the same round, until one finds
        something new or none is left (every step a search of its own, in ``searches`` with
        what it widened or dropped). No article is fetched twice: the search is told of every
        article this question holds already."""
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
        search, offset, mode, step = nxt
        errors = list(state.get("fetch_errors", []))
        use_cache = state.get("use_cache", True)
        seen = state.get("documents", {})
        searches = list(state.get("searches", []))
        with usage_scope() as usage:
            articles, failed, unreachable = await self._search(state, search.query, offset)
            searches.append(_logged(search, articles, offset))
            steps = self._query_steps(state)
            while (
                not failed
                and not offset
                and step < len(steps) - 1
                and all(a.key in seen for a in articles)
                and _may_search(steps[step + 1], state, seen)
            ):
                log.info("search_relaxed", query=search.query, why=steps[step + 1].why)
                step += 1
                search, mode = steps[step], "broad" if step == len(steps) - 1 else "narrow"
                articles, failed, unreachable = await self._search(state, search.query, offset)
                searches.append(_logged(search, articles, offset))
        errors.extend(failed)
        searched_ok = state.get("searched_ok", False) or len(failed) < len(state["sources"])
        calls = sum(usage.calls.values())
        documents = dict(seen)
        new = [a for a in articles if a.key not in documents]
        downloaded = (
            await off_loop(self.deps.store_articles, new, use_cache, heavy=True) if new else []
        )
        for article in new:
            documents[article.key] = article
        if not articles:
            log.info("no_search_results", query=search.query, offset=offset)
        emit("stage", "fetch_pubmed", _found(len(articles), len(new), failed), found=len(articles))
        update: dict[str, Any] = {
            "iteration": iteration,
            "api_calls": state.get("api_calls", 0) + calls,
            "page_offset": offset,
            "query_mode": mode,
            "query_step": step,
            "last_fetch_count": len(articles),
            "last_fetch_new": len(new),
            "documents": documents,
            "downloaded_keys": [*state.get("downloaded_keys", []), *downloaded],
            "fetch_errors": errors,
            "searched_ok": searched_ok,
            "unreachable": unreachable and not articles,
            "searches": searches,
            "on_question": query.about_question(state["frame"], documents.values()),
        }
        if new and search.outcome_dropped and not state.get("outcome_dropped"):
            # What this search added was found without the outcome asked about: the answer
            # says so (the subject's articles may not speak of it).
            update["outcome_dropped"] = state["frame"].outcome
        if new and search.any_word:
            # What this search added says some of the question's words, perhaps not its
            # subject: the answer says so.
            update["any_word"] = True
        return update

    async def read_full_text(self, state: AgentState) -> dict[str, Any]:
        """Read the open-access full text of the articles the answer is about to use (its
        evidence's, best first, at most ``fulltext.max_per_answer`` fetched; never every search
        hit), store it in tier 2, and add each article's Results passages closest to the
        question to the evidence (``fulltext.passages_per_article``, when they clear
        ``min_evidence_similarity``). An article whose body cannot be read keeps its abstract; a
        failure costs only that article."""
        from medlit.sources.fulltext import may_read

        config = self.deps.settings.fulltext
        evidence: list[Evidence] = state.get("evidence", [])
        if config.mode == "off" or not evidence or config.max_per_answer == 0:
            return {}
        by_key = {ev.article.key: ev.article for ev in evidence}
        chosen = [a for a in by_key.values() if may_read(a, config.elink)]
        chosen = chosen[: config.max_per_answer]
        to_fetch = [a for a in chosen if a.full_text is None]
        read: dict[str, Article] = {a.key: a for a in chosen if a.full_text is not None}
        calls = 0
        if to_fetch:
            emit(
                "stage",
                "read_full_text",
                f"reading the full text of {counted(len(to_fetch), 'open-access article')}",
            )
            with usage_scope() as usage:
                outcome = await self.deps.read_full_text(to_fetch, config.max_per_answer)
            calls = sum(usage.calls.values())
            fetched = [
                a.model_copy(update={"full_text": outcome.texts[a.key]})
                for a in to_fetch
                if a.key in outcome.texts
            ]
            read.update({a.key: a for a in fetched})
        if not read:
            return {"api_calls": state.get("api_calls", 0) + calls, "full_texts_read": []}
        # Of each body, the Results chunks this question ranks highest are embedded (those
        # tier 2 already holds are not): the passages below are chosen among them.
        question = state.get("standalone_question") or state["question"]
        await off_loop(self.deps.store_full_texts, list(read.values()), question, heavy=True)
        vector = await self._vector(state)
        found = await off_loop(
            self.deps.search_chunks, vector, self.agent.candidate_chunks, list(read)
        )
        held = {ev.chunk.id for ev in evidence}
        added: list[Evidence] = []
        per_article: dict[str, int] = {}
        tables: set[tuple[str, str]] = set()  # one piece of a table: its pieces repeat its head
        for item in found:
            key = item.chunk.article_key
            head = item.chunk.text.split("\n", 1)[0] if "\n" in item.chunk.text else ""
            if (
                not is_results_chunk(item.chunk)
                or item.chunk.id in held
                or item.similarity < self.agent.min_evidence_similarity
                or per_article.get(key, 0) >= config.passages_per_article
                or (key, head) in tables
            ):
                continue
            if head:
                tables.add((key, head))
            per_article[key] = per_article.get(key, 0) + 1
            value = scoring.chunk_score(item.similarity, read[key], self.agent)
            added.append(
                Evidence(
                    chunk=item.chunk, article=read[key], similarity=item.similarity, score=value
                )
            )
        # The evidence already chosen stays; its articles now carry their bodies.
        kept = [
            ev.model_copy(update={"article": read[ev.article.key]})
            if ev.article.key in read
            else ev
            for ev in evidence
        ]
        documents = {**state.get("documents", {}), **read}
        log.info("full_text_read", articles=list(read), passages=len(added), calls=calls)
        return {
            "evidence": sorted([*kept, *added], key=lambda ev: (-ev.score, ev.chunk.id)),
            "documents": documents,
            "full_texts_read": list(read),
            "api_calls": state.get("api_calls", 0) + calls,
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
        if self.agent.prompt_evidence_tokens:
            blocks = await off_loop(
                focus_blocks,
                state.get("standalone_question") or state["question"],
                blocks,
                self._rank_sentences,
                max_tokens=self.agent.prompt_evidence_tokens,
                per_article=self.agent.prompt_sentences_per_article,
                heavy=True,
            )
        messages = build_messages(
            state["question"],
            blocks,
            standalone_question=state.get("standalone_question"),
            focus=state.get("focus"),
            memory_summary=state.get("memory_summary", ""),
            yes_no=_yes_no(state),
        )
        downloaded = set(state.get("downloaded_keys", []))
        reused = sum(1 for ev in evidence if ev.article.key not in downloaded)
        return {
            "prompt_messages": messages,
            "context_chunks": sum(len(b.chunks) for b in blocks),
            "evidence_reused": reused if state.get("use_cache", True) else 0,
        }

    def _rank_sentences(self, question: str, evidence: list[Evidence]) -> list[Any]:
        """The evidence's sentences ranked for ``question`` by the digest's own scoring (all of
        them: focus_blocks keeps what the budget holds)."""
        from medlit.digest import rank_sentences

        return list(rank_sentences(question, evidence, embedder=self.deps.embedder))

    async def call_llm(self, state: AgentState) -> dict[str, Any]:
        """The model's answer, to be checked (``check_answer``); without a model, or without a
        statement in what it wrote, the digest answers (``digest``)."""
        evidence: list[Evidence] = state.get("evidence", [])
        configured = self.deps.llm_configured("answer")
        mode = "llm" if configured else "evidence_digest"
        if not evidence:
            errors = state.get("fetch_errors", [])
            if errors and not state.get("searched_ok", False):
                # "No evidence found" would be false: the literature was never searched.
                if state.get("unreachable"):  # "PubMed is unreachable: ... Check ..."
                    raise SourceUnreachable(" ".join(dict.fromkeys(errors)))
                raise SourceUnavailable(
                    "could not search the literature and no cached evidence answers this "
                    f"question: {'; '.join(dict.fromkeys(errors))}"
                )
            cause = VerdictCause(
                kind="no_evidence", detail="no evidence was found for the question"
            )
            return {
                "final_answer": NO_EVIDENCE_ANSWER,
                "verdict": None,
                "verdict_cause": cause if _yes_no(state) else None,
                "citations": [],
                "mode": mode,
                "stop_reason": "no_results",
            }
        if not configured:
            return {"mode": mode, "digest_needed": True, "digest_why": None}
        try:
            written = await self._write_answer(state["prompt_messages"])
        except LLMUnreachable as exc:
            # Nothing listens there (or its name does not resolve): the evidence is here, so
            # the digest answers, with one warning, instead of an error.
            log.warning("llm_unreachable", error=str(exc), fallback="evidence_digest")
            return {
                "mode": "evidence_digest",
                "digest_needed": True,
                "digest_why": "the language model is unreachable",
                "answer_warnings": [f"{exc}; answered with the evidence digest"],
            }
        text = drop_repeated_sentences(written)
        if text != written:
            log.info("answer_repeats_dropped", chars=len(written) - len(text))
        verdict = None
        if _yes_no(state):
            # The model's own verdict line, if it wrote one after its reasoning; an opening
            # guess is dropped (read_verdict asks once the text is checked).
            verdict, text = reasoned_verdict(text)
        said = without_headers(text, (ev.article for ev in evidence))
        if _WORDS.search(said) and not only_points(without_citations(said)):
            return {"mode": mode, "drafted": said, "drafted_verdict": verdict}
        # A verdict alone ("Verdict: Yes"), citations alone ("[PMID:1]" under
        # "Verdict: No"), the evidence's titles or nothing: no statement to stand on, and a
        # verdict read from nothing would be a guess. The evidence digest answers.
        log.warning("answer_without_statements", written=written[:200])
        return {
            "mode": "evidence_digest",
            "digest_needed": True,
            "digest_why": "the model's answer held no statement",
            "answer_warnings": [ANSWER_EMPTY if said == text.strip() else ANSWER_ECHOED],
        }

    async def check_answer(self, state: AgentState) -> dict[str, Any]:
        """The model's answer held to its evidence (:mod:`medlit.checks`' ``check_answer``);
        when nothing of it stands, the digest answers (``digest``)."""
        # The checks load on the first answer checked: a tier-1 hit never reads them.
        from medlit.checks import check_answer, read_verdict

        evidence: list[Evidence] = state["evidence"]
        articles = {ev.article.pmid: ev.article.as_read() for ev in evidence if ev.article.pmid}
        question = state.get("standalone_question") or state["question"]

        async def read(question: str, text: str) -> Verdict | None:
            return await read_verdict(self.deps.llm(), question, text)

        checked = await check_answer(
            question,
            state["drafted"],
            state.get("drafted_verdict"),
            articles,
            evidence[0].article,
            is_yes_no=_yes_no(state),
            read_verdict=read,
            nothing_supported=NOTHING_SUPPORTED,
            disabled=self.deps.settings.checks.disabled,
            frame=question_frame(state),
            embedder=self.deps.embedder,
        )
        findings = [f.record() for f in checked.findings if f.action != "note" or f.message]
        if checked.fallback is not None:  # nothing of the model's stands
            why, warned = _FALLBACKS[checked.fallback](state)
            log.warning("answer_replaced_by_digest", why=why)
            return {
                "mode": "evidence_digest",
                "digest_needed": True,
                "digest_why": why,
                "answer_warnings": [*checked.warnings, warned],
                "answer_findings": findings,
            }
        check = CitationCheck(checked.text, checked.cited, checked.removed)
        return {
            **self._answered(state, check, checked.verdict, "llm", checked.warnings),
            "verdict_cause": checked.cause,
            "answer_findings": findings,
        }

    async def digest(self, state: AgentState) -> dict[str, Any]:
        """The extractive evidence digest: without a model, or when nothing of its answer
        stood (``digest_why`` says why no generated answer is given)."""
        evidence: list[Evidence] = state["evidence"]
        articles = {ev.article.pmid: ev.article.as_read() for ev in evidence if ev.article.pmid}
        why = state.get("digest_why")
        check, verdict, cause = await self._digest(state, evidence, articles, why)
        warnings = state.get("answer_warnings", []) if why else []
        if cause is not None and why:
            cause = cause.model_copy(
                update={"detail": f"{cause.detail} (the evidence digest answered: {why})"}
            )
        return {
            **self._answered(state, check, verdict, "evidence_digest", warnings),
            "verdict_cause": cause,
            "digest_needed": False,
        }

    def _answered(
        self,
        state: AgentState,
        check: CitationCheck,
        verdict: Verdict | None,
        mode: str,
        warnings: list[str],
    ) -> dict[str, Any]:
        """The answer as shown: its citations, the authors' first person and the model's
        third person put right, abbreviations spelled out."""
        from medlit.checks import third_person, unauthored
        from medlit.words.defined_terms import spell_out

        articles = {
            ev.article.pmid: ev.article.as_read() for ev in state["evidence"] if ev.article.pmid
        }
        doc_scores = state.get("doc_scores", {})
        citations = [
            Citation.from_article(articles[p], doc_scores.get(articles[p].key, 0.0)).model_copy(
                update={"passages": passages_of(state["evidence"], articles[p].key)}
            )
            for p in check.cited
        ]
        if _yes_no(state) and verdict is None:
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
    ) -> tuple[CitationCheck, Verdict | None, VerdictCause | None]:
        """The extractive evidence digest, its citations checked against ``articles``, and its
        verdict for a yes/no question with why it is Uncertain when it is (``why`` no generated
        answer is given, when a model is configured)."""
        text, verdict, cause = await off_loop(
            self.deps.digest,
            state["standalone_question"],
            evidence,
            why,
            question_frame(state),
            heavy=True,
        )
        check = enforce_citations(text, articles)
        if _yes_no(state) and verdict in ("yes", "no", "uncertain"):
            return check, verdict, cause  # type: ignore[return-value]
        return check, None, None

    async def _write_answer(self, messages: list[dict[str, str]]) -> str:
        """The model's answer; streamed as ``token`` events when someone is watching."""
        llm = self.deps.llm()
        if not streaming_wanted():
            return (await llm.complete("answer", messages)).text
        stream = llm.stream("answer", messages)
        try:
            async for delta in stream:
                emit("token", "call_llm", delta)
        except LLMUnreachable:
            raise  # asking again cannot reach it either: the caller answers with the digest
        except LLMError as exc:
            # Cut off or broken half-way (a shared llama-cpp-python server interrupts streams):
            # the answer is asked for again in one piece, and replaces the draft shown.
            log.warning("stream_failed", error=str(exc), fallback="complete")
            emit("warning", "call_llm", "the streamed answer was cut off; asking again")
            return (await llm.complete("answer", messages)).text
        return stream.reply.text

    async def admit_cache(self, state: AgentState) -> dict[str, Any]:
        """Store the answer in tier 1 when ``should_cache`` admits it."""
        retrieved = [a.pmid for a in state.get("documents", {}).values() if a.pmid]
        verdict = decisions.should_cache(
            state, self.agent, self.deps.settings.cache, retrieved_pmids=retrieved
        )
        if not verdict.admit:
            return {"admitted": False, "admission_reason": verdict.reason}
        sources = list(state.get("sources") or ["pubmed"])
        rests = rests_on(state, sources)
        if not rests["searches"]:  # answered from the store: the search it would have made
            first = self._query_steps(state)[0].query
            rests["searches"] = [{"source": s, "query": first, "at": None} for s in sources]
        payload = {
            "answer": state["final_answer"],
            "verdict": state.get("verdict"),
            "citations": [c.model_dump() for c in state.get("citations", [])],
            "retrieval_score": min(1.0, max(0.0, state.get("retrieval_score", 0.0))),
            "doc_scores": state.get("doc_scores", {}),
            "extra": {
                "mode": state.get("mode"),
                "stop_reason": state.get("stop_reason"),
                # the bar it cleared: a hit on a "subject" answer needs subject_min_score
                "admission": verdict.path,
                "verdict_cause": cause.model_dump()
                if (cause := state.get("verdict_cause"))
                else None,
                **{
                    key: state.get(key)
                    for key in ("question_language", "language_note", "searched_question")
                    if state.get(key)
                },
            },
        }
        # A translated question is stored as it was asked: the same question again is then
        # read by its key, and neither translated nor identified again.
        asked = state.get("asked_question")
        if asked:
            vector = state.get("asked_vector")
            if vector is None:
                vector = await off_loop(self.deps.embed_one, asked)
        else:
            vector = await self._vector(state)
        try:
            await off_loop(
                self.deps.add_answer,
                asked or state["standalone_question"],
                vector,
                payload,
                namespace=state.get("namespace", self.deps.settings.namespace),
                fingerprint=self._fingerprint(state),
                origin=self._origin(state),
                frame=state.get("frame"),
                basis=rests,
            )
        except CacheAdmissionError as exc:
            log.warning("answer_not_cached", reason=str(exc))
            return {"admitted": False, "admission_reason": "refused"}
        return {"admitted": True, "admission_reason": "ok"}
