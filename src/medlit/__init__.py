"""medlit: biomedical literature answers from PubMed, with real citations.

``import medlit`` stays light: the public names load on first use::

    import medlit

    result = await medlit.ask("Does metformin reduce cardiovascular mortality?")
    async with medlit.Assistant(settings) as assistant:
        result = await assistant.ask("...", session_id="s1")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medlit.assistant import AskResult, Assistant, ask
    from medlit.config import Settings

__all__ = ["AskResult", "Assistant", "Settings", "__version__", "ask"]

__version__ = "0.1.0"

_LAZY = {
    "AskResult": "medlit.assistant",
    "Assistant": "medlit.assistant",
    "ask": "medlit.assistant",
    "Settings": "medlit.config",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'medlit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
