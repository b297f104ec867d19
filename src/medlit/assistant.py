"""The Python API of ``medlit ask``: :class:`Assistant` and :func:`ask`.

::

    async with Assistant(settings) as assistant:
        result = await assistant.ask("Does metformin reduce cardiovascular mortality?")
        print(result.verdict, result.answer)
        for c in result.citations:
            print(c.pmid, c.title)

    result = await medlit.ask("...")          # one-off: opens and closes an Assistant

**The fast path.** ``ask`` runs ``plan_query`` and ``query_cache`` itself, importing neither
LangGraph nor the LLM client nor httpx, and returns at once on a tier-1 hit; only a miss builds
the graph (once per assistant) and enters it after the cache check. A repeated question in a new
process therefore costs the embedder and one SQLite lookup, and zero PubMed or LLM calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, computed_field

from medlit.agent.state import AgentState, initial_state, merge_timings
from medlit.config import Settings
from medlit.errors import ValidationError
from medlit.types import Citation, VerdictCause
from medlit.usage import Usage, usage_scope

SESSION_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
"""What a chat session id may be, in every front end (a tenant's own name for a conversation)."""
_SESSION_ID = re.compile(SESSION_ID_PATTERN)

if TYPE_CHECKING:
    from medlit.agent.deps import AgentDeps
    from medlit.agent.hit_nodes import HitNodes
    from medlit.agent.nodes import AskNodes
    from medlit.agent.recheck import DueReport
    from medlit.runtime import Runtime

__all__ = [
    "AskResult",
    "Assistant",
    "CacheInfo",
    "CallCounts",
    "CheckFinding",
    "CheckedQuestion",
    "RecheckInfo",
    "ask",
]

SourceChoice = Literal["pubmed", "europepmc", "local", "all"]


class RecheckInfo(BaseModel):
    """What checking a cached answer for new articles found (``cache.recheck_after_s``)."""

    status: Literal["unchanged", "changed", "unrecorded", "failed", "busy"] = Field(
        description="unchanged: nothing entered since matches its searches, the answer is "
        "served; changed: new articles, the question was answered again; unrecorded: cached "
        "before searches were kept, answered again; failed: a source failed, the answer is "
        "served unchecked (and stays due); busy: another process is checking it, served as "
        "it is."
    )
    since: float = Field(
        description="The check looked for articles entered since this time (epoch seconds): "
        "when the answer was stored or last checked."
    )
    new_articles: int = Field(
        0,
        description="Articles entered since that its searches find and that speak of the "
        "question's subject and outcome.",
    )
    new_off_question: int = Field(
        0,
        description="Articles entered since that its searches find but that do not speak of "
        "the question's subject and outcome: not read, the answer unchanged.",
    )
    new_pmids: list[str] = Field(default_factory=list, description="Their PMIDs.")
    verdict_before: str | None = Field(None, description="The cached answer's verdict.")
    verdict_after: str | None = Field(None, description="The new answer's verdict.")
    verdict_turned: bool = Field(False, description="Whether the verdict changed.")
    new_citations: list[str] = Field(
        default_factory=list, description="PMIDs the new answer cites that the old did not."
    )
    error: str | None = Field(None, description="failed: the source's error.")


class CacheInfo(BaseModel):
    """What the caches did for one question."""

    tier1: Literal["hit", "miss"] = Field(description="Whether the answer cache served it.")
    miss_reason: str | None = Field(None, description="Why tier 1 missed (or was bypassed).")
    guard_reason: str | None = Field(
        None,
        description="On a guard_rejected miss: why the closest cached question's answer does "
        "not answer this one, e.g. 'different drug: ibuprofen vs acetaminophen'; on an "
        "other_source miss: where the cached answer came from, e.g. 'cached answer came from "
        "http://127.0.0.1:8765/entrez/eutils/ not https://eutils.ncbi.nlm.nih.gov/entrez/eutils/'.",
    )
    evidence_reused: int = Field(0, description="Tier-2 chunks used that were not fetched now.")
    similarity: float | None = Field(None, description="Best tier-1 similarity seen.")
    matched_question: str | None = Field(
        None, description="On a hit: the question the served answer was cached under."
    )
    created_at: float | None = Field(
        None, description="On a hit: when the served answer was stored (epoch seconds)."
    )
    verified_by: str | None = Field(
        None,
        description="On a hit below tau: the LLM that verified the cached answer answers "
        "this question (the verified band); null for a hit at tau.",
    )
    admitted: bool = Field(False, description="Whether this answer was stored in tier 1.")
    checked_at: float | None = Field(
        None,
        description="On a hit, or an answer a recheck gave: when the answer was last checked "
        "against its sources for new articles, or stored if not since (epoch seconds).",
    )
    recheck: RecheckInfo | None = Field(
        None,
        description="When the cached answer was due for a check for new articles "
        "(cache.recheck_after_s): what the check found and, answered again, what changed.",
    )


class CallCounts(BaseModel):
    """Requests this question caused, by service."""

    pubmed: int = 0
    europepmc: int = 0
    local: int = 0
    llm: int = 0
    full_text: int = Field(
        0, description="Full-text requests (PMC efetch/elink, Europe PMC fullTextXML)."
    )


class ExcludedEvidence(BaseModel):
    """An article retrieved for the question that is never evidence, and why."""

    pmid: str | None = None
    title: str = ""
    reason: str = Field(description="'retracted' or 'retraction notice' (PubMed marks it).")


#: The answer of an outage (:attr:`AskResult.outage`): what happened and what to do.
OUTAGE_ANSWER = (
    "The literature could not be searched: every source failed, so this is not an answer to "
    "the question. Try again in a few minutes, or choose another source."
)


class CheckFinding(BaseModel):
    """What one check of the answer found (``docs/checks.md`` lists the checks)."""

    check: str = Field(description="The check's stable id, e.g. 'unsourced-numbers'.")
    action: Literal["drop", "uncite", "cite", "rewrite", "warn", "note", "flip_verdict"] = Field(
        description="What was done: a sentence left out (drop), a citation taken out (uncite) "
        "or added (cite), words changed (rewrite), told only (warn), a note put first (note), "
        "the verdict changed (flip_verdict)."
    )
    message: str = Field("", description="What the reader is told (empty: nothing).")
    pmids: list[str] = Field(default_factory=list, description="The PMIDs it concerns.")
    sentence: str | None = Field(None, description="The sentence it was found in, as written.")


class AskResult(BaseModel):
    """The answer to one question, with its citations and what it cost."""

    question: str
    answer: str
    verdict: Literal["yes", "no", "uncertain"] | None = Field(
        None, description="Bottom line of a yes/no question (opens the answer); else null."
    )
    verdict_cause: VerdictCause | None = Field(
        None,
        description="Why the verdict is Uncertain (or null for want of evidence): the model's "
        "own verdict, a check (its id and the sentence), the verdict policy (its rule) or no "
        "evidence. Null when a verdict is given or the question is not yes/no.",
    )
    citations: list[Citation] = Field(default_factory=list)
    cache: CacheInfo
    stop_reason: str
    api_calls: CallCounts
    usage: dict[str, Any] = Field(
        default_factory=dict,
        description="What the question cost, in a research job's shape (medlit.usage): "
        "requests by service (`calls`), LLM requests (`llm_calls`, `llm_failed`), `tokens`, "
        "`cost_usd` (0 where no price is configured) and, per LLM task, `calls`, "
        "`prompt_tokens`, `completion_tokens`, `latency_s` and `cost_usd`.",
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    standalone_question: str
    retrieval_score: float = 0.0
    mode: Literal["llm", "evidence_digest"] = "evidence_digest"
    session_id: str | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="Problems the answer survived: a source that failed, a sentence left out "
        "because it cited an article about something else.",
    )
    excluded: list[ExcludedEvidence] = Field(
        default_factory=list,
        description="Articles retrieved but never evidence, with the reason (retracted).",
    )
    findings: list[CheckFinding] = Field(
        default_factory=list,
        description="What the answer's checks found, one record each (the checks' warnings "
        "among them), for a client to tell which check spoke.",
    )
    outage: bool = Field(
        False,
        description="Every source failed and nothing was cited: the literature could not be "
        "searched, so this is no answer (verdict null, the answer says so, warnings say why).",
    )
    full_texts_read: int = Field(
        0,
        description="Open-access full texts this answer read (api_calls.full_text counts the "
        "requests sent to find them).",
    )
    question_language: str | None = Field(
        None,
        description="The language the question reads as when it is not English (ISO 639-1 "
        "code, e.g. `es`); null for English. medlit searches English abstracts.",
    )
    searched_question: str | None = Field(
        None,
        description="The English translation of a question not in English that was searched "
        "and answered (a model translated it); null when the question was searched as asked.",
    )
    language_note: str | None = Field(
        None,
        description="One line for the reader when the question is not in English: that medlit "
        "searches English abstracts, the language the question reads as, and the translation "
        "searched (or how to get one).",
    )
    searches: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Every search this answer made, in order: its query, its step (what it "
        "is: every concept of the question, or the concept it widened or dropped), the result "
        "it started from, the keys of what it found and when it ran (`at`, epoch seconds). "
        "Empty for a cached answer.",
    )
    # The question frame as shown (a dict), or None, or what it is read from when first asked
    # for (the standalone question and its sources): a hit shown in the terminal reads none.
    _frame: dict[str, Any] | tuple[str, tuple[str, ...]] | None = PrivateAttr(None)

    @computed_field(  # type: ignore[prop-decorator]
        repr=False,  # a repr reads no frame
        description="What the standalone question asks, read once: its kind, the direction "
        "of change asked about (up, down, better, worse or null), the populations it names, "
        "subject, outcome, comparison, what the answer cache's guard compares (what it asks "
        "for, the kinds of treatment it names, negation) and the sources asked.",
    )
    @property
    def question_frame(self) -> dict[str, Any] | None:
        frame = self._frame
        if isinstance(frame, tuple):
            from medlit.agent.hit_nodes import read_question_frame

            frame = self._frame = read_question_frame(*frame).to_json()
        return frame

    def __init__(self, **data: Any) -> None:
        frame = data.pop("question_frame", None)  # a frame given is kept (not read again)
        super().__init__(**data)
        if frame is not None:
            self._frame = dict(frame)

    @classmethod
    def from_state(cls, state: AgentState, usage: Usage, total_ms: float) -> AskResult:
        """Build the result from the final state and the calls counted for it."""
        timings = {k: round(v, 2) for k, v in state.get("timings", {}).items()}
        timings["total"] = round(total_ms, 2)
        citations = state.get("citations", [])
        errors = list(dict.fromkeys(state.get("fetch_errors", [])))
        # Nothing searched and nothing cited: whatever the digest or model made of the articles
        # the store already held is not an answer, and a verdict would read as one.
        outage = bool(errors) and not state.get("searched_ok", False) and not citations
        result = cls(
            question=state["question"],
            answer=OUTAGE_ANSWER if outage else state.get("final_answer", ""),
            verdict=None if outage else state.get("verdict"),
            verdict_cause=None if outage else state.get("verdict_cause"),
            citations=citations,
            outage=outage,
            cache=CacheInfo(
                tier1="hit" if state.get("cache_hit") else "miss",
                miss_reason=None if state.get("cache_hit") else state.get("miss_reason"),
                guard_reason=None if state.get("cache_hit") else state.get("guard_reason"),
                evidence_reused=state.get("evidence_reused", 0),
                similarity=state.get("similarity"),
                matched_question=(state.get("cache_payload") or {}).get("question")
                if state.get("cache_hit")
                else None,
                created_at=(state.get("cache_payload") or {}).get("created_at") or None
                if state.get("cache_hit")
                else None,
                verified_by=state.get("verified_by") if state.get("cache_hit") else None,
                admitted=bool(state.get("admitted")),
                checked_at=_checked_at(state),
                recheck=RecheckInfo(**recheck) if (recheck := state.get("recheck")) else None,
            ),
            stop_reason=state.get("stop_reason") or "no_results",
            api_calls=CallCounts(
                pubmed=usage.source_calls("pubmed"),
                europepmc=usage.source_calls("europepmc"),
                local=usage.source_calls("local"),
                llm=usage.llm_calls,
                full_text=usage.full_text_calls,
            ),
            usage=usage.to_dict(),
            timings_ms=timings,
            standalone_question=state.get("standalone_question", state["question"]),
            retrieval_score=round(state.get("retrieval_score", 0.0), 4),
            mode=state.get("mode") or "evidence_digest",
            session_id=state.get("session_id"),
            warnings=[f"source failed: {e}" for e in errors]
            + _outcome_dropped(state, bool(citations))
            + state.get("answer_warnings", []),
            searches=state.get("searches", []),
            excluded=[
                ExcludedEvidence(
                    pmid=article.pmid if article is not None else None,
                    title=article.title if article is not None else "",
                    reason=reason,
                )
                for key, reason in state.get("excluded", {}).items()
                for article in [state.get("documents", {}).get(key)]
            ],
            findings=[CheckFinding(**record) for record in state.get("answer_findings", [])],
            full_texts_read=len(state.get("full_texts_read", [])),
            question_language=state.get("question_language"),
            searched_question=state.get("searched_question"),
            language_note=state.get("language_note"),
        )
        frame = state.get("frame")
        if frame is not None:
            result._frame = frame.to_json()
        else:  # a hit: read when asked for (``--json``, the service's answer), not before
            question = state.get("standalone_question", state["question"])
            result._frame = (question, tuple(state.get("sources") or ()))
        return result


def _checked_at(state: AgentState) -> float | None:
    """When the answer served was last checked for new articles (or stored): None for an
    answer not from the cache."""
    checked = state.get("cache_checked_at")
    if checked is None and state.get("cache_hit"):
        payload = state.get("cache_payload") or {}
        checked = max(payload.get("created_at") or 0.0, payload.get("checked_at") or 0.0)
    return checked or None


def _outcome_dropped(state: AgentState, cited: bool) -> list[str]:
    """The line an answer resting on a loosened search says first: one by any of the
    question's rarer words, or one without its outcome."""
    outcome, frame = state.get("outcome_dropped"), state.get("frame")
    if not cited or frame is None:
        return []
    if state.get("any_word"):
        return [
            "No search found the question's words together: some articles were found by any "
            "of its rarer words, and may be about something else."
        ]
    if not outcome:
        return []
    return [
        f"No search found {frame.subject} and {outcome} together: some articles were found "
        f"searching {frame.subject} without {outcome}."
    ]


@dataclass(frozen=True)
class CheckedQuestion:
    """A question with its options checked once (:meth:`Assistant.check`), for a caller that
    needs them before the ask (the service keys single-flight on them) and passes this to
    :meth:`Assistant.ask` so nothing is checked twice.

    Attributes:
        text: the question, trimmed and valid.
        session_id: the chat session, valid, or None.
        sources: the provider names to search.
        fingerprint: the answer-shaping fingerprint of the settings and these sources.
    """

    text: str
    session_id: str | None
    sources: tuple[str, ...]
    fingerprint: str


class Assistant:
    """Answers questions from the literature behind the two-tier cache.

    Holds the settings, the store, the caches, the embedder, the sources and the LLM client;
    each is opened when first needed, so a tier-1 hit opens only the store and the embedder.

    Args:
        settings: the settings (default: from the environment, or the runtime's).
        deps: prepared dependencies (tests, embedding in an app); built from settings if None.
        runtime: a shared :class:`~medlit.runtime.Runtime` to draw the parts from (a service
            holds one for all its assistants); it stays open when the assistant closes.
        max_concurrent_misses: at most this many questions past the answer cache at once (the
            others wait their turn; a tier-1 hit never waits). None: no limit.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        deps: AgentDeps | None = None,
        runtime: Runtime | None = None,
        max_concurrent_misses: int | None = None,
    ) -> None:
        self.settings = settings or (runtime.settings if runtime is not None else Settings())
        self._miss_limit = max_concurrent_misses
        self._miss_gate: asyncio.Semaphore | None = None
        if deps is None and runtime is not None:
            from medlit.agent.deps import AgentDeps

            deps = AgentDeps(self.settings, runtime=runtime)
        self._deps = deps
        self._nodes: AskNodes | None = None
        self._hit: HitNodes | None = None
        self._graph: Any = None

    async def __aenter__(self) -> Assistant:
        self.deps  # noqa: B018 - open the store now, not in the middle of the first question
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def deps(self) -> AgentDeps:
        """The dependencies (opened on first use)."""
        if self._deps is None:
            from medlit.agent.deps import AgentDeps

            self._deps = AgentDeps.open(self.settings)
        return self._deps

    async def aclose(self) -> None:
        """Close the sources, the LLM client and the store."""
        if self._deps is not None:
            await self._deps.aclose()

    def resolve_sources(self, sources: SourceChoice | list[str] | str | None) -> list[str]:
        """The provider names to search: ``all`` means every enabled source."""
        from medlit.sources.search import resolve_source_names

        return resolve_source_names(sources, self.settings, all_means_enabled=True)

    def validate_question(self, question: str) -> str:
        """The question, trimmed; empty, wordless, too long or not valid text is a
        ValidationError."""
        from medlit.text import require_clean_text, require_words

        text = " ".join(require_clean_text(question or "", "the question").split())
        if not text:
            raise ValidationError("the question is empty")
        require_words(text, "the question")
        limit = self.settings.agent.max_question_chars
        if len(text) > limit:
            raise ValidationError(f"the question is too long ({len(text)} > {limit} characters)")
        return text

    def validate_session_id(self, session_id: str | None) -> str | None:
        """The session id as given; one that does not match :data:`SESSION_ID_PATTERN` (the
        rule of every front end: CLI, Python API, MCP and ``POST /v1/ask``) is a
        ValidationError."""
        from medlit.text import require_clean_text

        if session_id is None:
            return None
        text = require_clean_text(session_id, "the session id")
        if _SESSION_ID.fullmatch(text) is None:
            raise ValidationError(
                f"the session id {text[:40]!r}{'...' if len(text) > 40 else ''} is not valid: "
                "use 1-128 letters, digits, '.', '_', ':' or '-'"
            )
        return text

    def check(
        self,
        question: str,
        session_id: str | None = None,
        sources: SourceChoice | list[str] | str | None = None,
    ) -> CheckedQuestion:
        """The question and its options validated, its sources resolved, its fingerprint.

        Raises:
            ValidationError: empty, too long or invalid question or session id, unknown source.
        """
        text = self.validate_question(question)
        session = self.validate_session_id(session_id)
        names = self.resolve_sources(sources)
        return CheckedQuestion(text, session, tuple(names), self.deps.fingerprint(names))

    async def ask(
        self,
        question: str | CheckedQuestion,
        session_id: str | None = None,
        sources: SourceChoice | list[str] | str | None = None,
        use_cache: bool = True,
        *,
        namespace: str | None = None,
        miss_lease: Callable[[], contextlib.AbstractAsyncContextManager[bool]] | None = None,
    ) -> AskResult:
        """Answer ``question`` with citations.

        Args:
            question: the question (a follow-up is made standalone from the session's memory),
                or a :class:`CheckedQuestion`, which carries the session and sources (then
                ``session_id`` and ``sources`` must be None).
            session_id: a chat session whose memory the question may depend on.
            sources: ``pubmed`` (default from settings), ``europepmc``, ``local``, ``all``.
            use_cache: False answers from a fresh search, neither cache read, tier 1 not written.
            namespace: the tenant whose tier-1 answers and sessions this question uses
                (default: ``settings.namespace``). Tier 2 is shared by every tenant.
            miss_lease: on a tier-1 miss, held around the answer's work (the service's lease
                shared by replicas); it yields True when it had to wait for another process's
                identical ask, and the cache is then looked up again before any work.

        Raises:
            ValidationError: empty or too long question, unknown source.
            SourceError, LLMError, StorageError: when the work cannot be done at all.
        """
        import anyio.to_thread

        from medlit.agent.memory import session_key

        if isinstance(question, CheckedQuestion):
            if session_id is not None or sources is not None:
                raise ValueError("a CheckedQuestion carries its own session and sources")
            checked = question
        else:
            checked = self.check(question, session_id, sources)
        text, session_id, names = checked.text, checked.session_id, list(checked.sources)
        start = time.perf_counter()
        tenant = namespace or self.settings.namespace
        with usage_scope() as usage:
            deps = self.deps
            state = initial_state(
                text,
                session_id=session_id,
                sources=names,
                use_cache=use_cache,
                namespace=tenant,
                fingerprint=checked.fingerprint,
            )
            if session_id:
                key = session_key(tenant, session_id)
                memory = await anyio.to_thread.run_sync(lambda: deps.memory().get(key))
                state["memory_summary"] = memory.render()
                state["previous_question"] = memory.last_question
            probed = False

            async def fail_fast() -> None:
                nonlocal probed
                if not probed:
                    probed = True
                    await self._fail_fast(names, tenant)

            if state.get("previous_question"):  # before a follow-up's rewrite by the model
                await fail_fast()
            nodes = self._hit_nodes()
            cached = use_cache and self.settings.cache.enabled  # else waiting cannot help
            # With a lease, a miss may be looked up again after the wait: the ask counts the
            # result of its last lookup only (one hit, or one miss), so this miss waits.
            uncounted = miss_lease is not None and cached
            # The frame is read on a miss (:meth:`_answer`), or when the result is asked for it.
            await _run_node(state, "plan_query", nodes, frame=False)
            # A hit shows the store holds an answer: no probe. A miss probes before its work,
            # or before the lookup loads the embedding model.
            await _run_node(
                state, "query_cache", nodes, count_miss=not uncounted, before_model=fail_fast
            )
            if not state.get("cache_hit"):
                await fail_fast()
            state["planned"] = True
            lease: contextlib.AbstractAsyncContextManager[bool] = contextlib.nullcontext(False)
            if state.get("cache_hit"):
                uncounted = False  # a hit is always counted
            elif miss_lease is not None and uncounted:
                lease = miss_lease()
            try:
                async with lease as waited:
                    if waited:  # another process answered the same question meanwhile
                        uncounted = False  # this lookup counts its own hit or miss
                        await _run_node(state, "query_cache", nodes)
                    final = await self._answer(state, nodes)
            finally:
                if uncounted:  # the first lookup's miss stands (also if the lease failed)
                    deps.answers.count_miss(state.get("miss_reason"))
        return AskResult.from_state(final, usage, (time.perf_counter() - start) * 1000.0)

    async def _fail_fast(self, sources: list[str], namespace: str) -> None:
        """Raise ``SourceUnreachable`` at once when every source asked is a remote one whose
        host does not resolve or refuses connections and the store holds nothing that could
        answer instead (no article, no answer): the offline first run is told in a second,
        before the embedder loads, rather than after the whole ask has run.

        :meth:`ask` runs it only when the answer cache has no hit (a store that holds nothing
        holds none), before anything loads: a hit takes no trip to a worker thread for it.
        """
        remote = {
            "pubmed": self.settings.pubmed.base_url,
            "europepmc": self.settings.europepmc.base_url,
        }
        if not sources or any(name not in remote for name in sources):
            return
        import anyio.to_thread

        store = self.deps.store
        try:
            stored = await anyio.to_thread.run_sync(
                lambda: store.count_articles() or store.count_answers(namespace)
            )
        except Exception:  # a probe: the ask itself meets (and reports) what the store has
            return
        if stored:
            return
        from medlit.reachability import connect_failure

        reasons = await asyncio.gather(*(connect_failure(remote[name]) for name in sources))
        if not all(reasons):
            return
        from medlit.errors import SourceUnreachable
        from medlit.sources.http import unreachable_source

        messages = [
            str(unreachable_source(name, remote[name], str(reason)))
            for name, reason in zip(sources, reasons, strict=True)
        ]
        raise SourceUnreachable(" ".join(messages), source=sources[0])

    async def _answer(self, state: AgentState, nodes: HitNodes) -> AgentState:
        """The final state: from the cache hit found, else from the ask graph."""
        from medlit.agent.hit_nodes import timed

        if state.get("cache_hit") and self._due(state):
            from medlit.agent.recheck import recheck_hit

            start = time.perf_counter()
            state = await recheck_hit(self.deps, state, self._answer_miss)
            took = {"recheck": (time.perf_counter() - start) * 1000.0}
            state["timings"] = merge_timings(state.get("timings"), took)
        if state.get("cache_hit"):
            # The fast path: no LangGraph, no LLM, no source client.
            update = await timed("update_memory", nodes.update_memory)(state)
            state["timings"] = merge_timings(state["timings"], update.get("timings", {}))
            return state
        if state.get("recheck"):  # answered again through the graph: nothing left to do
            return state
        return await self._answer_miss(state)

    async def recheck_due(
        self,
        *,
        namespace: str | None = None,
        limit: int = 1000,
        on_entry: Callable[[int, int, str], None] | None = None,
    ) -> DueReport:
        """Check every cached answer due (``cache.recheck_after_s``) for new articles, as a
        due hit would be: nothing new, the check is recorded; something new, the question is
        answered again and its entry replaced (:mod:`medlit.agent.recheck`).

        Args:
            namespace: one tenant's answers (None: every tenant's).
            limit: at most this many entries, longest unchecked first.
            on_entry: called after each entry with (done, due, its outcome).
        """
        from medlit.agent.recheck import recheck_due

        return await recheck_due(
            self.deps, self._answer_miss, namespace=namespace, limit=limit, on_entry=on_entry
        )

    def _due(self, state: AgentState) -> bool:
        """Whether the hit's answer is due for a check for new articles: stored or last
        checked ``cache.recheck_after_s`` ago or more (a float comparison: a hit not due pays
        nothing more)."""
        payload = state.get("cache_payload") or {}
        last = max(payload.get("created_at") or 0.0, payload.get("checked_at") or 0.0)
        return time.time() - last >= self.settings.cache.recheck_after_s

    async def _answer_miss(self, state: AgentState) -> AgentState:
        """The final state of a question past tier 1: the ask graph from the evidence on."""
        from medlit.agent.graph import recursion_limit
        from medlit.agent.hit_nodes import question_frame

        start = time.perf_counter()
        question_frame(state)  # the frame plan_query left for a miss: the graph's nodes read it
        read_ms = (time.perf_counter() - start) * 1000.0
        state["timings"] = merge_timings(state.get("timings"), {"plan_query": read_ms})
        graph = self._get_graph()
        limit = recursion_limit(self.settings.agent.max_iterations)
        async with self._miss_slot():
            final: AgentState = await graph.ainvoke(state, config={"recursion_limit": limit})
        return final

    def _miss_slot(self) -> contextlib.AbstractAsyncContextManager[object]:
        if self._miss_limit is None:
            return contextlib.nullcontext()
        if self._miss_gate is None:
            self._miss_gate = asyncio.Semaphore(self._miss_limit)
        return self._miss_gate

    def _hit_nodes(self) -> HitNodes:
        """The nodes a tier-1 hit runs: the graph's when it is built, else their light base
        (a hit loads neither the prompt nor the answer checks)."""
        if self._nodes is not None:
            return self._nodes
        if self._hit is None:
            from medlit.agent.hit_nodes import HitNodes

            self._hit = HitNodes(self.deps)
        return self._hit

    def _get_nodes(self) -> AskNodes:
        if self._nodes is None:
            from medlit.agent.nodes import AskNodes

            self._nodes = AskNodes(self.deps)
        return self._nodes

    def _get_graph(self) -> Any:
        if self._graph is None:
            from medlit.agent.graph import build_graph

            self._graph = build_graph(self._get_nodes())
        return self._graph


async def _run_node(state: AgentState, name: str, nodes: HitNodes, **options: Any) -> None:
    """Run one node of the ask graph outside the graph, merging its update into ``state``
    (``options``: the node's keyword arguments)."""
    from medlit.agent.hit_nodes import timed

    node = getattr(nodes, name)
    update = await timed(name, functools.partial(node, **options) if options else node)(state)
    timings = merge_timings(state.get("timings"), update.pop("timings", {}))
    state.update(update)  # type: ignore[typeddict-item]
    state["timings"] = timings


async def ask(
    question: str,
    *,
    settings: Settings | None = None,
    session_id: str | None = None,
    sources: SourceChoice | list[str] | str | None = None,
    use_cache: bool = True,
) -> AskResult:
    """Answer one question with a short-lived :class:`Assistant` (see :meth:`Assistant.ask`)."""
    async with Assistant(settings) as assistant:
        return await assistant.ask(
            question, session_id=session_id, sources=sources, use_cache=use_cache
        )
