"""Tier 2: the evidence cache (seed 001 "TIER 2: CHUNK STORE").

Articles are kept by key (PMID, else DOI, else title hash) with the time they were fetched; a
*fresh* article (fetched less than ``evidence_ttl_s`` ago) is never fetched again: sources ask
:meth:`EvidenceCache.fresh_articles` (the :class:`medlit.sources.base.FreshArticles` seam)
before fetching records by id. Each article is chunked
(:func:`medlit.cache.chunking.chunk_article`) and its chunks embedded once; an article seen
again is re-chunked only when its content changed. Of a full text, only the Results chunks a
question reads are embedded (:func:`medlit.cache.chunking.embedded_chunks`); a later question
adds its own picks that are not held yet.

:meth:`search_chunks` returns anchor chunks (as :class:`medlit.types.Evidence`, score 0) with
their articles and exact cosine similarity; :meth:`neighbours` gives the chunks around an
anchor for context expansion. Expired articles are never returned and are deleted on insert;
capacity is counted in chunks and enforced by evicting whole least-recently-used articles.
Tier 2 cannot serve a wrong answer (its evidence is re-scored for every new question), so it is
where most savings should come from.

Each article records the address of the source it came from (its *origin*,
:mod:`medlit.provenance`): an article is reused (by :meth:`~EvidenceCache.fresh_articles`,
:meth:`~EvidenceCache.fresh_by_key` or a chunk search) only where its origin is the address its
source is asked at now; the others are left out, with one log line saying where they came from
(``evidence_not_reused``). An article fetched again from the current address takes its origin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medlit.cache._pending import PendingWrites
from medlit.cache.chunking import (
    FULL_TEXT_EMBEDDED,
    article_content_hash,
    chunk_article,
    embedded_chunks,
)
from medlit.config import CacheSettings
from medlit.embeddings.base import Embedder
from medlit.log import get_logger
from medlit.provenance import default_addresses, refusal
from medlit.storage.base import ArticleRecord, ChunkFilters, Store, Vector
from medlit.types import Article, Chunk, Evidence

__all__ = ["AddResult", "EvidenceCache"]

log = get_logger("cache.evidence")


@dataclass
class AddResult:
    """What :meth:`EvidenceCache.add_articles` did.

    Attributes:
        added: articles new to the cache (chunked and embedded).
        rechunked: articles already held whose content changed (chunked and embedded again).
        refreshed: articles held with the same content (fetch time renewed, no embedding).
        skipped_fresh: articles held, fresh and unchanged (nothing done).
        chunks_embedded: chunks embedded by this call.
        expired: articles deleted because their TTL ran out.
        evicted: articles deleted to respect the chunk capacity.
    """

    added: int = 0
    rechunked: int = 0
    refreshed: int = 0
    skipped_fresh: int = 0
    chunks_embedded: int = 0
    expired: int = 0
    evicted: int = 0


def _with_held_full_text(article: Article, record: ArticleRecord | None, origin: str) -> Article:
    """``article`` with the full text held for it, when the record held came from the same
    address (``origin``): another address's body never joins this one's record."""
    if (
        article.full_text is None
        and record is not None
        and record.article.full_text
        and record.origin == origin
    ):
        return article.model_copy(update={"full_text": record.article.full_text})
    return article


class EvidenceCache:
    """Tier-2 policy over a :class:`~medlit.storage.base.Store`.

    Args:
        store: where articles and chunks live.
        settings: TTL and capacity.
        clock: epoch seconds now (inject a fake one in tests).
        addresses: each source name's address now
            (:func:`medlit.provenance.source_addresses`; default: the remote sources' default
            addresses): what articles are stored with, and what they must match to be reused.
    """

    def __init__(
        self,
        store: Store,
        settings: CacheSettings | None = None,
        *,
        clock: Callable[[], float] = time.time,
        addresses: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or CacheSettings()
        self.clock = clock
        self.addresses = dict(default_addresses() if addresses is None else addresses)
        self._pending = PendingWrites(self._write_pending, self.settings.flush_interval_s)
        add_hook = getattr(store, "add_close_hook", None)
        if add_hook is not None:
            add_hook(self._pending.close)

    def _write_pending(self, counts: dict[str, int], touched: list[Hashable]) -> None:
        self.store.touch_articles([str(k) for k in touched], self.clock())
        self.store.bump_counters(counts)

    def flush(self) -> None:
        """Write buffered counters and LRU refreshes (also done on store close)."""
        self._pending.flush()

    def _fresh_after(self) -> float:
        return self.clock() - self.settings.evidence_ttl_s

    def address(self, source: str) -> str:
        """The address articles of ``source`` come from now (their origin when stored)."""
        return self.addresses.get(source, source)

    def _log_refused(self, found: Collection[tuple[str, str, str]], origin: str | None) -> None:
        """Log one line when some (source, stored origin, key) in ``found`` is not of the
        address asked (``origin``, else each article's source's now): where the first of
        them came from, and how many came from there."""
        refused: dict[tuple[str, str], list[str]] = {}
        for source, stored, key in found:
            current = origin or self.address(source)
            if stored != current:
                refused.setdefault((stored, current), []).append(key)
        if refused:
            (stored, current), keys = next(iter(refused.items()))
            log.info(
                "evidence_not_reused",
                reason=refusal(f"{len(keys)} cached article(s)", stored, current),
                keys=keys[:5],
                other_addresses=len(refused) - 1,
            )

    def _reusable(
        self, records: Mapping[str, ArticleRecord], origin: str | None = None
    ) -> dict[str, Article]:
        """Of ``records``, the articles fresh and of the address asked."""
        cutoff = self._fresh_after()
        fresh = {k: r for k, r in records.items() if r.fetched_at >= cutoff}
        wanted = {k: origin or self.address(r.article.source) for k, r in fresh.items()}
        self._log_refused(
            [(r.article.source, r.origin, r.article.key) for r in fresh.values()], origin
        )
        return {k: r.article for k, r in fresh.items() if r.origin == wanted[k]}

    def fresh_articles(
        self, pmids: Sequence[str], *, origin: str | None = None
    ) -> dict[str, Article]:
        """Articles among ``pmids`` held, still fresh and from ``origin`` (the address the
        caller would fetch them from; None: their own source's address now), keyed by PMID
        (no need to fetch)."""
        fresh = self._reusable(self.store.get_articles_by_pmid(list(pmids)), origin)
        self._pending.count("evidence.reused", len(fresh))
        return fresh

    def fresh_by_key(self, keys: Sequence[str]) -> dict[str, Article]:
        """Articles held, still fresh and from their source's address now, keyed by
        ``Article.key`` (for DOI/title keys)."""
        return self._reusable(self.store.get_articles(list(keys)))

    def add_articles(
        self,
        articles: Sequence[Article],
        embedder: Embedder,
        *,
        question: str | None = None,
        full_text_chunks: int = FULL_TEXT_EMBEDDED,
    ) -> AddResult:
        """Store articles with their chunks (embedding only what is new or changed).

        Articles already held with the same content are not re-embedded (a stale one has its
        fetch time renewed); all new chunks are embedded in one batched call. Expired articles
        are then deleted and the chunk capacity enforced.

        Args:
            articles: the articles.
            embedder: what embeds new chunks.
            question: the question a full text is read for: of each body, the
                ``full_text_chunks`` Results chunks it ranks highest are embedded (those of an
                article already held that tier 2 lacks are added). None: abstracts' chunks
                only (a body stays with its article until an answer reads it).
            full_text_chunks: full-text chunks embedded per article for ``question``.
        """
        result = AddResult()
        unique = list({a.key: a for a in articles}.values())
        held = self.store.get_articles([a.key for a in unique])
        # A record fetched again (abstract only) keeps the full text read before: the search
        # that met it again did not read its body, and its body has not changed.
        unique = [_with_held_full_text(a, held.get(a.key), self.address(a.source)) for a in unique]
        now = self.clock()
        cutoff = now - self.settings.evidence_ttl_s
        todo: list[tuple[Article, str, list[Chunk]]] = []
        more: list[tuple[str, list[Chunk]]] = []  # held articles: this question's missing picks
        for article in unique:
            digest = article_content_hash(article)
            record = held.get(article.key)
            origin = self.address(article.source)
            if record is not None and record.content_hash == digest:
                if question and article.full_text is not None:
                    missing = self._missing_picks(article, question, full_text_chunks)
                    if missing:
                        more.append((article.key, missing))
                # A retraction PubMed now marks is kept at once (its chunks stay): answers
                # citing the article are then not served again (AnswerCache).
                # So is an article served by another address now (it takes that origin).
                if (
                    record.fetched_at >= cutoff
                    and record.article.retraction == article.retraction
                    and record.origin == origin
                ):
                    result.skipped_fresh += 1
                else:
                    self.store.upsert_article(
                        article,
                        content_hash=digest,
                        chunks=None,
                        embeddings=None,
                        now=now,
                        origin=origin,
                    )
                    result.refreshed += 1
                continue
            if record is None:
                result.added += 1
            else:
                result.rechunked += 1
            chunks = embedded_chunks(chunk_article(article), question, full_text_chunks)
            todo.append((article, digest, chunks))
        texts = [c.text for _, _, chunks in todo for c in chunks]
        texts += [c.text for _, chunks in more for c in chunks]
        vectors = embedder.embed(texts) if texts else None
        offset = 0
        for article, digest, chunks in todo:
            part = None if vectors is None else vectors[offset : offset + len(chunks)]
            offset += len(chunks)
            self.store.upsert_article(
                article,
                content_hash=digest,
                chunks=chunks,
                embeddings=part,
                now=now,
                origin=self.address(article.source),
            )
        for key, chunks in more:
            if vectors is not None:  # always: ``more`` holds texts
                self.store.add_chunks(key, chunks, vectors[offset : offset + len(chunks)])
            offset += len(chunks)
        result.chunks_embedded = len(texts)
        result.expired, result.evicted = self.maintain()
        self._pending.count("evidence.articles_added", result.added + result.rechunked)
        self._pending.count("evidence.chunks_embedded", result.chunks_embedded)
        log.debug("evidence_added", **result.__dict__)
        return result

    def _missing_picks(self, article: Article, question: str, limit: int) -> list[Chunk]:
        """The full-text chunks ``question`` picks in a held article that tier 2 lacks."""
        picks = [
            c for c in embedded_chunks(chunk_article(article), question, limit) if c.from_full_text
        ]
        if not picks:
            return []
        held = {c.id for c in self.store.article_chunks(article.key)}
        return [c for c in picks if c.id not in held]

    def search_chunks(
        self,
        embedding: Vector,
        k: int,
        filters: ChunkFilters | None = None,
        sources: Collection[str] | None = None,
    ) -> list[Evidence]:
        """The ``k`` fresh chunks most similar to ``embedding`` passing ``filters``, of
        articles from ``sources`` only when given (an answer asked of the local corpus never
        rests on an article PubMed gave for another question), and only of articles whose
        origin is their source's address now (one log line names those left out).

        Returns:
            Anchor chunks as :class:`Evidence` (``similarity`` exact, ``score`` 0), best first.
            Their articles move to the front of the LRU.
        """
        f = filters or ChunkFilters()
        cutoff = self._fresh_after()
        f = ChunkFilters(
            article_keys=f.article_keys,
            pmids=f.pmids,
            min_year=f.min_year,
            study_types=f.study_types,
            fetched_after=max(cutoff, f.fetched_after or cutoff),
        )
        # The store keeps no source column: the nearest of many, then those of the sources
        # asked and of their addresses now.
        found = self.store.search_chunks(embedding, k * _SOURCE_OVERFETCH, f)
        if sources is not None:
            kept = set(sources)
            found = [m for m in found if m.article.source in kept]
        self._log_refused({(m.article.source, m.origin, m.article.key) for m in found}, None)
        matches = [m for m in found if m.origin == self.address(m.article.source)][:k]
        self._pending.touch([m.article.key for m in matches])
        return [
            Evidence(chunk=m.chunk, article=m.article, similarity=m.similarity) for m in matches
        ]

    def kept_to(self, sources: Collection[str]) -> SourceKept:
        """This cache as one set of sources sees it (:class:`SourceKept`)."""
        return SourceKept(self, tuple(sorted(set(sources))))

    def article_chunks(self, article_key: str) -> list[Chunk]:
        """Every chunk of an article, in order (empty if it is not held)."""
        return self.store.article_chunks(article_key)

    def neighbours(self, chunk_id: str, window: int = 1) -> list[Chunk]:
        """The chunk ``chunk_id`` with up to ``window`` chunks each side, in order.

        The title chunk (ordinal 0) is always included first, as it names the study.
        """
        article_key, _, ordinal_text = chunk_id.rpartition("#")
        ordinal = int(ordinal_text)
        chunks = self.article_chunks(article_key)
        keep = [c for c in chunks if c.ordinal == 0 or abs(c.ordinal - ordinal) <= window]
        return keep

    def maintain(self) -> tuple[int, int]:
        """Delete expired articles, then evict LRU articles over the chunk capacity."""
        self.flush()  # eviction must see every use so far
        expired, _ = self.store.purge_articles(fetched_before=self._fresh_after())
        evicted, _ = self.store.evict_articles(self.settings.evidence_capacity)
        self._pending.count("evidence.expired", expired)
        self._pending.count("evidence.evictions", evicted)
        return expired, evicted

    def clear(self) -> tuple[int, int]:
        """Delete every article and chunk; returns (articles, chunks)."""
        self.flush()
        return self.store.clear_evidence()


#: How many more chunks a search kept to some sources asks the store for than it returns.
_SOURCE_OVERFETCH = 4


class SourceKept:
    """The evidence cache as one set of sources sees it: its chunk searches return only their
    articles; everything else is the cache's (research reuses evidence through it)."""

    def __init__(self, cache: EvidenceCache, sources: tuple[str, ...]) -> None:
        self.cache = cache
        self.sources = sources

    def search_chunks(
        self, embedding: Vector, k: int, filters: ChunkFilters | None = None
    ) -> list[Evidence]:
        return self.cache.search_chunks(embedding, k, filters, sources=self.sources)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cache, name)
