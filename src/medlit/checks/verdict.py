"""The verdict of a yes/no answer read off its written reasoning: one short extra call.

The answer prompt asks for reasoning first and a last ``Verdict: ...`` line. A small model
often leaves that line out, or opens with "Yes." before it has read the evidence back
(:func:`medlit.checks.citations.reasoned_verdict` does not trust such an opening). Defaulting
would be a guess, so the written reasoning is given back to the model with one narrow question,
"what does this answer conclude?":

* where the provider gives token logprobs, the reply is one word and the verdict is *scored*:
  the probability of "No" at the first token (every spelling of it among the alternatives)
  against "Yes" and "Uncertain". A small model's reading leans to "yes" whatever the text says
  (an answer that concludes "no" gets well under half the mass on "No"; how far it leans is
  measured on the tuning questions of ``python benchmarks/verdicts.py``), so "no" wins from
  :data:`NO_FROM` on; a strong model puts nearly all the mass on one word and the rule changes
  nothing for it;
* without logprobs (or with none of the three words among the likely first tokens), the
  reply is JSON with a closed set of values (a server with
  grammar-constrained JSON cannot even answer anything else).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from medlit.checks.citations import Verdict
from medlit.errors import LLMError
from medlit.log import get_logger

if TYPE_CHECKING:
    from medlit.llm.base import TokenLogprob
    from medlit.llm.client import LLMClient

__all__ = ["NO_FROM", "VerdictChoice", "read_verdict", "verdict_messages", "verdict_scores"]

log = get_logger("agent.verdict")

# The answer task's route: the verdict is part of writing the answer (and adding a task type
# would change the routing table other work depends on).
_TASK = "answer"
#: P(No) from which the verdict is "no" (see the module docstring).
NO_FROM = 0.2
_WORDS: tuple[Verdict, ...] = ("yes", "no", "uncertain")
_SYSTEM = (
    "You read an answer that a colleague wrote to a yes/no question and say what it concludes. "
    "Judge only what the written answer says, not what you believe. If it says there was no "
    "effect, no difference, no association, no increase or no harm, the conclusion is No. If it "
    "says the effect, difference or association exists, the conclusion is Yes. If it says the "
    "evidence conflicts or does not address the question, the conclusion is Uncertain."
)


class VerdictChoice(BaseModel):
    """Which way a written answer concludes."""

    verdict: Literal["yes", "no", "uncertain"] = Field(
        description="yes: the answer concludes the evidence supports yes; no: it concludes no "
        "(no effect, no difference, no association); uncertain: it says the evidence is "
        "conflicting or does not address the question."
    )


def verdict_messages(question: str, answer: str, *, json_reply: bool) -> list[dict[str, str]]:
    """The prompt of the verdict call: the question and the answer already written."""
    if json_reply:
        ask = 'Reply as {"verdict": "yes"}, {"verdict": "no"} or {"verdict": "uncertain"}.'
    else:
        ask = "Reply with one word."
    return [
        {"role": "system", "content": _SYSTEM},
        {
            "role": "user",
            "content": f"Question: {question}\n\nWritten answer:\n{answer.strip()}\n\n"
            f"What does the written answer conclude: Yes, No or Uncertain? {ask}",
        },
    ]


def verdict_scores(logprobs: tuple[TokenLogprob, ...] | None) -> dict[Verdict, float] | None:
    """P(yes), P(no), P(uncertain) at the first generated token, or ``None`` without logprobs."""
    if not logprobs:
        return None
    first = logprobs[0]
    alternatives = dict(first.top) if first.top else {first.token: first.logprob}
    alternatives.setdefault(first.token, first.logprob)
    scores: dict[Verdict, float] = dict.fromkeys(_WORDS, 0.0)
    for token, logprob in alternatives.items():
        word = token.strip().strip("\"'*.:`").lower()
        if word in scores:
            scores[word] += math.exp(logprob)
    return scores


def _decide(scores: dict[Verdict, float]) -> Verdict | None:
    if scores["no"] >= NO_FROM:
        return "no"
    best = max(_WORDS, key=scores.__getitem__)
    return best if scores[best] > 0.0 else None


async def read_verdict(llm: LLMClient, question: str, answer: str) -> Verdict | None:
    """The verdict of ``answer`` from a short LLM call, or None when that call fails."""
    try:
        reply = await llm.complete(
            _TASK,
            verdict_messages(question, answer, json_reply=False),
            temperature=0.0,
            max_tokens=2,
            top_logprobs=10,
        )
        scores = verdict_scores(reply.logprobs)
        verdict = _decide(scores) if scores is not None else None
        if scores is not None and verdict is not None:
            log.info(
                "verdict_scored", verdict=verdict, **{k: round(v, 3) for k, v in scores.items()}
            )
            return verdict
        # No logprobs, or none of the three words among the likely first tokens: ask for JSON.
        choice = await llm.complete_json(
            _TASK,
            verdict_messages(question, answer, json_reply=True),
            VerdictChoice,
            max_tokens=40,
        )
    except LLMError as exc:
        log.warning("verdict_call_failed", error=str(exc))
        return None
    return choice.verdict
