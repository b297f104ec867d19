"""Wiring: the orchestrator over the real store, evidence cache, sources and LLM client.

The research job shares everything with ``ask``: the same SQLite store (so the evidence cache
an ``ask`` filled is reused here, and the reverse), the same embedder, sources and LLM client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from medlit.config import Settings
from medlit.research.jobs import JobStore
from medlit.research.orchestrator import ResearchOrchestrator
from medlit.sources.base import FreshArticles
from medlit.types import SearchQuery, SearchResults

if TYPE_CHECKING:
    from medlit.storage.sqlite import SqliteStore

__all__ = ["open_job_store", "open_orchestrator"]


@asynccontextmanager
async def open_orchestrator(
    settings: Settings, store: SqliteStore | None = None
) -> AsyncIterator[ResearchOrchestrator]:
    """An orchestrator over the configured components; everything it opened is closed after.

    Args:
        settings: the settings.
        store: an open store to use (default: open ``settings.db_path`` and close it after).
    """
    from medlit.cache.evidence import EvidenceCache
    from medlit.embeddings import load_embedder
    from medlit.llm.client import LLMClient
    from medlit.sources import SourceSet
    from medlit.storage.sqlite import SqliteStore

    own_store = store is None
    db = store if store is not None else SqliteStore.open(settings)
    llm = LLMClient.from_settings(settings)
    # Every provider; those disabled in the settings are skipped by search_all_providers.
    sources = SourceSet(settings, "all")

    async def search(query: SearchQuery, known: FreshArticles | None) -> SearchResults:
        return await sources.search(query, known=known)

    try:
        yield ResearchOrchestrator(
            settings,
            llm=llm,
            search=search,
            jobs=JobStore(db),
            cache=EvidenceCache(db, settings.cache),
            embedder=load_embedder(settings, db),
        )
    finally:
        await sources.aclose()
        await llm.aclose()
        if own_store:
            db.close()


def open_job_store(settings: Settings) -> tuple[JobStore, SqliteStore]:
    """The job store alone (status and list need nothing else); close the store after."""
    from medlit.storage.sqlite import SqliteStore

    db = SqliteStore.open(settings)
    return JobStore(db), db
