"""The verdict of a yes/no answer when the model did not write it: one short extra call.

The answer prompt asks for reasoning first and a last ``Verdict: ...`` line; a small model
leaves that line out now and then (7 answers in 20 for a 1.5B model). Defaulting would be a
guess, so the written answer is given back to the model with one narrow question, "which way
does this answer conclude?", whose reply is JSON with a closed set of values (a server with
grammar-constrained JSON cannot even answer anything else).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from medlit.agent.citations import Verdict
from medlit.errors import LLMError
from medlit.log import get_logger

if TYPE_CHECKING:
    from medlit.llm.client import LLMClient

__all__ = ["VerdictChoice", "read_verdict", "verdict_messages"]

log = get_logger("agent.verdict")

# The answer task's route: the verdict is part of writing the answer (and adding a task type
# would change the routing table other work depends on).
_TASK = "answer"


class VerdictChoice(BaseModel):
    """Which way a written answer concludes."""

    verdict: Literal["yes", "no", "uncertain"] = Field(
        description="yes: the answer concludes the evidence supports yes; no: it concludes no "
        "(no effect, no difference, no association); uncertain: it says the evidence is "
        "conflicting or does not address the question."
    )


def verdict_messages(question: str, answer: str) -> list[dict[str, str]]:
    """The prompt of the verdict call: the question and the answer already written."""
    return [
        {
            "role": "system",
            "content": "You read an answer to a yes/no question and report which way the answer "
            "concludes. Judge only what the answer says, not what you believe.",
        },
        {
            "role": "user",
            "content": f"Question: {question}\n\nAnswer:\n{answer.strip()}\n\n"
            'Which way does the answer conclude? Reply as {"verdict": "yes"}, '
            '{"verdict": "no"} or {"verdict": "uncertain"}.',
        },
    ]


async def read_verdict(llm: LLMClient, question: str, answer: str) -> Verdict | None:
    """The verdict of ``answer`` from a short LLM call, or None when that call fails."""
    try:
        choice = await llm.complete_json(
            _TASK, verdict_messages(question, answer), VerdictChoice, max_tokens=40
        )
    except LLMError as exc:
        log.warning("verdict_call_failed", error=str(exc))
        return None
    return choice.verdict
