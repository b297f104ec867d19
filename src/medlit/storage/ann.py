"""Approximate nearest-neighbour indexes that mirror SQLite tables (usearch HNSW).

Why usearch: it deletes (``remove``), saves and *memory-maps* an index (``restore(view=True)``
opens a 100,000-entry tier-1 index in about a millisecond, which the cold-start budget of a
cached ``medlit ask`` needs), stores vectors as f16/i8 to halve/quarter memory, takes integer
keys (our SQLite row ids) and searches in well under a millisecond. hnswlib also deletes (by
marking) but has no memory-mapped load, so every cold start would read the whole index.

SQLite is the source of truth. Every insert or delete in a mirrored table is logged, *by a
trigger in the same transaction*, to ``ann_log(seq, idx, key)``; the index is brought up to date
by re-reading the rows whose keys appear in the log after the sequence number the index
reflects (its *generation*). The index file is saved (atomic rename, under a file lock) with a
sidecar JSON holding that generation, the database's id and the entry count. On open:

* no index, unreadable index, index of another database, or log trimmed past its generation:
  rebuild / resynchronise from the table (a full key diff);
* generation behind the log: replay the log (crash before save, or another process wrote);
* so a crash at any point loses at most the SQLite write in flight, and never the index's
  agreement with SQLite.

A memory-mapped index cannot change in place, and copying it into memory to add one row costs
seconds at a million entries (then the whole file is rewritten on close). So changes since the
saved index's generation go to a small in-memory *delta* index instead, and the saved entries
they replace or delete are *masked* (filtered out of its results); the file is left as it is.
The delta is rebuilt from the log by the next process that opens the index, and folded into
the main index (copy, apply, save) only when it grows past ``delta_limit`` keys.

Similarities from the index are approximate (f16); callers re-score candidates exactly from the
float32 vectors stored in SQLite.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from medlit.log import get_logger

__all__ = ["AnnIndex"]

log = get_logger("storage.ann")

_READ_BATCH = 20_000
_LOG_SPAN = 100_000  # log rows a delta may stand for (the store keeps 200,000)


def _usearch() -> Any:
    """``usearch.index.Index``, imported safely.

    Loading usearch's extension *before* onnxruntime's makes the later onnxruntime import
    segfault (usearch 2.26 with onnxruntime 1.31: ``python -c "import usearch.compiled;
    import onnxruntime"`` crashes; the other order is fine). The embedder needs onnxruntime in
    most processes anyway, so load it first when it is installed.
    """
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


class AnnIndex:
    """A usearch cosine index over ``table(id INTEGER, embedding BLOB float32)``.

    Args:
        name: index name in ``ann_log`` (``answers``, ``chunks``).
        table: the mirrored table.
        path: the index file; the sidecar is ``path`` + ``.json``.
        ndim: vector dimension.
        db_id: the database's random id (an index of another database is rebuilt).
        dtype: usearch scalar kind (``f32``, ``f16``, ``i8``).
        connectivity: HNSW M.
        expansion_add: HNSW ef_construction.
        expansion_search: HNSW ef.
        save_every: changes applied between automatic saves.
        scope: ``(column, value)``: the index mirrors only the rows with ``column = value``
            (one tier-1 index per namespace), whose changes are logged under ``name``.
        delta_limit: keys changed since the saved index that a memory-mapped index keeps in a
            delta (and mask) before it is copied into memory, updated and saved (also at most
            a twentieth of the index).
    """

    def __init__(
        self,
        name: str,
        table: str,
        path: Path,
        *,
        ndim: int,
        db_id: str,
        dtype: str = "f16",
        connectivity: int = 16,
        expansion_add: int = 128,
        expansion_search: int = 64,
        save_every: int = 2000,
        delta_limit: int = 2_000,
        scope: tuple[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.table = table
        # A trusted column name (from the store's code), and its value as a parameter.
        self._where = "" if scope is None else f" AND {scope[0]} = ?"
        self._scope_params: tuple[Any, ...] = () if scope is None else (scope[1],)
        self.path = path
        self.sidecar = path.with_name(path.name + ".json")
        self.ndim = ndim
        self.db_id = db_id
        self.dtype = dtype
        self.connectivity = connectivity
        self.expansion_add = expansion_add
        self.expansion_search = expansion_search
        self.save_every = save_every
        self.generation = 0
        self.repairs: list[str] = []  # what open/sync had to do (tests and diagnostics)
        self.delta_limit = delta_limit
        self._index: Any = None
        self._view = False
        # Changes since the memory-mapped file's generation: new vectors in ``_delta``, saved
        # entries replaced or deleted in ``_masked`` (only while ``_view``).
        self._delta: Any = None
        self._masked: set[int] = set()
        self._base_generation = 0
        self._dirty = 0
        self._lock = threading.RLock()

    # -- opening and repair ------------------------------------------------------------
    def open(self, conn: sqlite3.Connection) -> None:
        """Load (memory-map) the saved index and bring it in step with the table."""
        with self._lock:
            meta = self._read_sidecar()
            if meta is not None and self.path.exists():
                try:
                    index = _usearch().restore(str(self.path), view=True)
                except Exception as exc:  # a truncated or foreign file: rebuild it
                    log.warning("ann_index_unreadable", index=self.name, error=str(exc))
                    index = None
                if index is not None and index.ndim == self.ndim and len(index) == meta["count"]:
                    setattr(index, "expansion_search", self.expansion_search)  # noqa: B010 (typed read-only)
                    self._index, self._view = index, True
                    self.generation = self._base_generation = int(meta["generation"])
                else:
                    self.repairs.append("mismatched_index")
            elif self.path.exists() or meta is not None:
                self.repairs.append("missing_sidecar_or_index")
            if self._index is None:
                self.repairs.append("rebuild")
                self._resync(conn)
            else:
                self.sync(conn)

    def sync(self, conn: sqlite3.Connection) -> int:
        """Apply table changes logged since this index's generation; returns keys touched."""
        with self._lock:
            # Two single-aggregate queries: SQLite answers each from the (idx, seq) index in
            # O(log n); max and min in one statement would scan every row of the log.
            head = (
                conn.execute("SELECT max(seq) FROM ann_log WHERE idx = ?", (self.name,)).fetchone()[
                    0
                ]
                or 0
            )
            if head == self.generation:
                return 0
            first = (
                conn.execute("SELECT min(seq) FROM ann_log WHERE idx = ?", (self.name,)).fetchone()[
                    0
                ]
                or 0
            )
            if head < self.generation or (first and first > self.generation + 1):
                # The log no longer covers our gap (trimmed) or the DB is older than the
                # index (restored from a backup): compare keys instead.
                self.repairs.append("resync")
                return self._resync(conn)
            rows = conn.execute(
                "SELECT DISTINCT key FROM ann_log WHERE idx = ? AND seq > ?",
                (self.name, self.generation),
            ).fetchall()
            keys = [int(r[0]) for r in rows]
            self._apply(conn, keys, int(head))
            return len(keys)

    def _resync(self, conn: sqlite3.Connection) -> int:
        """Make the index hold exactly the table's rows (full key diff)."""
        head = (
            conn.execute("SELECT max(seq) FROM ann_log WHERE idx = ?", (self.name,)).fetchone()[0]
            or 0
        )
        self._drop_delta()  # the key diff below recomputes everything against the main index
        self._writable()
        table_keys = np.array(
            [
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM {self.table} WHERE 1 = 1{self._where}", self._scope_params
                )
            ],
            dtype=np.uint64,
        )
        n = len(self._index)
        index_keys = np.asarray(self._index.keys[0:n], dtype=np.uint64) if n else None
        if index_keys is None:
            stale = np.zeros(0, dtype=np.uint64)
            missing = table_keys
        else:
            stale = np.setdiff1d(index_keys, table_keys)
            missing = np.setdiff1d(table_keys, index_keys)
        if len(stale):
            self._index.remove(stale)
        for start in range(0, len(missing), _READ_BATCH):
            self._add_rows(conn, [int(k) for k in missing[start : start + _READ_BATCH]])
        self.generation = int(head)
        self._dirty += len(stale) + len(missing) + 1
        return len(stale) + len(missing)

    def _apply(self, conn: sqlite3.Connection, keys: list[int], head: int) -> None:
        # Every process that opens the index rebuilds the delta from the log (~0.1 ms a key),
        # while folding it in costs a copy and a save of the whole index (~4 us an entry):
        # keep a delta of at most 1/20 of the index, and at most ``delta_limit`` keys.
        limit = min(self.delta_limit, len(self._index) // 20 if self._index is not None else 0)
        if (
            self._view
            and len(self._masked) + self._delta_len() + len(keys) <= limit
            and head - self._base_generation <= _LOG_SPAN
        ):
            self._apply_to_delta(conn, keys)
            self.generation = head
            return
        self._fold_delta(conn)
        self._writable()
        self._replace_rows(conn, keys, self._index)
        self._dirty += len(keys)
        # The generation first: a save here must record what the index now holds (saving the
        # old one made every later open replay, copy and re-save the whole index).
        self.generation = head
        if self._dirty >= self.save_every:
            self.save()

    def _apply_to_delta(self, conn: sqlite3.Connection, keys: list[int]) -> None:
        if self._delta is None:
            self._delta = self._new_index()
        if len(self._index):
            batch = np.array(keys, dtype=np.uint64)
            self._masked.update(int(k) for k in batch[self._index.contains(batch)])
        self._replace_rows(conn, keys, self._delta)

    def _delta_len(self) -> int:
        return 0 if self._delta is None else len(self._delta)

    def _drop_delta(self) -> None:
        self._delta, self._masked = None, set()

    def _fold_delta(self, conn: sqlite3.Connection) -> None:
        """Apply the delta and the mask to a writable main index (which is then saved)."""
        if self._delta is None and not self._masked:
            return
        changed = sorted(self._masked | set(self._delta_keys()))
        self._drop_delta()
        self._writable()
        self._replace_rows(conn, changed, self._index)
        self._dirty += len(changed) + 1

    def _delta_keys(self) -> list[int]:
        n = self._delta_len()
        return [int(k) for k in self._delta.keys[0:n]] if n else []

    def _replace_rows(self, conn: sqlite3.Connection, keys: list[int], target: Any) -> None:
        """Remove ``keys`` from ``target`` where held, then add the table's current rows."""
        for start in range(0, len(keys), 900):
            batch = keys[start : start + 900]
            present = np.array(batch, dtype=np.uint64)
            held = present[target.contains(present)] if len(target) else []
            if len(held):
                target.remove(held)
            self._add_rows(conn, batch, into=target)

    def _add_rows(self, conn: sqlite3.Connection, keys: list[int], *, into: Any = None) -> None:
        target = self._index if into is None else into
        for start in range(0, len(keys), 900):
            batch = keys[start : start + 900]
            marks = ",".join("?" * len(batch))
            rows = conn.execute(
                f"SELECT id, embedding FROM {self.table} WHERE id IN ({marks}){self._where}",
                (*batch, *self._scope_params),
            ).fetchall()
            if not rows:
                continue
            ids = np.array([r[0] for r in rows], dtype=np.uint64)
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            target.add(ids, vectors.reshape(len(rows), self.ndim))

    def _new_index(self) -> Any:
        return _usearch()(
            ndim=self.ndim,
            metric="cos",
            dtype=self.dtype,
            connectivity=self.connectivity,
            expansion_add=self.expansion_add,
            expansion_search=self.expansion_search,
        )

    def _writable(self) -> None:
        if self._index is None:
            self._index = self._new_index()
        elif self._view:
            # Copy the memory-mapped view into memory: the file may be replaced meanwhile.
            copy = self._index.copy()
            setattr(copy, "expansion_search", self.expansion_search)  # noqa: B010
            self._index, self._view = copy, False

    # -- searching ---------------------------------------------------------------------
    def __len__(self) -> int:
        main = 0 if self._index is None else len(self._index)
        return main - len(self._masked) + self._delta_len()

    def search(
        self, vector: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Up to ``k`` nearest keys and their approximate cosine similarities, best first."""
        with self._lock:
            empty = np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32)
            if self._index is None or k <= 0:
                return empty
            keys, sims = self._search_main(vector, k) if len(self._index) else empty
            if self._delta_len():
                matches = self._delta.search(vector, min(k, self._delta_len()))
                keys = np.concatenate([keys, np.asarray(matches.keys, dtype=np.uint64)])
                sims = np.concatenate([sims, 1.0 - np.asarray(matches.distances, dtype=np.float32)])
                order = np.argsort(-sims, kind="stable")[:k]
                keys, sims = keys[order], sims[order]
            return keys, sims

    def _search_main(
        self, vector: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        n = len(self._index)
        count = min(k + 8 if self._masked else k, n)
        while True:
            matches = self._index.search(vector, count)
            keys = np.asarray(matches.keys, dtype=np.uint64)
            sims = 1.0 - np.asarray(matches.distances, dtype=np.float32)
            if self._masked:
                alive = np.array([int(key) not in self._masked for key in keys], dtype=bool)
                keys, sims = keys[alive], sims[alive]
            if len(keys) >= k or count >= n:
                return keys[:k], sims[:k]
            count = min(n, count * 4)  # masked entries crowded the answer out: look further

    # -- saving ------------------------------------------------------------------------
    def save(self) -> None:
        """Write the index and its sidecar atomically (no-op when nothing changed)."""
        with self._lock:
            if self._index is None or (self._dirty == 0 and self.sidecar.exists()):
                return
            from filelock import FileLock

            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock"):
                tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
                self._index.save(str(tmp))
                os.replace(tmp, self.path)
                meta = {
                    "format": 1,
                    "db_id": self.db_id,
                    "generation": self.generation,
                    "count": len(self._index),
                    "ndim": self.ndim,
                    "dtype": self.dtype,
                }
                tmp_meta = self.sidecar.with_name(self.sidecar.name + f".tmp{os.getpid()}")
                tmp_meta.write_text(json.dumps(meta))
                os.replace(tmp_meta, self.sidecar)
            self._dirty = 0

    def close(self) -> None:
        """Save if changed and drop the index."""
        with self._lock:
            self.save()
            self._index = None

    def _read_sidecar(self) -> dict[str, Any] | None:
        try:
            meta = json.loads(self.sidecar.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("db_id") != self.db_id:
            return None
        if meta.get("ndim") != self.ndim or meta.get("dtype") != self.dtype:
            return None
        return meta

    def file_sizes(self) -> dict[str, int]:
        """Bytes of the index file and its sidecar."""
        out = {}
        for p in (self.path, self.sidecar):
            if p.exists():
                out[p.name] = p.stat().st_size
        return out
