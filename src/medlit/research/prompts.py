"""The research stages' LLM seam, reply schemas and prompts.

Each stage talks to the LLM through :class:`ResearchLLM` (what :class:`medlit.llm.LLMClient`
provides), asks for JSON validated against one of the schemas below, and never trusts what
comes back: ids, PMIDs and quotes are checked against what the job actually retrieved.

Every system prompt starts with a fixed first line naming its step (``medlit research:
plan``...), which keeps prompts recognisable in provider logs and lets test fakes answer by step.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from medlit.words.frame import QuestionFrame

__all__ = [
    "CrossReferenceReply",
    "ExtractedClaim",
    "ExtractionReply",
    "Message",
    "PlanReply",
    "PlannedQuestion",
    "ResearchLLM",
    "SectionReply",
    "SummaryReply",
    "Task",
    "asked_lines",
    "require_in_schema",
]

Message = dict[str, str]
M = TypeVar("M", bound=BaseModel)


class Task:
    """Task types of the research stages (routed to models by medlit.llm)."""

    PLAN = "plan_research"
    EXTRACT = "extract_facts"
    CROSS_REFERENCE = "cross_reference"
    SYNTHESIZE = "synthesize"

    ALL: tuple[str, ...] = (PLAN, EXTRACT, CROSS_REFERENCE, SYNTHESIZE)


class ResearchLLM(Protocol):
    """What the research stages need from the LLM client."""

    def is_configured(self, task: str) -> bool:
        """Whether ``task`` can be sent to a model at all."""
        ...

    async def complete_json(self, task: str, messages: list[Message], schema: type[M]) -> M:
        """A reply validated against ``schema`` (raises LLMOutputError when it is not)."""
        ...


# -- reply schemas -----------------------------------------------------------------------------


class PlannedQuestion(BaseModel):
    """One sub-question as the planner proposes it."""

    text: str = Field(description="A focused, searchable research question.")
    search_query: str | None = Field(None, description="PubMed search terms for it.")
    priority: int = Field(1, description="1 = most important.")
    rationale: str = Field("", description="Why this sub-question matters for the question.")


class PlanReply(BaseModel):
    """The planner's reply."""

    sub_questions: list[PlannedQuestion]


def require_in_schema(*names: str) -> ConfigDict:
    """A model config whose JSON schema lists ``names`` as required although they have
    defaults: a model constrained by the schema (``json_schema``) must write them, while a
    reply without them (a model writing quotes instead) still validates."""

    def extra(schema: dict[str, Any]) -> None:
        schema["required"] = [*dict.fromkeys([*names, *schema.get("required", [])])]

    return ConfigDict(json_schema_extra=extra)


class ExtractedClaim(BaseModel):
    """One claim an article supports."""

    model_config = require_in_schema("sentences", "claim", "direction")

    sentences: list[int] = Field(
        default_factory=list,
        description="Numbers of the article's sentences that state it.",
        json_schema_extra={"minItems": 1},
    )
    claim: str = Field(description="The finding, stated plainly, answering the sub-question.")
    direction: Literal["supports", "opposes", "no difference", "unclear"] = Field(
        "unclear", description="Which way the finding points on the sub-question."
    )
    quote: str = Field(
        "", description="A verbatim sentence of the article (when no sentence numbers)."
    )
    pmid: str | None = Field(None, description="The PMID of the article the quote is from.")
    numbers: list[str] = Field(
        default_factory=list, description="Effect sizes, CIs, p-values, sample sizes quoted."
    )
    triggers_recursion: bool = Field(
        False, description="True if the finding raises a question worth researching next."
    )
    follow_up_question: str | None = Field(None, description="That question, if any.")


class ExtractionReply(BaseModel):
    """The fact extractor's reply for one article."""

    claims: list[ExtractedClaim] = Field(default_factory=list)


class CheckedFact(BaseModel):
    """Claims that agree, merged into one statement."""

    statement: str
    claim_ids: list[int] = Field(description="Numbers of the claims supporting the statement.")
    confidence: Literal["high", "medium", "low"] = "medium"


class ConflictSide(BaseModel):
    """One position in a conflict."""

    claim: str
    claim_ids: list[int]


class Conflict(BaseModel):
    """Claims that contradict each other."""

    topic: str
    positions: list[ConflictSide]
    note: str = ""


class CrossReferenceReply(BaseModel):
    """The cross-referencer's reply for one sub-question's claims."""

    facts: list[CheckedFact] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)


class SummaryReply(BaseModel):
    """Title and executive summary of the report."""

    title: str
    executive_summary: str


class SectionReply(BaseModel):
    """One report section."""

    heading: str
    content: str


# -- prompts -----------------------------------------------------------------------------------

PLAN_SYSTEM = """medlit research: plan
You plan biomedical literature research. Split the user's question into between {min_q} and \
{max_q} sub-questions that together cover it, each answerable from PubMed abstracts. Each \
sub-question is a complete, specific question that names the subject of the user's question. \
For "Does exercise improve sleep in older adults?" good sub-questions are "Does aerobic \
exercise shorten sleep onset in older adults?", "Does resistance training improve sleep \
quality in older adults with insomnia?" and "How long must older adults exercise before their \
sleep improves?". Never ask generic questions such as "What is the population?" or "What is \
the outcome of interest?". Give each a priority (1 = most important), a one-sentence rationale \
and a short PubMed search query (key terms only, no boolean operators). Reply with JSON \
only: {{"sub_questions": [{{"text": "...", "search_query": "...", "priority": 1, \
"rationale": "..."}}]}}"""

EXTRACT_SYSTEM = """medlit research: extract
You extract evidence from one article for a sub-question. The article is shown as numbered \
sentences. Report only what those sentences state. For each finding that answers the \
sub-question give: the numbers of the sentences that state it (one or two, next to each \
other); the finding restated in one short plain sentence; its direction on the sub-question \
(supports, opposes, no difference or unclear); the numbers it gives (effect sizes, \
confidence intervals, p-values, sample sizes). If a finding raises an important open question \
the sub-question does not cover, set triggers_recursion true and write it as \
follow_up_question. If no sentence addresses the sub-question, return no claims. Reply with \
JSON only: {"claims": [{"sentences": [4], "claim": "...", "direction": "supports", \
"numbers": ["..."], "triggers_recursion": false, "follow_up_question": null}]}"""

CROSS_REFERENCE_SYSTEM = """medlit research: cross-reference
You check numbered claims from different articles about one sub-question against each other. \
Merge claims that agree into facts (list the claim numbers that support each; confidence high \
when several independent sources agree, medium otherwise). Report claims that contradict each \
other as conflicts, each position with its claim numbers. Use only the claims given. Reply with \
JSON only: {"facts": [{"statement": "...", "claim_ids": [1, 2], "confidence": "high"}], \
"conflicts": [{"topic": "...", "positions": [{"claim": "...", "claim_ids": [3]}], \
"note": "..."}]}"""

SUMMARY_SYSTEM = """medlit research: summary
You write the title and executive summary of a literature research report from verified facts. \
Keep to the question's subject and outcome as given. \
Cite sources only by the reference numbers given, as [n]. Do not add facts or references. \
Say where the evidence is weak or conflicting. Reply with JSON only: \
{"title": "...", "executive_summary": "..."}"""

SECTION_SYSTEM = """medlit research: section
You write one section of a literature research report from the verified facts given. Write \
at least {min_words} words of connected prose: explain the findings, their numbers, the \
strength and limits of the evidence. Cite sources only by the reference numbers given, as [n]. \
Do not add facts or references. Reply with JSON only: {{"heading": "...", "content": "..."}}"""

EXPAND_SYSTEM = """medlit research: expand
The report section below has {words} words; it needs at least {min_words}. Rewrite it longer \
from the same facts: explain methods, populations, effect sizes, consistency and limitations. \
Cite only the reference numbers given, as [n]. Do not add facts or references. \
Reply with JSON only: {{"heading": "...", "content": "..."}}"""


def asked_lines(frame: QuestionFrame) -> str:
    """What ``frame``'s question asks about, for a prompt: its subject, outcome and
    populations, one short line each, only those the frame read ("" when none)."""
    populations = ", ".join(dict.fromkeys(p.words or p.name for p in frame.populations))
    lines = [
        f"{label}: {value}"
        for label, value in (
            ("Subject", frame.subject),
            ("Outcome", frame.outcome),
            ("Populations", populations),
        )
        if value
    ]
    return "\n".join(lines)


def messages(system: str, user: str) -> list[Message]:
    """A system + user chat."""
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
