"""Call accounting: every outbound call is counted where it is made.

Clients call :func:`record_call` (sources) or :func:`record_llm` (LLM client) once per HTTP
request actually sent. Counts go to every :class:`Usage` opened with :func:`usage_scope` in the
current asyncio context (scopes nest, and tasks started inside a scope inherit it), so one
``ask`` or one research job can report exactly the calls it caused, even when many run at once
in a process.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = [
    "FULL_TEXT_SERVICES",
    "LLMTaskUsage",
    "Usage",
    "record_call",
    "record_llm",
    "usage_scope",
]


#: The services full-text requests are counted under (:mod:`medlit.sources.fulltext`).
FULL_TEXT_SERVICES = ("pmc", "europepmc_fulltext")


@dataclass
class LLMTaskUsage:
    """LLM accounting for one task type.

    ``calls`` counts every request sent (attempts: each may cost time and money, and the
    research budgets count them); ``failed`` those that got no usable reply (timeouts, 429s,
    5xx), so ``calls - failed`` succeeded. Tokens and cost are those the replies reported.
    """

    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0


@dataclass
class Usage:
    """Calls made inside one scope: source requests by service, LLM calls by task."""

    calls: dict[str, int] = field(default_factory=dict)
    llm: dict[str, LLMTaskUsage] = field(default_factory=dict)

    @property
    def llm_calls(self) -> int:
        """LLM requests sent, all tasks."""
        return sum(task.calls for task in self.llm.values())

    @property
    def llm_failed(self) -> int:
        """LLM requests that got no reply (counted in :attr:`llm_calls` too)."""
        return sum(task.failed for task in self.llm.values())

    @property
    def llm_succeeded(self) -> int:
        """LLM requests that got a reply."""
        return self.llm_calls - self.llm_failed

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens, all tasks."""
        return sum(t.prompt_tokens + t.completion_tokens for t in self.llm.values())

    @property
    def cost_usd(self) -> float:
        """Estimated cost from the price table (0 where no price is known)."""
        return sum(task.cost_usd for task in self.llm.values())

    @property
    def full_text_calls(self) -> int:
        """Full-text requests: PMC (efetch db=pmc, elink) and Europe PMC's fullTextXML."""
        return sum(self.calls.get(name, 0) for name in FULL_TEXT_SERVICES)

    def source_calls(self, service: str) -> int:
        """Requests sent to one service (pubmed, europepmc, local)."""
        return self.calls.get(service, 0)

    def merge(self, other: Usage) -> None:
        """Add another usage's counts to this one (e.g. a resumed job's earlier stages)."""
        for name, count in other.calls.items():
            self.calls[name] = self.calls.get(name, 0) + count
        for task, src in other.llm.items():
            dst = self.llm.setdefault(task, LLMTaskUsage())
            dst.calls += src.calls
            dst.failed += src.failed
            dst.prompt_tokens += src.prompt_tokens
            dst.completion_tokens += src.completion_tokens
            dst.latency_s += src.latency_s
            dst.cost_usd += src.cost_usd

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary."""
        return {
            "calls": dict(self.calls),
            "llm_calls": self.llm_calls,
            "llm_failed": self.llm_failed,
            "llm_succeeded": self.llm_succeeded,
            "tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 6),
            "llm": {
                task: {
                    "calls": u.calls,
                    "failed": u.failed,
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                    "latency_s": round(u.latency_s, 3),
                    "cost_usd": round(u.cost_usd, 6),
                }
                for task, u in self.llm.items()
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Usage:
        """Inverse of :meth:`to_dict` (used to persist research jobs)."""
        usage = cls()
        calls = data.get("calls", {})
        if isinstance(calls, dict):
            usage.calls = {str(k): int(v) for k, v in calls.items()}
        llm = data.get("llm", {})
        if isinstance(llm, dict):
            for task, raw in llm.items():
                if isinstance(raw, dict):
                    usage.llm[str(task)] = LLMTaskUsage(**raw)
        return usage


_scopes: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar(
    "medlit_usage_scopes", default=()
)


@contextmanager
def usage_scope(usage: Usage | None = None) -> Iterator[Usage]:
    """Count every call made inside the ``with`` block (including tasks it starts), in
    ``usage`` (a new one when None)."""
    usage = Usage() if usage is None else usage
    token = _scopes.set((*_scopes.get(), usage))
    try:
        yield usage
    finally:
        _scopes.reset(token)


def record_call(service: str, n: int = 1) -> None:
    """Count ``n`` requests sent to a source service in every open scope."""
    for usage in _scopes.get():
        usage.calls[service] = usage.calls.get(service, 0) + n


def record_llm(
    task: str,
    *,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    latency_s: float = 0.0,
    cost_usd: float = 0.0,
    failed: bool = False,
) -> None:
    """Count one LLM request for ``task`` in every open scope (``failed``: it got no reply)."""
    for usage in _scopes.get():
        task_usage = usage.llm.setdefault(task, LLMTaskUsage())
        task_usage.calls += 1
        task_usage.failed += int(failed)
        task_usage.prompt_tokens += prompt_tokens
        task_usage.completion_tokens += completion_tokens
        task_usage.latency_s += latency_s
        task_usage.cost_usd += cost_usd
