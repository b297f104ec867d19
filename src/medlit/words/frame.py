"""The question frame: what a question asks, read once.

Every path that decides anything about a question (the digest's leaning, the answer checks,
the research verdict and table, the population caveats, the answer cache) reads it from one
:class:`QuestionFrame`, made by :func:`read_frame` once per (standalone) question and carried
in the state. A second reading of the question elsewhere is a reading that can disagree.

The reader is the cue tables of :mod:`medlit.words` (``words/data/cues.toml``); the question's
type is :mod:`medlit.words.question_kind`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from medlit.words.cues import age_groups
from medlit.words.question_kind import QuestionKind, question_kind
from medlit.words.tables import cue

__all__ = [
    "Direction",
    "Population",
    "QuestionFrame",
    "QuestionKind",
    "read_frame",
]

#: The direction of change a question asks about: ``"down"`` (prevent, reduce, lower, protect
#: against), ``"up"`` (cause, increase, raise, harm), or ``None`` (no direction asked).
Direction = Literal["up", "down"]

PopulationKind = Literal["age", "sex", "pregnancy", "condition", "setting"]

_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may|might"
    r"|must)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Population:
    """One population a question names: its kind, a normalised name and the words as written."""

    kind: PopulationKind
    name: str
    words: str = ""


@dataclass(frozen=True, slots=True)
class QuestionFrame:
    """What one question asks. Immutable and hashable; :meth:`to_json` for ``--json``."""

    question: str
    kind: QuestionKind
    yes_no: bool
    direction: Direction | None = None
    direction_words: str = ""
    populations: tuple[Population, ...] = ()
    subject: str = ""
    comparison: str = ""
    outcome: str = ""
    sources: tuple[str, ...] = ()

    def population_names(self, kind: PopulationKind | None = None) -> frozenset[str]:
        """The names of the populations of ``kind`` (all kinds when ``None``)."""
        return frozenset(p.name for p in self.populations if kind is None or p.kind == kind)

    def with_sources(self, sources: Iterable[str]) -> QuestionFrame:
        """The same frame, asked of ``sources``."""
        return replace(self, sources=tuple(sorted(set(sources))))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _direction(text: str) -> tuple[Direction | None, str]:
    ups = cue("direction.up").search(text)
    downs = cue("direction.down").search(text)
    if ups and downs:  # "does X increase or decrease Y": no one direction asked
        return None, ""
    if ups:
        return "up", ups.group(0)
    if downs:
        return "down", downs.group(0)
    return None, ""


def _populations(text: str) -> tuple[Population, ...]:
    found = [Population("age", group) for group in sorted(age_groups(text))]
    for sex in ("male", "female"):
        match = cue(f"sex.{sex}").search(text)
        if match:
            found.append(Population("sex", sex, match.group(0)))
    pregnancy = cue("pregnancy.named").search(text)
    if pregnancy:
        found.append(Population("pregnancy", "pregnancy", pregnancy.group(0)))
    return tuple(found)


@lru_cache(maxsize=4096)
def _read(question: str) -> QuestionFrame:
    text = question.lower()
    direction, words = _direction(text)
    return QuestionFrame(
        question=question,
        kind=question_kind(question),
        yes_no=_YES_NO.match(question) is not None,
        direction=direction,
        direction_words=words,
        populations=_populations(text),
    )


def read_frame(question: str, sources: Iterable[str] = ()) -> QuestionFrame:
    """The frame of ``question`` (its standalone form), asked of ``sources``."""
    frame = _read(question.strip())
    sources = tuple(sorted(set(sources)))
    return frame.with_sources(sources) if sources else frame
