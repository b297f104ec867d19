"""The state one ``ask`` carries through the graph (seed 001): per query, ephemeral.

Nothing here outlives the question: chat memory lives in the store (``memory.py``), cached
answers and evidence live in the caches. Nodes return partial updates; LangGraph replaces a
field with the new value, except ``timings`` whose updates are summed per node (a node that runs
once per round reports its total time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypedDict

from medlit.types import Article, Citation, Evidence, VerdictCause

if TYPE_CHECKING:  # a question served by its key reads no frame (medlit.agent.nodes)
    from medlit.words.frame import QuestionFrame

__all__ = [
    "AgentState",
    "Decision",
    "StopReason",
    "initial_state",
    "merge_timings",
    "resolve_state_types",
]

Decision = Literal["stop", "fetch_more"]

# Why the loop stopped; always set by the time an answer is returned.
StopReason = Literal[
    "cache_hit",  # tier 1 served a stored answer
    "threshold",  # retrieval_score cleared the threshold and the evidence is confident
    "enough",  # min_docs articles held speak of the question's subject and its outcome
    "max_iterations",  # fetch rounds exhausted
    "max_api_calls",  # source-call budget exhausted
    "stagnation",  # no score gain over the last rounds
    "exhausted",  # the sources had nothing new to give
    "unreachable",  # every source asked is unreachable (no DNS, connection refused)
    "no_results",  # no evidence at all: a plain "no evidence found" answer
]


def merge_timings(
    left: dict[str, float] | None, right: dict[str, float] | None
) -> dict[str, float]:
    """LangGraph reducer: add each node's milliseconds to what it already spent."""
    merged = dict(left or {})
    for node, ms in (right or {}).items():
        merged[node] = merged.get(node, 0.0) + ms
    return merged


class AgentState(TypedDict, total=False):
    """Everything one question needs on its way to an answer.

    Inputs are set by the caller; every other field is written by the node named beside it.
    """

    # inputs
    question: str
    session_id: str | None
    sources: list[str]
    use_cache: bool
    namespace: str  # the tenant: scope of tier-1 answers and of the session
    fingerprint: str  # answer-shaping settings of this question (its sources included)
    memory_summary: str  # the session's chat memory, read once before planning
    previous_question: str | None  # the session's last standalone question
    planned: bool  # plan_query and query_cache already ran (the fast path outside the graph)

    # plan_query
    standalone_question: str
    pubmed_query: str  # the planner's own query (an LLM's rewrite, a follow-up's), or ""
    focus: str | None
    frame: QuestionFrame  # what the standalone question asks, read once (medlit.words.frame)
    rewritten_by_llm: bool
    query_vector: Any  # the standalone question's embedding; None until first needed

    # read_language (a cache miss only): a question not in English, and what was searched
    question_language: str | None  # ISO 639-1 code of the language it reads as; None: English
    language_note: str | None  # the one line saying medlit searches English abstracts
    searched_question: str | None  # the English translation searched (a model translated it)
    asked_question: str | None  # the standalone question as asked, before its translation
    asked_vector: Any  # its embedding: the answer is stored under it

    # query_cache (tier 1)
    cache_hit: bool
    cache_payload: dict[str, Any] | None
    miss_reason: str | None
    guard_reason: str | None  # why the guard refused the closest cached question
    similarity: float | None
    verified_by: str | None  # the verifier model, on a hit from the verified band
    cache_entry_id: int | None  # the store's id of the entry served
    # a due hit's check for new articles (medlit.agent.recheck): when the answer was last
    # checked, what the check found and, answered again, what it rested on before
    cache_checked_at: float | None
    recheck: dict[str, Any] | None
    rests_on: dict[str, Any]

    # chunk_store_search (tier 2) and fetch_pubmed
    anchor_chunks: list[Evidence]
    documents: dict[str, Article]  # article key -> article, everything seen for this question
    doc_chunks_map: dict[str, list[str]]  # article key -> ids of its chunks among the anchors
    downloaded_keys: list[str]  # articles actually downloaded for this question
    api_calls: int  # source requests sent for this question
    iteration: int  # fetch rounds done
    page_offset: int  # where the next page of the current query starts
    query_mode: Literal["narrow", "broad"]  # broad: the widest query (nothing left to relax)
    query_step: int  # which search of the plan (medlit.agent.query.search_steps) is searched
    searches: list[dict[str, Any]]  # each search made: query, step (what it is), offset, found
    on_question: int  # articles held that speak of the frame's subject and its outcome
    outcome_dropped: str  # the outcome a search that found articles had to leave out
    any_word: bool  # articles were found by any of the question's rarer words, not all
    last_fetch_count: int  # articles the last fetch returned (new or not)
    last_fetch_new: int  # of those, articles not seen before for this question
    fetch_errors: list[str]
    searched_ok: bool  # at least one provider answered in at least one fetch round
    unreachable: bool  # the last round's sources all failed unreachable: no round can help

    # score
    evidence: list[Evidence]  # scored, best first, at most top_k
    retrieval_score: float
    num_docs: int
    doc_scores: dict[str, float]
    confident: bool
    on_subject: int  # of the evidence's articles, those that speak of the frame's subject
    prev_retrieval_scores: list[float]

    # decision
    decision: Decision
    stop_reason: StopReason

    # read_full_text (fulltext.mode auto): the open-access bodies of the evidence's articles
    full_texts_read: list[str]  # keys of the articles whose full text this answer read

    # build_prompt / call_llm
    prompt_messages: list[dict[str, str]]
    context_chunks: int
    final_answer: str
    verdict: Literal["yes", "no", "uncertain"] | None
    # why the verdict is Uncertain, or withheld for want of evidence (None otherwise)
    verdict_cause: VerdictCause | None
    citations: list[Citation]
    removed_citations: list[str]
    left_out: int  # sentences or citations the answer's checks left out
    answer_warnings: list[str]  # what the answer's checks left out, shown with it
    excluded: dict[str, str]  # article key -> why it is never evidence ("retracted")
    answer_findings: list[dict[str, Any]]  # the checks' findings, as clients get them
    mode: Literal["llm", "evidence_digest"]
    # call_llm -> check_answer -> digest: the model's answer before its checks, its verdict
    # line, and why the digest answers instead (None: it does not)
    drafted: str
    drafted_verdict: Literal["yes", "no", "uncertain"] | None
    digest_why: str | None
    digest_needed: bool
    evidence_reused: int

    # admit_cache
    admitted: bool
    admission_reason: str

    timings: Annotated[dict[str, float], merge_timings]


def initial_state(
    question: str,
    *,
    session_id: str | None = None,
    sources: list[str] | None = None,
    use_cache: bool = True,
    memory_summary: str = "",
    namespace: str = "default",
    fingerprint: str = "",
) -> AgentState:
    """A fresh state for one question, every loop counter at zero."""
    return AgentState(
        question=question,
        session_id=session_id,
        sources=list(sources or ["pubmed"]),
        use_cache=use_cache,
        namespace=namespace,
        fingerprint=fingerprint,
        memory_summary=memory_summary,
        planned=False,
        cache_hit=False,
        cache_payload=None,
        miss_reason=None,
        guard_reason=None,
        similarity=None,
        verified_by=None,
        anchor_chunks=[],
        documents={},
        doc_chunks_map={},
        downloaded_keys=[],
        api_calls=0,
        iteration=0,
        page_offset=0,
        query_mode="narrow",
        last_fetch_count=-1,
        last_fetch_new=-1,
        fetch_errors=[],
        evidence=[],
        retrieval_score=0.0,
        num_docs=0,
        doc_scores={},
        confident=False,
        on_subject=0,
        prev_retrieval_scores=[],
        citations=[],
        removed_citations=[],
        left_out=0,
        answer_warnings=[],
        answer_findings=[],
        digest_needed=False,
        evidence_reused=0,
        admitted=False,
        timings={},
    )


def resolve_state_types() -> None:
    """Bind the names :class:`AgentState`'s annotations use that are imported only for type
    checking here (:class:`~medlit.words.frame.QuestionFrame`), so that its type hints resolve:
    LangGraph reads them when it builds the graph, which a tier-1 hit never does."""
    global QuestionFrame
    from medlit.words.frame import QuestionFrame
