"""A question's type: what kind of answer it asks for.

- ``effect``: the effect of an intervention or exposure ("does X reduce Y?");
- ``risk``: a risk factor or prognosis ("is X associated with Y?", "does X predict Y?");
- ``diagnosis``: a test's accuracy ("how accurate is X for Y?");
- ``frequency``: prevalence or incidence ("how common is X?");
- ``definition``: a definition, mechanism or description ("what is X?", "how does X work?");
- ``list``: a list or a factoid ("which diseases ...?", "what genes ...?").

Read by :func:`medlit.words.frame.read_frame` (the question frame); nothing else reads it.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["QUESTION_KINDS", "QuestionKind", "question_kind"]

QuestionKind = Literal["effect", "risk", "diagnosis", "frequency", "definition", "list"]
QUESTION_KINDS: tuple[QuestionKind, ...] = (
    "effect",
    "risk",
    "diagnosis",
    "frequency",
    "definition",
    "list",
)

_RULES: tuple[tuple[QuestionKind, re.Pattern[str]], ...] = (
    (
        "diagnosis",
        re.compile(
            r"\b(?:accura\w*|sensitiv\w*|specificity|diagnostic|diagnos\w+ (?:of|for)"
            r"|predictive value|detect\w*|screening test)\b"
        ),
    ),
    (
        "frequency",
        re.compile(r"\b(?:how (?:common|frequent|often|prevalent)|prevalence|incidence)\b"),
    ),
    (
        "list",
        re.compile(r"^\s*(?:which|what|name|list)\b(?! (?:is|are|was|were|does|do)\b)"),
    ),
    (
        "definition",
        re.compile(r"^\s*(?:what (?:is|are|was|were|does)\b|how does\b|describe\b|explain\b)"),
    ),
    (
        "risk",
        re.compile(
            r"\b(?:risk factors?|associat\w*|predict\w*|prognos\w*|correlat\w*|linked"
            r"|related to|relationship|link with)\b"
        ),
    ),
)


def question_kind(question: str) -> QuestionKind:
    """The type of ``question``; ``effect`` when no other type's cue is read."""
    text = question.lower()
    for kind, rule in _RULES:
        if rule.search(text):
            return kind
    return "effect"
