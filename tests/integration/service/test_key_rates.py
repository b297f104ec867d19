"""Per-key request limits live in the store: replicas over one database share a key's budget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.app import create_app
from medlit.service.keys import KeyStore
from medlit.service.limits import KeyRateLimiter
from medlit.storage.base import Store


class Clock:
    """A settable wall clock."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens stores on one database of the parametrised backend (each a separate connection,
    as two replicas would hold)."""
    opened: list[Store] = []

    def factory() -> Store:
        store: Store
        if request.param == "sqlite":
            from medlit.storage.sqlite import SqliteStore

            store = SqliteStore(tmp_path / "store.sqlite3")
        else:
            from medlit.storage.postgres import PostgresStore

            store = PostgresStore(str(request.getfixturevalue("pg_url")), pool_size=2)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def test_burst_then_rate_then_retry_after(open_store: Callable[[], Store]) -> None:
    clock = Clock()
    limiter = KeyRateLimiter(open_store(), per_minute=60, burst=3, clock=clock)
    assert [limiter.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("k")
    assert wait == pytest.approx(1.0)  # one request a second once the burst is spent
    assert limiter.take("k") == pytest.approx(1.0)  # a refusal does not spend the budget
    assert limiter.take("other") == 0.0  # per key
    clock.now += 1.0
    assert limiter.take("k") == 0.0
    assert limiter.take("k") > 0
    clock.now += 10.0  # the bucket refills up to the burst, never past it
    assert [limiter.take("k") == 0.0 for _ in range(4)] == [True, True, True, False]
    assert limiter.take("k", per_minute=0) == 0.0  # a key without a limit


def test_two_stores_on_one_database_share_a_key_budget(open_store: Callable[[], Store]) -> None:
    clock = Clock()
    first = KeyRateLimiter(open_store(), per_minute=120, burst=4, clock=clock)
    second = KeyRateLimiter(open_store(), per_minute=120, burst=4, clock=clock)
    allowed = [limiter.take("k") == 0.0 for limiter in (first, second) * 4]
    assert allowed == [True] * 4 + [False] * 4
    clock.now += 0.5  # one more request every half second, whichever replica gets it
    assert [second.take("k") == 0.0, first.take("k") == 0.0] == [True, False]


async def test_two_apps_over_one_store_share_the_rate_limit(service_settings: Settings) -> None:
    """Two replicas of the service (two apps, each with its own runtime and store connection
    on one database) allow one key its rate once, not once each."""
    service_settings.service.rate_limit_burst = 3
    service_settings.service.key_cache_s = 0.0
    runtimes = [Runtime.open(service_settings), Runtime.open(service_settings)]
    try:
        _key, token = KeyStore(runtimes[0].store).create("acme", rate_per_minute=6)
        clients = [
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_app(runtime)),
                base_url="http://replica",
                headers={"Authorization": f"Bearer {token}"},
            )
            for runtime in runtimes
        ]
        responses = await asyncio.gather(*(clients[i % 2].get("/v1/cache/stats") for i in range(8)))
        codes = sorted(r.status_code for r in responses)
        assert codes == [200] * 3 + [429] * 5
        refused = next(r for r in responses if r.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert refused.headers["content-type"] == "application/problem+json"
        for client in clients:
            await client.aclose()
    finally:
        for runtime in runtimes:
            await runtime.aclose()
