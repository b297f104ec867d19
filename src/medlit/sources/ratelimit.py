"""One request-rate limiter per host, shared by every caller in every process of one home.

NCBI allows 3 requests per second (10 with an api_key) per client, however many processes that
client runs. A limiter that lived only in memory would let two ``medlit`` commands started at
once send twice the allowed rate, so the send times live in a small SQLite file under
``settings.home`` (``ratelimit.sqlite3``): taking a slot is one ``BEGIN IMMEDIATE`` transaction
that looks at the requests of the last window and in flight, and takes a slot only if fewer
than ``rate`` are there. SQLite's file lock makes that atomic across processes; an
``asyncio.Lock`` per host queues the callers inside one process so they do not all poll the
file.

The window is a sliding one (at most ``rate`` requests in any ``window_s`` seconds), a stricter
promise than "one every 1/rate seconds", which still allows ``rate + 1`` in some one-second
windows; see :class:`RateLimiter` for why a slot is stamped when its request ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from medlit.datadir import require_data_dir
from medlit.errors import StorageError
from medlit.log import get_logger

__all__ = ["RateLimiter", "limiter_for"]

log = get_logger("ratelimit")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS slots (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    t REAL NOT NULL,            -- when the request finished (or was taken, while pending)
    pending INTEGER NOT NULL,   -- 1 while the request is in flight
    expires REAL NOT NULL       -- a pending slot whose process died is freed at this time
);
CREATE INDEX IF NOT EXISTS slots_host ON slots (host, t);
"""

# One asyncio.Lock per (db file, host) and event loop: locks cannot cross event loops.
_LOCKS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Lock]
] = weakref.WeakKeyDictionary()


class RateLimiter:
    """At most ``rate`` requests in any ``window_s`` seconds to ``host``, across processes.

    A slot is held from just before a request is sent until ``window_s`` after its response
    arrived. Stamping the *end* of a request (not its start) is what makes the promise hold at
    the server: whatever the network and a busy machine do to our timing, the server saw the
    request before we got its answer, so the next one cannot reach it less than ``window_s``
    later.

    Args:
        db_path: the shared state file (created if missing).
        host: the key the limit applies to (normally the URL's host:port).
        rate: requests allowed per window (fractional rates are rounded down, at least 1).
        window_s: length of the sliding window, seconds.
    """

    def __init__(self, db_path: Path, host: str, rate: float, *, window_s: float = 1.0) -> None:
        self.db_path = db_path
        self.host = host
        self.rate = rate
        # A rate below 1/s becomes "1 per 1/rate seconds" instead of never sending.
        self._slots = max(int(rate), 1)
        self.window_s = window_s if rate >= 1 else window_s / rate
        self._initialised = False

    def _connect(self) -> sqlite3.Connection:
        try:
            require_data_dir(self.db_path.parent)
            conn = sqlite3.connect(self.db_path, timeout=30.0, isolation_level=None)
            if not self._initialised:
                conn.executescript(_SCHEMA)
                self._initialised = True
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(f"rate limiter state {self.db_path}: {exc}") from exc
        return conn

    def try_acquire(self, hold_s: float = 60.0) -> tuple[float, int | None]:
        """Take a slot now if one is free.

        Args:
            hold_s: longest time the request may stay in flight (after that, a slot left
                pending by a crashed process is reclaimed).

        Returns:
            ``(0.0, slot_id)`` when a slot was taken, else ``(seconds to wait, None)``.
        """
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            now = time.time()
            conn.execute(
                "DELETE FROM slots WHERE host = ? AND "
                "((pending = 0 AND t <= ?) OR (pending = 1 AND expires <= ?))",
                (self.host, now - self.window_s, now),
            )
            rows = conn.execute(
                "SELECT t, pending FROM slots WHERE host = ?", (self.host,)
            ).fetchall()
            if len(rows) < self._slots:
                cursor = conn.execute(
                    "INSERT INTO slots (host, t, pending, expires) VALUES (?, ?, 1, ?)",
                    (self.host, now, now + hold_s),
                )
                conn.execute("COMMIT")
                return 0.0, cursor.lastrowid
            conn.execute("COMMIT")
            finished = [t for t, pending in rows if not pending]
            # A request still in flight frees its slot window_s after it ends, at the earliest.
            wait = min(finished) + self.window_s - now if finished else self.window_s
            return max(min(wait, self.window_s), 0.001), None
        except sqlite3.Error as exc:
            raise StorageError(f"rate limiter state {self.db_path}: {exc}") from exc
        finally:
            conn.close()

    def release(self, slot_id: int) -> None:
        """Mark the request of ``slot_id`` finished now (its window starts now)."""
        conn = self._connect()
        try:
            conn.execute("UPDATE slots SET t = ?, pending = 0 WHERE id = ?", (time.time(), slot_id))
        except sqlite3.Error as exc:
            # The slot expires on its own; losing a release only slows us down.
            log.warning("ratelimit_release_failed", error=str(exc))
        finally:
            conn.close()

    async def acquire(self, hold_s: float = 60.0) -> int:
        """Wait until a request may be sent; returns the slot to :meth:`release` after it."""
        locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
        key = (str(self.db_path), self.host)
        lock = locks.get(key)
        if lock is None:
            lock = locks[key] = asyncio.Lock()
        async with lock:
            waited = 0.0
            while True:
                # The file lock may block (another process holds it); keep the loop free.
                wait, slot = await asyncio.to_thread(self.try_acquire, hold_s)
                if slot is not None:
                    break
                waited += wait
                await asyncio.sleep(wait)
            if waited > 0:
                log.debug("rate_limited_wait", host=self.host, waited_s=round(waited, 3))
            return slot

    @contextlib.asynccontextmanager
    async def slot(self, hold_s: float = 60.0) -> AsyncIterator[None]:
        """Hold a slot around one request: ``async with limiter.slot(): send()``."""
        slot_id = await self.acquire(hold_s)
        try:
            yield
        finally:
            # Synchronous on purpose: this must run even when the task is being cancelled.
            self.release(slot_id)


def limiter_for(home: Path, host: str, rate: float, *, window_s: float = 1.0) -> RateLimiter:
    """The limiter for ``host`` whose state lives under ``home`` (shared by its processes)."""
    return RateLimiter(home / "ratelimit.sqlite3", host, rate, window_s=window_s)
