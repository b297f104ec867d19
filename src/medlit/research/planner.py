"""The planner: a research question becomes prioritised sub-questions (seed 002, create_plan)."""

from __future__ import annotations

import re

from medlit.config import ResearchDepth, ResearchSettings
from medlit.errors import (
    LLMConfigError,
    LLMError,
    LLMOutputError,
    LLMTimeout,
    PlanningError,
    TimeBudgetSpent,
    ValidationError,
)
from medlit.log import get_logger
from medlit.research.models import DEPTHS, Depth, ResearchPlan, SubQuestion
from medlit.research.prompts import (
    PLAN_SYSTEM,
    Message,
    PlanReply,
    ResearchLLM,
    Task,
    messages,
)
from medlit.text import counted, require_clean_text, require_words
from medlit.words.frame import QuestionFrame, frame_of
from medlit.words.search_plan import asked_terms, parts_named
from medlit.words.topics import names_otherwise, normalise_topic, on_topic

__all__ = [
    "QUESTION_ID",
    "create_plan",
    "names_otherwise",
    "on_topic",
    "validate_request",
]

log = get_logger("research.planner")


def validate_request(question: str, depth: str, settings: ResearchSettings) -> tuple[str, Depth]:
    """Check a research request; returns the cleaned question and the depth.

    Raises:
        ValidationError: empty, over-long or invalid (not UTF-8) question, or an unknown depth
            (HTTP 400).
    """
    cleaned = " ".join(require_clean_text(question, "the research question").split())
    if not cleaned:
        raise ValidationError("the research question is empty")
    require_words(cleaned, "the research question")  # what an ask would refuse too
    if len(cleaned) > settings.max_question_chars:
        raise ValidationError(
            f"the research question is {len(cleaned)} characters long; "
            f"the limit is {settings.max_question_chars} (MEDLIT_RESEARCH_MAX_QUESTION_CHARS)"
        )
    if depth not in DEPTHS:
        raise ValidationError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    return cleaned, depth


_Proposed = tuple[int, str, str, str]

QUESTION_ID = "q0"
"""The id of the sub-question that is the research question itself (always researched)."""


def _dedupe(proposed: list[_Proposed]) -> list[_Proposed]:
    # The same sub-question twice (differing in case or punctuation) is one sub-question.
    seen: set[str] = set()
    kept = []
    for item in proposed:
        key = re.sub(r"[^a-z0-9]+", " ", item[1].lower()).strip()
        if key and key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _unplanned_note(error: Exception) -> str:
    """The plan's note when the model wrote none."""
    if isinstance(error, TimeBudgetSpent):  # nothing more is researched either
        return "The model could not write a research plan (the job's time budget ran out)."
    why = "it timed out" if isinstance(error, LLMTimeout) else "no valid reply after a repair"
    return (
        f"The model could not write a research plan ({why}): only the question itself "
        "was researched."
    )


async def create_plan(
    question: str,
    depth: str,
    llm: ResearchLLM,
    settings: ResearchSettings,
    *,
    frame: QuestionFrame | None = None,
) -> ResearchPlan:
    """Break ``question`` into sub-questions with the LLM (task ``plan_research``).

    Args:
        question: the research question.
        depth: ``quick``, ``standard`` or ``deep``: sets how many sub-questions are wanted.
        llm: the LLM client.
        settings: the research settings (limits and depth configs).
        frame: the question's frame, as the job keeps it (None: read by
            :func:`medlit.words.frame.frame_of`). A proposed sub-question is kept when it
            keeps the words the frame asks about (:func:`_anchored`); each keeps its
            subject and outcome and says which of its parts it names (``asks``:
            :func:`medlit.words.search_plan.parts_named`).

    Returns:
        A plan with at most ``max_sub_questions`` sub-questions (ids ``q1``, ``q2``... in
        priority order) that kept the question's subject as its frame reads it (see
        :func:`_anchored`), plus the question itself (``q0``, first in the list, researched
        last) unless one of them is it; all PENDING at depth 1. A plan short of
        ``min_sub_questions`` after one more call (:func:`_ask_again`) goes ahead with a
        ``note`` saying so.

    Raises:
        ValidationError: the request is invalid.
        LLMConfigError: no model is configured for ``plan_research``.
        PlanningError: the LLM failed or its reply was not a plan.
    """
    cleaned, level = validate_request(question, depth, settings)
    config: ResearchDepth = settings.depth_config(level)
    system = PLAN_SYSTEM.format(min_q=config.min_sub_questions, max_q=config.max_sub_questions)
    chat = messages(system, f"Research question: {cleaned}")
    asked = frame_of(cleaned if frame is None else frame)
    unplanned: str | None = None
    try:
        reply = await llm.complete_json(Task.PLAN, chat, PlanReply)
    except LLMConfigError:
        raise
    except (LLMOutputError, LLMTimeout) as exc:
        # A malformed (or late) plan costs the sub-questions, not the job: the question itself
        # is researched, and the report says so.
        log.warning("plan_unwritten", error=str(exc)[:200])
        unplanned = _unplanned_note(exc)
        reply = PlanReply(sub_questions=[])
    except LLMError as exc:
        raise PlanningError(f"the planner's LLM call failed: {exc}") from exc
    proposed = _anchored(asked, _proposals(reply))
    if unplanned is None and len(proposed) < config.min_sub_questions:
        # A small model proposes one sub-question (the question again) or only generic ones
        # ("What is the population?"): asked once more, it usually gives the rest.
        more = await _ask_again(asked, chat, reply, len(proposed), llm, config)
        proposed = _dedupe(proposed + more)
    note = unplanned if unplanned is not None else _short_note(len(proposed), level, config)
    # Stable sort: equal priorities keep the model's order.
    proposed.sort(key=lambda item: item[0])
    proposed = proposed[: config.max_sub_questions]
    kept = {"subject": asked.subject, "outcome": asked.outcome}
    sub_questions = [
        SubQuestion(
            id=f"q{i}",
            text=text,
            search_query=query or None,
            priority=max(1, min(priority, 100)),
            rationale=rationale,
            depth=1,
            asks=list(parts_named(asked, text)),
            **kept,
        )
        for i, (priority, text, rationale, query) in enumerate(proposed, start=1)
    ]
    if normalise_topic(cleaned) not in {normalise_topic(q.text) for q in sub_questions}:
        # The question itself, researched after the sub-questions (it reads only articles they
        # did not): a plan that drifted still researches what was asked.
        sub_questions.insert(
            0,
            SubQuestion(
                id=QUESTION_ID,
                text=cleaned,
                priority=max([q.priority for q in sub_questions] or [1]),
                rationale="the research question itself",
                depth=1,
                asks=list(parts_named(asked, cleaned)),
                **kept,
            ),
        )
    plan = ResearchPlan(question=cleaned, depth=level, sub_questions=sub_questions, note=note)
    log.info("plan_created", depth=level, sub_questions=len(sub_questions))
    return plan


def _short_note(proposed: int, level: str, config: ResearchDepth) -> str | None:
    """What the report says of a plan short of its depth's minimum, or None when it is not."""
    if proposed >= config.min_sub_questions:
        return None
    log.warning("plan_short", depth=level, sub_questions=proposed)
    return (
        f"The planner proposed {counted(proposed, 'usable sub-question')} where depth {level} "
        f"asks for {config.min_sub_questions} to {config.max_sub_questions}: the report "
        "covers fewer aspects of the question than planned."
    )


def _proposals(reply: PlanReply) -> list[_Proposed]:
    return _dedupe(
        [
            (q.priority, q.text.strip(), q.rationale.strip(), (q.search_query or "").strip())
            for q in reply.sub_questions
            if q.text.strip()
        ]
    )


async def _ask_again(
    frame: QuestionFrame,
    chat: list[Message],
    reply: PlanReply,
    usable: int,
    llm: ResearchLLM,
    config: ResearchDepth,
) -> list[_Proposed]:
    """One more planner call for a plan short of the minimum: its usable sub-questions.

    The model sees its reply and is told how many of them could be used and what each needs.
    A failed or unusable second reply leaves the plan as it was (never an error: the question
    itself is still researched).
    """
    again = (
        f"Only {usable} of those sub-questions can be used. Reply with between "
        f"{config.min_sub_questions} and {config.max_sub_questions} different sub-questions, "
        "each about another aspect of the research question and each naming its subject, "
        f"in the same JSON format. Research question: {frame.question}"
    )
    chat = [*chat, {"role": "assistant", "content": reply.model_dump_json()}]
    chat.append({"role": "user", "content": again})
    try:
        second = await llm.complete_json(Task.PLAN, chat, PlanReply)
    except LLMConfigError:
        raise
    except LLMError as exc:
        log.warning("plan_retry_failed", error=type(exc).__name__, message=str(exc)[:200])
        return []
    return _anchored(frame, _proposals(second))


def _anchored(frame: QuestionFrame, proposed: list[_Proposed]) -> list[_Proposed]:
    """Sub-questions that kept the question's subject; their queries too (else rebuilt).

    A small model plans badly ("What is the outcome of interest in this research question?"):
    a sub-question that keeps too few of the words the question asks about, as ``frame``
    reads them (:func:`~medlit.words.search_plan.asked_terms`, :func:`on_topic`), or names
    otherwise what it names (:func:`names_otherwise`), is dropped, and a search query that
    lost them is replaced by the sub-question's own words (which kept them).
    """
    anchors = asked_terms(frame)
    kept: list[_Proposed] = []
    for priority, text, rationale, query in proposed:
        if not on_topic(text, anchors) or names_otherwise(text, frame.question):
            log.warning("sub_question_off_topic", text=text[:200], anchors=sorted(anchors))
            continue
        if query and not on_topic(query, anchors):
            log.info("search_query_off_topic", query=query[:200])
            query = ""
        kept.append((priority, text, rationale, query))
    return kept
