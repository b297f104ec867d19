"""Auth is decided on every request from the store: keys ever created mean 401 without one
(even after all are revoked or expired), and without keys only this machine is served."""

from __future__ import annotations

import time

import httpx
import pytest

from medlit.config import Settings
from medlit.runtime import Runtime
from medlit.service.app import create_app
from medlit.service.auth import is_loopback_host, is_loopback_peer
from medlit.service.keys import KeyStore
from medlit.storage import open_store
from tests.integration.service.server import ServiceServer


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_revoking_every_key_while_serving_does_not_open_the_server(
    service_settings: Settings,
) -> None:
    service_settings.service.key_cache_s = 0.0
    with open_store(service_settings) as store:
        key, token = KeyStore(store).create("acme")
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        assert client.get("/v1/cache/stats", headers=_auth(token)).status_code == 200
        assert client.get("/v1/cache/stats").status_code == 401
        with open_store(service_settings) as store:
            KeyStore(store).revoke(key.key_id)
        revoked = client.get("/v1/cache/stats", headers=_auth(token))
        assert revoked.status_code == 401 and "revoked" in revoked.json()["detail"]
        # No key at all, after the last key went: still 401 on every route, fast path too.
        for method, path, body in (
            ("GET", "/v1/cache/stats", None),
            ("GET", "/v1/research", None),
            ("POST", "/v1/research", {"question": "Does aspirin prevent stroke?"}),
            ("POST", "/v1/ask", {"question": "Does aspirin prevent stroke?"}),
        ):
            reply = client.request(method, path, json=body)
            assert reply.status_code == 401, (path, reply.text)
            assert reply.headers["content-type"] == "application/problem+json"
            assert "API key is required" in reply.json()["detail"]


def test_a_running_server_requires_keys_once_the_first_is_created(
    service_settings: Settings,
) -> None:
    service_settings.service.key_cache_s = 0.0
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        assert client.get("/v1/cache/stats").status_code == 200
        with open_store(service_settings) as store:
            _key, token = KeyStore(store).create("acme")
        assert client.get("/v1/cache/stats").status_code == 401
        assert client.get("/v1/cache/stats", headers=_auth(token)).json()["tenant"] == "acme"


def test_an_expired_key_is_refused_and_says_so(service_settings: Settings) -> None:
    service_settings.service.key_cache_s = 60.0  # a remembered key is still checked for expiry
    with open_store(service_settings) as store:
        _key, token = KeyStore(store).create("acme", expires_at=time.time() + 1.5)
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        assert client.get("/v1/cache/stats", headers=_auth(token)).status_code == 200
        time.sleep(1.6)
        for method, path in (("GET", "/v1/cache/stats"), ("POST", "/v1/ask")):
            body = {"question": "Does aspirin prevent stroke?"} if method == "POST" else None
            expired = client.request(method, path, json=body, headers=_auth(token))
            assert expired.status_code == 401, expired.text
            assert "expired on 20" in expired.json()["detail"]
            assert expired.headers["www-authenticate"].startswith("Bearer")
        # Its only key expired: a request without one is refused too.
        assert client.get("/v1/cache/stats").status_code == 401


def test_without_keys_only_loopback_host_names_are_served(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for host in (f"127.0.0.1:{service.port}", f"localhost:{service.port}", "localhost"):
            reply = client.get("/v1/cache/stats", headers={"Host": host})
            assert reply.status_code == 200, (host, reply.text)
        for host in (f"evil.example:{service.port}", "localtest.me", "127.0.0.1.nip.io"):
            for method, path, body in (
                ("GET", "/v1/cache/stats", None),
                ("GET", "/v1/research", None),
                ("POST", "/v1/ask", {"question": "Does aspirin prevent stroke?"}),
            ):
                reply = client.request(method, path, json=body, headers={"Host": host})
                assert reply.status_code == 403, (host, path, reply.text)
                assert reply.headers["content-type"] == "application/problem+json"
                assert "Host header" in reply.json()["detail"]


async def test_without_keys_a_peer_on_another_machine_is_refused(
    service_settings: Settings,
) -> None:
    runtime = Runtime.open(service_settings)
    try:
        app = create_app(runtime)
        for client_addr, expected in ((("10.1.2.3", 5555), 403), (("127.0.0.1", 5555), 200)):
            transport = httpx.ASGITransport(app=app, client=client_addr)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
                stats = await c.get("/v1/cache/stats")
                ask = await c.post("/v1/ask", json={"question": "   "})
            assert stats.status_code == expected, stats.text
            assert ask.status_code == (403 if expected == 403 else 400), ask.text
            if expected == 403:
                assert "only requests from this machine" in stats.json()["detail"]
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("localhost", True),
        ("LOCALHOST:8000", True),
        ("127.0.0.1", True),
        ("127.0.0.1:8000", True),
        ("127.9.9.9:1", True),
        ("[::1]", True),
        ("[::1]:8000", True),
        ("", False),
        (None, False),
        ("localhost.evil.example", False),
        ("evil.example", False),
        ("localhost:80:80", False),
        ("localhost:", False),
        ("localhost:x", False),
        ("::1", False),
        ("[::1", False),
        ("[::1]x", False),
        ("[::2]", False),
        ("10.0.0.1", False),
        ("0.0.0.0:8000", False),
    ],
)
def test_loopback_host_names(host: str | None, ok: bool) -> None:
    assert is_loopback_host(host) is ok


def test_loopback_peers() -> None:
    assert is_loopback_peer("127.0.0.1") and is_loopback_peer("::1")
    assert is_loopback_peer("::ffff:127.0.0.1")
    for peer in (None, "", "10.0.0.1", "testclient", "::ffff:10.0.0.1", "0.0.0.0"):
        assert not is_loopback_peer(peer), peer
