"""Task types and routing: which provider, server and model answers each kind of LLM call.

Every LLM call names a task. The task resolves to a :class:`Route` from the LLM section's
defaults (``MEDLIT_LLM_PROVIDER``, ``MEDLIT_LLM_BASE_URL``, ``MEDLIT_LLM_API_KEY``,
``MEDLIT_LLM_MODEL``...) overlaid with that task's entry in ``MEDLIT_LLM_TASKS``, e.g.::

    MEDLIT_LLM_TASKS='{"synthesize": {"model": "gpt-4o"}, "plan_query": {"temperature": 0}}'

A task that points at a *different endpoint* (its own ``base_url``, or another ``provider``)
does not inherit the default API key: the key meant for one server is never sent to another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from medlit.config import LLMSettings

__all__ = ["LLMTask", "Route", "how_to_configure", "how_to_point", "resolve_route"]

ProviderKind = Literal["openai", "hf"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class LLMTask(StrEnum):
    """The kinds of LLM call medlit makes; each can be routed to its own model."""

    PLAN_QUERY = "plan_query"
    """ask: turn a question (and the chat memory) into standalone search queries."""
    ANSWER = "answer"
    """ask: write the cited answer from the evidence."""
    TRANSLATE_QUESTION = "translate_question"
    """ask: put a question not in English into English, to search English abstracts with."""
    SUMMARIZE_MEMORY = "summarize_memory"
    """ask: fold the conversation into a short summary."""
    VERIFY_CACHE_HIT = "verify_cache_hit"
    """ask: one word, does a cached answer fully answer a new, similar question?"""
    PLAN_RESEARCH = "plan_research"
    """research: split a question into sub-questions."""
    EXTRACT_FACTS = "extract_facts"
    """research: pull claims with their PMIDs out of evidence."""
    CROSS_REFERENCE = "cross_reference"
    """research: check claims against each other across sources."""
    SYNTHESIZE = "synthesize"
    """research: write the report sections."""


@dataclass(frozen=True)
class Route:
    """Where one task's calls go, with every default filled in.

    Attributes:
        task: the task type.
        provider: ``openai`` (any OpenAI-compatible server) or ``hf`` (HF Inference API).
        base_url: the server's base URL (``None``: the provider's public default).
        api_key: the key or token (``None``: none is sent / the provider's own lookup).
        model: the model name (``None``: not configured).
        temperature: sampling temperature.
        max_tokens: completion token limit.
        seed: the sampling seed sent with each call (``None``: none).
    """

    task: str
    provider: ProviderKind
    base_url: str | None
    api_key: str | None = field(repr=False)
    model: str | None
    temperature: float
    max_tokens: int
    seed: int | None = None

    @property
    def configured(self) -> bool:
        """Whether calls for this task can be sent at all."""
        if not self.model:
            return False
        if self.provider == "openai":
            # Without a base URL the only sensible server is OpenAI's, which needs a key.
            return bool(self.base_url or self.api_key)
        return True

    @property
    def endpoint(self) -> tuple[str, str | None, str | None]:
        """The identity of the connection: calls with equal endpoints share one client."""
        return (self.provider, self.base_url, self.api_key)

    @property
    def label(self) -> str:
        """``provider:model@base_url`` for logs and messages (never the key)."""
        where = self.base_url or ("api.openai.com" if self.provider == "openai" else "hf")
        return f"{self.provider}:{self.model}@{where}"


def resolve_route(settings: LLMSettings, task: str) -> Route:
    """The route of ``task``: the defaults overlaid with the task's override, if any."""
    override = settings.tasks.get(str(task))
    provider: ProviderKind = settings.provider
    base_url = settings.base_url
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    model = settings.model
    temperature = settings.temperature
    max_tokens = settings.max_tokens
    seed = settings.seed
    if override is not None:
        new_endpoint = (override.provider is not None and override.provider != provider) or (
            override.base_url is not None and override.base_url != base_url
        )
        if new_endpoint:
            provider = override.provider or provider
            base_url = override.base_url
            api_key = None
        if override.api_key is not None:
            api_key = override.api_key.get_secret_value()
        model = override.model or model
        if override.temperature is not None:
            temperature = override.temperature
        if override.max_tokens is not None:
            max_tokens = override.max_tokens
        if override.seed is not None:
            seed = override.seed
    return Route(
        task=str(task),
        provider=provider,
        base_url=base_url.rstrip("/") if base_url else None,
        api_key=api_key or None,
        model=model or None,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
    )


def how_to_point() -> str:
    """The variables that point medlit at a model, with an example for each kind of server
    (several lines; ``medlit doctor`` prints it under a missing model)."""
    return (
        "Point medlit at any OpenAI-compatible server with environment variables:\n"
        "  Ollama:  MEDLIT_LLM_BASE_URL=http://localhost:11434/v1  MEDLIT_LLM_MODEL=llama3.1\n"
        "  vLLM:    MEDLIT_LLM_BASE_URL=http://localhost:8000/v1   MEDLIT_LLM_MODEL=<model name>\n"
        "  OpenAI:  MEDLIT_LLM_BASE_URL=https://api.openai.com/v1  MEDLIT_LLM_API_KEY=sk-...  "
        "MEDLIT_LLM_MODEL=gpt-4o-mini\n"
        "or the Hugging Face Inference API:\n"
        "  MEDLIT_LLM_PROVIDER=hf  MEDLIT_LLM_API_KEY=hf_...  "
        "MEDLIT_LLM_MODEL=meta-llama/Llama-3.1-8B-Instruct"
    )


def how_to_configure(route: Route) -> str:
    """The ``LLMConfigError`` message for an unconfigured route: what to set, with examples."""
    missing = []
    if not route.model:
        missing.append("a model")
    if route.provider == "openai" and not (route.base_url or route.api_key):
        missing.append("a server (base URL)")
    what = " and ".join(missing) or "a provider"
    return (
        f"No language model is configured for task '{route.task}' ({what} missing).\n"
        + how_to_point()
        + "\nOne task on another model: "
        f'MEDLIT_LLM_TASKS=\'{{"{route.task}": {{"model": "..."}}}}\'.\n'
        "Without a model, `medlit ask` still answers with an evidence digest (cited sentences)."
    )
