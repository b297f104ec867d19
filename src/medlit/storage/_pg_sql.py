"""PostgreSQL plumbing of :class:`~medlit.storage.postgres.PostgresStore`.

* :func:`qmark_to_psycopg` turns the portable ``?`` placeholders of component SQL into
  psycopg's ``%s`` (and a literal ``%`` into ``%%``), leaving quoted strings, quoted identifiers
  and comments alone, so one SQL text runs on both engines.
* :class:`PgConnection` is the neutral :class:`~medlit.storage.base.Connection` over a psycopg
  connection.
* :class:`PgStoreParts` declares what the tier mixins (``_pg_answers``, ``_pg_evidence``) use
  of the store.
* :func:`core_migrations` are the store's own tables (numbered per component, recorded in
  ``_migrations`` like the SQLite ones), with pgvector HNSW indexes on both vector columns.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from medlit.storage.base import Connection, Cursor, Migration, Vector
from medlit.storage.restudy import m005_study_types_from_text, m006_randomised_in_methods

if TYPE_CHECKING:
    import psycopg

    from medlit.config import CacheSettings

__all__ = ["EF_MAX", "PgConnection", "PgStoreParts", "core_migrations", "qmark_to_psycopg"]

EF_MAX = 1000  # pgvector's ceiling for hnsw.ef_search


@functools.lru_cache(maxsize=1024)
def qmark_to_psycopg(sql: str) -> str:
    """``sql`` with ``?`` placeholders as ``%s`` and literal ``%`` doubled.

    psycopg scans the whole text for ``%`` placeholders, quotes included, so a ``%`` inside a
    string literal (``LIKE '%x'``) must be doubled too; a ``?`` inside quotes or a comment is
    text, not a parameter.
    """
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            j = i + 1
            while j < n:
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:  # '' or "" is an escaped quote
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1].replace("%", "%%"))
            i = j + 1
            continue
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            out.append(sql[i:j].replace("%", "%%"))
            i = j
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(sql[i:j].replace("%", "%%"))
            i = j
            continue
        out.append("%s" if ch == "?" else "%%" if ch == "%" else ch)
        i += 1
    return "".join(out)


class PgConnection:
    """A psycopg connection seen through the neutral :class:`~medlit.storage.base.Connection`.

    Every statement goes through :func:`qmark_to_psycopg` and is always sent with a parameter
    sequence (psycopg un-doubles ``%%`` only then).
    """

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        """Run one statement with ``?`` parameters."""
        return self.raw.execute(qmark_to_psycopg(sql), tuple(parameters))

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor:
        """Run one statement per parameter row (psycopg pipelines them)."""
        cur = self.raw.cursor()
        cur.executemany(qmark_to_psycopg(sql), [tuple(p) for p in parameters])
        return cur


class PgStoreParts:
    """What the tier mixins need of :class:`~medlit.storage.postgres.PostgresStore`, which
    provides it (it comes first in the MRO)."""

    dim: int
    _cfg: CacheSettings

    def transaction(self) -> AbstractContextManager[PgConnection]:
        raise NotImplementedError

    def _fetch(
        self, sql: str, params: Any = (), *, binary: bool = False, prepare: bool | None = None
    ) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _search(self, sql: str, params: Mapping[str, Any], ef: int) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _vector(self, embedding: Any) -> Vector:
        raise NotImplementedError


def core_migrations(dim: int, m: int, ef_construction: int) -> list[Migration]:
    """The store's tables for vectors of ``dim`` dimensions (HNSW ``m``, ``ef_construction``).

    The names match the SQLite backend's (one component, ``core``); the bodies are PostgreSQL's
    own (identity ids that are never reused, sequences for the LRU order, ``vector`` columns).
    """
    hnsw = (
        "USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
    )

    def m001_core(conn: Connection) -> None:
        for sql in (
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
            "CREATE TABLE embedding_memo (model TEXT NOT NULL, hash TEXT NOT NULL, "
            "vector BYTEA NOT NULL, created_at DOUBLE PRECISION NOT NULL, "
            "PRIMARY KEY (model, hash))",
            "CREATE INDEX embedding_memo_created ON embedding_memo (created_at)",
        ):
            conn.execute(sql)

    def m002_answers(conn: Connection) -> None:
        for sql in (
            # A sequence, not max(lru) + 1: strictly increasing across concurrent writers.
            "CREATE SEQUENCE answers_lru_seq",
            "CREATE TABLE answers (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "namespace TEXT NOT NULL, fingerprint TEXT NOT NULL, question TEXT NOT NULL, "
            "question_hash TEXT NOT NULL, payload TEXT NOT NULL, "
            "retrieval_score DOUBLE PRECISION NOT NULL, "
            f"embedding vector({dim}) NOT NULL, created_at DOUBLE PRECISION NOT NULL, "
            "last_used_at DOUBLE PRECISION NOT NULL, hits BIGINT NOT NULL DEFAULT 0, "
            "lru BIGINT NOT NULL DEFAULT nextval('answers_lru_seq'))",
            "CREATE UNIQUE INDEX answers_question ON answers "
            "(namespace, fingerprint, question_hash)",
            "CREATE INDEX answers_lru ON answers (lru)",
            "CREATE INDEX answers_created ON answers (created_at)",
            f"CREATE INDEX answers_embedding ON answers {hnsw}",
        ):
            conn.execute(sql)

    def m003_evidence(conn: Connection) -> None:
        for sql in (
            "CREATE SEQUENCE articles_lru_seq",
            "CREATE TABLE articles (key TEXT PRIMARY KEY, pmid TEXT, doi TEXT, year INTEGER, "
            "study_type INTEGER NOT NULL DEFAULT 0, data TEXT NOT NULL, "
            "content_hash TEXT NOT NULL, fetched_at DOUBLE PRECISION NOT NULL, "
            "last_used_at DOUBLE PRECISION NOT NULL, chunk_count INTEGER NOT NULL DEFAULT 0, "
            "lru BIGINT NOT NULL DEFAULT nextval('articles_lru_seq'))",
            "CREATE INDEX articles_pmid ON articles (pmid)",
            "CREATE INDEX articles_lru ON articles (lru)",
            "CREATE INDEX articles_fetched ON articles (fetched_at)",
            "CREATE TABLE chunks (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "chunk_id TEXT NOT NULL UNIQUE, "
            "article_key TEXT NOT NULL REFERENCES articles (key) ON DELETE CASCADE, "
            "ordinal INTEGER NOT NULL, section TEXT, text TEXT NOT NULL, "
            f"is_conclusion INTEGER NOT NULL DEFAULT 0, embedding vector({dim}) NOT NULL)",
            "CREATE INDEX chunks_article ON chunks (article_key, ordinal)",
            f"CREATE INDEX chunks_embedding ON chunks {hnsw}",
        ):
            conn.execute(sql)

    def m007_full_text_chunks(conn: Connection) -> None:
        conn.execute("ALTER TABLE chunks ADD COLUMN from_full_text INTEGER NOT NULL DEFAULT 0")

    def m008_origins(conn: Connection) -> None:
        conn.execute("ALTER TABLE answers ADD COLUMN origin TEXT NOT NULL DEFAULT ''")
        conn.execute("ALTER TABLE articles ADD COLUMN origin TEXT NOT NULL DEFAULT ''")

    def m009_answer_checks(conn: Connection) -> None:
        conn.execute(
            "ALTER TABLE answers ADD COLUMN checked_at DOUBLE PRECISION NOT NULL DEFAULT 0"
        )
        conn.execute(
            "ALTER TABLE answers ADD COLUMN check_lease_until DOUBLE PRECISION NOT NULL DEFAULT 0"
        )
        conn.execute("ALTER TABLE answers ADD COLUMN basis TEXT NOT NULL DEFAULT ''")

    def m010_answer_frames(conn: Connection) -> None:
        conn.execute("ALTER TABLE answers ADD COLUMN frame TEXT NOT NULL DEFAULT ''")

    # SQLite's m004 (an ANN index file per namespace) has no counterpart here.
    return [
        m001_core,
        m002_answers,
        m003_evidence,
        m005_study_types_from_text,
        m006_randomised_in_methods,
        m007_full_text_chunks,
        m008_origins,
        m009_answer_checks,
        m010_answer_frames,
    ]
