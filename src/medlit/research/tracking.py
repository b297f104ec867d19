"""What the researcher keeps track of: visited topics and the job's budget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from pydantic import BaseModel

from medlit.errors import TimeBudgetSpent
from medlit.usage import Usage
from medlit.words import cue_group
from medlit.words.grounding import question_parts
from medlit.words.topics import normalise_topic

if TYPE_CHECKING:
    from medlit.config import ResearchDepth
    from medlit.embeddings import Embedder
    from medlit.research.prompts import Message, ResearchLLM

M = TypeVar("M", bound=BaseModel)

__all__ = [
    "Budget",
    "Spend",
    "TimedLLM",
    "VisitedTopics",
    "normalise_topic",
    "question_aspects",
    "remote_calls",
]


# What a question asks about a subject. Two questions on one subject that ask about different
# aspects ("clinical characteristics of COVID-19 in children vs adults", "prevalence of COVID-19
# in children vs adults") embed close together (0.88) but are different research topics.
_ASPECTS = cue_group("aspect")


def question_aspects(text: str) -> frozenset[str]:
    """The aspects a question asks about (frequency, severity, harms...); may be empty."""
    return frozenset(name for name, pattern in _ASPECTS.items() if pattern.search(text))


class VisitedTopics:
    """Topics already researched in a job: a new one is "visited" if it is equivalent.

    Equivalent means the same normalised key, or an embedding cosine similarity of at least
    ``threshold`` with a visited topic (a reworded question is the same topic) that the answer
    cache's :class:`~medlit.cache.guard.QuestionGuard` does not tell apart, that names no
    population the visited one does not ("aspirin for stroke in children" embeds close to
    "aspirin for stroke", but it is not a visited topic), that asks about the same aspects
    (:func:`question_aspects`: the prevalence of X and the clinical characteristics of X are
    two topics) and that asks no more things than the visited one (a two-part question is not
    visited by its first part).
    """

    def __init__(self, embedder: Embedder | None, threshold: float) -> None:
        from medlit.cache.guard import QuestionGuard

        self._embedder = embedder
        self._threshold = threshold
        self._guard = QuestionGuard(check_intent=False, word_rule=False)
        self._keys: dict[str, str] = {}
        self._texts: list[str] = []
        self._vectors: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._texts)

    def _embed(self, text: str) -> np.ndarray | None:
        if self._embedder is None:
            return None
        return np.asarray(self._embedder.embed([text])[0], dtype=np.float32)

    def match(self, text: str) -> tuple[str, float] | None:
        """The visited topic ``text`` is equivalent to, with the similarity; None if new."""
        key = normalise_topic(text)
        if key and key in self._keys:
            return self._keys[key], 1.0
        vector = self._embed(text)
        if vector is None or not self._vectors:
            return None
        sims = np.stack(self._vectors) @ vector
        for index in np.argsort(-sims):
            similarity = float(sims[index])
            if similarity < self._threshold:
                break
            if self._equivalent(text, self._texts[index]):
                return self._texts[index], similarity
        return None

    def _equivalent(self, new: str, old: str) -> bool:
        from medlit.cache.guard import question_features

        if not self._guard.check(new, old).ok:
            return False
        # A narrower population is a new topic for research (the answer guard lets a
        # paraphrase drop context; a follow-up "... in children?" must still be researched).
        a, b = question_features(new), question_features(old)
        if not (a.age_groups <= b.age_groups and a.sexes <= b.sexes):
            return False
        # Another aspect of the same subject is another topic (a false "different" costs a
        # search; a false "same" loses a part of the question).
        if question_aspects(new) != question_aspects(old):
            return False
        # A question that asks more than the visited one ("..., and does the timing of
        # exposure matter?") is not answered by researching its first ask.
        return len(question_parts(new)) <= len(question_parts(old))

    def add(self, text: str) -> None:
        """Mark ``text`` as visited."""
        key = normalise_topic(text)
        if key:
            self._keys.setdefault(key, text)
        vector = self._embed(text)
        self._texts.append(text)
        if vector is not None:
            self._vectors.append(vector)

    def add_all(self, texts: Sequence[str]) -> None:
        """Mark several topics as visited (e.g. the completed sub-questions of a resumed job)."""
        for text in texts:
            self.add(text)


def remote_calls(usage: Usage) -> int:
    """Requests sent to remote sources (the local corpus costs nothing and is not counted)."""
    return sum(count for service, count in usage.calls.items() if service != "local")


@dataclass
class Spend:
    """What earlier runs of the job spent (kept across resumes): the EXECUTING stage's
    provider and LLM calls, and the seconds the job ran (every stage)."""

    provider_calls: int = 0
    llm_calls: int = 0
    elapsed_s: float = 0.0


@dataclass
class Budget:
    """The research budget of one depth level: provider calls, LLM calls, seconds.

    Counts are what earlier runs spent (``before``) plus what the current run's usage scope
    (the EXECUTING stage's) has seen; seconds are the job's, every stage of every run. The
    counts are checked before every call, so a search or an extraction stops the research
    *cleanly*, between calls, with the reason recorded. The seconds bound the whole job: every
    LLM call of the job is held to what is left of them (:class:`TimedLLM`), so a slow model
    cannot carry a job past its time, whatever stage it is in.
    """

    limits: ResearchDepth
    usage: Usage
    before: Spend = field(default_factory=Spend)
    started: float = field(default_factory=time.monotonic)
    stop_reason: str | None = None

    def spent(self) -> Spend:
        """Total spend so far (earlier runs plus this one)."""
        return Spend(
            provider_calls=self.before.provider_calls + remote_calls(self.usage),
            llm_calls=self.before.llm_calls + self.usage.llm_calls,
            elapsed_s=self.before.elapsed_s + (time.monotonic() - self.started),
        )

    def _check(self, *, provider: bool, llm: bool) -> str | None:
        spent = self.spent()
        if spent.elapsed_s >= self.limits.max_seconds:
            return f"time budget of {self.limits.max_seconds:g} s used"
        if provider and spent.provider_calls >= self.limits.max_provider_calls:
            return f"provider call budget of {self.limits.max_provider_calls} used"
        if llm and spent.llm_calls >= self.limits.max_llm_calls:
            return f"LLM call budget of {self.limits.max_llm_calls} used"
        return None

    def remaining_s(self) -> float:
        """Seconds left of the time budget (0 once spent)."""
        return max(0.0, self.limits.max_seconds - self.spent().elapsed_s)

    def time_spent(self, during: str | None = None) -> TimeBudgetSpent:
        """The error for a call the time budget cut off (or left unsent), ``during`` a stage
        (``None``: while researching); the reason is recorded the first time a limit is met."""
        reason = f"time budget of {self.limits.max_seconds:g} s used"
        if during:
            reason += f" during {during}"
        if self.stop_reason is None:
            self.stop_reason = reason
        return TimeBudgetSpent(reason)

    def spare(self, *, share: float) -> bool:
        """Whether less than ``share`` of the provider-call budget is spent. An optional
        call (a relaxed search) is made only then, so it never spends what reading the
        articles found needs; a refusal records no stop reason (the job goes on)."""
        return self.spent().provider_calls < share * self.limits.max_provider_calls

    def allow(self, *, provider: bool = False, llm: bool = False) -> bool:
        """Whether one more call of that kind fits; records the reason the first time not."""
        if self.stop_reason is not None:
            return False
        reason = self._check(provider=provider, llm=llm)
        if reason is not None:
            self.stop_reason = reason
            return False
        return True


class TimedLLM:
    """The job's LLM, every call held to what is left of its time budget.

    A call made with no time left is not sent; a call still running when the time runs out is
    cut off, its retries with it (the LLM client's own timeouts grow to four times the setting
    on a slow server). Either raises :class:`~medlit.errors.TimeBudgetSpent`, an
    :class:`~medlit.errors.LLMTimeout`: each stage goes on without the model, as it does after
    a timeout, and the budget records why (``during``: the stage, set by the job as it goes).
    """

    def __init__(self, llm: ResearchLLM, budget: Budget) -> None:
        self.llm = llm
        self.budget = budget
        self.during: str | None = None

    def is_configured(self, task: str) -> bool:
        """Whether ``task`` can be sent to a model at all."""
        return self.llm.is_configured(task)

    async def complete_json(self, task: str, messages: list[Message], schema: type[M]) -> M:
        """The wrapped client's reply, within the time left.

        Raises:
            TimeBudgetSpent: no time was left, or none was left before the reply came.
        """
        left = self.budget.remaining_s()
        if left <= 0:
            raise self.budget.time_spent(self.during)
        try:
            async with asyncio.timeout(left) as deadline:
                return await self.llm.complete_json(task, messages, schema)
        except TimeoutError:
            if not deadline.expired():
                raise
            raise self.budget.time_spent(self.during) from None
