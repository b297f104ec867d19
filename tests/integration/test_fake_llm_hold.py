"""The fake LLM server's held replies: what the kill, stop and cancel tests rely on.

A held reply is sent only once the test releases it, whatever the load; a handler holding one
ends when its client hangs up or the server stops, so it never outlives the test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.fakes.research_responder import ResearchResponder

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "q"}]}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _handlers() -> int:
    return sum(1 for t in threading.enumerate() if "process_request_thread" in t.name)


def _until(condition: object, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_held_reply_is_sent_once_released(server: FakeLLMServer) -> None:
    gate = threading.Event()
    server.enqueue(Reply.held(gate, "now"))
    replies: list[httpx.Response] = []
    client = threading.Thread(
        target=lambda: replies.append(
            httpx.post(f"{server.base_url}/chat/completions", json=BODY, timeout=120)
        )
    )
    client.start()
    _until(lambda: server.completions, "the request never arrived")
    client.join(0.5)
    assert client.is_alive() and not replies  # held
    gate.set()
    client.join(60)
    assert replies[0].json()["choices"][0]["message"]["content"] == "now"


def test_a_handler_holding_a_reply_ends_when_its_client_hangs_up(server: FakeLLMServer) -> None:
    gate = threading.Event()  # never set
    before = _handlers()
    server.enqueue(Reply.held(gate))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.base_url}/chat/completions", json=BODY, timeout=1.0)
    _until(lambda: _handlers() <= before, "the handler still waits for a gone client")
    assert server.completions[0].status == 200


def test_a_held_reply_does_not_block_the_server_stopping() -> None:
    gate = threading.Event()  # never set
    fake = FakeLLMServer().start()
    fake.enqueue(Reply.held(gate))
    before = _handlers()
    errors: list[Exception] = []

    def ask() -> None:
        try:
            httpx.post(f"{fake.base_url}/chat/completions", json=BODY, timeout=120)
        except httpx.HTTPError as exc:
            errors.append(exc)

    client = threading.Thread(target=ask, daemon=True)
    client.start()
    _until(lambda: fake.completions, "the request never arrived")
    fake.stop()  # the client is still waiting: the handler gives up all the same
    client.join(60)
    assert not client.is_alive()
    assert isinstance(errors[0], httpx.RemoteProtocolError)  # closed, nothing sent
    _until(lambda: _handlers() <= before, "the handler outlived the server")


def test_the_research_responder_holds_then_answers_at_once() -> None:
    responder = ResearchResponder()
    extract = {
        "messages": [
            {"role": "system", "content": "medlit research: extract\n..."},
            {"role": "user", "content": "Article PMID: 40000004\n..."},
        ]
    }
    responder.hold("40000004")
    held = responder(extract)
    assert isinstance(held, Reply) and held.hold is responder.gate and not responder.gate.is_set()
    responder.release()
    assert responder.gate.is_set() and isinstance(responder(extract), str)  # not held again
