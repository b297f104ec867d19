"""Storage: the store protocol and its backends (embedded SQLite + usearch, PostgreSQL + pgvector).

:func:`open_store` is the entry point (it picks the backend the settings name); see
:mod:`medlit.storage.base` for the protocol every backend implements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from medlit.storage.base import (
    AnswerRecord,
    ArticleRecord,
    ChunkFilters,
    ChunkMatch,
    Connection,
    Cursor,
    Migration,
    Store,
)
from medlit.storage.sqlite import SqliteStore

if TYPE_CHECKING:
    from medlit.config import Settings

__all__ = [
    "AnswerRecord",
    "ArticleRecord",
    "ChunkFilters",
    "ChunkMatch",
    "Connection",
    "Cursor",
    "Migration",
    "SqliteStore",
    "Store",
    "open_store",
]


def open_store(settings: Settings) -> Store:
    """The store the settings name.

    ``settings.database_url`` set: the shared PostgreSQL + pgvector store there (psycopg is
    imported only then); unset: the embedded SQLite store at ``settings.db_path``.
    """
    if settings.database_url is not None:
        try:
            from medlit.storage.postgres import PostgresStore
        except ImportError as exc:
            from medlit.errors import ConfigError

            raise ConfigError(
                "database_url needs the PostgreSQL driver: pip install 'medlit[postgres]'"
            ) from exc
        return PostgresStore.open(settings)
    return SqliteStore.open(settings)
