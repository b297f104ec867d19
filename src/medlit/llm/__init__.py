"""Language models: one client for every LLM call.

Public API::

    LLMClient(settings.llm) / LLMClient.from_settings(settings)
        .is_configured(task) -> bool
        await .complete(task, messages, *, temperature=None, max_tokens=None) -> LLMReply
        await .complete_json(task, messages, schema) -> schema instance
        .stream(task, messages) -> LLMStream: ``async for delta in stream``, then ``.reply``
        .usage -> medlit.usage.Usage (cumulative); aclose() / async with
    LLMTask                the task types (plan_query, answer, ..., synthesize)

Importing this package does not import ``openai`` or ``huggingface_hub``: providers import
them when first used, so a cached ``medlit ask`` never pays for them.
"""

from __future__ import annotations

from medlit.llm.client import LLMClient, LLMReply, LLMStream, Messages
from medlit.llm.tasks import LLMTask, Route

__all__ = [
    "LLMClient",
    "LLMReply",
    "LLMStream",
    "LLMTask",
    "Messages",
    "Route",
]
