"""What the ask nodes use from the rest of medlit, in one place.

:class:`AgentDeps` holds the settings, the store, the embedder, the two caches, the chat
memory, the sources and the LLM client, and gives the nodes the few operations they need. Each
dependency opens on first use: a tier-1 hit touches only the store and the embedder, never the
source clients (httpx) or the LLM client (openai).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from medlit.config import Settings
from medlit.llm.tasks import resolve_route
from medlit.sources.base import HeldArticles
from medlit.types import Article, Chunk, Evidence, SearchQuery, VerdictCause

if TYPE_CHECKING:
    from medlit.agent.memory import ChatMemory
    from medlit.cache.answers import AnswerCache, AnswerLookup
    from medlit.cache.evidence import EvidenceCache
    from medlit.cache.word_pairs import WordJudge
    from medlit.embeddings import Embedder
    from medlit.llm.client import LLMClient
    from medlit.runtime import Runtime
    from medlit.sources import SourceSet
    from medlit.sources.fulltext import ReadOutcome
    from medlit.storage.sqlite import SqliteStore
    from medlit.words.frame import QuestionFrame

__all__ = ["AgentDeps"]


class AgentDeps:
    """The dependencies of one assistant (shared by all its questions), over a
    :class:`~medlit.runtime.Runtime` (the composition root that builds and owns the parts).

    Args:
        settings: the settings.
        store: the open store, when no ``runtime`` is given (closed by :meth:`aclose` when
            ``owns_store``).
        embedder: the embedder (default: the runtime's).
        llm: an LLM client (default: the runtime's, built on first need).
        owns_store: whether :meth:`aclose` closes the store (and the runtime).
        runtime: the runtime to use (default: one built over ``store``).
    """

    def __init__(
        self,
        settings: Settings,
        store: SqliteStore | None = None,
        *,
        embedder: Embedder | None = None,
        llm: LLMClient | None = None,
        owns_store: bool = False,
        runtime: Runtime | None = None,
    ) -> None:
        from medlit.runtime import Runtime

        if runtime is None:
            if store is None:
                raise ValueError("AgentDeps needs a store or a runtime")
            runtime = Runtime(settings, store=store, embedder=embedder, llm=llm)
        self.settings = settings
        self.runtime = runtime
        self.store = runtime.store
        self._owns = owns_store
        self._addresses: dict[str, str] | None = None

    @classmethod
    def open(cls, settings: Settings) -> AgentDeps:
        """A runtime over the store the settings name; everything else opens on first use."""
        from medlit.runtime import Runtime

        return cls(settings, runtime=Runtime.open(settings), owns_store=True)

    async def aclose(self) -> None:
        """Close the runtime's clients and store, when this object owns them."""
        if self._owns:
            await self.runtime.aclose()

    # -- components (the runtime's) --------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedder (memoised; the model loads on the first text not memoised)."""
        return self.runtime.embedder

    @property
    def embedder_loaded(self) -> bool:
        """Whether the embedder has been built (building it imports its backend)."""
        return self.runtime.loaded_embedder is not None

    @property
    def answers(self) -> AnswerCache:
        """Tier 1."""
        return self.runtime.answers

    @property
    def evidence(self) -> EvidenceCache:
        """Tier 2."""
        return self.runtime.evidence

    def memory(self) -> ChatMemory:
        """Chat memories (the table is created on first use)."""
        return self.runtime.memory()

    def llm(self) -> LLMClient:
        """The LLM client (imports the client on first call)."""
        return self.runtime.llm()

    def llm_configured(self, task: str) -> bool:
        """Whether ``task`` can call a model (decided from the settings, no import)."""
        return self.runtime.llm_configured(task)

    def fingerprint(self, sources: Sequence[str]) -> str:
        """The answer-shaping fingerprint of the settings and one question's sources."""
        route = resolve_route(self.settings.llm, "answer")
        model = route.model if route.configured else None
        return self.settings.answer_fingerprint(list(sources), model)

    def origin(self, sources: Sequence[str]) -> str:
        """Where one question's sources are asked: the origin its tier-1 answer is stored with
        and must match to be served (:mod:`medlit.provenance`)."""
        from medlit.provenance import answer_origin, source_addresses

        if self._addresses is None:
            self._addresses = source_addresses(self.settings)
        return answer_origin(self._addresses, sources)

    # -- operations the nodes use ------------------------------------------------------
    def embed_one(self, text: str) -> Any:
        """The unit-norm embedding of ``text`` (float32 vector)."""
        return self.embedder.embed([text])[0]

    def remembered_embedding(self, text: str) -> Any | None:
        """``text``'s embedding when this process has it in memory, else None: no model, no
        store, so the event loop may call it (:meth:`embed_one` needs a worker thread)."""
        remembered = getattr(self.runtime.loaded_embedder, "remembered", None)
        return None if remembered is None else remembered(text)

    async def answer_by_key(
        self, question: str, *, namespace: str, fingerprint: str, origin: str
    ) -> AnswerLookup | None:
        """The tier-1 answer stored under exactly ``question`` (no vector needed), or None
        (see ``AnswerCache.search_key``)."""
        return await self.answers.search_key(
            question, namespace=namespace, fingerprint=fingerprint, origin=origin
        )

    async def lookup_answer(
        self,
        question: str,
        vector: Any,
        *,
        namespace: str,
        fingerprint: str,
        origin: str,
        count_miss: bool = True,
        frame: QuestionFrame | None = None,
    ) -> AnswerLookup:
        """Tier-1 lookup in one namespace (tenant) and fingerprint, of answers from ``origin``
        (the addresses asked; another origin's answer is refused), with the verified band
        when it is open (see :mod:`medlit.cache.verify`).

        Both come from the question's state, never from these shared deps: one assistant
        answers many tenants' questions at once. The store search runs off the event loop.
        ``count_miss=False`` leaves a miss uncounted (see ``AnswerCache.search_query``);
        ``frame``: the question's frame, when the ask has read it (the guard compares it).
        """
        from medlit.cache.verify import open_verifier
        from medlit.cache.word_pairs import open_word_judge

        verifier = open_verifier(self.settings, self.llm)

        def judge() -> WordJudge | None:  # opened only on a miss with a pair to judge
            return open_word_judge(self.settings, self.llm, self.answers.word_pairs)

        return await self.answers.search_query_verified(
            question,
            vector,
            namespace=namespace,
            fingerprint=fingerprint,
            verifier=verifier,
            count_miss=count_miss,
            judge=judge,
            origin=origin,
            frame=frame,
        )

    def add_answer(
        self,
        question: str,
        vector: Any,
        payload: dict[str, Any],
        *,
        namespace: str,
        fingerprint: str,
        origin: str,
        frame: QuestionFrame | None = None,
        basis: dict[str, Any] | None = None,
    ) -> int:
        """Store an admitted answer in tier 1 (in the question's namespace and fingerprint,
        with the addresses it was asked of, the question's frame and what it rests on)."""
        return self.answers.add_query(
            question,
            vector,
            payload,
            namespace=namespace,
            fingerprint=fingerprint,
            origin=origin,
            frame=frame,
            basis=basis,
        )

    def search_chunks(
        self,
        vector: Any,
        k: int,
        only_keys: list[str] | None,
        sources: Sequence[str] | None = None,
    ) -> list[Evidence]:
        """The ``k`` fresh tier-2 chunks nearest ``vector`` (only of ``only_keys`` if given;
        only of articles from ``sources`` if given)."""
        import numpy as np

        from medlit.storage.base import ChunkFilters

        filters = ChunkFilters(article_keys=only_keys) if only_keys is not None else None
        vector = np.asarray(vector, dtype=np.float32)
        found = self.evidence.search_chunks(vector, k, filters, sources=sources)
        if self.settings.fulltext.mode == "off":
            # Abstracts only, as before full text: bodies read while it was on stay unseen.
            found = [
                ev.model_copy(update={"article": ev.article.model_copy(update={"full_text": None})})
                if ev.article.full_text is not None
                else ev
                for ev in found
                if not ev.chunk.from_full_text
            ]
        return found

    def neighbours(self, chunk: Chunk, window: int) -> list[Chunk]:
        """Chunks within ``window`` positions of ``chunk`` in its article."""
        if chunk.from_full_text:
            return [chunk]  # a paragraph or table of the body stands alone
        # An abstract's context is its abstract: the body's first paragraph is no neighbour.
        return [c for c in self.evidence.neighbours(chunk.id, window) if not c.from_full_text]

    async def search(
        self,
        query: SearchQuery,
        sources: list[str],
        use_cache: bool,
        held: Mapping[str, Article] | None = None,
    ) -> tuple[list[Article], list[str], bool]:
        """Search the sources; returns the articles, one line per provider that failed, and
        whether every provider failed unreachable (no round can help: the agent stops).

        The articles the question already ``held`` (by key) are never fetched again; with the
        cache on, neither are those still fresh in tier 2.
        """
        source_set = self.source_set(sources)
        known = HeldArticles(held or {}, self.evidence if use_cache else None)
        results = await source_set.search(query, known=known)
        failed = [results.providers[name].error or f"{name} failed" for name in results.failed]
        asked = [st for st in results.providers.values() if st.status != "disabled"]
        unreachable = bool(asked) and all(st.unreachable for st in asked)
        return list(results.articles), failed, unreachable

    def source_set(self, names: Sequence[str]) -> SourceSet:
        """The providers ``names`` with their shared HTTP client (opened once per set)."""
        return self.runtime.source_set(names)

    async def read_full_text(self, articles: list[Article], budget: int) -> ReadOutcome:
        """The open-access full texts of ``articles`` (at most ``budget`` fetched)."""
        return await self.runtime.full_text_reader().read(articles, budget)

    def store_articles(self, articles: list[Article], use_cache: bool) -> list[str]:
        """Add articles to tier 2 (chunked and embedded); returns the keys actually new.

        An article already fresh in tier 2 is reused, not re-embedded; without the cache every
        article counts as downloaded, as it would be with no cache at all.
        """
        fresh = self.evidence.fresh_by_key([a.key for a in articles]) if use_cache else {}
        self.evidence.add_articles(articles, self.embedder)
        return [a.key for a in articles if a.key not in fresh]

    def store_full_texts(self, articles: list[Article], question: str) -> None:
        """Store articles read with their full text in tier 2, embedding of each body the
        Results chunks ``question`` ranks highest (``fulltext.embed_per_article``) that tier 2
        does not hold yet."""
        self.evidence.add_articles(
            articles,
            self.embedder,
            question=question,
            full_text_chunks=self.settings.fulltext.embed_per_article,
        )

    def digest(
        self,
        question: str,
        evidence: list[Evidence],
        why: str | None = None,
        frame: QuestionFrame | None = None,
    ) -> tuple[str, str | None, VerdictCause | None]:
        """The no-LLM answer: the extractive evidence digest, its verdict if justified and why
        that verdict is Uncertain when it is
        (``why`` no generated answer is given, if not for want of a model); it says first
        which of the question's subject terms no retrieved article mentions, and which of the
        populations it names no article quoted speaks of (as the generated answer does)."""
        # Imported on first use: a tier-1 hit never reads the digest's word tools.
        from medlit.digest import NO_MODEL, build_evidence_digest
        from medlit.words.unmentioned import unmentioned_terms

        # What the articles mention includes the full text read for this answer, if any.
        articles = {item.article.key: item.article.as_read() for item in evidence}
        digest = build_evidence_digest(
            question,
            evidence,
            embedder=self.embedder,
            why=why or NO_MODEL,
            unmentioned=unmentioned_terms(question, articles.values(), frame),
            frame=frame,
        )
        return digest.text, digest.verdict, digest.cause
