"""A question's type: what kind of answer it asks for.

- ``effect``: the effect of an intervention or exposure ("does X reduce Y?");
- ``risk``: a risk factor or prognosis ("is X associated with Y?", "does X predict Y?");
- ``diagnosis``: a test's accuracy ("how accurate is X for Y?");
- ``frequency``: prevalence or incidence ("how common is X?");
- ``definition``: a definition, mechanism or description ("what is X?", "how does X work?");
- ``list``: a list or a factoid ("which diseases ...?", "what genes ...?").

The cues are ``kind.*`` of ``words/data/cues.toml``, tried in the order of :data:`_ORDER`;
``benchmarks/question_kinds.py`` measures them on hand-labelled questions. Read by
:func:`medlit.words.frame.read_frame` (the question frame); nothing else reads it.
"""

from __future__ import annotations

from typing import Literal

from medlit.words.tables import cue

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

#: (type, cue) in the order they are tried: the first cue found names the type.
_ORDER: tuple[tuple[QuestionKind, str], ...] = (
    ("diagnosis", "kind.diagnosis"),
    ("frequency", "kind.frequency"),
    ("list", "kind.list"),
    ("definition", "kind.definition"),
    ("risk", "kind.risk"),
)


def question_kind(question: str) -> QuestionKind:
    """The type of ``question``; ``effect`` when no other type's cue is read."""
    text = question.lower()
    for kind, name in _ORDER:
        if cue(name).search(text):
            return kind
    if cue("kind.complaint").search(text) and not cue("kind.treatment").search(text):
        return "diagnosis"
    return "effect"
