"""Wiring: the orchestrator over the real store, evidence cache, sources and LLM client.

The research job shares everything with ``ask`` through the same
:class:`~medlit.runtime.Runtime`: the store (so the evidence cache an ``ask`` filled is reused
here, and the reverse), the embedder, the sources and the LLM client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from medlit.config import Settings
from medlit.research.jobs import JobStore
from medlit.research.orchestrator import ResearchOrchestrator

if TYPE_CHECKING:
    from medlit.research.rerun import SourceSearch
    from medlit.runtime import Runtime
    from medlit.storage.base import Store

__all__ = ["open_job_store", "open_orchestrator", "source_search"]

#: The providers a logged search may name (the evidence cache is none).
_PROVIDERS = frozenset({"pubmed", "europepmc", "local"})


@asynccontextmanager
async def open_orchestrator(
    settings: Settings, store: Store | None = None
) -> AsyncIterator[ResearchOrchestrator]:
    """An orchestrator over a :class:`~medlit.runtime.Runtime`; what it opened is closed after.

    Args:
        settings: the settings.
        store: an open store to use (default: open the configured one and close it after).
    """
    from medlit.runtime import Runtime

    async with Runtime(settings, store=store) as runtime, runtime.orchestrator() as orchestrator:
        yield orchestrator


def open_job_store(settings: Settings) -> tuple[JobStore, Store]:
    """The job store alone (status and list need nothing else); close the store after."""
    from medlit.storage import open_store

    db = open_store(settings)
    return JobStore(db), db


def source_search(runtime: Runtime) -> SourceSearch:
    """A :data:`~medlit.research.rerun.SourceSearch` over the runtime's sources: a logged
    query goes to the source that logged it, and to no other."""
    from medlit.sources.base import FreshArticles
    from medlit.types import SearchQuery, SearchResults

    async def search(
        names: Sequence[str], query: SearchQuery, known: FreshArticles | None
    ) -> SearchResults:
        asked = [n for n in names if n in _PROVIDERS]
        if not asked:
            return SearchResults(query=query)
        return await runtime.source_set(asked).search(query, known=known)

    return search
