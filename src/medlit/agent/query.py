"""Planning a question (seed 000, ``plan_query``) without an LLM, and deciding when one is needed.

An LLM call costs latency and money, and a repeated question must cost nothing on a tier-1 hit,
so the planner calls the LLM only for a question that depends on the conversation (a session
with memory, and a question that reads like a follow-up: "and in children?", "what about its
side effects?"). Every other question is made standalone deterministically (whitespace
normalised). Its searches are planned from its frame when the first search is due
(:func:`search_steps`: the planner research uses too, :mod:`medlit.words.search_plan`), so a
tier-1 hit never builds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from medlit.agent.plan import QueryPlan, deterministic_plan, suggest_focus
from medlit.text import as_typed
from medlit.types import Article
from medlit.words import stop_words
from medlit.words.search_terms import WORD_PATTERN, content_terms, normalise_question, query_terms

if TYPE_CHECKING:  # imported where used: a question served by its key plans without them
    from medlit.words.frame import QuestionFrame
    from medlit.words.search_plan import SearchStep

__all__ = [
    "PlanOutput",
    "QueryPlan",
    "about_question",
    "content_terms",
    "deterministic_plan",
    "looks_like_follow_up",
    "normalise_question",
    "query_terms",
    "search_steps",
    "suggest_focus",
    "without_follow_up",
]


# Openings and words that make a question depend on what was said before.
_FOLLOW_UP_START = re.compile(
    r"^(?:and|but|also|so|then|what about|how about|what if|same|or|versus|vs\.?)\b", re.I
)
# Openings that are a follow-up only when little else is said ("in children?").
_SHORT_FOLLOW_UP_START = re.compile(r"^(?:in|for|among|with|without|compared|during)\b", re.I)
_ANAPHORA = re.compile(
    r"\b(?:it|its|it's|they|them|their|this|these|those|that drug|the same|such|the drug|"
    r"the treatment|the intervention|the disease|the condition|the study|the former|the latter)\b",
    re.I,
)


def looks_like_follow_up(question: str) -> bool:
    """True when the question likely cannot be understood without the conversation."""
    text = normalise_question(question)
    n_terms = len(content_terms(text, limit=50))
    if _FOLLOW_UP_START.match(text) or _ANAPHORA.search(text):
        return True
    if _SHORT_FOLLOW_UP_START.match(text) and n_terms <= 5:
        return True
    return n_terms <= 2


def keeps_follow_up(follow_up: str, rewrite: str) -> bool:
    """True when ``rewrite`` still says everything ``follow_up`` adds to the conversation.

    A small model asked to make "and in children?" standalone may give back the previous
    question unchanged; that rewrite would be served the previous answer from the cache. Every
    content word of the follow-up must appear in the rewrite, as itself or as a word sharing its
    first five letters ("child"/"children", "pregnant"/"pregnancy"); a synonym fails, which costs
    only the cruder :func:`contextual_plan`.
    """
    words = {w.lower().strip("'") for w in WORD_PATTERN.findall(as_typed(rewrite))}  # as the terms
    stems = {w[:5] for w in words if len(w) >= 5}
    return all(
        term in words or (len(term) >= 5 and term[:5] in stems)
        for term in content_terms(follow_up, limit=64)
    )


class PlanOutput(BaseModel):
    """What the LLM planner returns for a follow-up question (task ``plan_query``)."""

    standalone_question: str = Field(
        description="The question rewritten to be understood without the conversation."
    )
    pubmed_query: str = Field(description="A PubMed search query for it (plain terms, AND/OR).")
    focus: str | None = Field(
        None, description="The kind of evidence sought: treatment, safety, diagnosis, ..."
    )


class TranslatedQuestion(BaseModel):
    """What the LLM returns for a question not in English (task ``translate_question``)."""

    english: str = Field(
        description="The question in English, every drug, disease, population and number kept."
    )


@lru_cache(maxsize=2048)
def search_steps(
    frame: QuestionFrame, *, first: str = "", max_terms: int = 8
) -> tuple[SearchStep, ...]:
    """The searches for the question ``frame`` reads, narrowest first
    (:func:`medlit.words.search_plan.plan_searches`), after ``first``, the planner's own
    query, when it wrote one."""
    from medlit.words.search_plan import SearchStep, plan_searches

    steps = plan_searches(frame, max_terms=max_terms)
    if first and first not in {step.query for step in steps}:
        steps = (SearchStep(first, "the planner's query"), *steps)
    return steps


def about_question(frame: QuestionFrame, articles: Iterable[Article]) -> int:
    """How many of ``articles`` speak of the question's subject and its outcome (their title
    and abstract: :func:`medlit.words.search_plan.speaks_of`)."""
    from medlit.words.search_plan import speaks_of

    return sum(1 for a in articles if speaks_of(frame, f"{a.title} {a.abstract_text}"))


def about_subject(frame: QuestionFrame, articles: Iterable[Article]) -> int:
    """How many of ``articles`` speak of the question's subject (their title and abstract:
    :func:`medlit.words.search_plan.speaks_of_subject`)."""
    from medlit.words.search_plan import speaks_of_subject

    return sum(1 for a in articles if speaks_of_subject(frame, f"{a.title} {a.abstract_text}"))


def names_question(frame: QuestionFrame, articles: Iterable[Article]) -> int:
    """How many of ``articles`` name the question's subject and its outcome (their title and
    abstract: :func:`medlit.words.search_plan.names_asked`)."""
    from medlit.words.search_plan import names_asked

    return sum(1 for a in articles if names_asked(frame, f"{a.title} {a.abstract_text}"))


_FOLLOW_UP_FILLER = stop_words("follow_up")


def _written_name(text: str, head: str, quals: frozenset[str]) -> re.Match[str] | None:
    """Where ``text`` writes ``head`` with exactly ``quals`` ("type II" for type {2})."""
    from medlit.words.qualified_names import qualified_names

    for match in re.finditer(
        rf"(?<![A-Za-z0-9-]){re.escape(head)}(?:e?s)?[- ]?[A-Za-z0-9αβγδ]+", text, re.I
    ):
        if qualified_names(match.group(0), fold_case=True).get(head) == quals:
            return match
    return None


def name_swap(follow_up: str, previous_question: str) -> str | None:
    """The previous question about the name a follow-up asks instead, or None.

    "what about type 1?" after "Does metformin help type 2 diabetes?" is "Does metformin help
    type 1 diabetes?": the follow-up names one thing the previous question named otherwise
    and says nothing else. Exact, and no LLM call; anything more ("and vitamin C in
    children?") is left to the rewrite.
    """
    from medlit.words.qualified_names import WORD_HEADS, qualified_names

    previous_question = without_follow_up(previous_question)
    asked = qualified_names(follow_up, fold_case=True)
    before = qualified_names(previous_question, fold_case=True)
    if len(asked) != 1:
        return None
    ((head, quals),) = asked.items()
    if head not in before or len(before[head]) != 1 or before[head] == quals or "*" in quals:
        return None
    said = _written_name(follow_up, head, quals)
    old = _written_name(previous_question, head, before[head])
    if said is None or old is None:
        return None
    rest = follow_up[: said.start()] + " " + follow_up[said.end() :]
    if set(content_terms(rest, limit=64)) - _FOLLOW_UP_FILLER:
        return None
    name = said.group(0)
    if head not in WORD_HEADS:  # typed "hiv 2" is HIV 2
        name = name.upper()
    else:  # "vitamin c" is vitamin C, and opens the sentence as the old name did
        name = re.sub(r"(?<=[ -])([a-z])(\d*)$", lambda m: m.group(1).upper() + m.group(2), name)
        if old.group(0)[:1].isupper():
            name = name[0].upper() + name[1:]
    return previous_question[: old.start()] + name + previous_question[old.end() :]


_FOLLOW_UP = " Follow-up: "


def without_follow_up(question: str) -> str:
    """The question a :func:`contextual_plan` was built on (its text before "Follow-up:"), so
    a follow-up of a follow-up is one standalone question, not a chain of them."""
    return question.split(_FOLLOW_UP, 1)[0]


def contextual_plan(question: str, previous_question: str, *, max_terms: int = 8) -> QueryPlan:
    """A follow-up made standalone without an LLM: the previous question, then the follow-up.

    Cruder than the LLM's rewrite, but never ambiguous: the cache key and the search carry the
    topic the follow-up refers to, so "is it safe?" cannot match another drug's answer. The
    previous question's own follow-up is left out (:func:`without_follow_up`): the standalone
    question is the first question and the latest follow-up, however long the conversation.
    """
    follow_up = normalise_question(question)
    previous_question = without_follow_up(previous_question)
    standalone = f"{normalise_question(previous_question)}{_FOLLOW_UP}{follow_up}"
    terms = query_terms(follow_up, max_terms=max_terms)
    for term in query_terms(previous_question, max_terms=max_terms):
        if len(terms) >= max_terms:
            break
        if term not in terms:
            terms.append(term)
    terms = terms or [follow_up]
    return QueryPlan(standalone, suggest_focus(standalone), " AND ".join(terms))
