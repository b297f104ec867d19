"""The embedded store: one SQLite database (WAL) plus usearch indexes beside it.

``SqliteStore.open(settings)`` opens (creating if needed) ``settings.db_path`` and applies the
core migrations. Tier-1 answers and tier-2 chunks live in SQLite, with their float32 vectors;
each is mirrored into :class:`~medlit.storage.ann.AnnIndex` files next to the database that
only propose candidates: ``medlit.chunks.usearch`` for the shared evidence, and one
``medlit.answers-<digest>.usearch`` *per namespace* for answers, so a tenant's lookup never
consults (nor waits on, nor loses recall to) another tenant's entries. Indexes are opened on
first use: a cached ``ask`` never touches the chunk index, and only its own tenant's answers.

For other components::

    store.apply_migrations("jobs", [m001_jobs, m002_job_events])   # once at start-up
    with store.transaction() as conn:                                # BEGIN IMMEDIATE
        conn.execute("INSERT INTO jobs ...")
    rows = store.read("SELECT ... FROM jobs WHERE id = ?", (job_id,))

One connection per store, shared by threads under a lock; several processes may open the same
database (WAL, ``busy_timeout``), and each index catches up with the others' writes from the
change log before it searches.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlit.datadir import require_data_dir
from medlit.errors import StorageError
from medlit.log import get_logger
from medlit.storage import schema
from medlit.storage._sqlite_evidence import EvidenceOps
from medlit.storage.base import AnswerRecord, Migration, Vector, iter_batches, question_hash

if TYPE_CHECKING:
    from medlit.config import CacheSettings, Settings
    from medlit.storage.ann import AnnIndex  # numpy and usearch: loaded on the first vector use

__all__ = ["SqliteStore", "answer_index_path"]

_ANSWER_COLS = (
    "id, namespace, fingerprint, question, payload, retrieval_score, created_at, "
    "last_used_at, hits, embedding, origin, frame, checked_at"
)
log = get_logger("storage.sqlite")

_MEMO_CAP = 100_000
_LOG_KEEP = 200_000


class SqliteStore(EvidenceOps):
    """The SQLite implementation of :class:`medlit.storage.base.Store`.

    Args:
        db_path: the database file (its directory is created).
        dim: embedding dimension of every vector stored.
        cache: ANN settings (dtype, connectivity, expansion, save interval).
    """

    def __init__(self, db_path: Path, *, dim: int = 384, cache: CacheSettings | None = None):
        from medlit.config import CacheSettings

        self.db_path = Path(db_path)
        self.dim = dim
        # One connection behind one lock: a second concurrent read would only wait for it.
        self.read_concurrency = 1
        self._cfg = cache or CacheSettings()
        self._lock = threading.RLock()
        self._closed = False
        require_data_dir(self.db_path.parent)
        try:
            conn = sqlite3.connect(
                str(self.db_path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoint, never corrupt
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute(f"PRAGMA cache_size=-{self._cfg.sqlite_cache_mb * 1024}")
            conn.execute(f"PRAGMA mmap_size={self._cfg.sqlite_mmap_mb * 2**20}")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the database {self.db_path}: {exc}") from exc
        self._conn = conn
        self.apply_migrations("core", schema.CORE_MIGRATIONS)
        self.db_id = self._meta_id()
        # Most recently used last; at most ``answer_index_cache_max`` tier-1 indexes (many
        # tenants must not hold one index each in memory for the life of the process).
        self._indexes: OrderedDict[str, AnnIndex] = OrderedDict()
        #: Tier-1 indexes dropped from memory to respect the bound (diagnostics and tests).
        self.answer_index_evictions = 0
        self._close_hooks: list[Callable[[], None]] = []
        self._puts = 0
        #: Tier-1 candidates the ANN indexes proposed, all searches together (a tenant's
        #: lookup examines its own namespace's entries only: tests check it with this).
        self.answer_candidates = 0
        self._drop_shared_answer_index()

    @classmethod
    def open(cls, settings: Settings) -> SqliteStore:
        """The store at ``settings.db_path`` with ``settings.cache``'s index parameters."""
        return cls(settings.db_path, cache=settings.cache)

    # -- lifecycle and generic helpers -------------------------------------------------
    def close(self) -> None:
        """Save changed indexes and close the database (idempotent)."""
        with self._lock:
            if self._closed:
                return
            hooks, self._close_hooks = self._close_hooks, []
        # Outside the lock: a hook waits for a cache's background flush, which needs the lock.
        for hook in hooks:
            hook()
        with self._lock:
            if self._closed:
                return
            for index in self._indexes.values():
                index.close()
            self._trim_log()
            self._conn.close()
            self._closed = True

    def add_close_hook(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` first thing in :meth:`close` (e.g. a cache flushing its counters)."""
        with self._lock:
            self._close_hooks.append(hook)

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection (hold :meth:`transaction` to write; reads may use it directly)."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error); nests as a savepoint."""
        with self._lock:
            if self._closed:
                raise StorageError("the store is closed")
            nested = self._conn.in_transaction
            try:
                self._conn.execute("SAVEPOINT nested" if nested else "BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if nested:
                        self._conn.execute("ROLLBACK TO nested")
                        self._conn.execute("RELEASE nested")
                    else:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("RELEASE nested" if nested else "COMMIT")
            except sqlite3.Error as exc:
                raise StorageError(f"database write failed: {exc}") from exc

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query; errors become :class:`StorageError`."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"database read failed: {exc}") from exc

    def apply_migrations(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply ``component``'s pending migrations in one transaction; returns how many ran."""
        with self._lock:
            try:
                schema.ensure_migrations_table(self._conn)
                if {m.__name__ for m in migrations} <= schema.applied(self._conn, component):
                    return 0  # the common case: one read, no write lock
            except sqlite3.Error as exc:
                raise StorageError(f"cannot read migrations: {exc}") from exc
            with self.transaction() as conn:
                return schema.apply_migrations(conn, component, migrations)

    def _meta_id(self) -> str:
        row = self.read("SELECT value FROM meta WHERE key = 'db_id'")
        if row:
            return str(row[0][0])
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('db_id', ?)", (uuid.uuid4().hex,)
            )
        return str(self.read("SELECT value FROM meta WHERE key = 'db_id'")[0][0])

    def _index(self, name: str, namespace: str | None = None) -> AnnIndex:
        """The ANN index ``name`` (``chunks``, or ``answers`` of one ``namespace``), opened
        (and repaired) on first use, then kept in step with the table."""
        key = name if namespace is None else f"{name}:{namespace}"
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                if namespace is None:
                    path = self.db_path.with_name(f"{self.db_path.stem}.{name}.usearch")
                else:
                    path = answer_index_path(self.db_path, namespace)
                from medlit.storage.ann import AnnIndex

                index = AnnIndex(
                    key,
                    name,
                    path,
                    ndim=self.dim,
                    db_id=self.db_id,
                    dtype=self._cfg.ann_dtype,
                    connectivity=self._cfg.ann_connectivity,
                    expansion_add=self._cfg.ann_expansion_add,
                    expansion_search=(
                        self._cfg.ann_expansion_search
                        if name == "chunks"
                        else self._cfg.ann_expansion_search_answers
                    ),
                    save_every=self._cfg.index_save_every,
                    delta_limit=self._cfg.ann_delta_limit,
                    scope=None if namespace is None else ("namespace", namespace),
                )
                try:
                    index.open(self._conn)
                except sqlite3.Error as exc:
                    raise StorageError(f"cannot open the {key} index: {exc}") from exc
                self._indexes[key] = index
                if namespace is not None:
                    self._evict_answer_indexes(keep=key)
            else:
                self._indexes.move_to_end(key)
                index.sync(self._conn)
            return index

    def _evict_answer_indexes(self, keep: str) -> None:
        """Save and drop the least recently used tier-1 indexes past the bound.

        Held under the store's lock, like every search, so no lookup uses an index while it is
        dropped; a dropped index loses nothing (saved here, or replayed from the change log
        when its namespace is looked up next).
        """
        answers = [k for k in self._indexes if k.startswith("answers:")]
        for key in answers[: max(0, len(answers) - self._cfg.answer_index_cache_max)]:
            if key == keep:
                continue
            index = self._indexes.pop(key)
            try:
                index.close()
            except OSError as exc:  # SQLite holds the truth: the next open repairs the file
                log.warning("answer_index_save_failed", index=key, error=str(exc))
            self.answer_index_evictions += 1

    def open_answer_indexes(self) -> list[str]:
        """Namespaces whose tier-1 index is in memory now, least recently used first."""
        with self._lock:
            return [k.split(":", 1)[1] for k in self._indexes if k.startswith("answers:")]

    def answer_index(self, namespace: str) -> AnnIndex:
        """The tier-1 ANN index of ``namespace`` (it holds that namespace's answers only)."""
        return self._index("answers", namespace)

    def _sync_answer_indexes(self) -> None:
        """Bring every open tier-1 index in step after a write (the others catch up from the
        log when they are opened)."""
        with self._lock:
            for key, index in self._indexes.items():
                if key.startswith("answers:"):
                    index.sync(self._conn)

    def _drop_shared_answer_index(self) -> None:
        """Delete the one tier-1 index of every namespace that older versions kept."""
        for suffix in ("", ".json", ".lock"):
            with contextlib.suppress(OSError):
                self.db_path.with_name(f"{self.db_path.stem}.answers.usearch{suffix}").unlink()

    def _trim_log(self) -> None:
        """Keep the ANN change log bounded (an index older than the log is resynchronised)."""
        with contextlib.suppress(sqlite3.Error):  # best effort; trimmed next time otherwise
            self._conn.execute(
                "DELETE FROM ann_log WHERE seq < (SELECT max(seq) FROM ann_log) - ?", (_LOG_KEEP,)
            )

    def _vector(self, embedding: Any) -> Vector:
        import numpy as np

        vec = np.asarray(embedding, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise StorageError(f"embedding has {vec.shape[0]} dimensions, the store {self.dim}")
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def bump_counters(self, counts: Mapping[str, int]) -> None:
        """Add to named counters."""
        if not counts:
            return
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO counters (name, value) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
                list(counts.items()),
            )

    def counters(self, prefix: str = "") -> dict[str, int]:
        """Counters whose name starts with ``prefix``."""
        rows = self.read(
            "SELECT name, value FROM counters WHERE substr(name, 1, ?) = ?", (len(prefix), prefix)
        )
        return {name: int(value) for name, value in rows}

    def reset_counters(self, prefix: str = "") -> None:
        """Delete counters whose name starts with ``prefix``."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM counters WHERE substr(name, 1, ?) = ?", (len(prefix), prefix))

    def size_on_disk(self) -> dict[str, int]:
        """Bytes per file: the database, its WAL, and the saved indexes."""
        out: dict[str, int] = {}
        for suffix in ("", "-wal", "-shm"):
            path = Path(str(self.db_path) + suffix)
            if path.exists():
                out[path.name] = path.stat().st_size
        for path in self.db_path.parent.glob(f"{self.db_path.stem}.*.usearch*"):
            if path.suffix in {".usearch", ".json"}:
                out[path.name] = path.stat().st_size
        return out

    def save_indexes(self) -> None:
        """Save every open index now (normally done on close and every N changes)."""
        with self._lock:
            for index in self._indexes.values():
                index.save()

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        """Memoised embeddings by content hash."""
        import numpy as np

        out: dict[str, Vector] = {}
        for batch in iter_batches(list(hashes), 500):
            marks = ",".join("?" * len(batch))
            rows = self.read(
                f"SELECT hash, vector FROM embedding_memo WHERE model = ? AND hash IN ({marks})",
                (model_id, *batch),
            )
            for key, blob in rows:
                out[key] = np.frombuffer(blob, dtype=np.float32).copy()
        return out

    def put_embeddings(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        """Memoise embeddings by content hash (bounded: oldest dropped past 100,000)."""
        import numpy as np

        now = time.time()
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_memo (model, hash, vector, created_at) "
                "VALUES (?, ?, ?, ?)",
                [
                    (model_id, k, np.asarray(v, dtype=np.float32).tobytes(), now)
                    for k, v in vectors.items()
                ],
            )
            self._puts += 1
            if self._puts % 100 == 1:
                conn.execute(
                    "DELETE FROM embedding_memo WHERE created_at <= (SELECT created_at FROM "
                    "embedding_memo ORDER BY created_at DESC LIMIT 1 OFFSET ?)",
                    (_MEMO_CAP,),
                )

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
        """Store an answer, replacing one for the same question/namespace/fingerprint."""
        vec = self._vector(embedding)
        qhash = question_hash(question)
        data = json.dumps(payload, ensure_ascii=False, default=str)
        rests = json.dumps(basis, ensure_ascii=False, default=str) if basis else ""
        with self.transaction() as conn:
            conn.execute(
                "DELETE FROM answers WHERE namespace = ? AND fingerprint = ? AND question_hash = ?",
                (namespace, fingerprint, qhash),
            )
            cur = conn.execute(
                "INSERT INTO answers (namespace, fingerprint, question, question_hash, payload, "
                "retrieval_score, embedding, created_at, last_used_at, origin, frame, basis, lru) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "(SELECT coalesce(max(lru), 0) + 1 FROM answers))",
                (
                    namespace,
                    fingerprint,
                    question,
                    qhash,
                    data,
                    float(retrieval_score),
                    vec.tobytes(),
                    now,
                    now,
                    origin,
                    frame,
                    rests,
                ),
            )
            answer_id = int(cur.lastrowid or 0)
        self._index("answers", namespace)
        return answer_id

    def search_answers(
        self,
        embedding: Vector,
        *,
        min_similarity: float,
        namespace: str | None = None,
        fingerprint: str | None = None,
        limit: int = 10,
    ) -> list[tuple[AnswerRecord, float]]:
        """Answers with exact cosine >= ``min_similarity`` in scope, best first, any age."""
        import numpy as np

        query = self._vector(embedding)
        with self._lock:
            if namespace is None:
                spaces = [str(r[0]) for r in self.read("SELECT DISTINCT namespace FROM answers")]
            else:
                spaces = [namespace]
            close: list[int] = []
            for space in spaces:
                close.extend(
                    self._close_answers(self._index("answers", space), query, min_similarity, limit)
                )
            if not close:
                return []
            marks = ",".join("?" * len(close))
            sql = f"SELECT {_ANSWER_COLS} FROM answers WHERE id IN ({marks})"
            params: list[Any] = list(close)
            if namespace is not None:
                sql += " AND namespace = ?"
                params.append(namespace)
            if fingerprint is not None:
                sql += " AND fingerprint = ?"
                params.append(fingerprint)
            rows = self.read(sql, params)
        found = []
        for row in rows:
            sim = float(np.dot(np.frombuffer(row[9], dtype=np.float32), query))
            if sim >= min_similarity:
                found.append((_answer(row), sim))
        found.sort(key=lambda pair: (-pair[1], pair[0].id))
        return found[:limit]

    def _close_answers(
        self, index: AnnIndex, query: Vector, min_similarity: float, limit: int
    ) -> list[int]:
        """Keys of ``index`` whose approximate similarity is close to ``min_similarity``."""
        k = max(16, limit * 2)
        while True:
            keys, approx = index.search(query, k)
            self.answer_candidates += len(keys)
            # f16 + HNSW: keep a margin, the exact score decides below.
            close = keys[approx >= min_similarity - 0.03]
            if len(keys) < k or len(close) < len(keys) or k >= len(index):
                return [int(x) for x in close]
            k *= 4  # everything returned was close: there may be more

    def get_answer(self, answer_id: int) -> AnswerRecord | None:
        """One answer by id."""
        rows = self.read(f"SELECT {_ANSWER_COLS} FROM answers WHERE id = ?", (answer_id,))
        return _answer(rows[0]) if rows else None

    def answer_for_question(
        self, question: str, *, namespace: str, fingerprint: str
    ) -> AnswerRecord | None:
        """The answer stored under exactly ``question`` (no ANN index is opened)."""
        rows = self.read(
            f"SELECT {_ANSWER_COLS} FROM answers "
            "WHERE namespace = ? AND fingerprint = ? AND question_hash = ?",
            (namespace, fingerprint, question_hash(question)),
        )
        return _answer(rows[0]) if rows and rows[0][3] == question else None

    def touch_answers(self, answer_ids: Sequence[int], now: float) -> None:
        """Move answers to the LRU front (in the order given) and count the hits."""
        if not answer_ids:
            return
        with self.transaction() as conn:
            base = conn.execute("SELECT coalesce(max(lru), 0) FROM answers").fetchone()[0]
            conn.executemany(
                "UPDATE answers SET last_used_at = max(last_used_at, ?), hits = hits + 1, "
                "lru = ? WHERE id = ?",
                [(now, base + i, answer_id) for i, answer_id in enumerate(answer_ids, start=1)],
            )

    def claim_answer_check(
        self, answer_id: int, *, now: float, due_before: float, lease_s: float
    ) -> bool:
        """Take the lease to check ``answer_id`` for new articles (one UPDATE: atomic)."""
        with self.transaction() as conn:
            cur = conn.execute(
                "UPDATE answers SET check_lease_until = ? WHERE id = ? "
                "AND check_lease_until <= ? AND max(created_at, checked_at) <= ?",
                (now + lease_s, answer_id, now, due_before),
            )
            return cur.rowcount == 1

    def answer_basis(self, answer_id: int) -> dict[str, Any]:
        """What the answer rests on (its ``basis`` column); empty when none."""
        rows = self.read("SELECT basis FROM answers WHERE id = ?", (answer_id,))
        return dict(json.loads(rows[0][0])) if rows and rows[0][0] else {}

    def finish_answer_check(self, answer_id: int, *, checked_at: float | None) -> None:
        """Release the check lease; record the check's time when it was done."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE answers SET check_lease_until = 0, "
                "checked_at = coalesce(?, checked_at) WHERE id = ?",
                (checked_at, answer_id),
            )

    def answers_due(
        self, *, checked_before: float, namespace: str | None = None, limit: int = 1000
    ) -> list[AnswerRecord]:
        """Answers last checked (or stored) before ``checked_before``, longest first."""
        rows = self.read(
            f"SELECT {_ANSWER_COLS} FROM answers WHERE max(created_at, checked_at) < ? "
            "AND (? IS NULL OR namespace = ?) ORDER BY max(created_at, checked_at), id LIMIT ?",
            (checked_before, namespace, namespace, limit),
        )
        return [_answer(row) for row in rows]

    def delete_answers(self, answer_ids: Sequence[int]) -> int:
        """Delete answers by id."""
        count = 0
        with self.transaction() as conn:
            for batch in iter_batches(list(answer_ids), 900):
                marks = ",".join("?" * len(batch))
                count += conn.execute(f"DELETE FROM answers WHERE id IN ({marks})", batch).rowcount
        if count:
            self._sync_answer_indexes()
        return count

    def purge_answers(self, *, created_before: float) -> int:
        """Delete answers created before ``created_before`` (expired)."""
        with self.transaction() as conn:
            count = conn.execute(
                "DELETE FROM answers WHERE created_at < ?", (created_before,)
            ).rowcount
        if count:
            self._sync_answer_indexes()
        return count

    def evict_answers(self, capacity: int) -> int:
        """Delete least recently used answers until at most ``capacity`` remain."""
        with self.transaction() as conn:
            total = conn.execute("SELECT count(*) FROM answers").fetchone()[0]
            excess = total - capacity
            if excess <= 0:
                return 0
            count = conn.execute(
                "DELETE FROM answers WHERE id IN (SELECT id FROM answers ORDER BY lru LIMIT ?)",
                (excess,),
            ).rowcount
        self._sync_answer_indexes()
        return count

    def count_answers(self, namespace: str | None = None) -> int:
        """Answers held (in one namespace, or all)."""
        if namespace is None:
            return int(self.read("SELECT count(*) FROM answers")[0][0])
        return int(
            self.read("SELECT count(*) FROM answers WHERE namespace = ?", (namespace,))[0][0]
        )

    def clear_answers(self, namespace: str | None = None) -> int:
        """Delete every answer (of one namespace, or all)."""
        with self.transaction() as conn:
            if namespace is None:
                count = conn.execute("DELETE FROM answers").rowcount
            else:
                count = conn.execute(
                    "DELETE FROM answers WHERE namespace = ?", (namespace,)
                ).rowcount
        if count:
            self._sync_answer_indexes()
        return count

    def answer_lru_order(self) -> list[int]:
        """Answer ids from least to most recently used."""
        return [r[0] for r in self.read("SELECT id FROM answers ORDER BY lru")]


def answer_index_path(db_path: Path, namespace: str) -> Path:
    """The file of ``namespace``'s tier-1 index beside the database ``db_path``.

    A tenant name is not a file name: a digest of it is.
    """
    digest = hashlib.sha256(namespace.encode()).hexdigest()[:20]
    return db_path.with_name(f"{db_path.stem}.answers-{digest}.usearch")


def _answer(row: tuple[Any, ...]) -> AnswerRecord:
    return AnswerRecord(
        id=int(row[0]),
        namespace=row[1],
        fingerprint=row[2],
        question=row[3],
        payload=json.loads(row[4]),
        retrieval_score=float(row[5]),
        created_at=float(row[6]),
        last_used_at=float(row[7]),
        hits=int(row[8]),
        origin=str(row[10]),
        frame=str(row[11]),
        checked_at=float(row[12]),
    )
