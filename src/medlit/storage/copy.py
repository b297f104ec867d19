"""Copy an embedded SQLite store into a PostgreSQL store (``medlit db copy``).

Everything moves: tier-1 answers (in LRU order, so the order survives), articles with their
chunks and vectors, the embedding memo, the counters, and the tables of the other components
(chat sessions, research jobs, and any other component table both databases hold). Nothing is
deleted from either side.

Idempotent: every row is inserted with ``ON CONFLICT DO NOTHING`` on its natural key (an
answer's namespace/fingerprint/question, an article's key, a chunk's id, a job's id...), and the
counters are added once per source database (its ``db_id`` is recorded in ``meta``), so a
second run changes nothing. Rows already in PostgreSQL win over the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medlit.storage.postgres import PostgresStore
from medlit.storage.sqlite import SqliteStore

__all__ = ["CopyReport", "copy_store"]

_BATCH = 1000
# The store's own tables (copied by hand above) and bookkeeping that must not be copied.
_CORE = {"meta", "counters", "embedding_memo", "answers", "articles", "chunks", "ann_log"}


@dataclass
class CopyReport:
    """Rows read from the source and rows inserted into the target, per table."""

    read: dict[str, int] = field(default_factory=dict)
    inserted: dict[str, int] = field(default_factory=dict)

    def add(self, table: str, read: int, inserted: int) -> None:
        """Count one batch."""
        self.read[table] = self.read.get(table, 0) + read
        self.inserted[table] = self.inserted.get(table, 0) + inserted


def copy_store(
    src: SqliteStore,
    dst: PostgresStore,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> CopyReport:
    """Copy everything in ``src`` into ``dst`` (see the module docstring); returns the counts.

    The component tables must exist in ``dst`` (apply their migrations first, as ``medlit db
    copy`` does); a component table missing there is skipped and reported with 0 inserted.
    """
    report = CopyReport()
    note = progress or (lambda table, n: None)
    _copy_answers(src, dst, report, note)
    _copy_evidence(src, dst, report, note)
    _copy_memo(src, dst, report, note)
    _copy_counters(src, dst, report)
    for table in _component_tables(src):
        _copy_table(src, dst, table, report, note)
    return report


def _copy_answers(
    src: SqliteStore, dst: PostgresStore, report: CopyReport, note: Callable[[str, int], None]
) -> None:
    last = -1
    while True:
        rows = src.read(
            "SELECT lru, namespace, fingerprint, question, question_hash, payload, "
            "retrieval_score, embedding, created_at, last_used_at, hits, origin, frame, "
            "checked_at, basis FROM answers WHERE lru > ? ORDER BY lru LIMIT ?",
            (last, _BATCH),
        )
        if not rows:
            return
        last = rows[-1][0]
        with dst.transaction() as conn:
            cur = conn.raw.cursor()
            cur.executemany(
                "INSERT INTO answers (namespace, fingerprint, question, question_hash, payload, "
                "retrieval_score, embedding, created_at, last_used_at, hits, origin, frame, "
                "checked_at, basis) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (namespace, fingerprint, question_hash) DO NOTHING",
                [(*r[1:7], _vec(r[7]), *r[8:]) for r in rows],
            )
            report.add("answers", len(rows), max(cur.rowcount, 0))
        note("answers", report.read["answers"])


def _copy_evidence(
    src: SqliteStore, dst: PostgresStore, report: CopyReport, note: Callable[[str, int], None]
) -> None:
    last = -1
    while True:
        articles = src.read(
            "SELECT lru, key, pmid, doi, year, study_type, data, content_hash, fetched_at, "
            "last_used_at, chunk_count, origin FROM articles WHERE lru > ? ORDER BY lru LIMIT ?",
            (last, _BATCH),
        )
        if not articles:
            return
        last = articles[-1][0]
        with dst.transaction() as conn:
            inserted: list[str] = []
            for row in articles:  # one by one: RETURNING says which were new
                got = conn.raw.execute(
                    "INSERT INTO articles (key, pmid, doi, year, study_type, data, content_hash, "
                    "fetched_at, last_used_at, chunk_count, origin) VALUES "
                    "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (key) DO NOTHING RETURNING key",
                    row[1:],
                ).fetchone()
                if got is not None:
                    inserted.append(str(got[0]))
            report.add("articles", len(articles), len(inserted))
            # Chunks only of articles new here: an article already in PostgreSQL keeps its own.
            for start in range(0, len(inserted), 200):
                keys = inserted[start : start + 200]
                marks = ",".join("?" * len(keys))
                chunks = src.read(
                    "SELECT chunk_id, article_key, ordinal, section, text, is_conclusion, "
                    "from_full_text, embedding FROM chunks "
                    f"WHERE article_key IN ({marks}) ORDER BY id",
                    keys,
                )
                cur = conn.raw.cursor()
                cur.executemany(
                    "INSERT INTO chunks (chunk_id, article_key, ordinal, section, text, "
                    "is_conclusion, from_full_text, embedding) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (chunk_id) DO NOTHING",
                    [(*c[:7], _vec(c[7])) for c in chunks],
                )
                report.add("chunks", len(chunks), max(cur.rowcount, 0))
        note("articles", report.read["articles"])


def _copy_memo(
    src: SqliteStore, dst: PostgresStore, report: CopyReport, note: Callable[[str, int], None]
) -> None:
    last: tuple[str, str] = ("", "")
    while True:
        rows = src.read(
            "SELECT model, hash, vector, created_at FROM embedding_memo "
            "WHERE model > ? OR (model = ? AND hash > ?) ORDER BY model, hash LIMIT ?",
            (last[0], last[0], last[1], _BATCH),
        )
        if not rows:
            return
        last = (rows[-1][0], rows[-1][1])
        with dst.transaction() as conn:
            cur = conn.raw.cursor()
            cur.executemany(
                "INSERT INTO embedding_memo (model, hash, vector, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (model, hash) DO NOTHING",
                rows,
            )
            report.add("embedding_memo", len(rows), max(cur.rowcount, 0))
        note("embedding_memo", report.read["embedding_memo"])


def _copy_counters(src: SqliteStore, dst: PostgresStore, report: CopyReport) -> None:
    rows = src.read("SELECT name, value FROM counters ORDER BY name")
    with dst.transaction() as conn:
        # Counters add up, so they may be added only once per source database.
        first = conn.raw.execute(
            "INSERT INTO meta (key, value) VALUES (%s, 'counters') "
            "ON CONFLICT (key) DO NOTHING RETURNING key",
            (f"copied_from:{src.db_id}",),
        ).fetchone()
        inserted = 0
        if first is not None and rows:
            cur = conn.raw.cursor()
            cur.executemany(
                "INSERT INTO counters (name, value) VALUES (%s, %s) ON CONFLICT (name) "
                "DO UPDATE SET value = counters.value + excluded.value",
                rows,
            )
            inserted = len(rows)
    report.add("counters", len(rows), inserted)


def _component_tables(src: SqliteStore) -> list[str]:
    rows = src.read(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name"
    )
    return [str(r[0]) for r in rows if r[0] not in _CORE]


def _copy_table(
    src: SqliteStore,
    dst: PostgresStore,
    table: str,
    report: CopyReport,
    note: Callable[[str, int], None],
) -> None:
    """A component table, column for column (the columns both sides have)."""
    theirs = {
        str(r[0])
        for r in dst.read(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = current_schema()",
            (table,),
        )
    }
    mine = [str(r[1]) for r in src.read(f'PRAGMA table_info("{table}")')]
    columns = [c for c in mine if c in theirs]
    if not columns:
        report.add(table, len(src.read(f'SELECT 1 FROM "{table}"')), 0)
        return
    names = ", ".join(f'"{c}"' for c in columns)
    offset = 0
    while True:
        rows = src.read(
            f'SELECT {names} FROM "{table}" ORDER BY rowid LIMIT ? OFFSET ?', (_BATCH, offset)
        )
        if not rows:
            return
        offset += len(rows)
        with dst.transaction() as conn:
            cur = conn.raw.cursor()
            cur.executemany(
                f'INSERT INTO "{table}" ({names}) VALUES ({", ".join(["%s"] * len(columns))}) '
                "ON CONFLICT DO NOTHING",
                rows,
            )
            report.add(table, len(rows), max(cur.rowcount, 0))
        note(table, report.read[table])


def _vec(blob: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.frombuffer(blob, dtype=np.float32)
