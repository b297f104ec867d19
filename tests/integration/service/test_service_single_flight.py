"""Identical asks in flight at once are answered once (counted at the fake servers)."""

from __future__ import annotations

import asyncio

import httpx

from medlit.config import Settings
from medlit.service.keys import KeyStore
from medlit.storage import open_store
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.service.server import ServiceServer
from tests.integration.service.test_service_basics import parse_sse

Q1 = "Does aspirin prevent stroke in adults?"


async def test_eight_identical_asks_cost_one(
    service: ServiceServer, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    async with httpx.AsyncClient(base_url=service.url, timeout=60) as client:
        stream = client.post(
            "/v1/ask", json={"question": Q1}, headers={"Accept": "text/event-stream"}
        )
        plain = [client.post("/v1/ask", json={"question": f"  {Q1.upper()} "}) for _ in range(7)]
        replies = await asyncio.gather(stream, *plain)
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
    events = parse_sse(replies[0].text)
    assert events[-1][0] == "result"
    results = [events[-1][1]] + [r.json() for r in replies[1:]]
    assert len(llm_server.history) == 1
    leader = [r for r in results if r["api_calls"]["llm"] == 1]
    assert len(leader) >= 1
    assert len(eutils.history) == leader[0]["api_calls"]["pubmed"]
    assert len({r["answer"] for r in results}) == 1
    shared = sum(1 for r in replies[1:] if r.headers.get("x-medlit-shared") == "1")
    hits = sum(1 for r in results if r["cache"]["tier1"] == "hit")
    assert shared + hits >= 6  # the others joined the flight or came after it, as hits
    assert shared >= 1


async def test_tenants_never_share_a_flight(
    service_settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    with open_store(service_settings) as store:
        keys = KeyStore(store)
        tokens = [keys.create(name)[1] for name in ("acme", "beta")]
    with ServiceServer(service_settings) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            replies = await asyncio.gather(
                *(
                    client.post(
                        "/v1/ask",
                        json={"question": Q1},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                    for token in tokens
                )
            )
    assert [r.status_code for r in replies] == [200, 200]
    assert all("x-medlit-shared" not in r.headers for r in replies)
    assert len(llm_server.history) == 2  # one answer per tenant: no cross-tenant result
