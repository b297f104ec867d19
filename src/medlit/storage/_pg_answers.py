"""Tier-1 (answers) operations of :class:`~medlit.storage.postgres.PostgresStore`.

Answers are rows with the answer as JSON and its float32 vector in a pgvector column behind an
HNSW index. A tenant's lookup must not consult another tenant's entries (its time would reveal
them, and a filtered HNSW search loses recall when another namespace crowds the candidates):
in a namespace of at most ``answer_exact_scan_max`` answers (the usual case; its size is
re-counted every half minute) the search scans that namespace's rows only, exactly, through
the ``(namespace, fingerprint, question_hash)`` index. A bigger namespace, or a search of every
namespace, asks the shared HNSW index for candidates (one round trip also returns the in-scope
rows among the close ones), widens while every candidate is close, and past the index's reach
(``ef_search`` 1,000) scans the scope exactly. Similarities are always recomputed exactly.
LRU positions come from a sequence, and rows are updated in id order so that concurrent
writers cannot deadlock.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from medlit.errors import StorageError
from medlit.storage._pg_sql import EF_MAX, PgStoreParts
from medlit.storage.base import AnswerRecord, Vector, question_hash

if TYPE_CHECKING:
    from medlit.storage._pg_sql import PgConnection

__all__ = ["PgAnswerOps"]

_ANSWER_COLS = (
    "a.id, a.namespace, a.fingerprint, a.question, a.payload, a.retrieval_score, "
    "a.created_at, a.last_used_at, a.hits, a.embedding, a.origin, a.frame, a.checked_at"
)

# Candidates of the HNSW index (any scope), then the in-scope rows among the close ones: one
# round trip, and the count of candidates tells whether a wider search could find more.
_SEARCH_ANSWERS = (
    "WITH c AS MATERIALIZED (SELECT id, embedding <=> %(q)s AS dist FROM answers "
    "ORDER BY embedding <=> %(q)s LIMIT %(k)s) "
    f"SELECT c.dist, {_ANSWER_COLS} FROM c LEFT JOIN answers a ON a.id = c.id "
    "AND c.dist <= %(cut)s AND (%(ns)s::text IS NULL OR a.namespace = %(ns)s) "
    "AND (%(fp)s::text IS NULL OR a.fingerprint = %(fp)s)"
)
# One namespace, exactly: only its rows are read (``n``: how many, for the candidate counter).
SCAN_NAMESPACE = (
    "SELECT s.* FROM (SELECT a.embedding <=> %(q)s AS dist, "
    f"{_ANSWER_COLS}, count(*) OVER () AS n FROM answers a WHERE a.namespace = %(ns)s "
    "AND (%(fp)s::text IS NULL OR a.fingerprint = %(fp)s)) s "
    "WHERE s.dist <= %(cut)s ORDER BY s.dist LIMIT %(k)s"
)
_NS_SIZE_TTL_S = 30.0
# Eviction counts exactly only once the planner's row estimate nears the capacity (a small
# capacity is always counted: the estimate lags by 50 rows plus 10% of the table).
_EXACT_COUNT_FROM = 0.8
_ESTIMATE_FROM_CAPACITY = 1000
# More candidates than the index can give (ef_search <= 1000): exact, over the scope only.
_SCAN_ANSWERS = (
    f"SELECT a.embedding <=> %(q)s, {_ANSWER_COLS} FROM answers a "
    "WHERE (a.embedding <=> %(q)s) <= %(cut)s AND (%(ns)s::text IS NULL OR a.namespace = %(ns)s) "
    "AND (%(fp)s::text IS NULL OR a.fingerprint = %(fp)s) "
    "ORDER BY (a.embedding <=> %(q)s) + 0 LIMIT %(k)s"
)


class PgAnswerOps(PgStoreParts):
    """Mixin: needs ``transaction``, ``_fetch``, ``_search`` and ``_vector`` from the store."""

    #: Tier-1 rows a search examined (namespace rows scanned, or index candidates), all
    #: searches together: tests check that a tenant's lookup reads its own rows only. (A scan
    #: that returns no row cannot say how many it read: it adds 0.)
    answer_candidates = 0

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
        values = (namespace, fingerprint, question, qhash, data, float(retrieval_score), vec)
        with self.transaction() as conn:
            # Each round that finds a conflict waited for another writer of this question to
            # commit, and each writer commits once: N concurrent writers need up to N rounds
            # (5 ran out with 8 writers in the contract test).
            for _ in range(64):
                conn.raw.execute(
                    "DELETE FROM answers WHERE namespace = %s AND fingerprint = %s "
                    "AND question_hash = %s",
                    (namespace, fingerprint, qhash),
                )
                # DO NOTHING: another process inserted the same question meanwhile (we waited
                # for it to commit); delete its row too, so the newest answer wins.
                row = conn.raw.execute(
                    "INSERT INTO answers (namespace, fingerprint, question, question_hash, "
                    "payload, retrieval_score, embedding, created_at, last_used_at, origin, "
                    "frame, basis) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (namespace, fingerprint, question_hash) DO NOTHING RETURNING id",
                    (*values, now, now, origin, frame, rests),
                ).fetchone()
                if row is not None:
                    return int(row[0])
        raise StorageError("could not store the answer: the same question kept being rewritten")

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
        query = self._vector(embedding)
        # The index's distances are float32 arithmetic: keep a margin, numpy decides below.
        params: dict[str, Any] = {
            "q": query,
            "cut": 1.0 - min_similarity + 0.001,
            "ns": namespace,
            "fp": fingerprint,
            "k": max(16, limit * 2),
        }
        if namespace is not None and self._small_namespace(namespace):
            rows = self._fetch(
                SCAN_NAMESPACE, {**params, "k": limit * 4}, binary=True, prepare=True
            )
            self.answer_candidates += int(rows[0][-1]) if rows else 0
            return _exact(rows, query, min_similarity, limit)
        ef = self._cfg.pg_ef_search_answers
        while True:
            k = int(params["k"])
            if k > EF_MAX:
                rows = self._search(_SCAN_ANSWERS, {**params, "k": limit * 4}, ef)
                break
            rows = self._search(_SEARCH_ANSWERS, params, max(ef, k))
            self.answer_candidates += len(rows)
            close = sum(1 for r in rows if r[0] <= params["cut"])
            if len(rows) < k or close < len(rows):
                break
            params["k"] = k * 4  # every candidate was close: there may be more
        return _exact(rows, query, min_similarity, limit)

    def _small_namespace(self, namespace: str) -> bool:
        """Whether ``namespace`` holds at most ``answer_exact_scan_max`` answers (counted at
        most every half minute: the choice of plan, never the result, depends on it)."""
        now = time.monotonic()
        at, size = self._namespace_sizes.get(namespace, (-1e18, 0))
        if now - at > _NS_SIZE_TTL_S:
            cap = self._cfg.answer_exact_scan_max
            size = int(
                self._fetch(
                    "SELECT count(*) FROM (SELECT 1 FROM answers WHERE namespace = %s LIMIT %s) s",
                    (namespace, cap + 1),
                )[0][0]
            )
            if len(self._namespace_sizes) > 10_000:  # bounded: namespaces come and go
                self._namespace_sizes.clear()
            self._namespace_sizes[namespace] = (now, size)
        return size <= self._cfg.answer_exact_scan_max

    @functools.cached_property
    def _namespace_sizes(self) -> dict[str, tuple[float, int]]:
        return {}

    def get_answer(self, answer_id: int) -> AnswerRecord | None:
        """One answer by id."""
        rows = self._fetch(
            f"SELECT {_ANSWER_COLS} FROM answers a WHERE a.id = %s", (answer_id,), binary=True
        )
        return _answer(rows[0]) if rows else None

    def answer_for_question(
        self, question: str, *, namespace: str, fingerprint: str
    ) -> AnswerRecord | None:
        """The answer stored under exactly ``question`` (by the unique question index)."""
        rows = self._fetch(
            f"SELECT {_ANSWER_COLS} FROM answers a WHERE a.namespace = %s "
            "AND a.fingerprint = %s AND a.question_hash = %s",
            (namespace, fingerprint, question_hash(question)),
            binary=True,
        )
        return _answer(rows[0]) if rows and rows[0][3] == question else None

    def touch_answers(self, answer_ids: Sequence[int], now: float) -> None:
        """Move answers to the LRU front (in the order given) and count the hits."""
        if not answer_ids:
            return
        updates = _lru_updates([int(i) for i in answer_ids])
        with self.transaction() as conn:
            lrus = _next_values(conn, "answers_lru_seq", len(answer_ids))
            conn.raw.cursor().executemany(
                "UPDATE answers SET last_used_at = greatest(last_used_at, %s), "
                "hits = hits + %s, lru = %s WHERE id = %s",
                [(now, hits, lrus[pos], key) for key, (hits, pos) in updates],
            )

    def claim_answer_check(
        self, answer_id: int, *, now: float, due_before: float, lease_s: float
    ) -> bool:
        """Take the lease to check ``answer_id`` for new articles: one UPDATE, which takes
        the row's lock, so of two replicas one updates and the other sees the new lease."""
        with self.transaction() as conn:
            cur = conn.raw.execute(
                "UPDATE answers SET check_lease_until = %s WHERE id = %s "
                "AND check_lease_until <= %s AND greatest(created_at, checked_at) <= %s",
                (now + lease_s, answer_id, now, due_before),
            )
            return cur.rowcount == 1

    def answer_basis(self, answer_id: int) -> dict[str, Any]:
        """What the answer rests on (its ``basis`` column); empty when none."""
        rows = self._fetch("SELECT basis FROM answers WHERE id = %s", (answer_id,))
        return dict(json.loads(rows[0][0])) if rows and rows[0][0] else {}

    def finish_answer_check(self, answer_id: int, *, checked_at: float | None) -> None:
        """Release the check lease; record the check's time when it was done."""
        with self.transaction() as conn:
            conn.raw.execute(
                "UPDATE answers SET check_lease_until = 0, "
                "checked_at = coalesce(%s, checked_at) WHERE id = %s",
                (checked_at, answer_id),
            )

    def answers_due(
        self, *, checked_before: float, namespace: str | None = None, limit: int = 1000
    ) -> list[AnswerRecord]:
        """Answers last checked (or stored) before ``checked_before``, longest first."""
        rows = self._fetch(
            f"SELECT {_ANSWER_COLS} FROM answers a "
            "WHERE greatest(a.created_at, a.checked_at) < %s "
            "AND (%s::text IS NULL OR a.namespace = %s) "
            "ORDER BY greatest(a.created_at, a.checked_at), a.id LIMIT %s",
            (checked_before, namespace, namespace, limit),
            binary=True,
        )
        return [_answer(row) for row in rows]

    def delete_answers(self, answer_ids: Sequence[int]) -> int:
        """Delete answers by id."""
        if not answer_ids:
            return 0
        with self.transaction() as conn:
            cur = conn.raw.execute(
                "DELETE FROM answers WHERE id = ANY(%s)", ([int(i) for i in answer_ids],)
            )
            return cur.rowcount

    def purge_answers(self, *, created_before: float) -> int:
        """Delete answers created before ``created_before`` (expired)."""
        with self.transaction() as conn:
            cur = conn.raw.execute("DELETE FROM answers WHERE created_at < %s", (created_before,))
            return cur.rowcount

    def evict_answers(self, capacity: int) -> int:
        """Delete least recently used answers until at most ``capacity`` remain."""
        with self.transaction() as conn:
            # An exact count(*) per insert scans the whole table (tens of ms at 100k answers);
            # the planner's estimate (kept by autovacuum's analyze, at most ~10% behind) decides
            # whether counting is needed at all, with a margin for that lag.
            estimate = _scalar(
                conn, "SELECT reltuples::bigint FROM pg_class WHERE oid = 'answers'::regclass"
            )
            if capacity >= _ESTIMATE_FROM_CAPACITY and 0 <= estimate < capacity * _EXACT_COUNT_FROM:
                return 0
            total = _scalar(conn, "SELECT count(*) FROM answers")
            excess = total - capacity
            if excess <= 0:
                return 0
            cur = conn.raw.execute(
                "DELETE FROM answers WHERE id IN (SELECT id FROM answers ORDER BY lru LIMIT %s)",
                (excess,),
            )
            return cur.rowcount

    def count_answers(self, namespace: str | None = None) -> int:
        """Answers held (in one namespace, or all)."""
        if namespace is None:
            return int(self._fetch("SELECT count(*) FROM answers")[0][0])
        rows = self._fetch("SELECT count(*) FROM answers WHERE namespace = %s", (namespace,))
        return int(rows[0][0])

    def clear_answers(self, namespace: str | None = None) -> int:
        """Delete every answer (of one namespace, or all)."""
        with self.transaction() as conn:
            if namespace is None:
                return conn.raw.execute("DELETE FROM answers").rowcount
            return conn.raw.execute(
                "DELETE FROM answers WHERE namespace = %s", (namespace,)
            ).rowcount

    def answer_lru_order(self) -> list[int]:
        """Answer ids from least to most recently used."""
        return [int(r[0]) for r in self._fetch("SELECT id FROM answers ORDER BY lru")]


def _exact(
    rows: Sequence[Sequence[Any]], query: Vector, min_similarity: float, limit: int
) -> list[tuple[AnswerRecord, float]]:
    """The in-scope rows (``dist``, answer columns...) whose exact similarity passes, best
    first (a row of None columns is a candidate out of scope)."""
    found = []
    for row in rows:
        if row[1] is None:
            continue  # a candidate out of scope or not close
        sim = float(np.dot(row[10].to_numpy(), query))
        if sim >= min_similarity:
            found.append((_answer(row[1:]), sim))
    found.sort(key=lambda pair: (-pair[1], pair[0].id))
    return found[:limit]


def _scalar(conn: PgConnection, sql: str, params: Sequence[Any] = ()) -> int:
    row = conn.raw.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _next_values(conn: PgConnection, sequence: str, n: int) -> list[int]:
    """``n`` fresh values of ``sequence``, increasing."""
    rows = conn.raw.execute(
        "SELECT nextval(%s) FROM generate_series(1, %s)", (sequence, n)
    ).fetchall()
    return sorted(int(r[0]) for r in rows)


def _lru_updates(keys: Sequence[Any]) -> list[tuple[Any, tuple[int, int]]]:
    """Per distinct key: (uses, position of its last use), sorted by key.

    Rows are then updated in key order, so two processes touching the same rows cannot
    deadlock; the LRU order still follows the order of use.
    """
    seen: dict[Any, tuple[int, int]] = {}
    for pos, key in enumerate(keys):
        hits = seen.get(key, (0, 0))[0]
        seen[key] = (hits + 1, pos)
    return sorted(seen.items())


def _answer(row: Sequence[Any]) -> AnswerRecord:
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
