"""Language models: one client for every LLM call.

Public API::

    LLMClient(settings.llm) / LLMClient.from_settings(settings)
        .is_configured(task) -> bool
        await .complete(task, messages, *, temperature=None, max_tokens=None) -> LLMReply
        await .complete_json(task, messages, schema) -> schema instance
        .stream(task, messages) -> LLMStream: ``async for delta in stream``, then ``.reply``
        .usage -> medlit.usage.Usage (cumulative); aclose() / async with
    LLMTask                the task types (plan_query, answer, ..., synthesize)

Importing this package imports none of its modules: each name loads its module on first use
(``from medlit.llm import LLMClient`` loads the client), so a module that needs only the task
routing (``medlit.llm.tasks``) never pays for the client or its imports, and
providers import ``openai`` or ``huggingface_hub`` only when first used: a cached
``medlit ask`` pays for none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medlit.llm.client import LLMClient, LLMReply, LLMStream, Messages
    from medlit.llm.tasks import LLMTask, Route

_HOMES = {
    "LLMClient": "client",
    "LLMReply": "client",
    "LLMStream": "client",
    "Messages": "client",
    "LLMTask": "tasks",
    "Route": "tasks",
}

__all__ = [
    "LLMClient",
    "LLMReply",
    "LLMStream",
    "LLMTask",
    "Messages",
    "Route",
]


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use (see the module docstring)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'medlit.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"medlit.llm.{home}"), name)
    globals()[name] = value
    return value
