"""The store protocol: what the caches (and other components) need from a database.

One interface, one backend per module: :class:`~medlit.storage.sqlite.SqliteStore` (embedded
default: one SQLite file plus usearch ANN indexes) and
:class:`~medlit.storage.postgres.PostgresStore` (PostgreSQL + pgvector, shared by many service
replicas and workers). ``tests/contract/test_store_contract.py`` is the conformance suite every
backend must pass.

The store holds *mechanism* (rows, vectors, nearest neighbours, counters); the caches in
:mod:`medlit.cache` hold *policy* (thresholds, TTL, LRU capacity, the guard). Similarities a
store returns are exact cosine similarities of the stored float32 vectors (an ANN index may
propose candidates, but never decides).

Other components (chat sessions, research jobs, API keys) keep their own tables in the same
database: they register migrations with :meth:`Store.apply_migrations`, write inside
:meth:`Store.transaction` and read with :meth:`Store.read`. They see only the neutral
:class:`Connection` / :class:`Cursor` shapes below, never an engine's own objects, and their SQL
is the *portable subset* both engines run unchanged:

* qmark ``?`` parameters (the PostgreSQL backend translates them; a literal ``%`` is fine);
* ``INSERT ... ON CONFLICT (...) DO UPDATE SET col = excluded.col`` or ``DO NOTHING`` (never
  ``INSERT OR REPLACE`` / ``OR IGNORE``);
* types ``TEXT``, ``INTEGER``, ``BIGINT``, ``DOUBLE PRECISION`` (never ``REAL``: it is 4 bytes
  on PostgreSQL), ids chosen by the caller (no ``AUTOINCREMENT``, ``rowid``, ``lastrowid``);
* no engine-only functions (``substr``, ``coalesce``, ``count``, ``lower`` are fine; scalar
  ``max(a, b)`` is not), ``LIKE ... ESCAPE '\\'`` is fine;
* a claim is an atomic conditional ``UPDATE ... WHERE ...`` whose ``rowcount`` says who won.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from medlit.types import Article, Chunk

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CHUNK_COLUMNS",
    "AnswerRecord",
    "ArticleRecord",
    "ChunkFilters",
    "ChunkMatch",
    "Connection",
    "Cursor",
    "Migration",
    "Store",
    "chunk_rows",
    "question_hash",
]

# numpy is imported where vectors are used: a cached answer read by its key needs none.
Vector: TypeAlias = "npt.NDArray[np.float32]"


class Cursor(Protocol):
    """The result of :meth:`Connection.execute`: rows as tuples, and the rows a write changed."""

    def fetchone(self) -> Any:
        """The next row (a tuple), or None."""
        ...

    def fetchall(self) -> list[Any]:
        """The remaining rows (tuples)."""
        ...

    @property
    def rowcount(self) -> int:
        """Rows changed by an INSERT/UPDATE/DELETE (-1 when unknown)."""
        ...


class Connection(Protocol):
    """What a component gets inside :meth:`Store.transaction` and in a migration.

    Both backends hand out something of this shape (``sqlite3.Connection`` satisfies it as it
    is; the PostgreSQL backend wraps psycopg's). SQL uses qmark ``?`` parameters and the
    portable subset described in this module's docstring.
    """

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        """Run one statement."""
        ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor:
        """Run one statement once per parameter row."""
        ...


#: A migration: a named function that changes the schema through a connection.
Migration = Callable[[Connection], None]


@dataclass
class AnswerRecord:
    """One tier-1 entry as stored.

    Attributes:
        id: store-assigned key (never reused).
        namespace: tenant scope.
        fingerprint: hash of the settings that shaped the answer.
        question: the question the answer was cached under.
        payload: the cached answer (JSON-ready dict; the store returns a fresh copy).
        retrieval_score: the retrieval score of the evidence behind the answer.
        created_at: epoch seconds when stored.
        last_used_at: epoch seconds of the last hit (LRU position).
        hits: times served.
        origin: the addresses of the sources it was asked of (:mod:`medlit.provenance`;
            empty: stored before origins were recorded).
        frame: the frame of ``question`` as stored (:meth:`medlit.words.frame.QuestionFrame.
            stored`; empty: none stored), loaded by :func:`medlit.words.frame.frame_of`.
        checked_at: epoch seconds of the last check for new articles (0: never checked since
            it was stored; :attr:`last_checked` is then ``created_at``).
    """

    id: int
    namespace: str
    fingerprint: str
    question: str
    payload: dict[str, Any]
    retrieval_score: float
    created_at: float
    last_used_at: float
    hits: int = 0
    origin: str = ""
    frame: str = ""
    checked_at: float = 0.0

    @property
    def last_checked(self) -> float:
        """When the answer was last known to rest on everything its searches find: stored,
        or checked for new articles since (epoch seconds)."""
        return max(self.created_at, self.checked_at)


@dataclass
class ArticleRecord:
    """An article held by the evidence cache, with when it was fetched and last used, and the
    address of the source it came from (``origin``: empty when stored before origins were
    recorded; :mod:`medlit.provenance`)."""

    article: Article
    content_hash: str
    fetched_at: float
    last_used_at: float
    chunk_count: int = 0
    origin: str = ""


@dataclass
class ChunkFilters:
    """Restrictions on a chunk search (all optional, combined with AND).

    Attributes:
        article_keys: only chunks of these articles (``Article.key``).
        pmids: only chunks of articles with these PMIDs.
        min_year: only articles published in or after this year.
        study_types: only articles whose ``StudyType`` value is in this set.
        fetched_after: only articles fetched after this epoch time (the TTL cut-off).
    """

    article_keys: Sequence[str] | None = None
    pmids: Sequence[str] | None = None
    min_year: int | None = None
    study_types: set[int] | None = None
    fetched_after: float | None = None


@dataclass
class ChunkMatch:
    """A chunk found by a vector search, with its article, exact cosine similarity and the
    address its article came from (``origin``)."""

    chunk: Chunk
    article: Article
    similarity: float
    extra: dict[str, Any] = field(default_factory=dict)
    origin: str = ""


@runtime_checkable
class Store(Protocol):
    """What every storage backend provides. Methods are synchronous and thread-safe."""

    read_concurrency: int
    """How many reads gain from running at once (the answer-cache lookup lane's threads)."""

    # -- lifecycle and generic helpers -------------------------------------------------
    def close(self) -> None:
        """Flush indexes and release the database."""
        ...

    def add_close_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` at the start of :meth:`close` (caches flush buffered writes)."""
        ...

    def __enter__(self) -> Any:
        """The store itself (``with open_store(settings) as store``)."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        ...

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction (COMMIT at the end, ROLLBACK on error; nests as a savepoint)."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query (portable SQL, ``?`` parameters); errors become StorageError."""
        ...

    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply ``component``'s migrations not yet applied, in order; returns how many ran."""
        ...

    def bump_counters(self, counts: Mapping[str, int]) -> None:
        """Add to named counters (cache statistics)."""
        ...

    def counters(self, prefix: str = "") -> dict[str, int]:
        """Counters whose name starts with ``prefix``."""
        ...

    def size_on_disk(self) -> dict[str, int]:
        """Bytes used per file (database, WAL, indexes)."""
        ...

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        """Memoised embeddings of texts by content hash."""
        ...

    def put_embeddings(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        """Memoise embeddings by content hash."""
        ...

    # -- tier 1: answers ---------------------------------------------------------------
    def insert_answer(
        self,
        *,
        namespace: str,
        fingerprint: str,
        question: str,
        embedding: Vector,
        payload: Mapping[str, Any],
        retrieval_score: float,
        now: float,
        origin: str = "",
        frame: str = "",
        basis: Mapping[str, Any] | None = None,
    ) -> int:
        """Store an answer (replacing one for the same question, namespace and fingerprint),
        with the addresses it came from (``origin``), its question's frame as stored
        (``frame``: :meth:`medlit.words.frame.QuestionFrame.stored`; empty: none) and what it
        rests on (``basis``, kept apart from the payload: see :meth:`answer_basis`)."""
        ...

    def search_answers(
        self,
        embedding: Vector,
        *,
        min_similarity: float,
        namespace: str | None = None,
        fingerprint: str | None = None,
        limit: int = 10,
    ) -> list[tuple[AnswerRecord, float]]:
        """Answers with cosine similarity >= ``min_similarity`` (best first), any age."""
        ...

    def get_answer(self, answer_id: int) -> AnswerRecord | None:
        """One answer by id."""
        ...

    def answer_for_question(
        self, question: str, *, namespace: str, fingerprint: str
    ) -> AnswerRecord | None:
        """The answer stored under exactly ``question`` (:func:`question_hash`) in one
        namespace and fingerprint, or None: a keyed read, with no vector index."""
        ...

    def touch_answers(self, answer_ids: Sequence[int], now: float) -> None:
        """Record hits, in order: move each answer to the LRU front and count it."""
        ...

    def claim_answer_check(
        self, answer_id: int, *, now: float, due_before: float, lease_s: float
    ) -> bool:
        """Take the lease to check answer ``answer_id`` for new articles, atomically: True
        only when it exists, was last checked (or stored) at or before ``due_before`` and no
        unexpired lease is held on it; the lease then runs ``lease_s`` seconds from ``now``.
        Of several processes sharing the store, one gets it; the others serve the answer as
        it is."""
        ...

    def answer_basis(self, answer_id: int) -> dict[str, Any]:
        """What answer ``answer_id`` rests on, as stored with it (``insert_answer``'s
        ``basis``): a check for new articles reads it, a hit never does. Empty when there is
        none (stored before, or no such answer)."""
        ...

    def finish_answer_check(self, answer_id: int, *, checked_at: float | None) -> None:
        """Release the check lease of ``answer_id``; ``checked_at``: record the check done
        then (None: the check failed, the answer stays due)."""
        ...

    def answers_due(
        self, *, checked_before: float, namespace: str | None = None, limit: int = 1000
    ) -> list[AnswerRecord]:
        """Answers last checked (or stored) before ``checked_before`` (of one namespace, or
        all), longest unchecked first."""
        ...

    def delete_answers(self, answer_ids: Sequence[int]) -> int:
        """Delete answers by id; returns how many existed."""
        ...

    def purge_answers(self, *, created_before: float) -> int:
        """Delete answers created before a time (expired); returns how many."""
        ...

    def evict_answers(self, capacity: int) -> int:
        """Delete least recently used answers until at most ``capacity`` remain."""
        ...

    def count_answers(self, namespace: str | None = None) -> int:
        """Answers held (in one namespace, or all)."""
        ...

    def clear_answers(self, namespace: str | None = None) -> int:
        """Delete every answer (of one namespace, or all); returns how many."""
        ...

    def answer_lru_order(self) -> list[int]:
        """Answer ids from least to most recently used (tests, diagnostics)."""
        ...

    # -- tier 2: evidence --------------------------------------------------------------
    def get_articles(self, keys: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by ``Article.key`` (any age)."""
        ...

    def get_articles_by_pmid(self, pmids: Sequence[str]) -> dict[str, ArticleRecord]:
        """Stored articles by PMID (any age)."""
        ...

    def publication_types_by_pmid(self, pmids: Sequence[str]) -> dict[str, list[str]]:
        """The publication types of the stored articles of ``pmids`` (any age; of every
        article stored under a PMID), read without the rest of each article: a cached answer
        checks its citations for a retraction on every hit."""
        ...

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
        """Store an article with the address it came from (``origin``); ``chunks`` None keeps
        its chunks and only refreshes it."""
        ...

    def add_chunks(self, article_key: str, chunks: Sequence[Chunk], embeddings: Vector) -> int:
        """Add chunks to a stored article, keeping those it holds (a chunk id already held is
        left as it is); returns the chunks added (0 if the article is not stored)."""
        ...

    def touch_articles(self, keys: Sequence[str], now: float) -> None:
        """Move articles to the LRU front."""
        ...

    def search_chunks(
        self, embedding: Vector, k: int, filters: ChunkFilters | None = None
    ) -> list[ChunkMatch]:
        """The ``k`` chunks most similar to ``embedding`` that pass ``filters``, best first."""
        ...

    def article_chunks(self, article_key: str) -> list[Chunk]:
        """An article's chunks in order."""
        ...

    def purge_articles(self, *, fetched_before: float) -> tuple[int, int]:
        """Delete articles fetched before a time; returns (articles, chunks) deleted."""
        ...

    def evict_articles(self, chunk_capacity: int) -> tuple[int, int]:
        """Delete least recently used articles until at most ``chunk_capacity`` chunks remain."""
        ...

    def count_articles(self) -> int:
        """Articles held."""
        ...

    def count_chunks(self) -> int:
        """Chunks held."""
        ...

    def clear_evidence(self) -> tuple[int, int]:
        """Delete every article and chunk; returns (articles, chunks) deleted."""
        ...


def question_hash(question: str) -> str:
    """The key an answer is stored under for its question (one per namespace and fingerprint).

    Every backend uses this one function, so a copied store keeps its keys.
    """
    import hashlib

    return hashlib.sha256(question.strip().lower().encode()).hexdigest()[:32]


def chunk_rows(
    article_key: str, chunks: Sequence[Chunk], vectors: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """The rows of ``chunks`` (with their stored ``vectors``) in the column order of
    :data:`CHUNK_COLUMNS`, for a backend's ``INSERT INTO chunks``."""
    return [
        (
            c.id,
            article_key,
            c.ordinal,
            c.section,
            c.text,
            int(c.is_conclusion),
            int(c.from_full_text),
            v,
        )
        for c, v in zip(chunks, vectors, strict=True)
    ]


#: The columns :func:`chunk_rows` fills, in order.
CHUNK_COLUMNS = (
    "chunk_id, article_key, ordinal, section, text, is_conclusion, from_full_text, embedding"
)


def iter_batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """Slices of ``items`` of at most ``size`` (SQLite caps bound parameters)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
