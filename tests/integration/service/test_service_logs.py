"""No secret in any log line, whatever fails; a traceback once per kind of failure; every
header and parameter that reaches the store is bounded."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from medlit.config import Settings
from medlit.log import TRACEBACKS, configure_logging, redact
from medlit.service.keys import KeyStore
from medlit.storage import open_store
from tests.integration.service.server import ServiceServer

NCBI_KEY = "ncbi-secret-0123456789"


@pytest.fixture
def warnings_logged() -> Iterator[None]:
    """The service logs at warning (more than the default), with a fresh traceback memory."""
    TRACEBACKS.reset()
    configure_logging("warning")
    yield
    configure_logging()
    TRACEBACKS.reset()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_no_key_reaches_the_log_whatever_fails(
    service_settings: Settings,
    warnings_logged: None,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service_settings.service.key_cache_s = 0.0
    service_settings.service.research_process = False
    # Every source is down (a closed port), with an NCBI key that rides in its URLs.
    service_settings.pubmed.base_url = "http://127.0.0.1:9/eutils"
    service_settings.pubmed.api_key = NCBI_KEY  # type: ignore[assignment]
    with open_store(service_settings) as store:
        keys = KeyStore(store)
        _k, token = keys.create("acme", rate_per_minute=1000)
        _l, limited = keys.create("acme", rate_per_minute=1)
        revoked_key, revoked = keys.create("acme")
        _e, expired = keys.create("acme", expires_at=time.time() + 0.5)
        keys.revoke(revoked_key.key_id)
    secrets = [t.split("_", 2)[2] for t in (token, limited, revoked, expired)]
    time.sleep(0.6)
    with (
        ServiceServer(service_settings) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        # A store failure inside a route, its message and frames full of the caller's key.
        store = server.app.state.medlit.runtime.store

        def broken(*_args: object, authorization: str = f"Bearer {token}") -> int:
            raise RuntimeError(f"store gone while serving {authorization}")

        monkeypatch.setattr(store, "count_articles", broken)
        seen: list[int] = []
        for headers in (_auth(token), {"X-Api-Key": token, **_auth(token)}):
            for _ in range(5):
                seen.append(client.get("/v1/cache/stats", headers=headers).status_code)
        assert set(seen) == {500}
        big = "9223372036854775808"
        for value in (big, "-1", "1e3", "\xb2", "1" * 70, str(2**53 + 1)):
            reply = client.get(
                "/v1/research/nojob/events",
                headers={**_auth(token), "Last-Event-ID": value.encode("latin-1")},
            )
            assert reply.status_code == 400, (value, reply.text)
            assert "Last-Event-ID" in reply.json()["detail"] or "last-event-id" in reply.text
        assert (
            client.get(f"/v1/research/nojob/events?after={big}", headers=_auth(token)).status_code
            == 400
        )
        statuses = {
            "bad json": client.post(
                "/v1/ask",
                content=b"{not json",
                headers={**_auth(token), "Content-Type": "application/json"},
            ).status_code,
            "too large": client.post(
                "/v1/ask", content=b"x" * 70_000, headers=_auth(token)
            ).status_code,
            "no route": client.get(f"/v1/{token}", headers=_auth(token)).status_code,
            "method": client.put("/v1/ask", headers=_auth(token)).status_code,
            "revoked": client.get("/v1/cache/stats", headers=_auth(revoked)).status_code,
            "expired": client.get("/v1/cache/stats", headers=_auth(expired)).status_code,
            "basic": client.get(
                "/v1/cache/stats", headers={"Authorization": f"Basic {token}"}
            ).status_code,
            "outage": client.post(
                "/v1/ask", json={"question": "Does aspirin prevent stroke?"}, headers=_auth(token)
            ).status_code,
            "outage stream": client.post(
                "/v1/ask",
                json={"question": "Does aspirin prevent stroke?"},
                headers={**_auth(token), "Accept": "text/event-stream"},
            ).status_code,
            "search": client.get("/v1/search?q=aspirin", headers=_auth(token)).status_code,
        }
        statuses["rate"] = max(
            client.get("/v1/research", headers=_auth(limited)).status_code for _ in range(70)
        )
        research = client.post(
            "/v1/research", json={"question": "Does aspirin prevent stroke?"}, headers=_auth(token)
        )
        assert research.status_code == 202, research.text
        job = research.json()["id"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = client.get(f"/v1/research/{job}", headers=_auth(token)).json()["status"]
            if state in ("COMPLETED", "FAILED"):
                break
            time.sleep(0.2)
        events = client.get(
            f"/v1/research/{job}/events", headers={**_auth(token), "Last-Event-ID": "0"}
        )
        assert events.status_code == 200
    assert statuses == {
        "bad json": 400,
        "too large": 413,
        "no route": 404,
        "method": 405,
        "revoked": 401,
        "expired": 401,
        "basic": 401,
        "outage": statuses["outage"],
        "outage stream": 200,
        "search": 503,
        "rate": 429,
    }, statuses
    assert statuses["outage"] in (200, 502, 503)
    log = capfd.readouterr().err
    assert log, "nothing was logged"
    for secret in [*secrets, NCBI_KEY]:
        assert secret not in log, f"a secret in the log:\n{log[:4000]}"
    # Ten identical failures: one traceback, then one line each that says it was seen before.
    assert log.count("Traceback (most recent call last)") == 1, log[:6000]
    assert "seen 10 times" in log
    assert "mlk_" + token.split("_")[1] + "_[redacted]" in log  # the public key id stays
    assert len(log) < 60_000, len(log)


def test_redaction_of_the_forms_a_credential_takes() -> None:
    token = "mlk_0123456789ab_S3cr3t-Secret_xyz"
    lines = [
        f"Authorization: Bearer {token}",
        f"(b'authorization', b'Bearer {token}')",
        f"[(b'host', b'x'), (b'authorization', b'{token}')]",
        f"{{'authorization': 'Bearer {token}'}}",
        "Authorization: Bearer abc.def.ghi",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "GET /esearch.fcgi?db=pubmed&term=x&api_key=ncbi-secret-0123456789&retmax=5",
        "postgresql://medlit:hunter2secret@db:5432/medlit",
        json.dumps({"x-api-key": "S3cr3t-Secret"}),
        "mlk_0_S3cr3t-Secret",
    ]
    for line in lines:
        out = redact(line)
        for secret in (
            "S3cr3t-Secret",
            "abc.def.ghi",
            "dXNlcjpwYXNzd29yZA",
            "ncbi-secret",
            "hunter2",
        ):
            assert secret not in out, (line, out)
        assert "[redacted]" in out
    assert redact(f"Bearer {token}") == "Bearer mlk_0123456789ab_[redacted]"
    for plain in ("max_tokens: 5", "the secret, which", "prompt_tokens=12", "tokens: 300"):
        assert redact(plain) == plain


def test_standard_library_records_are_redacted_and_tracebacks_written_once(
    warnings_logged: None,
) -> None:
    import io
    import logging

    from medlit.log import RedactingFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.redacting")
    logger.addHandler(handler)
    logger.propagate = False
    token = "mlk_0123456789ab_S3cr3t-Secret"
    try:
        for _ in range(3):
            try:
                raise ValueError(f"bad header Authorization: Bearer {token}")
            except ValueError:
                logger.exception("Exception in ASGI application")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "S3cr3t" not in text
    assert text.count("Traceback (most recent call last)") == 1
    assert "seen 3 times" in text and "mlk_0123456789ab_[redacted]" in text
