"""Batched bookkeeping writes: counters and LRU refreshes, off the lookup path.

A lookup that wrote its hit counter and LRU position at once would pay one SQLite commit (and,
now and then, a WAL checkpoint) every time: the difference between a 0.4 ms and a 5 ms p99.
Caches record them here instead; they are written in one transaction when
``flush_interval_s`` has passed, before any insert or eviction (so LRU order is exact where it
matters), and when the store closes. A crash loses at most one interval of statistics and LRU
refreshes, never an entry.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable

__all__ = ["PendingWrites"]


class PendingWrites:
    """Counters and ordered LRU touches waiting to be written.

    Args:
        write: called as ``write(counts, touched_in_order)`` to persist a batch.
        interval_s: longest time a batch waits (0: write at once).
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
        self._since = time.monotonic()
        self._lock = threading.Lock()

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to counter ``name``."""
        if n:
            with self._lock:
                self._counts[name] = self._counts.get(name, 0) + n
            self._maybe_flush()

    def touch(self, keys: list[Hashable]) -> None:
        """Record uses of ``keys`` (most recent last)."""
        with self._lock:
            for key in keys:
                self._touched.pop(key, None)
                self._touched[key] = None
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if time.monotonic() - self._since >= self.interval_s:
            self.flush()

    def flush(self) -> None:
        """Write everything pending now."""
        with self._lock:
            counts, touched = self._counts, list(self._touched)
            self._counts, self._touched = {}, {}
            self._since = time.monotonic()
        if counts or touched:
            self._write(counts, touched)
