"""Data migrations both backends run: stored articles' ``study_type`` read again.

The ``articles.study_type`` column (what ``ChunkFilters.study_types`` filters on) is computed
once, when an article is stored. When :attr:`medlit.types.Article.study_type` learns to read
more (here: the design an article states in its title and methods when PubMed has not indexed
its publication types yet), articles stored before keep the old value until fetched again, so
a filter for trials would miss one that the same answer's references call a trial. This
migration recomputes the column from each article's stored record, for the rows whose stored
design the new rules can change: a design the publication types gave is never changed (they
are read first), and the text's rules only add designs.

- m005: the design an article states in its title or methods (rows stored as "other");
- m006: "We randomized 42 patients", "randomly divided into 2 groups", "randomization of 206
  patients": trials the first rules read as "other", or as observational (a "prospective"
  trial); and "500 consecutive cases", "a longitudinal study", "mean follow-up was 26 months":
  observational studies they read as "other".
"""

from __future__ import annotations

from medlit.storage.base import Connection
from medlit.types import Article, StudyType

__all__ = ["m005_study_types_from_text", "m006_randomised_in_methods"]

BATCH = 500  # rows read per query: a large store is never held in memory at once


def m005_study_types_from_text(conn: Connection) -> None:
    """Give each stored "other" article the design its title or methods state, if any."""
    restudy(conn, [StudyType.OTHER])


def m006_randomised_in_methods(conn: Connection) -> None:
    """Read again the articles stored as "other" or observational: trials whose methods say
    "we randomized" or "randomly divided" were one of those."""
    restudy(conn, [StudyType.OTHER, StudyType.OBSERVATIONAL])


def restudy(conn: Connection, stored: list[StudyType]) -> None:
    """Recompute ``articles.study_type`` for the rows stored as one of ``stored``."""
    marks = ", ".join("?" * len(stored))
    last = ""
    while True:
        rows = conn.execute(
            f"SELECT key, data, study_type FROM articles WHERE study_type IN ({marks}) "
            f"AND key > ? ORDER BY key LIMIT {BATCH}",
            (*(int(t) for t in stored), last),
        ).fetchall()
        if not rows:
            return
        for key, data, before in rows:
            try:
                study_type = Article.model_validate_json(data).study_type
            except ValueError:  # a record this version cannot read keeps its value
                continue
            if int(study_type) != int(before):
                conn.execute(
                    "UPDATE articles SET study_type = ? WHERE key = ?", (int(study_type), key)
                )
        last = str(rows[-1][0])
