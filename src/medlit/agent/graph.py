"""The ask graph (seed 001) as a LangGraph ``StateGraph``.

::

    START ─┬─(not planned)─► plan_query ─► query_cache ─┬─hit──────────────────────┐
           │                                            │ miss                     │
           └─(planned, miss)──────────────────────► read_language                  │
                                                         ▼                         │
                                                 chunk_store_search ◄─────┐        │
                                                         ▼                │        │
                                                       score              │        │
                                                         ▼                │        │
                                                     decision ─fetch_more─► fetch_pubmed
                                                         │ stop                    │
                                                         ▼                         │
                                                  (read_full_text)                 │
                                                         ▼                         │
                            build_prompt ─► call_llm ─┬─answer──► check_answer ─┐  │
                                                      ├─no model──► digest ◄────┤  │
                                                      │           (nothing      │  │
                                                      │            stands)      ▼  │
                                                      └─no evidence──────► update_memory ◄┘
                                                                                ▼
                                                                           admit_cache ─► END

``read_language`` says when a question is not in English (medlit searches English abstracts)
and, with a model, searches its English translation; it runs on a miss only, so a cached answer
never loads the language identifier.

``call_llm`` writes the answer; ``check_answer`` holds it to its evidence
(:mod:`medlit.checks`); the evidence ``digest`` answers without a model, or when nothing of
the model's answer stands.

The conditional entry lets the assistant run ``plan_query`` and ``query_cache`` itself before
importing LangGraph (a tier-1 hit then never pays for the import) and enter the graph at
``chunk_store_search`` on a miss; called with a fresh state, the graph runs every node. It is
the one implementation of the flow either way.

With ``fulltext.mode`` ``auto``, ``read_full_text`` runs between the stop and the prompt: it
reads the open-access full text of the articles the answer is about to use and adds their best
passages to the evidence. With ``off`` the node is not in the graph at all.

This module imports ``langgraph``: import it only when the graph is needed.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from medlit.agent.nodes import AskNodes, timed
from medlit.agent.state import AgentState, resolve_state_types

__all__ = ["NODE_NAMES", "build_graph", "recursion_limit"]

NODE_NAMES = (
    "plan_query",
    "query_cache",
    "read_language",
    "chunk_store_search",
    "score",
    "decision",
    "fetch_pubmed",
    "read_full_text",
    "build_prompt",
    "call_llm",
    "check_answer",
    "digest",
    "update_memory",
    "admit_cache",
)


def _route_start(state: AgentState) -> str:
    if not state.get("planned"):
        return "plan_query"
    return "update_memory" if state.get("cache_hit") else "read_language"


def _route_cache(state: AgentState) -> str:
    return "update_memory" if state.get("cache_hit") else "read_language"


def _route_answer(state: AgentState) -> str:
    if state.get("digest_needed"):
        return "digest"
    return "check_answer" if state.get("drafted") else "update_memory"


def _route_checked(state: AgentState) -> str:
    return "digest" if state.get("digest_needed") else "update_memory"


def build_graph(nodes: AskNodes) -> Any:
    """Compile the ask graph over ``nodes``; returns a LangGraph ``CompiledStateGraph``."""
    resolve_state_types()  # StateGraph reads the state's type hints
    full_text = nodes.deps.settings.fulltext.mode != "off"
    after_stop = "read_full_text" if full_text else "build_prompt"

    def _route_decision(state: AgentState) -> str:
        return "fetch_pubmed" if state.get("decision") == "fetch_more" else after_stop

    graph = StateGraph(AgentState)
    for name in NODE_NAMES:
        if name == "read_full_text" and not full_text:
            continue
        graph.add_node(name, timed(name, getattr(nodes, name)))  # type: ignore[call-overload]
    graph.add_conditional_edges(
        START,
        _route_start,
        {n: n for n in ("plan_query", "read_language", "update_memory")},
    )
    graph.add_edge("plan_query", "query_cache")
    graph.add_conditional_edges(
        "query_cache",
        _route_cache,
        {n: n for n in ("read_language", "update_memory")},
    )
    graph.add_edge("read_language", "chunk_store_search")
    graph.add_edge("chunk_store_search", "score")
    graph.add_edge("score", "decision")
    graph.add_conditional_edges(
        "decision", _route_decision, {n: n for n in ("fetch_pubmed", after_stop)}
    )
    if full_text:
        graph.add_edge("read_full_text", "build_prompt")
    graph.add_edge("fetch_pubmed", "chunk_store_search")
    graph.add_edge("build_prompt", "call_llm")
    graph.add_conditional_edges(
        "call_llm", _route_answer, {n: n for n in ("check_answer", "digest", "update_memory")}
    )
    graph.add_conditional_edges(
        "check_answer", _route_checked, {n: n for n in ("digest", "update_memory")}
    )
    graph.add_edge("digest", "update_memory")
    graph.add_edge("update_memory", "admit_cache")
    graph.add_edge("admit_cache", END)
    return graph.compile()


def recursion_limit(max_iterations: int) -> int:
    """Graph steps one question may take: the fixed nodes (read_full_text, check_answer and
    digest among them) plus four per fetch round."""
    return 15 + 4 * (max_iterations + 1)
