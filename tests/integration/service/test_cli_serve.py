"""``medlit serve`` and ``medlit keys`` as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
from typer.testing import CliRunner

from medlit.cli import app

runner = CliRunner()


def _medlit(*args: str) -> list[str]:
    return [sys.executable, "-c", "from medlit.cli import main; main()", *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_keys_create_list_revoke() -> None:
    made = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--label", "lab"])
    assert made.exit_code == 0, made.output
    token = made.stdout.strip().splitlines()[-1]
    assert token.startswith("mlk_") and len(token) > 40
    listed = runner.invoke(app, ["keys", "list", "--json"])
    keys = json.loads(listed.stdout)
    assert [k["tenant"] for k in keys] == ["acme"]
    assert token not in listed.stdout  # never shown again
    bad = runner.invoke(app, ["keys", "create", "--tenant", "Not A Name"])
    assert bad.exit_code == 2 and "invalid tenant name" in bad.output
    revoked = runner.invoke(app, ["keys", "revoke", keys[0]["key_id"]])
    assert revoked.exit_code == 0, revoked.output
    again = runner.invoke(app, ["keys", "revoke", keys[0]["key_id"]])
    assert again.exit_code == 4 and "no active API key" in again.output
    assert json.loads(runner.invoke(app, ["keys", "list", "--json"]).stdout) == []


def test_serve_refuses_a_public_address_without_keys() -> None:
    done = subprocess.run(
        _medlit("serve", "--host", "0.0.0.0", "--port", str(_free_port())),
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert done.returncode == 3
    assert "refusing to listen on 0.0.0.0 without API keys" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_on_loopback_answers_then_stops() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        _medlit("serve", "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        deadline = time.monotonic() + 180  # a loaded machine: tens of seconds to start
        while True:
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "medlit serve did not start"
                time.sleep(0.2)
        assert reply.json() == {"status": "ok"}
        docs = httpx.get(f"http://127.0.0.1:{port}/docs", timeout=30)
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the SIGTERM it caught (the usual status).
    assert proc.returncode in (0, -signal.SIGTERM), err
    assert "loopback only" in err
    assert f"serving on http://127.0.0.1:{port}/ (the web page)" in err
    assert f"docs at http://127.0.0.1:{port}/docs" in err
    assert "Traceback" not in err


def test_keys_can_expire() -> None:
    made = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--expires-in", "30d"])
    assert made.exit_code == 0, made.output
    assert "expires 20" in made.output
    dated = runner.invoke(app, ["keys", "create", "--tenant", "beta", "--expires-at", "2099-01-31"])
    assert dated.exit_code == 0, dated.output
    keys = json.loads(runner.invoke(app, ["keys", "list", "--json"]).stdout)
    by_tenant = {k["tenant"]: k for k in keys}
    assert 29 * 86400 < by_tenant["acme"]["expires_at"] - time.time() <= 30 * 86400
    assert by_tenant["beta"]["expires_at"] == 4073500800.0  # 2099-01-31T00:00Z
    for bad, says in (
        (["--expires-in", "30"], "invalid duration"),
        (["--expires-in", "0d"], "invalid duration"),
        (["--expires-at", "yesterday"], "invalid date"),
        (["--expires-at", "2001-01-01"], "must be in the future"),
        (["--expires-in", "1d", "--expires-at", "2099-01-01"], "not both"),
    ):
        refused = runner.invoke(app, ["keys", "create", "--tenant", "acme", *bad])
        assert refused.exit_code == 2 and says in refused.output, (bad, refused.output)
