"""Identical asks split across two replicas over one store are answered once (a store lease)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.app import create_app
from medlit.service.flights import question_key
from medlit.service.leases import AskLeases, flight_id
from medlit.storage import open_store
from medlit.storage.base import Store
from medlit.storage.sqlite import SqliteStore
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer, Reply

Q1 = "Does aspirin prevent stroke in adults?"


async def test_eight_identical_asks_over_two_replicas_cost_one(
    service_settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    answer = llm_server.responder
    assert answer is not None

    # The answer is held until the other replica's flight is seen waiting for the lease (a
    # claim tried again): the asks overlap however slowly either replica gets there.
    gate = threading.Event()

    def held(request: dict[str, Any]) -> Reply:
        text = answer(request)
        assert isinstance(text, str)
        return Reply.held(gate, text)

    llm_server.responder = held
    runtimes = [Runtime.open(service_settings), Runtime.open(service_settings)]
    apps = [create_app(runtime) for runtime in runtimes]
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=120
        )
        for app in apps
    ]

    async def release_once_one_waits() -> None:
        # One claim per replica's flight, and one more: a flight tried again (a counter, not
        # an event, hence the polling).
        while sum(app.state.medlit.leases._claims for app in apps) < 3:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        gate.set()

    releaser = asyncio.create_task(release_once_one_waits())
    try:
        replies = await asyncio.gather(
            *(clients[i % 2].post("/v1/ask", json={"question": Q1}) for i in range(8))
        )
    finally:
        gate.set()
        releaser.cancel()
        for client in clients:
            await client.aclose()
        for runtime in runtimes:
            await runtime.aclose()
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
    results = [r.json() for r in replies]
    assert len(llm_server.history) == 1  # one LLM answer for all eight
    by_replica = [results[0::2], results[1::2]]
    tiers = sorted(sorted({r["cache"]["tier1"] for r in replica}) for replica in by_replica)
    # One replica answered (its four asks shared that flight); the other's flight waited for
    # the lease and then found the answer in tier 1.
    assert tiers == [["hit"], ["miss"]], tiers
    answered = next(replica for replica in by_replica if replica[0]["cache"]["tier1"] == "miss")
    assert all(r["api_calls"]["llm"] == 1 for r in answered)
    assert len(eutils.history) == answered[0]["api_calls"]["pubmed"]  # one PubMed round
    assert len({r["answer"] for r in results}) == 1
    assert sum(app.state.medlit.leases.waited for app in apps) == 1
    # Each replica's flight looked tier 1 up once as far as every count goes: the one that
    # answered missed, the one that waited for it hit (its first look before the wait was
    # not a second lookup of the ask).
    metrics = [app.state.medlit.metrics.tier1_counts("default") for app in apps]
    assert sorted((m["hits"], sum(m["misses"].values())) for m in metrics) == [(0, 1), (1, 0)]
    assert _stored_lookups(service_settings) == (1, 1)


def _stored_lookups(settings: Settings) -> tuple[int, int]:
    """Tier-1 hits and misses in the store's counters (``medlit cache stats``)."""
    with open_store(settings) as store:
        counters = store.counters("answers.")
    misses = sum(v for k, v in counters.items() if k.startswith("answers.miss."))
    return counters.get("answers.hits", 0), misses


async def test_a_waiter_whose_holder_died_counts_one_miss(
    service_settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    runtime = Runtime.open(service_settings)
    app = create_app(runtime)
    state = app.state.medlit
    # The dead holder's lease lasts until the ask is seen waiting for it, then it expires (as
    # it would ttl_s after its holder died): however slowly the ask gets there, it waits.
    state.leases.ttl_s, state.leases.poll_s = 600.0, 0.02
    names = state.assistant.resolve_sources(None)
    key = ("default", state.assistant.deps.fingerprint(names), question_key(Q1))
    key += (tuple(names), False, None)  # as POST /v1/ask builds it
    assert state.leases._claim(flight_id(key), "killed-replica")  # never renewed nor released
    tried = state.leases._claims
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=60
        ) as client:
            ask = asyncio.create_task(client.post("/v1/ask", json={"question": Q1}))
            async with asyncio.timeout(120):
                # A second claim: the first one failed (a counter: there is no event to wait on).
                while state.leases._claims < tried + 2 and not ask.done():  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
            with state.leases._store.transaction() as conn:
                conn.execute(
                    "UPDATE ask_leases SET expires_at = ? WHERE owner = ?",
                    (time.time() - 1, "killed-replica"),
                )
            reply = await ask
    finally:
        await runtime.aclose()
    assert reply.status_code == 200, reply.text
    assert reply.json()["cache"]["tier1"] == "miss"
    assert state.leases.waited == 1 and len(llm_server.history) == 1
    counts = state.metrics.tier1_counts("default")
    assert (counts["hits"], sum(counts["misses"].values())) == (0, 1)
    assert _stored_lookups(service_settings) == (0, 1)


def test_an_expired_lease_is_taken_over(service_settings: Settings) -> None:
    """A holder that died (no renewal, no release) delays the others by at most ``ttl_s``."""
    ttl_s = 2.0  # the next ask tries the lease well within it, however loaded the machine
    with open_store(service_settings) as store:
        dead = AskLeases(store, ttl_s=ttl_s, poll_s=0.02)
        live = AskLeases(store, ttl_s=ttl_s, poll_s=0.02)

        async def take(key: tuple[str, ...]) -> tuple[bool, float]:
            async with asyncio.timeout(ttl_s + 60):  # a lease that never expired: a failure
                async with live.hold(key) as waited:
                    return waited, time.monotonic()

        claimed_at = time.monotonic()
        assert dead._claim(flight_id(("k",)), "killed-replica")  # never renewed nor released
        waited, _ = asyncio.run(take(("other",)))
        assert not waited  # another ask: no wait
        waited, entered_at = asyncio.run(take(("k",)))
        # Not before the lease expired; after it, by the poll (plus what load adds).
        assert waited and ttl_s - 0.05 < entered_at - claimed_at < ttl_s + 30


def test_a_waiting_replica_proceeds_when_the_holder_releases(service_settings: Settings) -> None:
    with open_store(service_settings) as store:
        # A waiter that ignored the release would wait the lease out: ten minutes.
        first = AskLeases(store, ttl_s=600.0, poll_s=0.02)
        second = AskLeases(store, ttl_s=600.0, poll_s=0.02)

        async def both() -> tuple[bool, bool, float, float]:
            entered = asyncio.Event()
            released_at = 0.0

            async def holder() -> bool:
                nonlocal released_at
                async with first.hold(("k",)) as waited:
                    entered.set()
                    # Until the second has tried and failed once (a counter, not an event).
                    while second._claims < 2:  # noqa: ASYNC110
                        await asyncio.sleep(0.01)
                    await asyncio.sleep(0.1)
                    released_at = time.monotonic()
                    return waited

            task = asyncio.create_task(holder())
            await entered.wait()
            async with asyncio.timeout(120):
                async with second.hold(("k",)) as waited:
                    entered_at = time.monotonic()
            return await task, waited, released_at, entered_at

        first_waited, second_waited, released_at, entered_at = asyncio.run(both())
        assert (first_waited, second_waited) == (False, True)
        # It entered only after the release, and then at once (a few polls, loaded or not).
        assert released_at <= entered_at < released_at + 30


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_one_claim_wins_until_released_or_expired(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: Store
    if backend == "sqlite":
        store = SqliteStore(tmp_path / "store.sqlite3")
    else:
        from medlit.storage.postgres import PostgresStore  # psycopg only when needed

        store = PostgresStore(str(request.getfixturevalue("pg_url")), pool_size=2)
    try:
        # Live leases last ten minutes (no load makes them expire mid-test); the one that must
        # expire lasts 0.3 s and is slept past.
        first, second = AskLeases(store, ttl_s=600), AskLeases(store, ttl_s=600)
        short = AskLeases(store, ttl_s=0.3)
        assert first._claim("f", "one") and not second._claim("f", "two")
        assert second._claim("g", "two")  # another ask
        first._release("f", "one")
        assert short._claim("f", "two")
        time.sleep(0.35)  # the holder died: its lease expires
        assert first._claim("f", "one")
        second._release("f", "two")  # no longer its lease: the new holder keeps it
        assert not second._claim("f", "two")
    finally:
        store.close()
