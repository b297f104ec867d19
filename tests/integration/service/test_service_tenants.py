"""Tenants and API keys over real HTTP: isolation of answers and sessions, 401, 429, revoke."""

from __future__ import annotations

import httpx
import pytest

from medlit.config import Settings
from medlit.errors import ConfigError
from medlit.service.keys import KeyStore
from medlit.service.server import check_bind, ready_line
from medlit.storage import open_store
from tests.fakes.eutils_server import FakeEutils
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.service.server import ServiceServer

Q1 = "Does aspirin prevent stroke in adults?"


def _keys(settings: Settings, *specs: tuple[str, int | None]) -> list[tuple[str, str]]:
    with open_store(settings) as store:
        keys = KeyStore(store)
        made = [keys.create(tenant, rate_per_minute=rate) for tenant, rate in specs]
    return [(key.key_id, token) for key, token in made]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_answers_and_sessions_are_per_tenant(
    service_settings: Settings, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    (_, a), (_, b) = _keys(service_settings, ("acme", None), ("beta", None))
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        anonymous = client.post("/v1/ask", json={"question": Q1})
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"] == "Bearer"
        assert "API key is required" in anonymous.json()["detail"]
        forged = client.post("/v1/ask", json={"question": Q1}, headers=_auth("mlk_0_nope"))
        assert forged.status_code == 401

        first = client.post(
            "/v1/ask", json={"question": Q1, "session_id": "s1"}, headers=_auth(a)
        ).json()
        assert first["cache"]["tier1"] == "miss" and first["cache"]["admitted"]
        assert (
            client.post("/v1/ask", json={"question": Q1}, headers=_auth(a)).json()["cache"]["tier1"]
            == "hit"
        )

        # B asks the very same question: A's entry is never a candidate (not even a
        # fingerprint or guard miss), B's evidence comes from the shared tier 2.
        pubmed_before = len(eutils.history)
        other = client.post("/v1/ask", json={"question": Q1}, headers=_auth(b)).json()
        assert other["cache"]["tier1"] == "miss"
        assert other["cache"]["miss_reason"] == "nothing_similar"
        assert other["cache"]["similarity"] is None
        assert other["cache"]["evidence_reused"] > 0
        assert len(eutils.history) - pubmed_before < first["api_calls"]["pubmed"]

        stats_a = client.get("/v1/cache/stats", headers=_auth(a)).json()
        stats_b = client.get("/v1/cache/stats", headers=_auth(b)).json()
        assert stats_a["tenant"] == "acme" and stats_b["tenant"] == "beta"
        assert stats_a["answers"]["hits"] == 1 and stats_b["answers"]["hits"] == 0
        assert "acme" not in str(stats_b) and "beta" not in str(stats_a)

        # Same session id, two tenants: B's follow-up knows nothing of A's conversation.
        follow_a = client.post(
            "/v1/ask", json={"question": "and in children?", "session_id": "s1"}, headers=_auth(a)
        ).json()
        follow_b = client.post(
            "/v1/ask", json={"question": "and in children?", "session_id": "s1"}, headers=_auth(b)
        ).json()
        assert "aspirin" in follow_a["standalone_question"].lower()
        assert "aspirin" not in follow_b["standalone_question"].lower()


def test_rate_limit_and_revocation(service_settings: Settings) -> None:
    service_settings.service.key_cache_s = 0.0
    (_, limited), (other_id, other) = _keys(service_settings, ("acme", 2), ("acme", None))
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        codes = [
            client.get("/v1/cache/stats", headers=_auth(limited)).status_code for _ in range(3)
        ]
        assert codes == [200, 200, 429]
        refused = client.get("/v1/cache/stats", headers=_auth(limited))
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert refused.headers["content-type"] == "application/problem+json"
        # The limit is per key: another key of the same tenant is not slowed.
        assert client.get("/v1/cache/stats", headers=_auth(other)).status_code == 200
        with open_store(service_settings) as store:
            KeyStore(store).revoke(other_id)
        assert client.get("/v1/cache/stats", headers=_auth(other)).status_code == 401


def test_without_keys_only_loopback() -> None:
    assert "loopback only" in check_bind("127.0.0.1", 0)
    assert "loopback only" in check_bind("::1", 0)
    with pytest.raises(ConfigError, match=r"refusing to listen on 0\.0\.0\.0"):
        check_bind("0.0.0.0", 0)
    assert "API keys required" in check_bind("0.0.0.0", 1)
    # Every key revoked or expired: still closed, and it says so.
    assert "none is active" in check_bind("0.0.0.0", 0, keys_created=True)


def test_the_ready_line_gives_urls_a_browser_opens() -> None:
    assert ready_line("127.0.0.1", 8000).startswith("serving on http://127.0.0.1:8000/ (the web")
    assert "docs at http://[::1]:8080/docs" in ready_line("::1", 8080)
    everywhere = ready_line("0.0.0.0", 8000)
    assert everywhere.startswith("serving on http://127.0.0.1:8000/ (the web page) (and on every")
    assert "http://[::1]:9000/" in ready_line("::", 9000)


def test_keys_on_the_json_fast_path(service_settings: Settings) -> None:
    """POST /v1/ask as JSON (the fast path) checks keys and rates as every route does."""
    service_settings.service.key_cache_s = 0.0
    ((_, limited),) = _keys(service_settings, ("acme", 1))
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        empty = {"question": "   "}  # a 400 once the key passes: no search, no LLM
        for headers in ({}, _auth("not-a-key"), {"Authorization": f"Basic {limited}"}):
            reply = client.post("/v1/ask", json=empty, headers=headers)
            assert reply.status_code == 401, reply.text
            assert reply.headers["www-authenticate"] == "Bearer"
            assert reply.headers["content-type"] == "application/problem+json"
        codes = [
            client.post("/v1/ask", json=empty, headers=_auth(limited)).status_code for _ in range(2)
        ]
        assert codes == [400, 429]
