"""PostgreSQL side of ``cache_latency.py``: a server, a bulk fill, raw index searches.

The fill is what one does to load a large cache into PostgreSQL: ``COPY`` the rows with the
HNSW index dropped, then build the index once (the store's own m and ef_construction, with
enough ``maintenance_work_mem`` for the graph to be built in memory).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from medlit.config import CacheSettings
from medlit.storage.postgres import PostgresStore

__all__ = ["fill_answers_pg", "fill_chunks_pg", "pg_server", "raw_top"]


@contextmanager
def pg_server(url: str | None, work: Path, *, reuse: bool = False) -> Iterator[str]:
    """``url`` if given, else a pgserver (PostgreSQL 16 + pgvector) in a fresh directory of
    ``work`` (with ``reuse``: the one an earlier run left there, if any)."""
    if url:
        yield url
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        kept = sorted(work.glob("pg-*/PG_VERSION")) if reuse else []
        data = kept[0].parent if kept else Path(tempfile.mkdtemp(prefix="pg-", dir=work))
        server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server.cleanup()


def _hnsw(cfg: CacheSettings) -> str:
    return (
        "USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {cfg.ann_connectivity}, ef_construction = {cfg.ann_expansion_add})"
    )


def _rebuild(raw: Any, table: str, cfg: CacheSettings) -> float:
    t = time.perf_counter()
    raw.execute("SET maintenance_work_mem = '4GB'")
    raw.execute(f"CREATE INDEX {table}_embedding ON {table} {_hnsw(cfg)}")
    raw.execute(f"ANALYZE {table}")
    return time.perf_counter() - t


def fill_answers_pg(
    store: PostgresStore, vectors: np.ndarray, payload: Any, cfg: CacheSettings
) -> tuple[float, float]:
    """COPY the answers, then build their index; returns (load s, index s)."""
    t = time.perf_counter()
    with store.transaction() as conn:
        raw = conn.raw
        raw.execute("DROP INDEX answers_embedding")
        with raw.cursor().copy(
            "COPY answers (namespace, fingerprint, question, question_hash, payload, "
            "retrieval_score, embedding, created_at, last_used_at) FROM STDIN"
        ) as copy:
            now = time.time()
            for i, vec in enumerate(vectors):
                copy.write_row(
                    ("bench", "fp", f"question {i}", f"h{i}", payload(i), 0.7, vec, now, now)
                )
    load = time.perf_counter() - t
    with store.transaction() as conn:
        index = _rebuild(conn.raw, "answers", cfg)
    return load, index


def fill_chunks_pg(
    store: PostgresStore,
    vectors: np.ndarray,
    article: Any,
    per_article: int,
    cfg: CacheSettings,
) -> tuple[float, float]:
    """COPY articles and chunks, then build the chunk index; returns (load s, index s)."""
    t = time.perf_counter()
    n_articles = len(vectors) // per_article
    now = time.time()
    with store.transaction() as conn:
        raw = conn.raw
        raw.execute("DROP INDEX chunks_embedding")
        with raw.cursor().copy(
            "COPY articles (key, pmid, doi, year, study_type, data, content_hash, fetched_at, "
            "last_used_at, chunk_count) FROM STDIN"
        ) as copy:
            for a in range(n_articles):
                art = article(a)
                data = art.model_dump_json()
                copy.write_row(
                    (art.key, art.pmid, None, art.year, 0, data, "h", now, now, per_article)
                )
        with raw.cursor().copy(
            "COPY chunks (chunk_id, article_key, ordinal, section, text, is_conclusion, "
            "embedding) FROM STDIN"
        ) as copy:
            for a in range(n_articles):
                key = f"pmid:{a}"
                for o in range(per_article):
                    text = f"Chunk {o} of article {a}: some findings. " * 8
                    vec = vectors[a * per_article + o]
                    copy.write_row((f"{key}#{o}", key, o, "RESULTS", text, 0, vec))
    load = time.perf_counter() - t
    with store.transaction() as conn:
        index = _rebuild(conn.raw, "chunks", cfg)
    return load, index


def raw_top(store: PostgresStore, table: str, query: np.ndarray, k: int, ef: int) -> list[int]:
    """Ids of the index's top ``k`` (no filter, no re-rank) at the tier's ef_search."""
    rows = store._search(
        f"SELECT id FROM {table} ORDER BY embedding <=> %(q)s LIMIT %(k)s",
        {"q": query.astype(np.float32), "k": k},
        ef,
    )
    return [int(r[0]) for r in rows]
