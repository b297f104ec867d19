"""The nodes of the ask graph that a tier-1 hit runs: ``plan_query``, ``query_cache`` and
``update_memory``, as async methods of :class:`HitNodes` (the rest are
:class:`medlit.agent.nodes.AskNodes`, its subclass), and what every node shares (:func:`timed`,
:func:`off_loop`).

A question served by its key loads this module and not the retrieval loop's (the prompt, the
answer checks, the scoring), nor the question frame: :func:`question_frame` reads the frame
when something first needs it (a miss, ``--json``), once per question.
"""

from __future__ import annotations

import asyncio
import functools
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

from medlit.agent.deps import AgentDeps
from medlit.agent.memory import Turn, session_key, summary_messages
from medlit.agent.plan import QueryPlan, deterministic_plan, suggest_focus
from medlit.agent.state import AgentState
from medlit.errors import LLMError
from medlit.log import get_logger
from medlit.progress import emit
from medlit.types import VerdictCause

if TYPE_CHECKING:
    from medlit.cache.answers import CachedAnswer
    from medlit.words.frame import QuestionFrame

__all__ = [
    "SELF_REPORTED",
    "STAGE_MESSAGES",
    "HitNodes",
    "Node",
    "off_loop",
    "question_frame",
    "read_question_frame",
    "served",
    "stored_cause",
    "timed",
]

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
    "check_answer": "checking the answer against the articles",
    "digest": "quoting the evidence",
    "update_memory": "updating the conversation",
    "admit_cache": "saving the answer",
}
#: Nodes that say what they do themselves ("searching PubMed for “statins AND dementia”").
SELF_REPORTED = frozenset({"fetch_pubmed", "decision", "read_full_text", "read_language"})

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


def stored_cause(extra: dict[str, Any], verdict: str | None) -> VerdictCause | None:
    """The cause a tier-1 entry stored with its Uncertain verdict; an entry stored before
    causes were kept (or holding one this code cannot read) says its cause was not recorded."""
    if verdict != "uncertain":
        return None
    try:
        return VerdictCause.model_validate(extra["verdict_cause"])
    except (KeyError, TypeError, ValueError):
        return VerdictCause(kind="unrecorded", detail="cached before verdict causes were kept")


def read_question_frame(question: str, sources: Iterable[str] = ()) -> QuestionFrame:
    """The frame of the standalone ``question`` asked of ``sources``
    (:func:`medlit.words.frame.read_frame`): the ask's one reading of it."""
    from medlit.words.frame import read_frame

    return read_frame(question, sources)


def question_frame(state: AgentState) -> QuestionFrame:
    """The frame of the state's standalone question: the state's, else read now and kept in
    the state (a tier-1 hit reads it only when asked for it, as ``--json`` does)."""
    frame = state.get("frame")
    if frame is None:
        question = state.get("standalone_question", state["question"])
        frame = state["frame"] = read_question_frame(question, state.get("sources") or ())
    return frame


class HitNodes:
    """The nodes a tier-1 hit runs (``plan_query``, ``query_cache``, ``update_memory``),
    bound to their dependencies; :class:`~medlit.agent.nodes.AskNodes` adds the rest.

    Args:
        deps: settings, caches, embedder, sources and LLM client the nodes use.
    """

    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps
        self.agent = deps.settings.agent

    # -- plan and tier 1 ---------------------------------------------------------------
    async def plan_query(self, state: AgentState, *, frame: bool = True) -> dict[str, Any]:
        """Make the question standalone and build its PubMed queries (LLM only for follow-ups).

        ``frame=False``: the question frame is left to :func:`question_frame`, for a caller
        that reads it only when the question misses the cache (or is asked for it).
        """
        question = state["question"]
        previous = state.get("previous_question")
        plan = deterministic_plan(question)
        by_llm = False
        if previous:  # a follow-up's words and searches (not loaded for a question alone)
            from medlit.agent import query
        swapped = query.name_swap(question, previous) if previous else None
        if swapped is not None:  # "what about type 1?": the previous question, renamed
            plan = deterministic_plan(swapped)
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
        # Computed when first needed (:meth:`_vector`): the same question served by its key
        # needs no embedding model.
        vector = self.deps.remembered_embedding(plan.standalone_question)
        update: dict[str, Any] = {
            "standalone_question": plan.standalone_question,
            "pubmed_query": plan.pubmed_query,
            "focus": plan.focus,
            "rewritten_by_llm": by_llm,
            "query_vector": vector,
        }
        if frame:
            sources = state.get("sources") or ()
            update["frame"] = read_question_frame(plan.standalone_question, sources)
        return update

    async def _llm_plan(self, question: str, memory: str) -> QueryPlan:
        from medlit.agent import query

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
        own = " ".join(out.pubmed_query.split())
        return QueryPlan(standalone, out.focus or suggest_focus(standalone), own)

    async def _vector(self, state: AgentState) -> Any:
        """The standalone question's embedding: the state's, else computed (off the loop)."""
        vector = state.get("query_vector")
        if vector is None:
            vector = await off_loop(self.deps.embed_one, state["standalone_question"])
        return vector

    def _fingerprint(self, state: AgentState) -> str:
        return state.get("fingerprint") or self.deps.fingerprint(state.get("sources", ["pubmed"]))

    def _origin(self, state: AgentState) -> str:
        return self.deps.origin(state.get("sources") or ["pubmed"])

    async def query_cache(
        self,
        state: AgentState,
        *,
        count_miss: bool = True,
        before_model: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """Tier 1: a stored answer to the same question (the cache's guard has the last word).

        ``count_miss=False``: a miss is left uncounted, for a caller that may look again.
        ``before_model``: awaited when the question's key finds no answer and its vector needs
        the embedding model, not loaded yet, before it loads; it may raise to end the ask there.
        """
        if not state.get("use_cache", True) or not self.deps.settings.cache.enabled:
            return {"cache_hit": False, "miss_reason": "disabled", "guard_reason": None}
        namespace = state.get("namespace", self.deps.settings.namespace)
        fingerprint = self._fingerprint(state)
        question = state["standalone_question"]
        origin = self._origin(state)
        lookup = await self.deps.answer_by_key(
            question, namespace=namespace, fingerprint=fingerprint, origin=origin
        )
        vector = state.get("query_vector")
        if lookup is None:
            if before_model is not None and vector is None and not self.deps.embedder_loaded:
                await before_model()
            vector = await self._vector(state)
            lookup = await self.deps.lookup_answer(
                question,
                vector,
                namespace=namespace,
                fingerprint=fingerprint,
                origin=origin,
                count_miss=count_miss,
                frame=state.get("frame"),
            )
        if not lookup.hit or lookup.entry is None:
            return {
                "query_vector": vector,
                "cache_hit": False,
                "miss_reason": lookup.miss_reason,
                "guard_reason": lookup.guard_reason,
                "similarity": round(lookup.similarity, 4) if lookup.similarity else None,
            }
        return served(
            lookup.entry,
            entry_id=lookup.entry_id,
            similarity=lookup.similarity,
            verified_by=lookup.verified_by,
        )

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


def served(
    entry: CachedAnswer,
    *,
    entry_id: int | None,
    similarity: float = 1.0,
    verified_by: str | None = None,
) -> dict[str, Any]:
    """The state update of a tier-1 hit serving ``entry`` (the store's ``entry_id``)."""
    payload = entry.model_dump(mode="json")
    verdict = entry.verdict if entry.verdict in ("yes", "no", "uncertain") else None
    return {
        "cache_hit": True,
        "cache_payload": payload,
        "cache_entry_id": entry_id,
        "similarity": round(similarity, 4),
        "verified_by": verified_by,
        "miss_reason": None,
        "guard_reason": None,
        "final_answer": entry.answer,
        "verdict": verdict,
        "verdict_cause": stored_cause(entry.extra, verdict),
        "citations": list(entry.citations),  # the entry is this lookup's own copy
        "mode": entry.extra.get("mode", "llm"),
        # A question not in English: what was said of it and searched when it was answered.
        "question_language": entry.extra.get("question_language"),
        "language_note": entry.extra.get("language_note"),
        "searched_question": entry.extra.get("searched_question"),
        "retrieval_score": entry.retrieval_score,
        "doc_scores": dict(entry.doc_scores),
        "decision": "stop",
        "stop_reason": "cache_hit",
    }
