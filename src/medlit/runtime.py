"""The one composition root: settings in, every shared part of medlit out.

Every front end (the CLI, the Python API, the HTTP service, the MCP server) builds its parts
here and nowhere else::

    runtime = Runtime.open(settings)        # opens the store; everything else on first use
    assistant = Assistant(settings, runtime=runtime)
    async with runtime.orchestrator() as orchestrator: ...
    await runtime.aclose()

A :class:`Runtime` holds the store, the embedder, both caches, chat memory, the job store, the
source clients and the LLM client. Each part opens when first asked for, so a tier-1 hit opens
only the store and the embedder (no httpx, no openai import). One runtime may serve many
questions and jobs at once: it keeps no per-question state.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from medlit.config import Settings
from medlit.storage import open_store

if TYPE_CHECKING:
    from medlit.agent.memory import ChatMemory
    from medlit.cache.answers import AnswerCache
    from medlit.cache.evidence import EvidenceCache
    from medlit.embeddings import Embedder
    from medlit.llm.client import LLMClient
    from medlit.research.jobs import JobStore
    from medlit.research.orchestrator import ResearchOrchestrator
    from medlit.sources import SourceSet
    from medlit.sources.fulltext import FullTextReader
    from medlit.storage.base import Store

__all__ = ["Runtime"]


class Runtime:
    """The shared parts of one medlit deployment, opened lazily.

    Args:
        settings: the settings.
        store: an open store (default: ``open_store(settings)``, closed by :meth:`aclose`).
        embedder: an embedder (default: ``load_embedder(settings, store)`` on first use).
        llm: an LLM client (default: built from the settings on first use).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        self.settings = settings
        self._owns_store = store is None
        self.store: Store = store if store is not None else open_store(settings)
        self._embedder = embedder
        self._llm = llm
        self._source_sets: dict[tuple[str, ...], SourceSet] = {}
        self._full_text: FullTextReader | None = None
        self._answers: AnswerCache | None = None
        self._evidence: EvidenceCache | None = None
        self._memory: ChatMemory | None = None
        self._jobs: JobStore | None = None
        self._closed = False
        self._warm_lock = threading.Lock()
        self._warmed = False

    @classmethod
    def open(cls, settings: Settings | None = None) -> Runtime:
        """A runtime over the store the settings name (default settings: the environment)."""
        return cls(settings or Settings())

    async def aclose(self) -> None:
        """Close the source clients, the LLM client and (if opened here) the store."""
        if self._closed:
            return
        self._closed = True
        for source_set in self._source_sets.values():
            await source_set.aclose()
        self._source_sets.clear()
        if self._full_text is not None:
            await self._full_text.aclose()
            self._full_text = None
        if self._llm is not None:
            await self._llm.aclose()
            self._llm = None
        if self._owns_store:
            self.store.close()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def warm_up(self) -> None:
        """Load now, in the calling thread, what first use would load on an event loop: the
        embedding model, the ask and research code (and its hash, for the answer fingerprint),
        the cache guard's vocabularies, and the LLM SDK when a model is configured (importing
        openai takes seconds). Once per runtime; a second caller waits for the first.

        A server calls this from a thread at start, so that no request waits seconds for it.
        """
        from medlit.code_version import answering_code
        from medlit.embeddings.base import load_model
        from medlit.llm.tasks import LLMTask

        with self._warm_lock:
            if self._warmed:
                return
            for module in ("medlit.agent.graph", "medlit.research.orchestrator", "httpx"):
                importlib.import_module(module)
            answering_code()  # the answer fingerprint's: reads the package's sources once
            guard = self.answers.guard
            if guard is not None and hasattr(guard, "load"):
                guard.load()  # the vocabularies and lemmatiser a reworded hit compares by
            if any(self.llm_configured(task) for task in LLMTask):
                importlib.import_module("openai")
                from medlit.words.word_rarity import is_technical

                # loads the word frequencies answers and research claims are checked by
                is_technical("warm-up")
            load_model(self.embedder)  # in the heavy lane: its threads get the lane's priority
            self.embedder.embed(["medlit warm-up"])
            self._warmed = True

    # -- parts ---------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedder (memoised in the store; the model loads on the first new text)."""
        if self._embedder is None:
            from medlit.embeddings import load_embedder

            self._embedder = load_embedder(self.settings, self.store)
        return self._embedder

    @property
    def loaded_embedder(self) -> Embedder | None:
        """The embedder if it has been built already, else None (building it imports the
        backend: not for an event loop)."""
        return self._embedder

    @property
    def answers(self) -> AnswerCache:
        """Tier 1: the answer cache."""
        if self._answers is None:
            from medlit.cache.answers import AnswerCache

            self._answers = AnswerCache(self.store, self.settings.cache)
        return self._answers

    @property
    def evidence(self) -> EvidenceCache:
        """Tier 2: the evidence cache (articles and their embedded chunks)."""
        if self._evidence is None:
            from medlit.cache.evidence import EvidenceCache
            from medlit.provenance import source_addresses

            self._evidence = EvidenceCache(
                self.store, self.settings.cache, addresses=source_addresses(self.settings)
            )
        return self._evidence

    def memory(self) -> ChatMemory:
        """Chat-session memories (the table is created on first use)."""
        if self._memory is None:
            from medlit.agent.memory import ChatMemory

            agent = self.settings.agent
            self._memory = ChatMemory(
                self.store,
                summarize_every=agent.memory_summarize_every,
                recent_turns=agent.memory_recent_turns,
            )
        return self._memory

    @property
    def jobs(self) -> JobStore:
        """Research jobs (the table is created on first use)."""
        if self._jobs is None:
            from medlit.research.jobs import JobStore

            self._jobs = JobStore(self.store)
        return self._jobs

    def llm(self) -> LLMClient:
        """The LLM client (imports openai on first call)."""
        if self._llm is None:
            from medlit.llm.client import LLMClient

            self._llm = LLMClient.from_settings(self.settings)
        return self._llm

    def llm_configured(self, task: str) -> bool:
        """Whether ``task`` can call a model (decided from the settings, without importing
        the client when it is not open yet)."""
        if self._llm is not None:
            return self._llm.is_configured(task)
        from medlit.llm.tasks import resolve_route

        return resolve_route(self.settings.llm, task).configured

    def source_set(self, names: Sequence[str]) -> SourceSet:
        """The providers ``names`` with their shared HTTP client (opened once per set)."""
        key = tuple(names)
        if key not in self._source_sets:
            from medlit.sources import SourceSet

            self._source_sets[key] = SourceSet(self.settings, list(names))
        return self._source_sets[key]

    def full_text_reader(self) -> FullTextReader:
        """The open-access full-text reader (PMC, Europe PMC), opened on first use."""
        if self._full_text is None:
            from medlit.sources.fulltext import FullTextReader

            self._full_text = FullTextReader(self.settings)
        return self._full_text

    @asynccontextmanager
    async def orchestrator(self) -> AsyncIterator[ResearchOrchestrator]:
        """A research orchestrator over this runtime's parts (nothing to close after)."""
        from medlit.research.orchestrator import ResearchOrchestrator
        from medlit.sources.base import FreshArticles

        # The sources the settings name, as ``ask`` asks them by default: not every provider
        # (a job asked Europe PMC and an empty local corpus nobody had configured).
        from medlit.sources.search import resolve_source_names
        from medlit.types import Article, FullText, SearchQuery, SearchResults

        names = resolve_source_names(None, self.settings, all_means_enabled=True)
        sources = self.source_set(names)

        async def search(query: SearchQuery, known: FreshArticles | None) -> SearchResults:
            return await sources.search(query, known=known)

        full_text = None
        if self.settings.fulltext.mode != "off":
            reader = self.full_text_reader()

            async def full_text(articles: Sequence[Article], budget: int) -> dict[str, FullText]:
                return (await reader.read(articles, budget)).texts

        yield ResearchOrchestrator(
            self.settings,
            llm=self.llm(),
            search=search,
            jobs=self.jobs,
            cache=self.evidence.kept_to(names),  # evidence reused: only the sources asked
            embedder=self.embedder,
            full_text=full_text,
        )
