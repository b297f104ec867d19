"""An in-process LLM for unit tests of the research stages (the integration tests use the real
LLMClient against the fake OpenAI-compatible server instead)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from medlit.config import ResearchSettings
from medlit.errors import LLMOutputError
from medlit.research.researcher import DeepResearcher
from medlit.words.frame import QuestionFrame

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[str, list[dict[str, str]]], Any]


@dataclass
class ScriptedLLM:
    """Answers ``complete_json`` with ``handler(task, messages)`` (a dict, or an exception to
    raise), validated against the schema like the real client; records every call."""

    handler: Handler
    configured: set[str] | None = None
    calls: list[tuple[str, list[dict[str, str]]]] = field(default_factory=list)

    def is_configured(self, task: str) -> bool:
        return self.configured is None or task in self.configured

    async def complete_json(self, task: str, messages: list[dict[str, str]], schema: type[M]) -> M:
        self.calls.append((task, messages))
        reply = self.handler(task, messages)
        if isinstance(reply, Exception):
            raise reply
        try:
            return schema.model_validate(reply)
        except ValueError as exc:
            raise LLMOutputError(str(exc), raw=str(reply)) from exc

    def tasks(self) -> list[str]:
        return [task for task, _ in self.calls]


def bare_researcher(
    frame: QuestionFrame | None = None, disabled: frozenset[str] = frozenset()
) -> DeepResearcher:
    """A researcher with no LLM, search, cache or embedder: for its pure steps
    (``_bearing`` without embeddings, which needs the job's ``frame``; ``_finding``, with the
    checks ``disabled``)."""
    return DeepResearcher(
        ResearchSettings(),
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        cache=None,
        embedder=None,
        visited=None,
        budget=None,  # type: ignore[arg-type]
        disabled_checks=disabled,
        frame=frame,
    )
