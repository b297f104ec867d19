"""Per-key request limits that hold across replicas: the state lives in the store.

Two service replicas behind a load balancer must share one key's budget, so the limiter keeps
no state in memory: each request is one atomic upsert of the key's row (both engines run the
same portable SQL; a row lock on PostgreSQL, the write lock on SQLite, serialises requests of
one key). The rule is GCRA, the token bucket written as one number: the key's *theoretical
arrival time* ``tat``. A request at ``now`` is allowed when ``max(tat, now) + T - now`` stays
within ``burst * T`` (``T = 60 / per_minute``), and then moves ``tat`` on by ``T``; a refused
request leaves ``tat`` alone and learns how long to wait. ``per_minute`` requests a minute,
``burst`` at once, as the in-process bucket it replaces.

The store calls block: the service runs :meth:`KeyRateLimiter.take` off the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from medlit.storage.base import Connection

if TYPE_CHECKING:
    from medlit.service.keys import KeysStore

__all__ = ["KeyRateLimiter"]


def _create_key_rates(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS api_key_rates (
            key_id TEXT PRIMARY KEY,
            tat DOUBLE PRECISION NOT NULL,
            allowed INTEGER NOT NULL
        )"""
    )


MIGRATIONS = [_create_key_rates]

# ``excluded.tat`` is ``now + T``; ``nt`` below is ``max(tat, now) + T`` (CASE: no scalar max
# on PostgreSQL). SET expressions read the row's old values on both engines.
_NT = (
    "(CASE WHEN api_key_rates.tat + ? > excluded.tat THEN api_key_rates.tat + ? "
    "ELSE excluded.tat END)"
)
_TAKE = (
    "INSERT INTO api_key_rates (key_id, tat, allowed) VALUES (?, ?, 1) "
    "ON CONFLICT (key_id) DO UPDATE SET "
    f"allowed = CASE WHEN {_NT} - excluded.tat <= ? THEN 1 ELSE 0 END, "
    f"tat = CASE WHEN {_NT} - excluded.tat <= ? THEN {_NT} ELSE api_key_rates.tat END "
    "RETURNING tat, allowed"
)


class KeyRateLimiter:
    """Per-key request limits in the store, shared by every process that opens it.

    Args:
        store: the database (the migrations are applied on construction).
        per_minute: requests a key may make a minute (0: no limit) unless the key has its own.
        burst: requests a key may make at once before the rate applies.
        clock: wall-clock seconds (replicas on several hosts compare times).
    """

    def __init__(
        self,
        store: KeysStore,
        per_minute: int,
        burst: int,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self.per_minute = per_minute
        self.burst = burst
        self._clock = clock
        store.apply_migrations("key_rates", MIGRATIONS)

    def take(self, key: str, per_minute: int | None = None) -> float:
        """Spend one request of ``key``; returns 0 when allowed, else the seconds to wait.

        Args:
            key: the API key's id.
            per_minute: the key's own limit (None: the default; 0: no limit).
        """
        rate = self.per_minute if per_minute is None else per_minute
        if rate <= 0:
            return 0.0
        interval = 60.0 / rate
        slack = (min(self.burst, rate) - 1) * interval  # how far ahead tat may run
        now = self._clock()
        t, s = interval, slack
        params = (key, now + t, t, t, s, t, t, s, t, t)  # in the order of the ? marks
        with self._store.transaction() as conn:
            row = conn.execute(_TAKE, params).fetchone()
        tat, allowed = float(row[0]), int(row[1])
        if allowed:
            return 0.0
        return max(tat, now) - now - slack
