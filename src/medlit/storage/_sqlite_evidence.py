"""Tier-2 (evidence) operations of :class:`~medlit.storage.sqlite.SqliteStore`.

Articles are rows keyed by ``Article.key`` holding the article as JSON, its content hash, when
it was fetched and its LRU position; chunks are rows with float32 vectors, deleted with their
article (``ON DELETE CASCADE``, which also logs them for the ANN index).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from medlit.errors import StorageError
from medlit.storage.base import (
    CHUNK_COLUMNS,
    ArticleRecord,
    ChunkFilters,
    ChunkMatch,
    Vector,
    chunk_rows,
    iter_batches,
)
from medlit.types import Article, Chunk

if TYPE_CHECKING:
    from medlit.storage.ann import AnnIndex

__all__ = ["EvidenceOps"]

_INSERT_CHUNKS = f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

_ARTICLE_COLS = "data, content_hash, fetched_at, last_used_at, chunk_count, origin"
_CHUNK_COLS = (
    "c.id, c.chunk_id, c.article_key, c.ordinal, c.section, c.text, c.is_conclusion, "
    "c.from_full_text"
)
_NEXT_LRU = "(SELECT coalesce(max(lru), 0) + 1 FROM articles)"


class EvidenceOps:
    """Mixin: needs ``transaction``, ``read``, ``_index`` and ``_vector`` from the store."""

    dim: int

    # Provided by SqliteStore (which comes first in the MRO).
    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _index(self, name: str) -> AnnIndex:
        raise NotImplementedError

    def _vector(self, embedding: Any) -> Vector:
        raise NotImplementedError

    def get_articles(self, keys: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by key (any age)."""
        return self._articles_where("key", keys)

    def get_articles_by_pmid(self, pmids: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by PMID (any age)."""
        found = self._articles_where("pmid", pmids)
        return {rec.article.pmid or "": rec for rec in found.values()}

    def publication_types_by_pmid(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        """Stored articles' publication types by PMID (of every article under a PMID)."""
        out: dict[str, list[str]] = {}
        for batch in iter_batches(list(dict.fromkeys(pmids)), 900):
            marks = ",".join("?" * len(batch))
            rows = self.read(
                "SELECT pmid, json_extract(data, '$.publication_types') FROM articles "
                f"WHERE pmid IN ({marks})",
                batch,
            )
            for pmid, types in rows:
                out.setdefault(str(pmid), []).extend(json.loads(types) if types else [])
        return out

    def _articles_where(self, column: str, values: Sequence[str]) -> dict[str, ArticleRecord]:
        out: dict[str, ArticleRecord] = {}
        for batch in iter_batches(list(dict.fromkeys(values)), 900):
            marks = ",".join("?" * len(batch))
            rows = self.read(
                f"SELECT {_ARTICLE_COLS} FROM articles WHERE {column} IN ({marks})", batch
            )
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
        if chunks is not None:
            if embeddings is None or len(embeddings) != len(chunks):
                raise StorageError("upsert_article needs one embedding per chunk")
            vectors = [self._vector(v).tobytes() for v in embeddings]
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO articles (key, pmid, doi, year, study_type, data, content_hash, "
                "fetched_at, last_used_at, chunk_count, origin, lru) VALUES "
                f"(?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, {_NEXT_LRU}) ON CONFLICT (key) DO UPDATE SET "
                "pmid = excluded.pmid, "
                "doi = excluded.doi, year = excluded.year, study_type = excluded.study_type, "
                "data = excluded.data, content_hash = excluded.content_hash, "
                "fetched_at = excluded.fetched_at, last_used_at = excluded.last_used_at, "
                "origin = excluded.origin, lru = excluded.lru",
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
                conn.execute("DELETE FROM chunks WHERE article_key = ?", (article.key,))
                conn.executemany(
                    _INSERT_CHUNKS,
                    chunk_rows(article.key, chunks, vectors),
                )
                conn.execute(
                    "UPDATE articles SET chunk_count = ? WHERE key = ?", (len(chunks), article.key)
                )
        if chunks is not None:
            self._index("chunks")

    def add_chunks(self, article_key: str, chunks: Sequence[Chunk], embeddings: Vector) -> int:
        """Add chunks to a stored article, keeping those it holds; returns the chunks added."""
        if len(embeddings) != len(chunks):
            raise StorageError("add_chunks needs one embedding per chunk")
        if not chunks:
            return 0
        vectors = [self._vector(v).tobytes() for v in embeddings]
        with self.transaction() as conn:
            if not conn.execute("SELECT 1 FROM articles WHERE key = ?", (article_key,)).fetchone():
                return 0
            before = conn.execute(
                "SELECT count(*) FROM chunks WHERE article_key = ?", (article_key,)
            ).fetchone()[0]
            conn.executemany(
                _INSERT_CHUNKS + " ON CONFLICT (chunk_id) DO NOTHING",
                chunk_rows(article_key, chunks, vectors),
            )
            after = conn.execute(
                "SELECT count(*) FROM chunks WHERE article_key = ?", (article_key,)
            ).fetchone()[0]
            conn.execute("UPDATE articles SET chunk_count = ? WHERE key = ?", (after, article_key))
        self._index("chunks")
        return int(after - before)

    def touch_articles(self, keys: Sequence[str], now: float) -> None:
        """Move articles to the LRU front."""
        if not keys:
            return
        ordered = list(dict.fromkeys(keys))
        with self.transaction() as conn:
            # One max() and one executemany: a flush touches thousands of articles under load.
            base = conn.execute("SELECT coalesce(max(lru), 0) FROM articles").fetchone()[0]
            conn.executemany(
                "UPDATE articles SET last_used_at = ?, lru = ? WHERE key = ?",
                [(now, base + i, key) for i, key in enumerate(ordered, start=1)],
            )

    def search_chunks(
        self, embedding: Vector, k: int, filters: ChunkFilters | None = None
    ) -> list[ChunkMatch]:
        """The ``k`` chunks most similar to ``embedding`` that pass ``filters``, best first."""
        query = self._vector(embedding)
        f = filters or ChunkFilters()
        where, params = _filter_sql(f)
        if k <= 0:
            return []
        if f.article_keys is not None or f.pmids is not None:
            # A known subset: exact search over its chunks beats post-filtering the ANN.
            rows = self.read(
                f"SELECT {_CHUNK_COLS}, c.embedding, a.{_ARTICLE_COLS.replace(', ', ', a.')} "
                f"FROM chunks c JOIN articles a ON a.key = c.article_key WHERE {where}",
                params,
            )
            return _rank(rows, query, k)
        index = self._index("chunks")
        # The freshness cutoff is on every search but rarely removes anything: only the other
        # filters justify a wide first fetch (the loop below widens it when they bite).
        selective = f.min_year is not None or f.study_types is not None
        fetch = k * 8 + 32 if selective else k + 8
        while True:
            keys, _ = index.search(query, fetch)
            if len(keys) == 0:
                return []
            marks = ",".join("?" * len(keys))
            rows = self.read(
                f"SELECT {_CHUNK_COLS}, c.embedding, a.{_ARTICLE_COLS.replace(', ', ', a.')} "
                f"FROM chunks c JOIN articles a ON a.key = c.article_key "
                f"WHERE c.id IN ({marks}) AND {where}",
                [*(int(x) for x in keys), *params],
            )
            if len(rows) >= k or len(keys) < fetch or fetch >= len(index):
                return _rank(rows, query, k)
            fetch *= 4  # filters removed too many: look further

    def article_chunks(self, article_key: str) -> list[Chunk]:
        """An article's chunks in order."""
        rows = self.read(
            f"SELECT {_CHUNK_COLS} FROM chunks c WHERE c.article_key = ? ORDER BY c.ordinal",
            (article_key,),
        )
        return [_chunk(row) for row in rows]

    def purge_articles(self, *, fetched_before: float) -> tuple[int, int]:
        """Delete articles fetched before a time, with their chunks."""
        return self._delete_articles("fetched_at < ?", (fetched_before,))

    def evict_articles(self, chunk_capacity: int) -> tuple[int, int]:
        """Delete least recently used articles until at most ``chunk_capacity`` chunks remain."""
        total = self.count_chunks()
        if total <= chunk_capacity:
            return 0, 0
        victims: list[str] = []
        excess = total - chunk_capacity
        for key, count in _iter_rows(self, "SELECT key, chunk_count FROM articles ORDER BY lru"):
            if excess <= 0:
                break
            victims.append(key)
            excess -= count
        articles = chunks = 0
        for batch in iter_batches(victims, 900):
            marks = ",".join("?" * len(batch))
            a, c = self._delete_articles(f"key IN ({marks})", batch)
            articles, chunks = articles + a, chunks + c
        return articles, chunks

    def _delete_articles(self, where: str, params: Sequence[Any]) -> tuple[int, int]:
        with self.transaction() as conn:
            chunks = conn.execute(
                f"SELECT coalesce(sum(chunk_count), 0) FROM articles WHERE {where}", params
            ).fetchone()[0]
            articles = conn.execute(f"DELETE FROM articles WHERE {where}", params).rowcount
        if articles:
            self._index("chunks")
        return articles, int(chunks)

    def count_articles(self) -> int:
        """Articles held."""
        return int(self.read("SELECT count(*) FROM articles")[0][0])

    def count_chunks(self) -> int:
        """Chunks held."""
        return int(self.read("SELECT coalesce(sum(chunk_count), 0) FROM articles")[0][0])

    def clear_evidence(self) -> tuple[int, int]:
        """Delete every article and chunk."""
        return self._delete_articles("1", ())


def _iter_rows(store: EvidenceOps, sql: str) -> Iterator[tuple[Any, ...]]:
    yield from store.read(sql)


def _filter_sql(f: ChunkFilters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if f.article_keys is not None:
        clauses.append(f"a.key IN ({','.join('?' * len(f.article_keys))})")
        params.extend(f.article_keys)
    if f.pmids is not None:
        clauses.append(f"a.pmid IN ({','.join('?' * len(f.pmids))})")
        params.extend(f.pmids)
    if f.min_year is not None:
        clauses.append("a.year >= ?")
        params.append(f.min_year)
    if f.study_types is not None:
        clauses.append(f"a.study_type IN ({','.join('?' * len(f.study_types))})")
        params.extend(sorted(f.study_types))
    if f.fetched_after is not None:
        clauses.append("a.fetched_at >= ?")
        params.append(f.fetched_after)
    return (" AND ".join(clauses) or "1"), params


def _rank(rows: list[tuple[Any, ...]], query: Vector, k: int) -> list[ChunkMatch]:
    import numpy as np

    if not rows:
        return []
    vectors = np.frombuffer(b"".join(r[8] for r in rows), dtype=np.float32)
    sims = vectors.reshape(len(rows), -1) @ query
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


def _chunk(row: tuple[Any, ...]) -> Chunk:
    return Chunk(
        id=row[1],
        article_key=row[2],
        ordinal=int(row[3]),
        section=row[4],
        text=row[5],
        is_conclusion=bool(row[6]),
        from_full_text=bool(row[7]),
    )


def _article_record(row: tuple[Any, ...]) -> ArticleRecord:
    return ArticleRecord(
        article=Article.model_validate_json(row[0]),
        content_hash=row[1],
        fetched_at=float(row[2]),
        last_used_at=float(row[3]),
        chunk_count=int(row[4]),
        origin=str(row[5]),
    )
