"""Numbered, append-only SQLite migrations (the simonw/llm pattern), per component.

A migration is a plain function ``(conn) -> None``; its ``__name__`` is its identity, recorded
in ``_migrations(component, name)`` once applied. Never edit or reorder a released migration:
append a new one. Migrations run inside the store's transaction, so they must use
``conn.execute`` (``executescript`` would commit half-way).

``CORE_MIGRATIONS`` are the store's own tables; other components (chat sessions, research
jobs) pass their own list to :meth:`medlit.storage.sqlite.SqliteStore.apply_migrations`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from medlit.storage.base import Connection, Migration
from medlit.storage.restudy import m005_study_types_from_text, m006_randomised_in_methods

__all__ = ["CORE_MIGRATIONS", "apply_migrations", "ensure_migrations_table"]


def m001_core(conn: Connection) -> None:
    """Metadata, counters, the embedding memo and the ANN change log."""
    for sql in (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
        "CREATE TABLE embedding_memo (model TEXT NOT NULL, hash TEXT NOT NULL, "
        "vector BLOB NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (model, hash)) "
        "WITHOUT ROWID",
        # Every insert/delete of an indexed row, written by triggers in the same transaction.
        "CREATE TABLE ann_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, idx TEXT NOT NULL, "
        "key INTEGER NOT NULL)",
        "CREATE INDEX ann_log_idx ON ann_log (idx, seq)",
    ):
        conn.execute(sql)


def m002_answers(conn: Connection) -> None:
    """Tier 1: cached answers, mirrored into the ``answers`` ANN index."""
    for sql in (
        # AUTOINCREMENT: an id is never reused, so a stale index key can't name a new row.
        "CREATE TABLE answers (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "namespace TEXT NOT NULL, fingerprint TEXT NOT NULL, question TEXT NOT NULL, "
        "question_hash TEXT NOT NULL, payload TEXT NOT NULL, retrieval_score REAL NOT NULL, "
        "embedding BLOB NOT NULL, created_at REAL NOT NULL, last_used_at REAL NOT NULL, "
        "hits INTEGER NOT NULL DEFAULT 0, lru INTEGER NOT NULL)",
        "CREATE UNIQUE INDEX answers_question ON answers (namespace, fingerprint, question_hash)",
        # lru: a strictly increasing use sequence (timestamps tie; the order must not).
        "CREATE INDEX answers_lru ON answers (lru)",
        "CREATE INDEX answers_created ON answers (created_at)",
        "CREATE TRIGGER answers_ai AFTER INSERT ON answers BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('answers', new.id); END",
        "CREATE TRIGGER answers_ad AFTER DELETE ON answers BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('answers', old.id); END",
    ):
        conn.execute(sql)


def m003_evidence(conn: Connection) -> None:
    """Tier 2: articles and their chunks, mirrored into the ``chunks`` ANN index."""
    for sql in (
        "CREATE TABLE articles (key TEXT PRIMARY KEY, pmid TEXT, doi TEXT, year INTEGER, "
        "study_type INTEGER NOT NULL DEFAULT 0, data TEXT NOT NULL, content_hash TEXT NOT NULL, "
        "fetched_at REAL NOT NULL, last_used_at REAL NOT NULL, "
        "chunk_count INTEGER NOT NULL DEFAULT 0, lru INTEGER NOT NULL)",
        "CREATE INDEX articles_pmid ON articles (pmid)",
        "CREATE INDEX articles_lru ON articles (lru)",
        "CREATE INDEX articles_fetched ON articles (fetched_at)",
        "CREATE TABLE chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "chunk_id TEXT NOT NULL UNIQUE, "
        "article_key TEXT NOT NULL REFERENCES articles (key) ON DELETE CASCADE, "
        "ordinal INTEGER NOT NULL, section TEXT, text TEXT NOT NULL, "
        "is_conclusion INTEGER NOT NULL DEFAULT 0, embedding BLOB NOT NULL)",
        "CREATE INDEX chunks_article ON chunks (article_key, ordinal)",
        "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('chunks', new.id); END",
        "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('chunks', old.id); END",
    ):
        conn.execute(sql)


def m004_answers_per_namespace(conn: Connection) -> None:
    """One tier-1 ANN index per namespace: answer changes are logged as ``answers:<ns>``.

    A tenant's lookup then consults only its own entries: its work (and time) never depends
    on another tenant's answers. The old shared index's log rows are dropped (each namespace
    index is built from the table when first opened).
    """
    for sql in (
        "DROP TRIGGER answers_ai",
        "DROP TRIGGER answers_ad",
        "DELETE FROM ann_log WHERE idx = 'answers'",
        "CREATE TRIGGER answers_ai AFTER INSERT ON answers BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('answers:' || new.namespace, new.id); END",
        "CREATE TRIGGER answers_ad AFTER DELETE ON answers BEGIN "
        "INSERT INTO ann_log (idx, key) VALUES ('answers:' || old.namespace, old.id); END",
    ):
        conn.execute(sql)


def m007_full_text_chunks(conn: Connection) -> None:
    """Chunks say whether they come from an article's full text (PMC) or its abstract.

    Every chunk stored before is an abstract's (the default); the section label column was
    there already.
    """
    conn.execute("ALTER TABLE chunks ADD COLUMN from_full_text INTEGER NOT NULL DEFAULT 0")


def m008_origins(conn: Connection) -> None:
    """Answers and articles record the address they came from (:mod:`medlit.provenance`).

    Rows stored before have the empty origin ("unknown"): never served or reused again
    (fail closed), listed and dropped by ``medlit cache list|clear --source unknown``.
    """
    conn.execute("ALTER TABLE answers ADD COLUMN origin TEXT NOT NULL DEFAULT ''")
    conn.execute("ALTER TABLE articles ADD COLUMN origin TEXT NOT NULL DEFAULT ''")


def m009_answer_checks(conn: Connection) -> None:
    """Answers record when they were last checked for new articles, and the lease of a check
    under way (:meth:`medlit.storage.base.Store.claim_answer_check`): replicas sharing the
    store check an answer once. 0: never checked (stored answers count from ``created_at``).
    ``basis`` holds what the answer rests on (its searches, the keys of their articles, its
    sources: JSON), read by a check only, never by a hit; empty for answers stored before."""
    conn.execute("ALTER TABLE answers ADD COLUMN checked_at REAL NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE answers ADD COLUMN check_lease_until REAL NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE answers ADD COLUMN basis TEXT NOT NULL DEFAULT ''")


def m010_answer_frames(conn: Connection) -> None:
    """Answers keep the frame of the question they were cached under
    (:meth:`medlit.words.frame.QuestionFrame.stored`), which the cache's guard compares.

    Rows stored before have none (empty): their question is read again when compared
    (:func:`medlit.words.frame.frame_of`).
    """
    conn.execute("ALTER TABLE answers ADD COLUMN frame TEXT NOT NULL DEFAULT ''")


CORE_MIGRATIONS: list[Migration] = [
    m001_core,
    m002_answers,
    m003_evidence,
    m004_answers_per_namespace,
    m005_study_types_from_text,
    m006_randomised_in_methods,
    m007_full_text_chunks,
    m008_origins,
    m009_answer_checks,
    m010_answer_frames,
]


def ensure_migrations_table(conn: sqlite3.Connection) -> None:
    """Create the ``_migrations`` bookkeeping table if absent."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (component TEXT NOT NULL, name TEXT NOT NULL, "
        "applied_at REAL NOT NULL, PRIMARY KEY (component, name))"
    )


def applied(conn: sqlite3.Connection, component: str) -> set[str]:
    """Names of ``component``'s migrations already applied."""
    rows = conn.execute("SELECT name FROM _migrations WHERE component = ?", (component,))
    return {r[0] for r in rows}


def apply_migrations(
    conn: sqlite3.Connection, component: str, migrations: Sequence[Migration]
) -> int:
    """Apply the not-yet-applied ``migrations`` in order; the caller holds a transaction."""
    names = [m.__name__ for m in migrations]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate migration names for {component}: {names}")
    done = applied(conn, component)
    count = 0
    for migration in migrations:
        if migration.__name__ in done:
            continue
        migration(conn)
        conn.execute(
            "INSERT INTO _migrations (component, name, applied_at) VALUES (?, ?, ?)",
            (component, migration.__name__, time.time()),
        )
        count += 1
    return count
