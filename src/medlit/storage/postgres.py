"""The shared store: PostgreSQL with pgvector, for several service replicas and workers.

``PostgresStore.open(settings)`` connects to ``settings.database_url`` (``postgresql://...``),
creates the ``vector`` extension if it is missing, and applies the core migrations. Tier-1
answers and tier-2 chunks are rows with ``vector`` columns, each with an HNSW index
(``vector_cosine_ops``) that only proposes candidates: every similarity returned is recomputed
exactly from the stored float32 vector, as in the SQLite backend. Ids come from identity columns
(never reused) and LRU positions from sequences, so any number of processes on any number of
hosts can write at once.

Connections come from a ``psycopg_pool.ConnectionPool`` (autocommit: a read is one round trip);
:meth:`PostgresStore.transaction` holds one pooled connection for its block (and a nested call
on the same thread becomes a savepoint of it). Hot queries are server-side prepared. The HNSW
candidate list (``hnsw.ef_search``) is set per tier: ``pg_ef_search_answers`` for
answers, ``pg_ef_search_chunks`` for chunks, widened when a search asks for more rows.

Component SQL (jobs, sessions, API keys) arrives with ``?`` placeholders through
:class:`~medlit.storage._pg_sql.PgConnection`, which translates them.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from medlit.config import mask_url
from medlit.errors import StorageError
from medlit.storage._pg_answers import PgAnswerOps
from medlit.storage._pg_evidence import PgEvidenceOps
from medlit.storage._pg_sql import EF_MAX, PgConnection, core_migrations, qmark_to_psycopg
from medlit.storage.base import Migration, Vector

if TYPE_CHECKING:
    from medlit.config import CacheSettings, Settings

__all__ = ["PostgresStore"]

_MEMO_CAP = 100_000
_TABLES = ("answers", "articles", "chunks", "embedding_memo", "counters")


def _reason(exc: BaseException) -> str:
    """psycopg's message on one line: libpq writes its hint on a second, tab-indented line
    ("Connection refused\n\tIs the server running ..."), and an error is one line."""
    return " ".join(str(exc).split())


class PostgresStore(PgAnswerOps, PgEvidenceOps):
    """The PostgreSQL + pgvector implementation of :class:`medlit.storage.base.Store`.

    Args:
        url: a ``postgresql://`` connection URL (libpq's, so ``?options=-csearch_path=...``
            and the ``PG*`` environment variables work).
        dim: embedding dimension of every vector stored (fixed when the tables are created).
        cache: index parameters (HNSW ``m``, ``ef_construction``, ``ef_search`` per tier).
        pool_size: connections this process keeps at most.
    """

    def __init__(
        self,
        url: str,
        *,
        dim: int = 384,
        cache: CacheSettings | None = None,
        pool_size: int = 10,
    ) -> None:
        from medlit.config import CacheSettings

        self.url = url
        self.label = mask_url(url)
        self.dim = dim
        self.read_concurrency = max(pool_size, 1)  # each read its own pooled connection
        self._cfg = cache or CacheSettings()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._closed = False
        self._close_hooks: list[Callable[[], None]] = []
        self._puts = 0
        self._ef: weakref.WeakKeyDictionary[psycopg.Connection[Any], int] = (
            weakref.WeakKeyDictionary()
        )
        self._bootstrap()
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max(pool_size, 1),
            kwargs={"autocommit": True},
            configure=self._configure,
            open=False,
            name="medlit-store",
        )
        try:
            self._pool.open(wait=True, timeout=30.0)
        except PoolTimeout as exc:
            self._pool.close()
            raise StorageError(
                f"cannot connect to the database {self.label}: {_reason(exc)}"
            ) from exc
        try:
            migrations = core_migrations(
                dim, self._cfg.ann_connectivity, self._cfg.ann_expansion_add
            )
            self.apply_migrations("core", migrations)
            self.db_id = self._meta_id()
        except BaseException:
            self._pool.close()
            raise

    @classmethod
    def open(cls, settings: Settings) -> PostgresStore:
        """The store at ``settings.database_url`` with ``settings.cache``'s index parameters."""
        if settings.database_url is None:
            raise StorageError("no database_url is set (MEDLIT_DATABASE_URL)")
        return cls(
            settings.database_url.get_secret_value(),
            cache=settings.cache,
            pool_size=settings.database_pool_size,
        )

    def _bootstrap(self) -> None:
        """Create the ``vector`` extension once (replicas starting together take turns)."""
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=30) as conn:
                conn.execute("SELECT pg_advisory_lock(hashtext('medlit.bootstrap'))")
                try:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                finally:
                    conn.execute("SELECT pg_advisory_unlock(hashtext('medlit.bootstrap'))")
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StorageError(
                f"the pgvector extension is missing in {self.label} and this user may not "
                "create it: run CREATE EXTENSION vector as a superuser once"
            ) from exc
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to the database {self.label}: {_reason(exc)}"
            ) from exc

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        self._set_ef(conn, self._cfg.pg_ef_search_answers)

    def _set_ef(self, conn: psycopg.Connection[Any], ef: int) -> None:
        """Set the connection's HNSW candidate list (a no-op when it already has it)."""
        ef = min(max(int(ef), 1), EF_MAX)
        if getattr(self._local, "conn", None) is conn:  # inside a transaction: local only
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
            return
        if self._ef.get(conn) != ef:
            conn.execute(f"SET hnsw.ef_search = {ef}")
            self._ef[conn] = ef

    # -- lifecycle and generic helpers -------------------------------------------------
    def close(self) -> None:
        """Run the close hooks, then close the pool (idempotent)."""
        with self._lock:
            if self._closed:
                return
            hooks, self._close_hooks = self._close_hooks, []
        for hook in hooks:
            hook()
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.close()

    def add_close_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` first thing in :meth:`close` (e.g. a cache flushing its counters)."""
        with self._lock:
            self._close_hooks.append(hook)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """The thread's transaction connection if it holds one, else one from the pool."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        if self._closed:
            raise StorageError("the store is closed")
        try:
            cm = self._pool.connection(timeout=30.0)
            conn = cm.__enter__()
        except PoolTimeout as exc:
            raise StorageError(
                f"no database connection free ({self.label}): {_reason(exc)}"
            ) from exc
        try:
            yield conn
        except BaseException as exc:
            cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        cm.__exit__(None, None, None)

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """BEGIN ... COMMIT on one pooled connection (ROLLBACK on error); nests as a savepoint."""
        held = getattr(self._local, "conn", None)
        try:
            if held is not None:
                with held.transaction():
                    yield PgConnection(held)
                return
            with self._conn() as conn:
                self._local.conn = conn
                try:
                    with conn.transaction():
                        yield PgConnection(conn)
                finally:
                    self._local.conn = None
        except psycopg.Error as exc:
            raise StorageError(f"database write failed: {_reason(exc)}") from exc

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query written with ``?`` parameters; errors become StorageError."""
        return self._fetch(qmark_to_psycopg(sql), tuple(params))

    def _fetch(
        self, sql: str, params: Any = (), *, binary: bool = False, prepare: bool | None = None
    ) -> list[tuple[Any, ...]]:
        try:
            with self._conn() as conn:
                return conn.execute(sql, params, binary=binary, prepare=prepare).fetchall()
        except psycopg.Error as exc:
            raise StorageError(f"database read failed: {_reason(exc)}") from exc

    def _search(self, sql: str, params: Mapping[str, Any], ef: int) -> list[tuple[Any, ...]]:
        """A vector search with the given HNSW candidate list, prepared, binary results.

        A connection keeps the last ``ef_search`` set on it; when this search needs another
        one (the two tiers alternate on pooled connections), the ``SET`` and the search go
        out together in one pipeline: one round trip either way.
        """
        try:
            with self._conn() as conn:
                held = getattr(self._local, "conn", None) is conn
                if not held and self._ef.get(conn) == min(max(int(ef), 1), EF_MAX):
                    return conn.execute(sql, params, binary=True, prepare=True).fetchall()
                try:
                    with conn.pipeline():
                        self._set_ef(conn, ef)
                        cur = conn.execute(sql, params, binary=True, prepare=True)
                    return cur.fetchall()
                except psycopg.Error:
                    self._ef.pop(conn, None)  # the SET may not have run: set it next time
                    raise
        except psycopg.Error as exc:
            raise StorageError(f"database read failed: {_reason(exc)}") from exc

    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply ``component``'s pending migrations in one transaction; returns how many ran.

        An advisory lock serialises replicas that start at once against the same database.
        """
        names = [m.__name__ for m in migrations]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate migration names for {component}: {names}")
        with self.transaction() as conn:
            raw = conn.raw
            raw.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.medlit'))")
            raw.execute(
                "CREATE TABLE IF NOT EXISTS _migrations (component TEXT NOT NULL, "
                "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL, "
                "PRIMARY KEY (component, name))"
            )
            rows = raw.execute(
                "SELECT name FROM _migrations WHERE component = %s", (component,)
            ).fetchall()
            done = {r[0] for r in rows}
            count = 0
            for migration in migrations:
                if migration.__name__ in done:
                    continue
                migration(conn)
                raw.execute(
                    "INSERT INTO _migrations (component, name, applied_at) VALUES (%s, %s, %s)",
                    (component, migration.__name__, time.time()),
                )
                count += 1
            return count

    def _meta_id(self) -> str:
        with self.transaction() as conn:
            conn.raw.execute(
                "INSERT INTO meta (key, value) VALUES ('db_id', %s) ON CONFLICT (key) DO NOTHING",
                (_new_id(),),
            )
        return str(self._fetch("SELECT value FROM meta WHERE key = 'db_id'")[0][0])

    def _vector(self, embedding: Any) -> Vector:
        vec = np.asarray(embedding, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise StorageError(f"embedding has {vec.shape[0]} dimensions, the store {self.dim}")
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def bump_counters(self, counts: Mapping[str, int]) -> None:
        """Add to named counters (atomic per counter across processes)."""
        if not counts:
            return
        with self.transaction() as conn:
            conn.raw.cursor().executemany(
                "INSERT INTO counters (name, value) VALUES (%s, %s) ON CONFLICT (name) "
                "DO UPDATE SET value = counters.value + excluded.value",
                sorted(counts.items()),  # one lock order: concurrent bumps cannot deadlock
            )

    def counters(self, prefix: str = "") -> dict[str, int]:
        """Counters whose name starts with ``prefix``."""
        rows = self._fetch(
            "SELECT name, value FROM counters WHERE substr(name, 1, %s) = %s",
            (len(prefix), prefix),
        )
        return {name: int(value) for name, value in rows}

    def reset_counters(self, prefix: str = "") -> None:
        """Delete counters whose name starts with ``prefix``."""
        with self.transaction() as conn:
            conn.raw.execute(
                "DELETE FROM counters WHERE substr(name, 1, %s) = %s", (len(prefix), prefix)
            )

    def size_on_disk(self) -> dict[str, int]:
        """Bytes per table on the server (with its indexes and TOAST)."""
        rows = self._fetch(
            "SELECT t, coalesce(pg_total_relation_size(to_regclass(t)), 0) "
            "FROM unnest(%s::text[]) AS t",
            (list(_TABLES),),
        )
        return {f"postgres:{name}": int(size) for name, size in rows}

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        """Memoised embeddings by content hash."""
        if not hashes:
            return {}
        rows = self._fetch(
            "SELECT hash, vector FROM embedding_memo WHERE model = %s AND hash = ANY(%s)",
            (model_id, list(hashes)),
        )
        return {key: np.frombuffer(blob, dtype=np.float32).copy() for key, blob in rows}

    def put_embeddings(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        """Memoise embeddings by content hash (bounded: oldest dropped past 100,000)."""
        if not vectors:
            return
        now = time.time()
        with self.transaction() as conn:
            conn.raw.cursor().executemany(
                "INSERT INTO embedding_memo (model, hash, vector, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (model, hash) DO UPDATE SET "
                "vector = excluded.vector, created_at = excluded.created_at",
                [
                    (model_id, k, np.asarray(v, dtype=np.float32).tobytes(), now)
                    for k, v in sorted(vectors.items())
                ],
            )
            self._puts += 1
            if self._puts % 100 == 1:
                conn.raw.execute(
                    "DELETE FROM embedding_memo WHERE created_at <= (SELECT created_at FROM "
                    "embedding_memo ORDER BY created_at DESC LIMIT 1 OFFSET %s)",
                    (_MEMO_CAP,),
                )


def _new_id() -> str:
    import uuid

    return uuid.uuid4().hex
