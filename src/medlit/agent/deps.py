"""What the ask nodes use from the rest of medlit, in one place.

:class:`AgentDeps` holds the settings, the store, the embedder, the two caches, the chat
memory, the sources and the LLM client, and gives the nodes the few operations they need. Each
dependency opens on first use: a tier-1 hit touches only the store and the embedder, never the
source clients (httpx) or the LLM client (openai).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from medlit.config import Settings
from medlit.llm.tasks import resolve_route
from medlit.types import Article, Chunk, Evidence, SearchQuery

if TYPE_CHECKING:
    from medlit.agent.memory import ChatMemory
    from medlit.cache.answers import AnswerCache, AnswerLookup
    from medlit.cache.evidence import EvidenceCache
    from medlit.embeddings import Embedder
    from medlit.llm.client import LLMClient
    from medlit.sources import SourceSet
    from medlit.storage.sqlite import SqliteStore

__all__ = ["AgentDeps"]


class AgentDeps:
    """The dependencies of one assistant (shared by all its questions).

    Args:
        settings: the settings.
        store: the open store (closed by :meth:`aclose` when ``owns_store``).
        embedder: the embedder (default: ``load_embedder(settings, store)``).
        llm: an LLM client (default: built from settings on first need).
        owns_store: whether :meth:`aclose` closes the store.
    """

    def __init__(
        self,
        settings: Settings,
        store: SqliteStore,
        *,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
        owns_store: bool = False,
    ) -> None:
        self.settings = settings
        self.store = store
        self._embedder = embedder
        self._llm = llm
        self._source_sets: dict[tuple[str, ...], SourceSet] = {}
        self._owns_store = owns_store
        self._answers: AnswerCache | None = None
        self._evidence: EvidenceCache | None = None
        self._memory: ChatMemory | None = None
        self._sources: list[str] = [settings.search.default_source]

    @classmethod
    def open(cls, settings: Settings) -> AgentDeps:
        """Open the store at ``settings.db_path``; everything else opens on first use."""
        from medlit.storage.sqlite import SqliteStore

        return cls(settings, SqliteStore.open(settings), owns_store=True)

    async def aclose(self) -> None:
        """Close what this object opened."""
        for source_set in self._source_sets.values():
            await source_set.aclose()
        self._source_sets.clear()
        if self._llm is not None:
            await self._llm.aclose()
            self._llm = None
        if self._owns_store:
            self.store.close()

    # -- components, opened lazily -----------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedder (memoised; the model loads on the first text not memoised)."""
        if self._embedder is None:
            from medlit.embeddings import load_embedder

            self._embedder = load_embedder(self.settings, self.store)
        return self._embedder

    @property
    def answers(self) -> AnswerCache:
        """Tier 1."""
        if self._answers is None:
            from medlit.cache.answers import AnswerCache

            self._answers = AnswerCache(self.store, self.settings.cache)
        return self._answers

    @property
    def evidence(self) -> EvidenceCache:
        """Tier 2."""
        if self._evidence is None:
            from medlit.cache.evidence import EvidenceCache

            self._evidence = EvidenceCache(self.store, self.settings.cache)
        return self._evidence

    def memory(self) -> ChatMemory:
        """Chat memories (the table is created on first use)."""
        if self._memory is None:
            from medlit.agent.memory import ChatMemory

            agent = self.settings.agent
            self._memory = ChatMemory(
                self.store,
                summarize_every=agent.memory_summarize_every,
                recent_turns=agent.memory_recent_turns,
            )
        return self._memory

    def llm(self) -> LLMClient:
        """The LLM client (imports the client on first call)."""
        if self._llm is None:
            from medlit.llm.client import LLMClient

            self._llm = LLMClient.from_settings(self.settings)
        return self._llm

    def llm_configured(self, task: str) -> bool:
        """Whether ``task`` can call a model (decided from the settings, no import)."""
        if self._llm is not None:
            return self._llm.is_configured(task)
        return resolve_route(self.settings.llm, task).configured

    def use_sources(self, names: Sequence[str]) -> None:
        """The sources of the current question (they are part of the cache fingerprint)."""
        self._sources = list(names)

    @property
    def fingerprint(self) -> str:
        """The answer-shaping fingerprint of the current settings and sources."""
        route = resolve_route(self.settings.llm, "answer")
        model = route.model if route.configured else None
        return self.settings.answer_fingerprint(self._sources, model)

    # -- operations the nodes use ------------------------------------------------------
    def embed_one(self, text: str) -> Any:
        """The unit-norm embedding of ``text`` (float32 vector)."""
        return self.embedder.embed([text])[0]

    def lookup_answer(self, question: str, vector: Any) -> AnswerLookup:
        """Tier-1 lookup in this namespace and fingerprint."""
        return self.answers.search_query(
            question, vector, namespace=self.settings.namespace, fingerprint=self.fingerprint
        )

    def add_answer(self, question: str, vector: Any, payload: dict[str, Any]) -> int:
        """Store an admitted answer in tier 1."""
        return self.answers.add_query(
            question,
            vector,
            payload,
            namespace=self.settings.namespace,
            fingerprint=self.fingerprint,
        )

    def search_chunks(self, vector: Any, k: int, only_keys: list[str] | None) -> list[Evidence]:
        """The ``k`` fresh tier-2 chunks nearest ``vector`` (only of ``only_keys`` if given)."""
        from medlit.storage.base import ChunkFilters

        filters = ChunkFilters(article_keys=only_keys) if only_keys is not None else None
        return self.evidence.search_chunks(np.asarray(vector, dtype=np.float32), k, filters)

    def neighbours(self, chunk: Chunk, window: int) -> list[Chunk]:
        """Chunks within ``window`` positions of ``chunk`` in its article."""
        return self.evidence.neighbours(chunk.id, window)

    async def search(
        self, query: SearchQuery, sources: list[str], use_cache: bool
    ) -> tuple[list[Article], list[str]]:
        """Search the sources; returns the articles and one line per provider that failed.

        With the cache on, articles still fresh in tier 2 are not fetched again.
        """
        source_set = self.source_set(sources)
        results = await source_set.search(query, known=self.evidence if use_cache else None)
        failed = [results.providers[name].error or f"{name} failed" for name in results.failed]
        return list(results.articles), failed

    def source_set(self, names: Sequence[str]) -> SourceSet:
        """The providers ``names`` with their shared HTTP client (opened once per set)."""
        key = tuple(names)
        if key not in self._source_sets:
            from medlit.sources import SourceSet

            self._source_sets[key] = SourceSet(self.settings, list(names))
        return self._source_sets[key]

    def store_articles(self, articles: list[Article], use_cache: bool) -> list[str]:
        """Add articles to tier 2 (chunked and embedded); returns the keys actually new.

        An article already fresh in tier 2 is reused, not re-embedded; without the cache every
        article counts as downloaded, as it would be with no cache at all.
        """
        fresh = self.evidence.fresh_by_key([a.key for a in articles]) if use_cache else {}
        self.evidence.add_articles(articles, self.embedder)
        return [a.key for a in articles if a.key not in fresh]

    def digest(self, question: str, evidence: list[Evidence]) -> tuple[str, str | None]:
        """The no-LLM answer: the extractive evidence digest, and its verdict if justified."""
        from medlit.llm.extractive import build_evidence_digest

        digest = build_evidence_digest(question, evidence, embedder=self.embedder)
        return digest.text, digest.verdict
