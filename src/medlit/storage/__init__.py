"""Storage: the store protocol and its embedded SQLite + usearch backend.

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
    "Migration",
    "SqliteStore",
    "Store",
    "open_store",
]


def open_store(settings: Settings) -> SqliteStore:
    """The store the settings name: today the embedded SQLite store at ``settings.db_path``."""
    return SqliteStore.open(settings)
