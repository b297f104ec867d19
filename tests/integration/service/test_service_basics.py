"""The service over real HTTP: ask (JSON and SSE), search, health, problems, metrics."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.fakes.eutils_server import FakeEutils, Fault
from tests.fakes.llm_server import FakeLLMServer
from tests.integration.service.server import ServiceServer

Q1 = "Does aspirin prevent stroke in adults?"


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """(event name, JSON data) of each event of an SSE body."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", ""
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        if data:
            events.append((name, json.loads(data)))
    return events


def test_ask_miss_then_hit(
    service: ServiceServer, eutils: FakeEutils, llm_server: FakeLLMServer
) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        first = client.post("/v1/ask", json={"question": Q1})
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["cache"]["tier1"] == "miss" and body["citations"]
        assert body["api_calls"]["pubmed"] == len(eutils.history) >= 2
        sent = (len(eutils.history), len(llm_server.history))
        again = client.post("/v1/ask", json={"question": Q1})
        assert again.json()["cache"]["tier1"] == "hit"
        assert (len(eutils.history), len(llm_server.history)) == sent
        assert again.json()["answer"] == body["answer"]


def test_ask_streams_stages_then_result(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        reply = client.post(
            "/v1/ask", json={"question": Q1}, headers={"Accept": "text/event-stream"}
        )
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(reply.text)
    names = [name for name, _ in events]
    assert names[-1] == "result", names
    stages = [data["stage"] for name, data in events if name == "stage"]
    assert stages[:2] == ["plan_query", "query_cache"]
    assert "fetch_pubmed" in stages and "call_llm" in stages
    assert events[-1][1]["cache"]["tier1"] == "miss" and events[-1][1]["citations"]


def test_bad_input_is_a_problem_never_a_500(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        bad_json = {"content-type": "application/json"}
        cases = [
            client.post("/v1/ask", json={"question": "   "}),
            client.post("/v1/ask", json={"question": "x" * 5000}),
            client.post("/v1/ask", json={"question": Q1, "source": "nowhere"}),
            client.post("/v1/ask", content=b"{not json", headers=bad_json),
            client.post("/v1/ask", json={"nothing": 1}),
            client.get("/v1/search", params={"q": "aspirin", "from_year": 2020, "to_year": 2010}),
        ]
        for reply in cases:
            assert reply.status_code == 400, reply.text
            assert reply.headers["content-type"] == "application/problem+json"
            problem = reply.json()
            assert problem["status"] == 400 and problem["detail"]
        assert "empty" in cases[0].json()["detail"]
        assert "too long" in cases[1].json()["detail"]
        big = client.post("/v1/ask", content=b"x" * 70000, headers=bad_json)
        assert big.status_code == 413 and "larger than" in big.json()["detail"]
        missing = client.get("/v1/nothing-here")
        assert missing.status_code == 404 and missing.json()["detail"].startswith("no such route")


def test_source_failure_maps_to_503_with_the_cli_reason(
    service: ServiceServer, eutils: FakeEutils
) -> None:
    eutils.enqueue(Fault.status(500), times=50)
    with httpx.Client(base_url=service.url, timeout=30) as client:
        reply = client.post("/v1/ask", json={"question": "Does zinc shorten the common cold?"})
    assert reply.status_code == 503, reply.text
    assert "could not search the literature" in reply.json()["detail"]


def test_search_health_ready_metrics(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        found = client.get("/v1/search", params={"q": "aspirin stroke", "limit": 3})
        assert found.status_code == 200, found.text
        assert 1 <= len(found.json()["articles"]) <= 3
        assert found.json()["providers"]["pubmed"]["status"] == "ok"
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz").json()
        assert ready["store"]["ok"] and ready["llm"]["answer"] is True
        assert ready["sources"]["pubmed"]["reachable"] is True
        assert ready["sources"]["pubmed"]["detail"] == "answers (HTTP 404 at its base URL)"
        stats = client.get("/v1/cache/stats").json()
        assert stats["tenant"] == "default" and stats["answers"]["entries"] == 0
        assert stats["word_pairs"] == {"same": 0, "different": 0, "pending": 0}
        bound = stats["guard_error"]
        assert bound["wrong_hits"] == 0 and 0 < bound["upper_95"] < 0.03
        assert "part check" in bound["contrast_set"]
        text = client.get("/metrics").text
        docs = client.get("/openapi.json").json()
    assert 'medlit_http_requests_total{method="GET",route="/v1/search",status="200"} 1.0' in text
    assert 'medlit_source_requests_total{service="pubmed"}' in text
    assert "medlit_http_request_duration_seconds_bucket" in text
    assert "/v1/ask" in docs["paths"] and "/v1/search" in docs["paths"]


def test_stream_ends_with_an_error_event_when_sources_fail(
    service: ServiceServer, eutils: FakeEutils
) -> None:
    eutils.enqueue(Fault.status(500), times=50)
    with httpx.Client(base_url=service.url, timeout=30) as client:
        reply = client.post(
            "/v1/ask",
            json={"question": "Does zinc shorten the common cold?"},
            headers={"Accept": "text/event-stream"},
        )
    events = parse_sse(reply.text)
    assert events[0][0] == "stage" and events[0][1]["stage"] == "plan_query"
    name, problem = events[-1]
    assert name == "error" and problem["status"] == 503
    assert "could not search the literature" in problem["detail"]


def test_tier1_hits_and_misses_are_counted(service: ServiceServer) -> None:
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for _ in range(3):
            assert client.post("/v1/ask", json={"question": Q1}).status_code == 200
        text = client.get("/metrics").text
        stats = client.get("/v1/cache/stats").json()
    assert 'medlit_answer_cache_lookups_total{reason="",result="hit"} 2.0' in text
    assert 'medlit_answer_cache_lookups_total{reason="nothing_similar",result="miss"} 1.0' in text
    assert 'medlit_llm_calls_total{task="answer"} 1.0' in text
    assert 'medlit_llm_tokens_total{kind="prompt",task="answer"}' in text
    assert stats["answers"]["hits"] == 2 and stats["answers"]["misses"] == {"nothing_similar": 1}
    assert stats["answers"]["entries"] == 1


def _same_reply(fast: httpx.Response, route: httpx.Response) -> None:
    """The fast path's reply and the route's are the same, but for the time each took."""
    assert (fast.status_code, fast.headers["content-type"]) == (
        route.status_code,
        route.headers["content-type"],
    ), (fast.text, route.text)
    a, b = fast.json(), route.json()
    for body in (a, b):
        body.pop("timings_ms", None)
    assert a == b


def test_the_json_fast_path_answers_as_the_route_does(service: ServiceServer) -> None:
    # application/json takes the fast path (AskFastPath); another JSON media type, the route.
    fast = {"content-type": "application/json"}
    route = {"content-type": "application/vnd.medlit+json"}
    with httpx.Client(base_url=service.url, timeout=30) as client:
        assert client.post("/v1/ask", json={"question": Q1}).status_code == 200  # now cached
        cases = [
            {"question": Q1},
            {"question": Q1.upper(), "session_id": "s-1"},
            {"question": "   "},
            {"question": "x" * 5000},
            {"question": Q1, "source": "nowhere"},
            {"nothing": 1},
        ]
        for case in cases:
            body = json.dumps(case).encode()
            replies = [client.post("/v1/ask", content=body, headers=h) for h in (fast, route)]
            _same_reply(*replies)
        assert replies[0].status_code == 400  # the last case: the route's own validation
        metrics = client.get("/metrics").text
    # Both were counted under the route's template.
    counted = [
        line
        for line in metrics.splitlines()
        if line.startswith("medlit_http_requests_total{") and 'route="/v1/ask"' in line
    ]
    assert sum(float(line.rsplit(" ", 1)[1]) for line in counted) >= 2 * len(cases) + 1, counted


def test_an_unexpected_error_is_the_same_problem_500_on_both_paths(
    service: ServiceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fast path runs outside FastAPI's error middleware: it answers a bug itself.
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(service.app.state.medlit.assistant, "ask", broken)
    fast = {"content-type": "application/json"}
    route = {"content-type": "application/vnd.medlit+json"}
    body = json.dumps({"question": Q1}).encode()
    with httpx.Client(base_url=service.url, timeout=30) as client:
        replies = [client.post("/v1/ask", content=body, headers=h) for h in (fast, route)]
        _same_reply(*replies)
        assert client.get("/healthz").status_code == 200  # the server lives on
        metrics = client.get("/metrics").text
    assert replies[0].status_code == 500
    assert replies[0].headers["content-type"] == "application/problem+json"
    assert replies[0].json()["detail"] == "an unexpected error occurred; it has been logged"
    assert "a bug" not in replies[0].text
    assert 'medlit_http_requests_total{method="POST",route="/v1/ask",status="500"} 2.0' in metrics
