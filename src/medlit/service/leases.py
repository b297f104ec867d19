"""Single-flight across replicas: a lease row in the store per identical ask in flight.

:mod:`medlit.service.flights` answers identical asks once *per process*. Replicas behind a load
balancer share one store, so the flight's leader in each process first takes the ask's lease
(``ask_leases``, keyed by a digest of the flight key: tenant, settings fingerprint, question,
sources, cache use, session). The replica that gets it does the work; one that finds the lease
held by another replica waits until it is released (the answer is then in tier 1, and its own
work is a cache hit) or expires (the holder died: it does the work itself). The holder renews
the lease while it works, so a slow answer is not taken over, and a killed holder delays the
others by at most ``ttl_s``.

A claim is one atomic portable upsert whose ``rowcount`` says who won: SQLite and PostgreSQL
run the same SQL. Asks that skip the cache (``no_cache``) gain nothing from waiting and take
no lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Hashable
from typing import TYPE_CHECKING

import anyio.to_thread

from medlit.log import get_logger
from medlit.storage.base import Connection

if TYPE_CHECKING:
    from medlit.service.keys import KeysStore

__all__ = ["AskLeases", "flight_id"]

log = get_logger("service.leases")


def _create_ask_leases(conn: Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS ask_leases (
            flight TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )"""
    )


MIGRATIONS = [_create_ask_leases]

_CLAIM = (
    "INSERT INTO ask_leases (flight, owner, expires_at) VALUES (?, ?, ?) "
    "ON CONFLICT (flight) DO UPDATE SET owner = excluded.owner, "
    "expires_at = excluded.expires_at WHERE ask_leases.expires_at < ?"
)


def flight_id(key: Hashable) -> str:
    """The lease row's key of a flight key (a digest: the key holds the question)."""
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()


class AskLeases:
    """Leases of the asks in flight, shared by every replica over one store.

    Args:
        store: the database (the migrations are applied on construction).
        ttl_s: how long a lease holds without renewal (a dead holder's lease expires).
        poll_s: how often a waiting replica looks at the lease.
    """

    def __init__(self, store: KeysStore, *, ttl_s: float = 30.0, poll_s: float = 0.1) -> None:
        self._store = store
        self.ttl_s = ttl_s
        self.poll_s = poll_s
        self.owner = uuid.uuid4().hex  # this process
        self.waited = 0  # flights that waited for another replica (tests, diagnostics)
        self._claims = 0
        store.apply_migrations("ask_leases", MIGRATIONS)

    @contextlib.asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[bool]:
        """Around the work of one flight: enter when this replica may do it (the lease is
        ours, or another replica's flight of the same ask has ended), release on exit.

        Yields:
            Whether it waited for another replica (whose answer may now be in the cache).
        """
        flight = flight_id(key)
        owner = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        waited = False
        while not await anyio.to_thread.run_sync(self._claim, flight, owner):
            waited = True
            await asyncio.sleep(self.poll_s)
        if waited:
            self.waited += 1
        renew = asyncio.create_task(self._renew(flight, owner))
        try:
            yield waited
        finally:
            renew.cancel()
            await anyio.to_thread.run_sync(self._release, flight, owner)

    def _claim(self, flight: str, owner: str) -> bool:
        now = time.time()
        with self._store.transaction() as conn:
            self._claims += 1
            if self._claims % 500 == 1:  # leases of killed holders nobody asked for again
                conn.execute("DELETE FROM ask_leases WHERE expires_at < ?", (now - 3600.0,))
            cur = conn.execute(_CLAIM, (flight, owner, now + self.ttl_s, now))
            return cur.rowcount > 0

    async def _renew(self, flight: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.ttl_s / 3)
            try:
                await anyio.to_thread.run_sync(self._extend, flight, owner)
            except Exception as exc:  # a failed renewal only risks a second answer
                log.warning("ask_lease_renew_failed", error=str(exc))

    def _extend(self, flight: str, owner: str) -> None:
        with self._store.transaction() as conn:
            conn.execute(
                "UPDATE ask_leases SET expires_at = ? WHERE flight = ? AND owner = ?",
                (time.time() + self.ttl_s, flight, owner),
            )

    def _release(self, flight: str, owner: str) -> None:
        with self._store.transaction() as conn:
            conn.execute("DELETE FROM ask_leases WHERE flight = ? AND owner = ?", (flight, owner))
