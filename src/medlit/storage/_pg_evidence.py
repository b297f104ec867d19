"""Tier-2 (evidence) operations of :class:`~medlit.storage.postgres.PostgresStore`.

The same rows as the SQLite backend's (articles as JSON with their fetch time and LRU
position; chunks with their vectors, deleted with their article by ``ON DELETE CASCADE``), with
the chunk vectors in a pgvector column behind an HNSW index that proposes candidates. Filters
are applied to the candidates; when they remove too many the search widens, and past the
index's reach (``ef_search`` 1,000) it becomes an exact scan of the rows that pass them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from medlit.errors import StorageError
from medlit.storage._pg_sql import EF_MAX, PgStoreParts
from medlit.storage.base import (
    CHUNK_COLUMNS,
    ArticleRecord,
    ChunkFilters,
    ChunkMatch,
    Vector,
    chunk_rows,
)
from medlit.types import Article, Chunk

__all__ = ["PgEvidenceOps"]

_INSERT_CHUNKS = f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"

_ARTICLE_COLS = "a.data, a.content_hash, a.fetched_at, a.last_used_at, a.chunk_count, a.origin"
_CHUNK_COLS = (
    "c.id, c.chunk_id, c.article_key, c.ordinal, c.section, c.text, c.is_conclusion, "
    "c.from_full_text"
)
_MATCH_COLS = f"{_CHUNK_COLS}, c.embedding, {_ARTICLE_COLS}"


class PgEvidenceOps(PgStoreParts):
    """Mixin: needs ``transaction``, ``_fetch``, ``_search`` and ``_vector`` from the store."""

    def get_articles(self, keys: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by key (any age)."""
        return self._articles_where("key", keys)

    def get_articles_by_pmid(self, pmids: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by PMID (any age)."""
        found = self._articles_where("pmid", pmids)
        return {rec.article.pmid or "": rec for rec in found.values()}

    def publication_types_by_pmid(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        """Stored articles' publication types by PMID (of every article under a PMID)."""
        if not pmids:
            return {}
        rows = self._fetch(
            "SELECT pmid, ((data::jsonb) -> 'publication_types')::text FROM articles "
            "WHERE pmid = ANY(%s)",
            (list(dict.fromkeys(pmids)),),
        )
        out: dict[str, list[str]] = {}
        for pmid, types in rows:
            out.setdefault(str(pmid), []).extend(json.loads(types) if types else [])
        return out

    def _articles_where(self, column: str, values: Sequence[str]) -> dict[str, ArticleRecord]:
        if not values:
            return {}
        rows = self._fetch(
            f"SELECT {_ARTICLE_COLS} FROM articles a WHERE a.{column} = ANY(%s)",
            (list(dict.fromkeys(values)),),
        )
        out: dict[str, ArticleRecord] = {}
        for row in rows:
            rec = _article_record(row)
            out[rec.article.key] = rec
        return out

    def upsert_article(
        self,
        article: Article,
        *,
        content_hash: str,
        chunks: Sequence[Chunk] | None,
        embeddings: Vector | None,
        now: float,
        origin: str = "",
    ) -> None:
        """Store an article; with ``chunks`` None its existing chunks are kept."""
        data = article.model_dump_json()
        vectors: list[Vector] = []
        if chunks is not None:
            if embeddings is None or len(embeddings) != len(chunks):
                raise StorageError("upsert_article needs one embedding per chunk")
            vectors = [self._vector(v) for v in embeddings]
        with self.transaction() as conn:
            conn.raw.execute(
                "INSERT INTO articles (key, pmid, doi, year, study_type, data, content_hash, "
                "fetched_at, last_used_at, chunk_count, origin) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, 0, %s) ON CONFLICT (key) DO UPDATE SET "
                "pmid = excluded.pmid, doi = excluded.doi, year = excluded.year, "
                "study_type = excluded.study_type, data = excluded.data, "
                "content_hash = excluded.content_hash, fetched_at = excluded.fetched_at, "
                "last_used_at = excluded.last_used_at, origin = excluded.origin, "
                "lru = nextval('articles_lru_seq')",
                (
                    article.key,
                    article.pmid,
                    article.doi,
                    article.year,
                    int(article.study_type),
                    data,
                    content_hash,
                    now,
                    now,
                    origin,
                ),
            )
            if chunks is not None:
                conn.raw.execute("DELETE FROM chunks WHERE article_key = %s", (article.key,))
                conn.raw.cursor().executemany(
                    _INSERT_CHUNKS,
                    chunk_rows(article.key, chunks, vectors),
                )
                conn.raw.execute(
                    "UPDATE articles SET chunk_count = %s WHERE key = %s",
                    (len(chunks), article.key),
                )

    def add_chunks(self, article_key: str, chunks: Sequence[Chunk], embeddings: Vector) -> int:
        """Add chunks to a stored article, keeping those it holds; returns the chunks added."""
        if len(embeddings) != len(chunks):
            raise StorageError("add_chunks needs one embedding per chunk")
        if not chunks:
            return 0
        vectors = [self._vector(v) for v in embeddings]
        with self.transaction() as conn:
            # The article's row is locked: a concurrent upsert or eviction waits for us.
            held = conn.raw.execute(
                "SELECT 1 FROM articles WHERE key = %s FOR UPDATE", (article_key,)
            ).fetchone()
            if held is None:
                return 0
            before = _chunk_count(conn, article_key)
            conn.raw.cursor().executemany(
                _INSERT_CHUNKS + " ON CONFLICT (chunk_id) DO NOTHING",
                chunk_rows(article_key, chunks, vectors),
            )
            after = _chunk_count(conn, article_key)
            conn.raw.execute(
                "UPDATE articles SET chunk_count = %s WHERE key = %s", (after, article_key)
            )
        return int(after - before)

    def touch_articles(self, keys: Sequence[str], now: float) -> None:
        """Move articles to the LRU front (rows updated in key order: no deadlocks)."""
        if not keys:
            return
        ordered = list(dict.fromkeys(keys))
        with self.transaction() as conn:
            rows = conn.raw.execute(
                "SELECT nextval('articles_lru_seq') FROM generate_series(1, %s)", (len(ordered),)
            ).fetchall()
            lrus = sorted(int(r[0]) for r in rows)
            conn.raw.cursor().executemany(
                "UPDATE articles SET last_used_at = %s, lru = %s WHERE key = %s",
                [(now, lru, key) for key, lru in sorted(zip(ordered, lrus, strict=True))],
            )

    def search_chunks(
        self, embedding: Vector, k: int, filters: ChunkFilters | None = None
    ) -> list[ChunkMatch]:
        """The ``k`` chunks most similar to ``embedding`` that pass ``filters``, best first."""
        query = self._vector(embedding)
        f = filters or ChunkFilters()
        if k <= 0:
            return []
        where, params = _filter_sql(f)
        if f.article_keys is not None or f.pmids is not None:
            # A known subset: exact search over its chunks beats post-filtering the ANN.
            rows = self._fetch(
                f"SELECT {_MATCH_COLS} FROM chunks c JOIN articles a ON a.key = c.article_key "
                f"WHERE {where}",
                params,
                binary=True,
            )
            return _rank(rows, query, k)
        ef = self._cfg.pg_ef_search_chunks
        selective = f.min_year is not None or f.study_types is not None
        fetch = k * 8 + 32 if selective else k + 8
        while fetch <= EF_MAX:
            rows = self._search(
                "WITH n AS MATERIALIZED (SELECT id FROM chunks ORDER BY embedding <=> %(q)s "
                f"LIMIT %(fetch)s) SELECT {_MATCH_COLS} FROM n LEFT JOIN "
                f"(chunks c JOIN articles a ON a.key = c.article_key) ON c.id = n.id AND {where}",
                {"q": query, "fetch": fetch, **params},
                max(ef, fetch),
            )
            kept = [r for r in rows if r[0] is not None]
            if len(kept) >= k or len(rows) < fetch:
                return _rank(kept, query, k)
            fetch *= 4  # filters removed too many: look further
        # Beyond the index's reach: the exact nearest among the rows that pass the filters.
        rows = self._search(
            f"SELECT {_MATCH_COLS} FROM chunks c JOIN articles a ON a.key = c.article_key "
            f"WHERE {where} ORDER BY (c.embedding <=> %(q)s) + 0 LIMIT %(k)s",
            {"q": query, "k": k, **params},
            ef,
        )
        return _rank(rows, query, k)

    def article_chunks(self, article_key: str) -> list[Chunk]:
        """An article's chunks in order."""
        rows = self._fetch(
            f"SELECT {_CHUNK_COLS} FROM chunks c WHERE c.article_key = %s ORDER BY c.ordinal",
            (article_key,),
        )
        return [_chunk(row) for row in rows]

    def purge_articles(self, *, fetched_before: float) -> tuple[int, int]:
        """Delete articles fetched before a time, with their chunks."""
        return self._delete_articles("fetched_at < %s", (fetched_before,))

    def evict_articles(self, chunk_capacity: int) -> tuple[int, int]:
        """Delete least recently used articles until at most ``chunk_capacity`` chunks remain."""
        total = self.count_chunks()
        if total <= chunk_capacity:
            return 0, 0
        victims: list[str] = []
        excess = total - chunk_capacity
        for key, count in _iter_lru(self):
            if excess <= 0:
                break
            victims.append(key)
            excess -= count
        if not victims:
            return 0, 0
        return self._delete_articles("key = ANY(%s)", (victims,))

    def _delete_articles(self, where: str, params: Sequence[Any]) -> tuple[int, int]:
        with self.transaction() as conn:
            row = conn.raw.execute(
                f"SELECT coalesce(sum(chunk_count), 0) FROM articles WHERE {where}", params
            ).fetchone()
            articles = conn.raw.execute(f"DELETE FROM articles WHERE {where}", params).rowcount
        return articles, int(row[0]) if row else 0

    def count_articles(self) -> int:
        """Articles held."""
        return int(self._fetch("SELECT count(*) FROM articles")[0][0])

    def count_chunks(self) -> int:
        """Chunks held."""
        return int(self._fetch("SELECT coalesce(sum(chunk_count), 0) FROM articles")[0][0])

    def clear_evidence(self) -> tuple[int, int]:
        """Delete every article and chunk."""
        return self._delete_articles("true", ())


def _iter_lru(store: PgEvidenceOps) -> Iterator[tuple[str, int]]:
    for key, count in store._fetch("SELECT key, chunk_count FROM articles ORDER BY lru"):
        yield str(key), int(count)


def _filter_sql(f: ChunkFilters) -> tuple[str, dict[str, Any]]:
    """A WHERE clause over ``a`` (articles) with named parameters."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if f.article_keys is not None:
        clauses.append("a.key = ANY(%(keys)s)")
        params["keys"] = list(f.article_keys)
    if f.pmids is not None:
        clauses.append("a.pmid = ANY(%(pmids)s)")
        params["pmids"] = list(f.pmids)
    if f.min_year is not None:
        clauses.append("a.year >= %(min_year)s")
        params["min_year"] = f.min_year
    if f.study_types is not None:
        clauses.append("a.study_type = ANY(%(types)s)")
        params["types"] = sorted(f.study_types)
    if f.fetched_after is not None:
        clauses.append("a.fetched_at >= %(fetched_after)s")
        params["fetched_after"] = float(f.fetched_after)
    return (" AND ".join(clauses) or "true"), params


def _rank(rows: list[tuple[Any, ...]], query: Vector, k: int) -> list[ChunkMatch]:
    if not rows:
        return []
    vectors = np.stack([r[8].to_numpy() for r in rows])
    sims = vectors @ query
    order = np.argsort(-sims, kind="stable")[:k]
    articles: dict[str, ArticleRecord] = {}
    out = []
    for i in order:
        row = rows[int(i)]
        key = row[2]
        if key not in articles:
            articles[key] = _article_record(row[9:])
        record = articles[key]
        out.append(
            ChunkMatch(
                chunk=_chunk(row),
                article=record.article,
                similarity=float(sims[i]),
                origin=record.origin,
            )
        )
    return out


def _chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[1],
        article_key=row[2],
        ordinal=int(row[3]),
        section=row[4],
        text=row[5],
        is_conclusion=bool(row[6]),
        from_full_text=bool(row[7]),
    )


def _article_record(row: Sequence[Any]) -> ArticleRecord:
    return ArticleRecord(
        article=Article.model_validate_json(row[0]),
        content_hash=row[1],
        fetched_at=float(row[2]),
        last_used_at=float(row[3]),
        chunk_count=int(row[4]),
        origin=str(row[5]),
    )


def _chunk_count(conn: Any, article_key: str) -> int:
    row = conn.raw.execute(
        "SELECT count(*) FROM chunks WHERE article_key = %s", (article_key,)
    ).fetchone()
    return int(row[0]) if row else 0
