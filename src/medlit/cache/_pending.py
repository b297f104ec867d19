"""Batched bookkeeping writes: counters and LRU refreshes, off the lookup path.

A lookup that wrote its hit counter and LRU position at once would pay one SQLite commit (and,
now and then, a WAL checkpoint) every time: the difference between a 0.4 ms and a 5 ms p99.
Caches record them here instead. Batches are written by a background thread every
``flush_interval_s`` (so a lookup never pays for it, and a long-lived process that goes idle
still writes them), synchronously before any insert or eviction (so LRU order is exact where it
matters), and when the store closes. A crash loses at most one interval of statistics and LRU
refreshes, never an entry.

The write itself runs on the store's connection under its lock: a lookup arriving during a
flush waits for it (at 300,000 chunks a busy second's LRU refresh is a ~30 ms write, once a
second, so it reaches the p99.9 of a saturated loop, not its p99).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from medlit.log import get_logger

__all__ = ["PendingWrites"]

log = get_logger(__name__)


class PendingWrites:
    """Counters and ordered LRU touches waiting to be written.

    Args:
        write: called as ``write(counts, touched_in_order)`` to persist a batch.
        interval_s: longest time a batch waits (0: write at once, in the caller's thread).
    """

    def __init__(
        self,
        write: Callable[[dict[str, int], list[Hashable]], None],
        interval_s: float,
    ) -> None:
        self._write = write
        self.interval_s = interval_s
        self._counts: dict[str, int] = {}
        self._touched: dict[Hashable, None] = {}  # ordered set: the last touch wins
        self._lock = threading.Lock()  # guards the pending batch
        self._write_lock = threading.Lock()  # one batch written at a time, in order
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to counter ``name``."""
        if n:
            with self._lock:
                self._counts[name] = self._counts.get(name, 0) + n
            self._schedule()

    def touch(self, keys: list[Hashable]) -> None:
        """Record uses of ``keys`` (most recent last)."""
        with self._lock:
            for key in keys:
                self._touched.pop(key, None)
                self._touched[key] = None
        self._schedule()

    def _schedule(self) -> None:
        if self.interval_s <= 0 or self._stop.is_set():
            self.flush()
        elif self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="medlit-cache-flush", daemon=True
                    )
                    self._thread.start()

    def _run(self) -> None:
        # One sleeping thread that wakes once per interval; records never wake it. A thread
        # woken per record (or a Timer per batch) measurably slowed lookups: each wake-up makes
        # the busy lookup thread hand over the GIL (up to the 5 ms switch interval).
        while not self._stop.wait(self.interval_s):
            try:
                self.flush()
            except Exception as exc:  # a busy or closed database: the next batch retries
                log.warning("cache_bookkeeping_write_failed", error=str(exc))

    def flush(self) -> None:
        """Write everything pending now (after a background write in progress)."""
        with self._write_lock:
            with self._lock:
                counts, touched = self._counts, list(self._touched)
                self._counts, self._touched = {}, {}
            if counts or touched:
                self._write(counts, touched)

    def close(self) -> None:
        """Stop the background thread and write what is pending; later records go at once."""
        self._stop.set()
        self.flush()
