"""Storage: the store protocol and its embedded SQLite + usearch backend.

``SqliteStore.open(settings)`` is the entry point; see :mod:`medlit.storage.base` for the
protocol a PostgreSQL + pgvector backend will implement.
"""

from __future__ import annotations

from medlit.storage.base import (
    AnswerRecord,
    ArticleRecord,
    ChunkFilters,
    ChunkMatch,
    Migration,
    Store,
)
from medlit.storage.sqlite import SqliteStore

__all__ = [
    "AnswerRecord",
    "ArticleRecord",
    "ChunkFilters",
    "ChunkMatch",
    "Migration",
    "SqliteStore",
    "Store",
]
