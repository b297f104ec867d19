"""A standalone question's plan without the LLM: its focus and :class:`QueryPlan`, all a
question served by its key needs of :mod:`medlit.agent.query` (whose searches, follow-ups
and word tables it does not load).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["QueryPlan", "deterministic_plan", "suggest_focus"]

_FOCUS_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "safety",
        re.compile(r"\b(safe|safety|adverse|side[- ]effects?|harm|toxic\w*|risk of)\b", re.I),
    ),
    (
        "diagnosis",
        re.compile(r"\b(diagnos\w*|sensitivity|specificity|accura\w*|screen\w*|detect\w*)\b", re.I),
    ),
    (
        "treatment",
        re.compile(
            r"\b(treat\w*|therap\w*|efficac\w*|effective\w*|reduce\w*|improve\w*|prevent\w*|"
            r"intervention\w*|surgery|dose|drug\w*)\b",
            re.I,
        ),
    ),
    ("prognosis", re.compile(r"\b(prognos\w*|predict\w*|mortality|survival|outcomes?)\b", re.I)),
    ("aetiology", re.compile(r"\b(cause\w*|risk factors?|associat\w*|linked|etiolog\w*)\b", re.I)),
]


def suggest_focus(question: str) -> str | None:
    """The kind of evidence the question asks for (treatment, safety, diagnosis...), if clear."""
    for focus, pattern in _FOCUS_RULES:
        if pattern.search(question):
            return focus
    return None


@dataclass(frozen=True)
class QueryPlan:
    """A standalone question, and the query its planner wrote for it, if any (the LLM's
    rewrite of a follow-up, or a follow-up's words with the previous question's): searched
    before the searches its frame plans (:func:`medlit.agent.query.search_steps`)."""

    standalone_question: str
    focus: str | None
    pubmed_query: str = ""


@lru_cache(maxsize=2048)
def deterministic_plan(question: str) -> QueryPlan:
    """Plan a standalone question without an LLM (remembered: a repeated question, the common
    case of a cache hit, is planned once; the plan is frozen)."""
    standalone = " ".join(question.split())  # normalise_question
    return QueryPlan(standalone, suggest_focus(standalone))
