"""The planner: a research question becomes prioritised sub-questions (seed 002, create_plan)."""

from __future__ import annotations

import re

from medlit.config import ResearchDepth, ResearchSettings
from medlit.errors import LLMConfigError, LLMError, PlanningError, ValidationError
from medlit.log import get_logger
from medlit.research.models import DEPTHS, Depth, ResearchPlan, SubQuestion
from medlit.research.prompts import PLAN_SYSTEM, PlanReply, ResearchLLM, Task, messages
from medlit.text import require_clean_text

__all__ = ["create_plan", "validate_request"]

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
    if len(cleaned) > settings.max_question_chars:
        raise ValidationError(
            f"the research question is {len(cleaned)} characters long; "
            f"the limit is {settings.max_question_chars} (MEDLIT_RESEARCH_MAX_QUESTION_CHARS)"
        )
    if depth not in DEPTHS:
        raise ValidationError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    return cleaned, depth


_Proposed = tuple[int, str, str, str]


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


async def create_plan(
    question: str, depth: str, llm: ResearchLLM, settings: ResearchSettings
) -> ResearchPlan:
    """Break ``question`` into sub-questions with the LLM (task ``plan_research``).

    Args:
        question: the research question.
        depth: ``quick``, ``standard`` or ``deep``: sets how many sub-questions are wanted.
        llm: the LLM client.
        settings: the research settings (limits and depth configs).

    Returns:
        A plan with between ``min_sub_questions`` and ``max_sub_questions`` sub-questions
        (ids ``q1``, ``q2``... in priority order), all PENDING at depth 1.

    Raises:
        ValidationError: the request is invalid.
        LLMConfigError: no model is configured for ``plan_research``.
        PlanningError: the LLM failed or proposed fewer sub-questions than the minimum.
    """
    cleaned, level = validate_request(question, depth, settings)
    config: ResearchDepth = settings.depth_config(level)
    system = PLAN_SYSTEM.format(min_q=config.min_sub_questions, max_q=config.max_sub_questions)
    try:
        reply = await llm.complete_json(
            Task.PLAN, messages(system, f"Research question: {cleaned}"), PlanReply
        )
    except LLMConfigError:
        raise
    except LLMError as exc:
        raise PlanningError(f"the planner's LLM call failed: {exc}") from exc

    proposed = _dedupe(
        [
            (q.priority, q.text.strip(), q.rationale.strip(), (q.search_query or "").strip())
            for q in reply.sub_questions
            if q.text.strip()
        ]
    )
    if len(proposed) < config.min_sub_questions:
        raise PlanningError(
            f"the planner proposed {len(proposed)} usable sub-question(s); "
            f"depth {level} needs at least {config.min_sub_questions}"
        )
    # Stable sort: equal priorities keep the model's order.
    proposed.sort(key=lambda item: item[0])
    proposed = proposed[: config.max_sub_questions]
    sub_questions = [
        SubQuestion(
            id=f"q{i}",
            text=text,
            search_query=query or None,
            priority=max(1, min(priority, 100)),
            rationale=rationale,
            depth=1,
        )
        for i, (priority, text, rationale, query) in enumerate(proposed, start=1)
    ]
    plan = ResearchPlan(question=cleaned, depth=level, sub_questions=sub_questions)
    log.info("plan_created", depth=level, sub_questions=len(sub_questions))
    return plan
