"""The local corpus: your own PubMed XML / MEDLINE files, searched with SQLite FTS5.

Why FTS5: it ships inside the standard library's sqlite3 (no extra dependency, nothing to
download), ranks with BM25, and an index update is an ordinary transaction, so re-adding a file
is idempotent and a failed file leaves the corpus as it was. The corpus lives in its own file,
``settings.home / "corpus.sqlite3"``, so it can be copied or deleted on its own.

Queries are never passed to FTS5 as syntax: they are cut into words, each word quoted, and the
words OR-ed, so quotes, parentheses, ``AND``, ``-`` or ``*`` in a question cannot raise; BM25
ranks the articles matching more (and rarer) words first.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import sqlite3
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from medlit.config import Settings
from medlit.datadir import require_data_dir
from medlit.errors import SourceError, SourceResponseError, StorageError
from medlit.sources.base import FreshArticles
from medlit.sources.medline import iter_medline_records, record_to_article
from medlit.sources.pubmed_xml import iter_pubmed_articles
from medlit.text import remove_control_chars
from medlit.types import Article, SearchQuery
from medlit.usage import record_call
from medlit.words import stop_words
from medlit.words.tokens import UNICODE_WORDS as _WORD

__all__ = ["AddResult", "LocalCorpus", "LocalSource", "fts_query"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS articles (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    pmid TEXT,
    doi TEXT,
    year INTEGER,
    language TEXT,
    has_abstract INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    data TEXT NOT NULL,
    source_file TEXT,
    added_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS articles_pmid ON articles (pmid);
CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
    title, abstract, terms, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    articles INTEGER NOT NULL,
    added_at REAL NOT NULL
);
"""
_STOP = stop_words("query")
# Title matches count most, then MeSH/keywords, then the abstract.
_BM25 = "bm25(articles_fts, 8.0, 1.0, 3.0)"


def fts_query(text: str) -> str | None:
    """A user's words as a safe FTS5 query (quoted words OR-ed), or None if no words."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    if not words:
        words = _WORD.findall(text.lower())
    unique = list(dict.fromkeys(words))[:64]
    return " OR ".join(f'"{w}"' for w in unique) if unique else None


@dataclass
class AddResult:
    """What adding one file (or batch) did."""

    added: int = 0
    updated: int = 0
    skipped: int = 0

    @property
    def total(self) -> int:
        """Records read."""
        return self.added + self.updated + self.skipped


def _open(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]  # GzipFile is IO[bytes]
    return path.open("rb")


def read_articles(path: Path) -> Iterator[Article]:
    """Articles of a PubMed XML (``.xml``, ``.xml.gz``) or MEDLINE text file.

    Raises:
        SourceResponseError: the file is neither, or is damaged.
        OSError: the file cannot be read.
    """
    count = 0
    with _open(path) as stream:
        head = stream.peek(64)[:64] if hasattr(stream, "peek") else b""
        if head.lstrip().startswith(b"<"):
            for article in iter_pubmed_articles(stream, source="local"):
                count += 1
                yield article
        else:
            # NUL and other control bytes never reach the stored text (nor a terminal).
            text = (remove_control_chars(line.decode("utf-8", errors="replace")) for line in stream)
            for record in iter_medline_records(text):
                count += 1
                yield record_to_article(record, source="local")
    if count == 0:
        # A well-formed file of something else (an esearch result, say) is a mistake to report.
        raise SourceResponseError("no PubMed XML or MEDLINE records in it", source="local")


class LocalCorpus:
    """The corpus database (synchronous; :class:`LocalSource` wraps it for searching).

    Args:
        path: the SQLite file (created with its schema on first use).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            require_data_dir(path.parent)
            self.conn = sqlite3.connect(path, timeout=30.0)
            self.conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"local corpus {path}: {exc}") from exc

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalCorpus:
        """The corpus under ``settings.home``."""
        return cls(settings.home / "corpus.sqlite3")

    def close(self) -> None:
        """Close the database."""
        self.conn.close()

    def __enter__(self) -> LocalCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _upsert(self, article: Article, source_file: str | None, result: AddResult) -> None:
        data = article.model_dump_json()
        digest = hashlib.sha256(data.encode()).hexdigest()
        row = self.conn.execute(
            "SELECT id, content_hash FROM articles WHERE key = ?", (article.key,)
        ).fetchone()
        now = time.time()
        fields = (
            article.pmid,
            article.doi,
            article.year,
            article.language,
            int(bool(article.abstract)),
            digest,
            data,
            source_file,
            now,
        )
        if row is not None and row[1] == digest:
            result.skipped += 1
            return
        if row is not None:
            self.conn.execute(
                "UPDATE articles SET pmid=?, doi=?, year=?, language=?, has_abstract=?, "
                "content_hash=?, data=?, source_file=?, updated_at=? WHERE id=?",
                (*fields, row[0]),
            )
            self.conn.execute("DELETE FROM articles_fts WHERE rowid = ?", (row[0],))
            rowid = row[0]
            result.updated += 1
        else:
            cursor = self.conn.execute(
                "INSERT INTO articles (pmid, doi, year, language, has_abstract, content_hash, "
                "data, source_file, updated_at, key, added_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (*fields, article.key, now),
            )
            rowid = cursor.lastrowid
            result.added += 1
        self.conn.execute(
            "INSERT INTO articles_fts (rowid, title, abstract, terms) VALUES (?, ?, ?, ?)",
            (
                rowid,
                article.title,
                article.abstract_text,
                " ".join(article.mesh_terms + article.keywords),
            ),
        )

    def add_articles(
        self, articles: Iterable[Article], *, source_file: str | None = None, progress: Any = None
    ) -> AddResult:
        """Add or update articles in one transaction (unchanged ones are skipped).

        Args:
            articles: the records.
            source_file: where they came from (kept for ``stats``).
            progress: optional callable called with the number of records done so far.
        """
        result = AddResult()
        try:
            with self.conn:
                for article in articles:
                    if not article.title and not article.abstract:
                        result.skipped += 1
                        continue
                    self._upsert(article, source_file, result)
                    if progress is not None and result.total % 200 == 0:
                        progress(result.total)
                if source_file is not None:
                    self.conn.execute(
                        "INSERT OR REPLACE INTO files VALUES (?, ?, ?)",
                        (source_file, result.total, time.time()),
                    )
        except sqlite3.Error as exc:
            raise StorageError(f"local corpus {self.path}: {exc}") from exc
        return result

    def add_file(self, path: Path, *, progress: Any = None) -> AddResult:
        """Ingest one file; all or nothing.

        Raises:
            SourceResponseError: the file is not PubMed XML / MEDLINE, or is damaged.
            SourceError: the file cannot be read.
        """
        try:
            return self.add_articles(
                read_articles(path), source_file=str(path.resolve()), progress=progress
            )
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise SourceError(f"{path}: cannot read ({reason})", source="local") from None
        except SourceResponseError as exc:
            raise SourceResponseError(f"{path}: {exc}", source="local") from None

    def search(self, query: SearchQuery) -> list[Article]:
        """Articles matching ``query`` by BM25 (or newest first with ``sort=pub_date``)."""
        match = fts_query(query.term)
        if match is None:
            return []
        where: list[str] = ["articles_fts MATCH ?"]
        args: list[str | int | float] = [match]
        if query.min_year is not None:
            where.append("a.year >= ?")
            args.append(query.min_year)
        if query.max_year is not None:
            where.append("a.year <= ?")
            args.append(query.max_year)
        if query.entered_since is not None:
            # added_at: when the record first entered this corpus (an update keeps it).
            where.append("a.added_at >= ?")
            args.append(query.entered_since.timestamp())
        order = f"a.year DESC, {_BM25}" if query.sort == "pub_date" else _BM25
        sql = (
            f"SELECT a.data FROM articles_fts JOIN articles a ON a.id = articles_fts.rowid "
            f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ? OFFSET ?"
        )
        try:
            rows = self.conn.execute(sql, (*args, query.limit, query.offset)).fetchall()
        except sqlite3.Error as exc:
            raise SourceError(f"local corpus search failed: {exc}", source="local") from exc
        return [Article.model_validate_json(row[0]) for row in rows]

    def get(self, pmids: Iterable[str]) -> dict[str, Article]:
        """Articles of the corpus among ``pmids``, keyed by PMID."""
        found = {}
        for pmid in pmids:
            row = self.conn.execute("SELECT data FROM articles WHERE pmid = ?", (pmid,)).fetchone()
            if row is not None:
                found[pmid] = Article.model_validate_json(row[0])
        return found

    def count(self) -> int:
        """Articles held."""
        return int(self.conn.execute("SELECT count(*) FROM articles").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        """Counts for ``medlit corpus stats``."""
        total, with_abstract, first, last = self.conn.execute(
            "SELECT count(*), coalesce(sum(has_abstract), 0), min(year), max(year) FROM articles"
        ).fetchone()
        languages = dict(
            self.conn.execute(
                "SELECT coalesce(language, 'unknown'), count(*) FROM articles "
                "GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
            ).fetchall()
        )
        files = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        return {
            "path": str(self.path),
            "articles": total,
            "with_abstract": with_abstract,
            "files": files,
            "first_year": first,
            "last_year": last,
            "languages": languages,
            "size_bytes": self.path.stat().st_size if self.path.exists() else 0,
        }


class LocalSource:
    """The local corpus as a :class:`~medlit.sources.base.Source`."""

    name = "local"

    def __init__(self, settings: Settings) -> None:
        self.path = settings.home / "corpus.sqlite3"

    def _search(self, query: SearchQuery) -> list[Article]:
        if not self.path.exists():
            return []
        # One connection per call: sqlite3 connections must stay in their thread.
        with LocalCorpus(self.path) as corpus:
            found = corpus.search(query)
        # The corpus's own, whatever record they were added from: an answer asked of the
        # local corpus keeps to the articles labelled so (medlit.cache.evidence).
        return [
            a if a.source == "local" else a.model_copy(update={"source": "local"}) for a in found
        ]

    async def search(
        self, query: SearchQuery, *, known: FreshArticles | None = None
    ) -> list[Article]:
        """Articles of the corpus matching ``query``, best first."""
        record_call(self.name)
        return await asyncio.to_thread(self._search, query)

    async def aclose(self) -> None:
        """Nothing to release (connections are per call)."""
