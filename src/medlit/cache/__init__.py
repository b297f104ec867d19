"""The two-tier semantic cache.

* Tier 1, :class:`AnswerCache`: whole answers for near-identical questions, guarded by
  similarity, TTL, retrieval score, namespace, settings fingerprint and the guard
  (:mod:`medlit.cache.guard`: every word that differs must be a spelling, an inflection, a
  vetted synonym or a function word).
* Tier 2, :class:`EvidenceCache`: articles and their embedded abstract chunks, reused and
  re-scored for every new question (cannot serve a wrong answer).

Open both over one store::

    store = open_store(settings)
    embedder = load_embedder(settings, store)
    answers = AnswerCache(store, settings.cache)
    evidence = EvidenceCache(store, settings.cache)
"""

from __future__ import annotations

from medlit.cache.answers import AnswerCache, AnswerLookup, CachedAnswer, MissReason
from medlit.cache.chunking import article_content_hash, chunk_article, split_sentences
from medlit.cache.evidence import AddResult, EvidenceCache
from medlit.storage.base import ChunkFilters

__all__ = [
    "AddResult",
    "AnswerCache",
    "AnswerLookup",
    "CachedAnswer",
    "ChunkFilters",
    "EvidenceCache",
    "MissReason",
    "article_content_hash",
    "chunk_article",
    "split_sentences",
]
