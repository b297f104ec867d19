"""A data migration both backends run: stored articles' ``study_type`` read again.

The ``articles.study_type`` column (what ``ChunkFilters.study_types`` filters on) is computed
once, when an article is stored. When :attr:`medlit.types.Article.study_type` learns to read
more (here: the design an article states in its title and methods when PubMed has not indexed
its publication types yet), articles stored before keep the old value until fetched again, so
a filter for trials would miss one that the same answer's references call a trial. This
migration recomputes the column from each article's stored record. Only rows stored as "other"
are read: the rules only ever turn "other" into a design, never change a design the
publication types gave.
"""

from __future__ import annotations

from medlit.storage.base import Connection
from medlit.types import Article, StudyType

__all__ = ["m005_study_types_from_text"]

BATCH = 500  # rows read per query: a large store is never held in memory at once


def m005_study_types_from_text(conn: Connection) -> None:
    """Give each stored "other" article the design its title or methods state, if any."""
    last = ""
    while True:
        rows = conn.execute(
            "SELECT key, data FROM articles WHERE study_type = ? AND key > ? "
            f"ORDER BY key LIMIT {BATCH}",
            (int(StudyType.OTHER), last),
        ).fetchall()
        if not rows:
            return
        for key, data in rows:
            try:
                study_type = Article.model_validate_json(data).study_type
            except ValueError:  # a record this version cannot read keeps its value
                continue
            if study_type is not StudyType.OTHER:
                conn.execute(
                    "UPDATE articles SET study_type = ? WHERE key = ?", (int(study_type), key)
                )
        last = str(rows[-1][0])
